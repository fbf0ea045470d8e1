// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_dmabuf: helpers for the SYNC / EXPORT / dma-buf / edu DMA tests.
 * See nmtest_dmabuf.h.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"

int nm_sync(int fd, uint32_t handle, uint32_t dir, uint64_t off, uint64_t len)
{
	struct npu_mem_sync s = {
		.handle = handle, .direction = dir, .offset = off, .length = len,
	};

	return nm_ioctl(fd, NPU_MEM_IOCTL_SYNC, &s);
}

void _nm_sync_ok(int fd, uint32_t handle, uint32_t dir, uint64_t off,
		 uint64_t len, const char *f, int l)
{
	int ret = nm_sync(fd, handle, dir, off, len);

	if (ret)
		_ck_assert_failed(f, l, "SYNC",
				  "SYNC(handle %u, dir %u, off %#llx, len %#llx) "
				  "failed: %s", handle, dir,
				  (unsigned long long)off,
				  (unsigned long long)len, nm_retname(ret));
}

int nm_export(int fd, uint32_t handle, uint32_t flags, int *dfd)
{
	struct npu_mem_export e = { .handle = handle, .flags = flags };
	int ret = nm_ioctl(fd, NPU_MEM_IOCTL_EXPORT, &e);

	if (!ret && dfd)
		*dfd = (int)e.fd;
	return ret;
}

int _nm_export_ok(int fd, uint32_t handle, uint32_t flags, const char *f,
		  int l)
{
	int dfd = -1, ret = nm_export(fd, handle, flags, &dfd);

	if (ret)
		_ck_assert_failed(f, l, "EXPORT",
				  "EXPORT(handle %u, flags %#x) failed: %s",
				  handle, flags, nm_retname(ret));
	if (dfd < 0 || !nm_fd_valid(dfd))
		_ck_assert_failed(f, l, "EXPORT",
				  "EXPORT(handle %u) returned fd %d, not open",
				  handle, dfd);
	return dfd;
}

int nm_dmabuf_sync(int dfd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };
	int ret;

	do {
		ret = ioctl(dfd, DMA_BUF_IOCTL_SYNC, &s) < 0 ? -errno : 0;
	} while (ret == -EINTR || ret == -EAGAIN);
	return ret;
}

void _nm_dmabuf_sync_ok(int dfd, uint64_t flags, const char *f, int l)
{
	int ret = nm_dmabuf_sync(dfd, flags);

	if (ret)
		_ck_assert_failed(f, l, "DMA_BUF_IOCTL_SYNC",
				  "DMA_BUF_IOCTL_SYNC(fd %d, flags %#llx) "
				  "failed: %s", dfd, (unsigned long long)flags,
				  nm_retname(ret));
}

void *_nm_dmabuf_map_ok(int dfd, uint64_t off, size_t len, int prot,
			const char *f, int l)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, dfd, (off_t)off);

	if (p == MAP_FAILED)
		_ck_assert_failed(f, l, "mmap",
				  "mmap(dma-buf fd %d, off %#llx, len %zu, "
				  "prot %#x): %s", dfd, (unsigned long long)off,
				  len, prot, nm_errname(errno));
	return p;
}

/* ------------------------------------------------------------------ */

int nm_dma_copy(uint64_t src, uint64_t dst, uint64_t len)
{
	char text[96];

	snprintf(text, sizeof(text), "%#llx %#llx %#llx",
		 (unsigned long long)src, (unsigned long long)dst,
		 (unsigned long long)len);
	return nm_write_file(NM_DMA_COPY, text);
}

uint64_t nm_ino(int fd)
{
	struct stat st;

	ck_assert_msg(fstat(fd, &st) == 0, "fstat(%d): %s", fd,
		      nm_errname(errno));
	return st.st_ino;
}

int nm_fd_count(void)
{
	int n = nm_fds_open();

	ck_assert_msg(n >= 0, "opendir /proc/self/fd: %s", nm_retname(n));
	return n;
}

