// SPDX-License-Identifier: GPL-2.0-only
/*
 * compat32_helper: the 32-bit side of tests/kernel/compat32.c.
 *
 * Built 32-bit and static (tests/Makefile's M32_CC: gcc -m32 on x86_64, the
 * armhf cross gcc for arm64; to build/tests/kernel-m32/) and run by that
 * Check test inside the guest, so that every ioctl and mmap goes through the
 * kernel's compat entry points (ia32 on x86_64, AArch32 on arm64).  The
 * UAPI structs are padded explicitly, so both 32-bit ABIs lay them out
 * alike (i386 aligns u64 to 4, EABI to 8): the sizes below hold for both.
 * Not a Check program (there is no 32-bit libcheck): each subcommand prints
 * what it checks and "FAIL: ..." on the first failure, and exits 0 only if
 * all held.
 *
 *   compat32_helper info|alloc|mmap|errors|io
 *   compat32_helper query HANDLE    (fd 3: the caller's open file) prints
 *                                   the 48 bytes of struct npu_mem_buffer
 *   compat32_helper alloc-hex       (fd 3) ALLOC 3 MiB + 1 HUGE_FIRST, print
 *                                   "HANDLE <48 bytes hex>"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/npu_mem.h>

#define MiB (1024ULL * 1024)
#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("FAIL: %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		exit(1);						\
	}								\
} while (0)

_Static_assert(sizeof(void *) == 4, "a 32-bit build (M32_CC)");
_Static_assert(sizeof(struct npu_mem_info) == 192, "info size");
_Static_assert(sizeof(struct npu_mem_alloc) == 72, "alloc size");
_Static_assert(sizeof(struct npu_mem_query) == 72, "query size");
_Static_assert(sizeof(struct npu_mem_free) == 8, "free size");

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int dev(void)
{
	int fd = open("/dev/npu-mem", O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "open /dev/npu-mem: %s", strerror(errno));
	return fd;
}

static uint32_t alloc(int fd, uint64_t size, uint32_t policy,
		      struct npu_mem_alloc *a)
{
	int r;

	memset(a, 0, sizeof(*a));
	a->size = size;
	a->policy = policy;
	r = xioctl(fd, NPU_MEM_IOCTL_ALLOC, a);
	CHECK(r == 0, "ALLOC %llu policy %u: %d", (unsigned long long)size,
	      policy, r);
	CHECK(a->handle, "handle 0");
	return a->handle;
}

static int free_h(int fd, uint32_t h)
{
	struct npu_mem_free f = { .handle = h };

	return xioctl(fd, NPU_MEM_IOCTL_FREE, &f);
}

static int cmd_info(void)
{
	struct npu_mem_info info;
	int fd = dev();

	memset(&info, 0xff, sizeof(info));
	info.flags = 0;
	info.device = 0;
	info.reserved = 0;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) == 0, "GET_INFO");
	printf("abi %u.%u page_sizes %#llx total_ram %llu limit %llu\n",
	       info.abi_major, info.abi_minor,
	       (unsigned long long)info.page_sizes,
	       (unsigned long long)info.total_ram,
	       (unsigned long long)info.limit_bytes);
	CHECK(info.abi_major == 1 && info.abi_minor == 5, "abi");
	CHECK((info.page_sizes & (NPU_MEM_PAGE_4K | NPU_MEM_PAGE_2M)) ==
	      (NPU_MEM_PAGE_4K | NPU_MEM_PAGE_2M), "page sizes");
	CHECK(info.total_ram && info.total_ram != ~0ULL, "total_ram");
	CHECK(info.free_ram <= info.total_ram, "free_ram");
	CHECK(info.client_buffers == 0 && info.client_bytes == 0, "client");
	CHECK(info.device_count >= 1 && info.reserved == 0, "reserved");
	close(fd);
	return 0;
}

static int cmd_alloc(void)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
		uint64_t want;
	} r[] = {
		{ 1, NPU_MEM_POLICY_NORMAL_ONLY, 4096 },
		{ 1, NPU_MEM_POLICY_HUGE_ONLY, 2 * MiB },
		{ 5 * MiB, NPU_MEM_POLICY_HUGE_FIRST, 5 * MiB },
		{ 3 * MiB + 1, NPU_MEM_POLICY_NORMAL_ONLY, 3 * MiB + 4096 },
	};
	int fd = dev();

	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		struct npu_mem_alloc a;
		struct npu_mem_query q = { 0 };

		alloc(fd, r[i].size, r[i].policy, &a);
		CHECK(a.buf.size == r[i].want, "size %llu want %llu",
		      (unsigned long long)a.buf.size,
		      (unsigned long long)r[i].want);
		CHECK((uint64_t)a.buf.huge_pages * 2 * MiB +
		      (uint64_t)a.buf.normal_pages * 4096 == a.buf.size,
		      "pages");
		q.handle = a.handle;
		CHECK(xioctl(fd, NPU_MEM_IOCTL_QUERY, &q) == 0, "QUERY");
		CHECK(!memcmp(&q.buf, &a.buf, sizeof(q.buf)), "QUERY != ALLOC");
		CHECK(free_h(fd, a.handle) == 0, "FREE");
		CHECK(free_h(fd, a.handle) == -ENOENT, "double FREE");
	}
	CHECK(free_h(fd, 0) == -ENOENT, "FREE 0");
	close(fd);
	printf("alloc/query/free ok\n");
	return 0;
}

static int cmd_mmap(void)
{
	struct npu_mem_alloc a;
	int fd = dev();
	uint8_t *p, *part;

	alloc(fd, 4 * MiB + 8192, NPU_MEM_POLICY_HUGE_FIRST, &a);
	/* mmap2 takes the offset in pages: offsets past 2^44 cannot be
	 * reached from 32-bit userspace */
	CHECK(a.buf.mmap_offset + a.buf.size < (1ULL << 44),
	      "mmap_offset %#llx unreachable for 32-bit mmap2",
	      (unsigned long long)a.buf.mmap_offset);
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)a.buf.mmap_offset);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	for (size_t i = 0; i < a.buf.size; i += 4096)
		CHECK(p[i] == 0 && p[i + 4095] == 0, "not zero at %zu", i);
	for (size_t i = 0; i < a.buf.size; i++)
		p[i] = (uint8_t)(i * 7 + (i >> 12));
	part = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, fd,
		    (off_t)(a.buf.mmap_offset + 2 * MiB - 4096));
	CHECK(part != MAP_FAILED, "partial mmap: %s", strerror(errno));
	CHECK(!memcmp(part, p + 2 * MiB - 4096, 2 * 4096), "partial bytes");
	munmap(part, 2 * 4096);
	errno = 0;
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd,
		   (off_t)a.buf.mmap_offset) == MAP_FAILED && errno == EINVAL,
	      "MAP_PRIVATE: %s", strerror(errno));
	errno = 0;
	CHECK(mmap(NULL, a.buf.size + 4096, PROT_READ, MAP_SHARED, fd,
		   (off_t)a.buf.mmap_offset) == MAP_FAILED && errno == EINVAL,
	      "too long: %s", strerror(errno));
	CHECK(free_h(fd, a.handle) == 0, "FREE while mapped");
	CHECK(p[a.buf.size - 1] == (uint8_t)((a.buf.size - 1) * 7 +
					     ((a.buf.size - 1) >> 12)),
	      "contents after FREE");
	munmap(p, a.buf.size);
	close(fd);
	printf("mmap ok\n");
	return 0;
}

