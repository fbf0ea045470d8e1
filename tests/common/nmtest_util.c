// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_util: helpers for the /dev/npu-mem tests.  See nmtest_util.h.
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "nmtest_util.h"

const struct nm_ioctl_desc nm_ioctls_v1[] = {
#define D(cmd, nr, dir, type) { #cmd, cmd, nr, dir, sizeof(type), sizeof(type) }
	/* grew in ABI 1.4 */
	{ "NPU_MEM_IOCTL_GET_INFO", NPU_MEM_IOCTL_GET_INFO, 0x00, NM_IOC_RW,
	  sizeof(struct npu_mem_info), 144 },
	D(NPU_MEM_IOCTL_ALLOC, 0x01, NM_IOC_RW, struct npu_mem_alloc),
	D(NPU_MEM_IOCTL_FREE, 0x02, _IOC_WRITE, struct npu_mem_free),
	/* grew in ABI 1.3 */
	{ "NPU_MEM_IOCTL_QUERY", NPU_MEM_IOCTL_QUERY, 0x03, NM_IOC_RW,
	  sizeof(struct npu_mem_query), 56 },
	D(NPU_MEM_IOCTL_SYNC, 0x04, _IOC_WRITE, struct npu_mem_sync),
	D(NPU_MEM_IOCTL_EXPORT, 0x05, NM_IOC_RW, struct npu_mem_export),
#undef D
};
const size_t nm_n_ioctls_v1 = NM_ARRAY_SIZE(nm_ioctls_v1);

/* ------------------------------------------------------------------ */

Suite *nm_suite(const char *name)
{
	return suite_create(name);
}