bool nm_fd_valid(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

char *nm_dmabuf_exp_name(int dfd)
{
	char path[64], *text, *p, *end;
	char *ret = NULL;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", dfd);
	text = nm_read_file(path);
	if (!text)
		return NULL;
	p = strstr(text, "\nexp_name:");
	if (p) {
		p += strlen("\nexp_name:");
		p += strspn(p, " \t");
		end = p + strcspn(p, "\n");
		ret = strndup(p, end - p);
	}
	free(text);
	return ret;
}

/* One "size flags mode count exp_name ino name" header line of bufinfo. */
static bool bufinfo_header(const char *line, char *exp, size_t explen,
			   uint64_t *ino)
{
	unsigned long long size, i;
	unsigned int flags, mode;
	long count;
	char name[64];

	if (sscanf(line, "%llu %x %x %ld %63s %llu", &size, &flags, &mode,
		   &count, name, &i) != 6)
		return false;
	if (exp)
		snprintf(exp, explen, "%s", name);
	*ino = i;
	return true;
}

char *nm_bufinfo_entry(uint64_t ino)
{
	char *text = nm_read_file(NM_BUFINFO), *line, *start = NULL, *ret;
	size_t len = 0;

	if (!text)
		return NULL;
	for (line = text; *line; ) {
		char *nl = strchr(line, '\n');
		uint64_t i;
		bool hdr = bufinfo_header(line, NULL, 0, &i);

		/* the block ends at the next object or at "Total N objects" */
		if (start && (hdr || (!strncmp(line, "Total ", 6) &&
				      strstr(line, " objects")))) {
			len = line - start;
			break;
		}
		if (!start && hdr && i == ino)
			start = line;
		if (!nl)
			break;
		line = nl + 1;
	}
	if (!start) {
		free(text);
		errno = ENOENT;
		return NULL;
	}
	if (!len)
		len = strlen(start);
	ret = strndup(start, len);
	free(text);
	return ret;
}

int nm_bufinfo_attached(const char *entry, const char *dev)
{
	const char *p = strstr(entry, "Attached Devices:");
	int n = 0;

	if (!p)
		return -1;
	p = strchr(p, '\n');
	while (p && *++p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		const char *s = p + strspn(p, " \t");

		if (!strncmp(s, "Total ", 6))
			break;
		if (!dev || (l >= strlen(dev) && memmem(p, l, dev, strlen(dev))))
			n++;
		p = nl;
	}
	return n;
}

int nm_bufinfo_count_npu(void)
{
	char *text = nm_read_file(NM_BUFINFO), *line, *save = NULL;
	int n = 0;

	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char exp[64];
		uint64_t ino;

		if (bufinfo_header(line, exp, sizeof(exp), &ino) &&
		    !strcmp(exp, "npu_mem"))
			n++;
	}
	free(text);
	return n;
}

/* ------------------------------------------------------------------ */

int nm_send_msg(int sock, uint32_t msg, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == sizeof(msg) ? 0 : -EIO;
}