static int cmd_errors(void)
{
	struct npu_mem_alloc a;
	struct npu_mem_info info;
	uint8_t big[sizeof(struct npu_mem_info) + 64];
	uint8_t *page;
	int fd = dev();

	CHECK(xioctl(fd, _IOWR(NPU_MEM_IOCTL_MAGIC, 0x40, struct npu_mem_info),
		     &info) == -ENOTTY, "unknown nr");
	CHECK(xioctl(fd, _IOR(NPU_MEM_IOCTL_MAGIC, 0, struct npu_mem_info),
		     &info) == -ENOTTY, "wrong direction");
	CHECK(xioctl(fd, NPU_MEM_IOCTL_GET_INFO, NULL) == -EFAULT, "NULL");
	memset(&info, 0, sizeof(info));
	info.flags = 1;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) == -EINVAL, "flags");
	memset(&info, 0, sizeof(info));
	info.reserved = 1;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) == -EINVAL,
	      "reserved");
	memset(big, 0, sizeof(big));
	CHECK(xioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, NPU_MEM_IOCTL_MAGIC, 0,
			      sizeof(big)), big) == 0, "larger, zero tail");
	big[sizeof(big) - 1] = 1;
	CHECK(xioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, NPU_MEM_IOCTL_MAGIC, 0,
			      sizeof(big)), big) == -EINVAL, "larger, nonzero");
	CHECK(xioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, NPU_MEM_IOCTL_MAGIC, 0,
			      144 - 8), &info) == -EINVAL, "smaller than v1");
	memset(&a, 0, sizeof(a));
	a.size = 4096;
	a.policy = 4;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == -EINVAL, "policy 4");
	a.policy = NPU_MEM_POLICY_NORMAL_ONLY;
	a.flags = 2;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == -EINVAL, "flags 2");
	a.flags = 0;
	a.device = 1000;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == -EINVAL, "device");
	a.device = 0;
	a.size = ~0ULL;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == -E2BIG, "UINT64_MAX");
	a.size = 0;
	CHECK(xioctl(fd, NPU_MEM_IOCTL_ALLOC, &a) == -EINVAL, "size 0");
	/* at the end of a page, then straddling into PROT_NONE */
	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED, "mmap");
	CHECK(mprotect(page + 4096, 4096, PROT_NONE) == 0, "mprotect");
	memset(page, 0, 4096);
	CHECK(xioctl(fd, NPU_MEM_IOCTL_GET_INFO,
		     page + 4096 - sizeof(info)) == 0, "flush at page end");
	CHECK(xioctl(fd, NPU_MEM_IOCTL_GET_INFO,
		     page + 4096 - sizeof(info) + 8) == -EFAULT, "straddle");
	munmap(page, 2 * 4096);
	close(fd);
	printf("errors ok\n");
	return 0;
}