void nm_skip_note(const char *fmt, ...)
{
	const char *t = tcase_name();
	va_list ap;

	printf("NM-SKIP: %s: ", t ? t : "?");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

bool nm_dofork_refused(void)
{
	struct npu_mem_alloc a;
	int fd = nm_open(), ret, err;
	void *p;

	nm_alloc_ok(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	ret = madvise(p, a.buf.size, MADV_DOFORK);
	err = errno;
	munmap(p, a.buf.size);
	close(fd);
	if (ret == 0)
		return false;
	/* Any other failure, or on an older kernel, is the module's. */
	ck_assert_msg(err == EINVAL && nm_kernel_version() >= 700,
		      "madvise(MADV_DOFORK): %s", nm_errname(err));
	return true;
}

void nm_require_device(void)
{
	struct stat st;

	if (stat(NM_DEV_PATH, &st) == 0)
		return;
	if (errno == ENOENT && access(NM_SYSMOD, F_OK) != 0) {
		printf("SKIP: %s does not exist and the npu_mem module is not "
		       "loaded; run this test in a guest: "
		       "tests/vm/vm-run -k <kver> -- <this program>\n",
		       NM_DEV_PATH);
		fflush(stdout);
		exit(77);
	}
	/* The module is there but the node is not (or stat failed oddly):
	 * that is a bug, not a missing environment. */
	printf("FAIL: stat(%s): %s (module %s loaded)\n", NM_DEV_PATH,
	       strerror(errno),
	       access(NM_SYSMOD, F_OK) == 0 ? "is" : "is not");
	exit(EXIT_FAILURE);
}

int nm_run(Suite *s, enum nm_needs needs)
{
	SRunner *sr;
	int failed;

	if (needs & NM_NEEDS_DEVICE)
		nm_require_device();
	/* Make stdout line-buffered so children's output interleaves sanely. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	sr = srunner_create(s);
	srunner_run_all(sr, getenv("CK_VERBOSITY") ? CK_ENV : CK_VERBOSE);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */

int nm_open(void)
{
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "open(%s): %s", NM_DEV_PATH, nm_errname(errno));
	return fd;
}

int nm_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int nm_get_info(int fd, struct npu_mem_info *info)
{
	memset(info, 0, sizeof(*info));
	return nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, info);
}

int nm_alloc(int fd, uint64_t size, uint32_t policy, uint32_t flags,
	     struct npu_mem_alloc *out)
{
	memset(out, 0, sizeof(*out));
	out->size = size;
	out->policy = policy;
	out->flags = flags;
	return nm_ioctl(fd, NPU_MEM_IOCTL_ALLOC, out);
}

int nm_free(int fd, uint32_t handle)
{
	struct npu_mem_free f = { .handle = handle };

	return nm_ioctl(fd, NPU_MEM_IOCTL_FREE, &f);
}

int nm_query(int fd, uint32_t handle, struct npu_mem_buffer *out)
{
	struct npu_mem_query q = { .handle = handle };
	int ret = nm_ioctl(fd, NPU_MEM_IOCTL_QUERY, &q);

	if (out)
		*out = q.buf;
	return ret;
}

void _nm_get_info_ok(int fd, struct npu_mem_info *info, const char *f, int l)
{
	int ret = nm_get_info(fd, info);

	if (ret)
		_ck_assert_failed(f, l, "GET_INFO", "GET_INFO failed: %s",
				  nm_retname(ret));
}

uint32_t _nm_alloc_ok(int fd, uint64_t size, uint32_t policy, uint32_t flags,
		      struct npu_mem_alloc *out, const char *f, int l)
{
	int ret = nm_alloc(fd, size, policy, flags, out);

	if (ret)
		_ck_assert_failed(f, l, "ALLOC",
				  "ALLOC(size %llu, %s, flags %#x) failed: %s",
				  (unsigned long long)size,
				  nm_policy_name(policy), flags, nm_retname(ret));
	if (out->handle == 0)
		_ck_assert_failed(f, l, "ALLOC", "ALLOC returned handle 0");
	return out->handle;
}

/*
 * Bounce buffers (swiotlb) are found one mapping (at most 256 KiB, and
 * each separate page) at a time, so those of one buffer need not abut.
 * The pool hands out slots in order: another try, made while the first
 * buffer still holds its slots, mostly gets one range.
 */
int _nm_alloc_dev_contig_ok(int fd, uint64_t size, uint32_t policy,
			    uint32_t flags, struct npu_mem_alloc *out,
			    const char *f, int l)
{
	int tries = 1;

	_nm_alloc_ok(fd, size, policy, flags, out, f, l);
	while ((out->buf.flags & NPU_MEM_BUF_BOUNCED) &&
	       !(out->buf.flags & NPU_MEM_BUF_DEV_CONTIG) && tries < 8) {
		struct npu_mem_alloc again;

		_nm_alloc_ok(fd, size, policy, flags, &again, f, l);
		_nm_free_ok(fd, out->handle, f, l);
		*out = again;
		tries++;
	}
	if (tries > 1)
		printf("%s %llu: %d tries for one device range of bounce "
		       "buffers\n", nm_policy_name(policy),
		       (unsigned long long)size, tries);
	return tries;
}

void _nm_free_ok(int fd, uint32_t handle, const char *f, int l)
{
	int ret = nm_free(fd, handle);

	if (ret)
		_ck_assert_failed(f, l, "FREE", "FREE(%u) failed: %s", handle,
				  nm_retname(ret));
}

void *nm_mmap(int fd, uint64_t off, size_t len, int prot)
{
	return mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);
}

void *_nm_map_ok(int fd, const struct npu_mem_alloc *a, int prot,
		 const char *f, int l)
{
	void *p = nm_mmap(fd, a->buf.mmap_offset, a->buf.size, prot);

	if (p == MAP_FAILED)
		_ck_assert_failed(f, l, "mmap",
				  "mmap(handle %u, offset %#llx, size %llu): %s",
				  a->handle,
				  (unsigned long long)a->buf.mmap_offset,
				  (unsigned long long)a->buf.size,
				  nm_errname(errno));
	return p;
}