int nm_recv_msg(int sock, uint32_t *msg, int *fd, double timeout_s)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;
	int r;

	if (fd)
		*fd = -1;
	do {
		r = poll(&pfd, 1, (int)(timeout_s * 1000));
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	if (n != sizeof(*msg))
		return -EIO;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int got;

			memcpy(&got, CMSG_DATA(c), sizeof(int));
			if (fd)
				*fd = got;
			else
				close(got);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */

int nm_virt_to_phys(const volatile void *addr, uint64_t *phys)
{
	uint64_t va = (uint64_t)(uintptr_t)addr, ent;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	(void)*(const volatile uint8_t *)addr;	/* present, at least */
	n = pread(fd, &ent, sizeof(ent), (off_t)(va / NM_4K * sizeof(ent)));
	close(fd);
	if (n != sizeof(ent))
		return n < 0 ? -errno : -EIO;
	/* bit 63 present, bits 0-54 PFN (0 without CAP_SYS_ADMIN) */
	if (!(ent & (1ULL << 63)) || !(ent & ((1ULL << 55) - 1)))
		return -ENODATA;
	*phys = (ent & ((1ULL << 55) - 1)) * NM_4K + va % NM_4K;
	return 0;
}

int nm_phys_runs(const void *addr, size_t len, uint64_t *first,
		 unsigned int *runs)
{
	uint64_t va = (uint64_t)(uintptr_t)addr, npages = len / NM_4K, prev = 0;
	uint64_t *ents;
	int fd, ret = 0;
	ssize_t n;

	if (va % NM_4K || len % NM_4K || !len)
		return -EINVAL;
	ents = malloc(npages * sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (uint64_t i = 0; i < npages; i++)
		(void)((const volatile uint8_t *)addr)[i * NM_4K];
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(ents);
		return -errno;
	}
	n = pread(fd, ents, npages * sizeof(*ents),
		  (off_t)(va / NM_4K * sizeof(*ents)));
	if (n != (ssize_t)(npages * sizeof(*ents)))
		ret = n < 0 ? -errno : -EIO;
	close(fd);
	*runs = 0;
	for (uint64_t i = 0; !ret && i < npages; i++) {
		uint64_t pfn = ents[i] & ((1ULL << 55) - 1);

		if (!(ents[i] & (1ULL << 63)) || !pfn) {
			ret = -ENODATA;
			break;
		}
		if (i == 0)
			*first = pfn * NM_4K;
		if (i == 0 || pfn != prev + 1)
			(*runs)++;
		prev = pfn;
	}
	free(ents);
	return ret;
}

/* ------------------------------------------------------------------ */

#define NM_PCI_DRV	"/sys/bus/pci/drivers/npu_mem"

static char *trimmed_file(const char *path)
{
	char *t = nm_read_file(path);

	if (t)
		t[strcspn(t, "\n")] = 0;
	return t;
}

uint32_t nm_expected_dev_flags(char *why, size_t len)
{
	uint32_t flags = 0;
	char bdf[256] = "", path[PATH_MAX], *type = NULL;
	DIR *d = opendir(NM_PCI_DRV);
	struct dirent *e;

#if defined(__x86_64__) || defined(__i386__)
	flags |= NPU_MEM_DEV_COHERENT;	/* x86 DMA snoops the CPU caches */
#endif
	while (d && (e = readdir(d))) {
		unsigned int dom, bus, dev, fn;

		if (sscanf(e->d_name, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
			snprintf(bdf, sizeof(bdf), "%s", e->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	if (bdf[0]) {
		flags |= NPU_MEM_DEV_PCI;
		snprintf(path, sizeof(path), NM_PCI_DRV "/%s/iommu_group/type",
			 bdf);
		type = trimmed_file(path);
		if (type && (!strcmp(type, "DMA") || !strcmp(type, "DMA-FQ")))
			flags |= NPU_MEM_DEV_IOMMU;
#if !defined(__x86_64__) && !defined(__i386__)
		/*
		 * Elsewhere (arm64) a PCI device is DMA-coherent when its host
		 * bridge's device-tree node says "dma-coherent" (QEMU's virt
		 * PCIe does); the driver's platform device never is.
		 */
		snprintf(path, sizeof(path), NM_PCI_DRV "/%s", bdf);
		char *real = realpath(path, NULL), *slash;

		while (real && (slash = strrchr(real, '/')) && slash != real) {
			*slash = 0;
			snprintf(path, sizeof(path), "%s/of_node/dma-coherent",
				 real);
			if (!access(path, F_OK)) {
				flags |= NPU_MEM_DEV_COHERENT;
				break;
			}
		}
		free(real);
#endif
	}
	if (why)
		snprintf(why, len, "%s%s%s%s, IOMMU group type %s",
			 flags & NPU_MEM_DEV_COHERENT ? "coherent, " : "",
			 bdf[0] ? "PCI device " : "platform device",
			 bdf, bdf[0] ? " bound to npu_mem" : "",
			 type ? type : "(none)");
	free(type);
	return flags;
}

char *nm_debugfs_device(const char *key)
{
	char *text = nm_read_file(NM_DEBUGFS "/device"), *line, *save = NULL;
	char *ret = NULL;
	size_t kl = strlen(key);

	if (!text)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			char *v = line + kl + 1;

			ret = strdup(v + strspn(v, " \t"));
			break;
		}
	}
	free(text);
	return ret;
}

const char *nm_vm_config(void)
{
	const char *c = getenv("VM_CONFIG");

	return c ? c : "";
}

/* ------------------------------------------------------------------ */

size_t nm_cmp(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;

	if (!memcmp(x, y, len))
		return SIZE_MAX;
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return i;
	return SIZE_MAX;
}

static void *nm_bg_thread(void *p)
{
	struct nm_bg *bg = p;

	bg->ret = bg->fn(bg->arg);
	__atomic_store_n(&bg->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void nm_bg_start(struct nm_bg *bg, int (*fn)(void *), void *arg)
{
	bg->done = 0;
	bg->ret = 0;
	bg->fn = fn;
	bg->arg = arg;
	ck_assert(pthread_create(&bg->th, NULL, nm_bg_thread, bg) == 0);
}

bool nm_bg_wait(struct nm_bg *bg, double wait_s)
{
	double end = nm_now() + wait_s;

	while (!__atomic_load_n(&bg->done, __ATOMIC_ACQUIRE)) {
		if (nm_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

void nm_bg_join(struct nm_bg *bg)
{
	pthread_join(bg->th, NULL);
}