static int cmd_io(void)
{
	struct npu_mem_alloc a;
	int fd = dev(), pfd[2];
	uint8_t *p, *s;
	struct iovec local, remote;

	alloc(fd, 4 * MiB, NPU_MEM_POLICY_HUGE_FIRST, &a);
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)a.buf.mmap_offset);
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	for (size_t i = 0; i < a.buf.size; i++)
		p[i] = (uint8_t)(i * 13 + 1);
	s = malloc(a.buf.size);
	CHECK(s, "malloc");
	local = (struct iovec){ s, a.buf.size };
	remote = (struct iovec){ p, a.buf.size };
	CHECK(process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	      (ssize_t)a.buf.size, "process_vm_readv: %s", strerror(errno));
	CHECK(!memcmp(s, p, a.buf.size), "process_vm_readv bytes");
	CHECK(pipe(pfd) == 0, "pipe");
	local = (struct iovec){ p + 2 * MiB - 100, 4096 };
	CHECK(vmsplice(pfd[1], &local, 1, 0) == 4096, "vmsplice: %s",
	      strerror(errno));
	CHECK(read(pfd[0], s, 4096) == 4096, "read pipe");
	CHECK(!memcmp(s, p + 2 * MiB - 100, 4096), "vmsplice bytes");
	munmap(p, a.buf.size);
	CHECK(free_h(fd, a.handle) == 0, "FREE");
	close(fd);
	printf("io ok\n");
	return 0;
}

static void hex(const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", ((const uint8_t *)p)[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(argc >= 2, "usage: %s info|alloc|mmap|errors|io|query H|"
	      "alloc-hex", argv[0]);
	if (!strcmp(argv[1], "info"))
		return cmd_info();
	if (!strcmp(argv[1], "alloc"))
		return cmd_alloc();
	if (!strcmp(argv[1], "mmap"))
		return cmd_mmap();
	if (!strcmp(argv[1], "errors"))
		return cmd_errors();
	if (!strcmp(argv[1], "io"))
		return cmd_io();
	if (!strcmp(argv[1], "query") && argc == 3) {
		struct npu_mem_query q = { .handle = strtoul(argv[2], NULL, 0) };

		CHECK(xioctl(3, NPU_MEM_IOCTL_QUERY, &q) == 0, "QUERY on fd 3");
		hex(&q.buf, sizeof(q.buf));
		return 0;
	}
	if (!strcmp(argv[1], "alloc-hex")) {
		struct npu_mem_alloc a;

		memset(&a, 0, sizeof(a));
		a.size = 3 * MiB + 1;
		a.policy = NPU_MEM_POLICY_HUGE_FIRST;
		CHECK(xioctl(3, NPU_MEM_IOCTL_ALLOC, &a) == 0, "ALLOC on fd 3");
		printf("%u ", a.handle);
		hex(&a.buf, sizeof(a.buf));
		return 0;
	}
	CHECK(0, "unknown subcommand %s", argv[1]);
	return 1;
}