const char *nm_policy_name(uint32_t policy)
{
	switch (policy) {
	case NPU_MEM_POLICY_HUGE_FIRST:	return "HUGE_FIRST";
	case NPU_MEM_POLICY_HUGE_ONLY:	return "HUGE_ONLY";
	case NPU_MEM_POLICY_NORMAL_ONLY: return "NORMAL_ONLY";
	case NPU_MEM_POLICY_HUGE1G_ONLY: return "HUGE1G_ONLY";
	default:			return "policy?";
	}
}

#define NM_FAIL(f, l, ...) _ck_assert_failed(f, l, "buffer", __VA_ARGS__)

void _nm_assert_buffer_sane(uint64_t req, uint32_t policy, uint32_t flags,
			    const struct npu_mem_buffer *b, const char *f, int l)
{
	const uint32_t known = NPU_MEM_BUF_READONLY | NPU_MEM_BUF_DEV_CONTIG |
			       NPU_MEM_BUF_DEV_HIDDEN | NPU_MEM_BUF_BOUNCED |
			       NPU_MEM_BUF_DEV_UNMAPPED;
	unsigned long long size = b->size;
	uint64_t chunks = (uint64_t)b->huge_pages + b->normal_pages +
			  b->giant_pages;

	if (b->policy != policy)
		NM_FAIL(f, l, "buf.policy %u, allocated with %u", b->policy,
			policy);
	switch (policy) {
	case NPU_MEM_POLICY_NORMAL_ONLY:
		if (size != NM_ALIGN(req, NM_4K) || b->huge_pages ||
		    b->giant_pages || b->normal_pages != size / NM_4K)
			NM_FAIL(f, l, "NORMAL_ONLY %llu: size %llu huge %u "
				"normal %u giant %u, want size %llu, all normal",
				(unsigned long long)req, size, b->huge_pages,
				b->normal_pages, b->giant_pages,
				(unsigned long long)NM_ALIGN(req, NM_4K));
		break;
	case NPU_MEM_POLICY_HUGE_ONLY:
		if (size != NM_ALIGN(req, NM_2M) || b->normal_pages ||
		    b->giant_pages || b->huge_pages != size / NM_2M)
			NM_FAIL(f, l, "HUGE_ONLY %llu: size %llu huge %u "
				"normal %u giant %u, want size %llu, all huge",
				(unsigned long long)req, size, b->huge_pages,
				b->normal_pages, b->giant_pages,
				(unsigned long long)NM_ALIGN(req, NM_2M));
		break;
	case NPU_MEM_POLICY_HUGE_FIRST:
		if (size != NM_ALIGN(req, NM_4K) || b->giant_pages ||
		    (uint64_t)b->huge_pages * NM_2M +
		    (uint64_t)b->normal_pages * NM_4K != size)
			NM_FAIL(f, l, "HUGE_FIRST %llu: size %llu huge %u "
				"normal %u giant %u, want size %llu = "
				"huge*2M + normal*4K",
				(unsigned long long)req, size, b->huge_pages,
				b->normal_pages, b->giant_pages,
				(unsigned long long)NM_ALIGN(req, NM_4K));
		break;
	case NPU_MEM_POLICY_HUGE1G_ONLY:
		if (size != NM_ALIGN(req, NM_1G) || b->normal_pages ||
		    b->huge_pages || b->giant_pages != size / NM_1G)
			NM_FAIL(f, l, "HUGE1G_ONLY %llu: size %llu huge %u "
				"normal %u giant %u", (unsigned long long)req,
				size, b->huge_pages, b->normal_pages,
				b->giant_pages);
		break;
	}
	if (b->flags & ~known)
		NM_FAIL(f, l, "buf.flags %#x has unknown bits", b->flags);
	if (!!(b->flags & NPU_MEM_BUF_READONLY) !=
	    !!(flags & NPU_MEM_ALLOC_READONLY))
		NM_FAIL(f, l, "buf.flags %#x vs alloc flags %#x (READONLY)",
			b->flags, flags);
	if (b->flags & (NPU_MEM_BUF_DEV_HIDDEN | NPU_MEM_BUF_DEV_UNMAPPED)) {
		/* Physical layout withheld, or no device mapping at all */
		if (b->dev_addr || b->dev_segments ||
		    (b->flags & NPU_MEM_BUF_DEV_CONTIG))
			NM_FAIL(f, l, "flags %#x with dev_addr %#llx, "
				"dev_segments %u", b->flags,
				(unsigned long long)b->dev_addr,
				b->dev_segments);
		/* Whether it should be hidden depends on the opener's
		 * privileges, which only the caller knows: visibility.c. */
		if ((b->flags & NPU_MEM_BUF_DEV_HIDDEN) &&
		    (b->flags & NPU_MEM_BUF_DEV_UNMAPPED))
			NM_FAIL(f, l, "both DEV_HIDDEN and DEV_UNMAPPED");
	} else {
		/* Bounced mappings come in pieces of at most one bounce slot
		 * run, so they may have more segments than chunks. */
		uint64_t most = (b->flags & NPU_MEM_BUF_BOUNCED) ?
				size / NM_4K : chunks;

		if (b->dev_segments < 1 || b->dev_segments > most)
			NM_FAIL(f, l, "dev_segments %u for %llu chunks",
				b->dev_segments, (unsigned long long)chunks);
		if (!b->dev_addr || (b->dev_addr & (NM_4K - 1)))
			NM_FAIL(f, l, "dev_addr %#llx (not hidden) is 0 or "
				"not page aligned",
				(unsigned long long)b->dev_addr);
	}
	if (b->mmap_offset & (NM_4K - 1))
		NM_FAIL(f, l, "mmap_offset %#llx not page aligned",
			(unsigned long long)b->mmap_offset);
	if (b->mmap_offset > (uint64_t)INT64_MAX - size)
		NM_FAIL(f, l, "mmap_offset %#llx + size overflows off_t",
			(unsigned long long)b->mmap_offset);
}

void _nm_assert_dev_contig(const struct npu_mem_buffer *b, const char *f,
			   int l)
{
	if (!!(b->flags & NPU_MEM_BUF_DEV_CONTIG) != (b->dev_segments == 1))
		NM_FAIL(f, l, "DEV_CONTIG %s but dev_segments %u (size %llu, "
			"%u huge + %u normal pages)",
			b->flags & NPU_MEM_BUF_DEV_CONTIG ? "set" : "clear",
			b->dev_segments, (unsigned long long)b->size,
			b->huge_pages, b->normal_pages);
}

void _nm_assert_buf_eq(const struct npu_mem_buffer *a,
		       const struct npu_mem_buffer *b, const char *f, int l)
{
	if (memcmp(a, b, sizeof(*a)))
		_ck_assert_failed(f, l, "buffer",
			"buffers differ: size %llu/%llu off %#llx/%#llx "
			"dev %#llx/%#llx huge %u/%u normal %u/%u giant %u/%u "
			"policy %u/%u flags %#x/%#x segs %u/%u",
			(unsigned long long)a->size,
			(unsigned long long)b->size,
			(unsigned long long)a->mmap_offset,
			(unsigned long long)b->mmap_offset,
			(unsigned long long)a->dev_addr,
			(unsigned long long)b->dev_addr,
			a->huge_pages, b->huge_pages, a->normal_pages,
			b->normal_pages, a->giant_pages, b->giant_pages,
			a->policy, b->policy, a->flags, b->flags,
			a->dev_segments, b->dev_segments);
}

/* ------------------------------------------------------------------ */

void _nm_counters(int fd, struct nm_counters *c, const char *f, int l)
{
	struct npu_mem_info info;

	_nm_get_info_ok(fd, &info, f, l);
	c->allocated_bytes = info.allocated_bytes;
	c->huge_pages = info.huge_pages;
	c->normal_pages = info.normal_pages;
	c->giant_pages = info.giant_pages;
	c->buffers = info.buffers;
	c->client_buffers = info.client_buffers;
	c->client_bytes = info.client_bytes;
}

void _nm_assert_counters_eq(const struct nm_counters *a,
			    const struct nm_counters *b, bool client,
			    const char *f, int l)
{
#define C(x) (unsigned long long)a->x, (unsigned long long)b->x
	if (a->allocated_bytes != b->allocated_bytes ||
	    a->huge_pages != b->huge_pages ||
	    a->normal_pages != b->normal_pages ||
	    a->giant_pages != b->giant_pages || a->buffers != b->buffers ||
	    (client && (a->client_buffers != b->client_buffers ||
			a->client_bytes != b->client_bytes)))
		_ck_assert_failed(f, l, "counters",
			"counters differ (expected/actual): allocated_bytes "
			"%llu/%llu huge_pages %llu/%llu normal_pages %llu/%llu "
			"giant_pages %llu/%llu buffers %llu/%llu%s "
			"client_buffers %llu/%llu client_bytes %llu/%llu",
			C(allocated_bytes), C(huge_pages), C(normal_pages),
			C(giant_pages), C(buffers),
			client ? "" : " (client fields not compared)",
			C(client_buffers), C(client_bytes));
#undef C
}

void nm_counters_add(struct nm_counters *c, const struct npu_mem_buffer *b,
		     int sign, bool client)
{
	int64_t s = sign < 0 ? -1 : 1;

	c->allocated_bytes += s * (int64_t)b->size;
	c->huge_pages += s * b->huge_pages;
	c->normal_pages += s * b->normal_pages;
	c->giant_pages += s * b->giant_pages;
	c->buffers += s;
	if (client) {
		c->client_buffers += s;
		c->client_bytes += s * (int64_t)b->size;
	}
}

void nm_counters_print(const char *tag, const struct nm_counters *c)
{
	printf("%s: allocated_bytes %llu huge %llu normal %llu giant %llu "
	       "buffers %llu client_buffers %llu client_bytes %llu\n", tag,
	       (unsigned long long)c->allocated_bytes,
	       (unsigned long long)c->huge_pages,
	       (unsigned long long)c->normal_pages,
	       (unsigned long long)c->giant_pages,
	       (unsigned long long)c->buffers,
	       (unsigned long long)c->client_buffers,
	       (unsigned long long)c->client_bytes);
}

/* ------------------------------------------------------------------ */

static const struct {
	uint64_t size;
	uint32_t policy;
} nm_sentinel_spec[2] = {
	{ 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
	{ NM_2M + 2 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST },
};

void nm_sentinel_init(struct nm_sentinel *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->seed = 0x5e471e1ULL ^ ((uint64_t)getpid() << 20);
	for (int i = 0; i < 2; i++) {
		nm_alloc_ok(fd, nm_sentinel_spec[i].size,
			    nm_sentinel_spec[i].policy, 0, &s->alloc[i]);
		s->map[i] = nm_map_ok(fd, &s->alloc[i], PROT_READ | PROT_WRITE);
		nm_fill(s->map[i], s->alloc[i].buf.size, s->seed + i);
		s->expect[i] = malloc(s->alloc[i].buf.size);
		ck_assert(s->expect[i]);
		memcpy(s->expect[i], s->map[i], s->alloc[i].buf.size);
	}
	nm_counters(fd, &s->counters);
}

void nm_sentinel_check(struct nm_sentinel *s, const char *f, int l)
{
	struct nm_counters now;

	for (int i = 0; i < 2; i++) {
		struct npu_mem_buffer q;
		size_t bad = SIZE_MAX;
		int ret;

		if (memcmp(s->map[i], s->expect[i], s->alloc[i].buf.size))
			bad = nm_verify(s->map[i], s->alloc[i].buf.size,
					s->seed + i);
		if (bad != SIZE_MAX)
			_ck_assert_failed(f, l, "sentinel",
				"sentinel %d (handle %u) contents changed at "
				"offset %zu", i, s->alloc[i].handle, bad);
		ret = nm_query(s->fd, s->alloc[i].handle, &q);
		if (ret)
			_ck_assert_failed(f, l, "sentinel",
				"QUERY of sentinel %d (handle %u): %s", i,
				s->alloc[i].handle, nm_retname(ret));
		_nm_assert_buf_eq(&s->alloc[i].buf, &q, f, l);
	}
	_nm_counters(s->fd, &now, f, l);
	_nm_assert_counters_eq(&s->counters, &now, true, f, l);
}

void nm_sentinel_resnap(struct nm_sentinel *s)
{
	nm_counters(s->fd, &s->counters);
}

void nm_sentinel_fini(struct nm_sentinel *s)
{
	for (int i = 0; i < 2; i++) {
		munmap(s->map[i], s->alloc[i].buf.size);
		free(s->expect[i]);
		nm_free_ok(s->fd, s->alloc[i].handle);
	}
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */

void *nm_guard_place(struct nm_guard *g, size_t len, size_t overhang)
{
	size_t inside = len - overhang;
	size_t rw = NM_ALIGN(inside ? inside : 1, NM_4K);
	uint8_t *base, *obj;

	ck_assert(overhang <= len);
	base = mmap(NULL, rw + NM_4K, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_msg(base != MAP_FAILED, "mmap guard: %s", nm_errname(errno));
	ck_assert(mprotect(base + rw, NM_4K, PROT_NONE) == 0);
	g->base = base;
	g->len = rw + NM_4K;
	obj = base + rw - inside;
	memset(obj, 0, inside);
	return obj;
}

void nm_guard_readonly(struct nm_guard *g)
{
	ck_assert(mprotect(g->base, g->len - NM_4K, PROT_READ) == 0);
}

void nm_guard_release(struct nm_guard *g)
{
	munmap(g->base, g->len);
	g->base = NULL;
}

void *nm_unmapped_addr(void)
{
	void *p = mmap(NULL, 2 * NM_4K, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	ck_assert(p != MAP_FAILED);
	munmap(p, 2 * NM_4K);
	return (uint8_t *)p + 64;
}

/* ------------------------------------------------------------------ */

void _nm_wait_ok(pid_t pid, const char *msg, const char *f, int l)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		_ck_assert_failed(f, l, "wait", "waitpid(%s): %s", msg,
				  nm_errname(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		_ck_assert_failed(f, l, "wait", "child %s: %s %d", msg,
				  WIFEXITED(st) ? "exit status" : "signal",
				  WIFEXITED(st) ? WEXITSTATUS(st) :
						  WTERMSIG(st));
}

int nm_await_no_retained(int fd, double secs, uint64_t *left)
{
	double t0 = nm_now();
	struct npu_mem_info info;

	for (;;) {
		int r = nm_get_info(fd, &info);

		if (r)
			return r;
		*left = info.retained_bytes;
		if (!*left)
			return 0;
		if (nm_now() - t0 >= secs)
			return -ETIMEDOUT;
		usleep(20 * 1000);
	}
}

uint64_t nm_vmpin_bytes(void)
{
	uint64_t bytes = 0;
	int ret = nm_vmpin(&bytes);

	ck_assert_msg(ret == 0, "VmPin in /proc/self/status: %s",
		      nm_retname(ret));
	return bytes;
}

void nm_assert_dmesg_clean(void)
{
	char *out = NULL;
	int rc;

	rc = nm_shell("dmesg | sed -n '/vm-run: ---- test start/,$p' | "
		      "grep -e '[Bb]ad page' -e 'BUG:' -e 'WARNING:'", &out);
	ck_assert_msg(rc == 1, "the kernel complained (grep exit %d):\n%s", rc,
		      out ? out : "");
	free(out);
}

static uint64_t saved_max_bytes;
static bool have_saved_max_bytes;

static void save_max_bytes(void)
{
	have_saved_max_bytes = nm_param_get("max_bytes", &saved_max_bytes) == 0;
}

static void restore_max_bytes(void)
{
	if (have_saved_max_bytes)
		nm_param_set("max_bytes", saved_max_bytes);
}

const struct nm_fixture nm_max_bytes_fx = {
	.setup = save_max_bytes, .teardown = restore_max_bytes, .unchecked = true,
};
