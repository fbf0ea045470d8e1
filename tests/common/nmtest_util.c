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
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "nmtest_util.h"

const struct nm_ioctl_desc nm_ioctls_v1[] = {
#define D(cmd, nr, dir, type) { #cmd, cmd, nr, dir, sizeof(type) }
	D(NPU_MEM_IOCTL_GET_INFO, 0x00, NM_IOC_RW, struct npu_mem_info),
	D(NPU_MEM_IOCTL_ALLOC, 0x01, NM_IOC_RW, struct npu_mem_alloc),
	D(NPU_MEM_IOCTL_FREE, 0x02, _IOC_WRITE, struct npu_mem_free),
	D(NPU_MEM_IOCTL_QUERY, 0x03, NM_IOC_RW, struct npu_mem_query),
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

void nm_add(Suite *s, const TTest *t, double timeout_s)
{
	TCase *tc = tcase_create(t->name);

	tcase_add_test(tc, t);
	tcase_set_timeout(tc, timeout_s);
	suite_add_tcase(s, tc);
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

static int nm_kernel_major(void)
{
	struct utsname u;

	return uname(&u) == 0 ? atoi(u.release) : 0;
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
	ck_assert_msg(err == EINVAL && nm_kernel_major() >= 7,
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

static __thread char nm_namebuf[8][48];
static __thread unsigned int nm_nameidx;

const char *nm_errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "0";
	char *b;

	if (n)
		return n;
	b = nm_namebuf[nm_nameidx++ % 8];
	snprintf(b, sizeof(nm_namebuf[0]), "errno %d", err);
	return b;
}

const char *nm_retname(long ret)
{
	char *b = nm_namebuf[nm_nameidx++ % 8];

	if (ret < 0 && ret > -4096)
		snprintf(b, sizeof(nm_namebuf[0]), "-%s", nm_errname(-ret));
	else
		snprintf(b, sizeof(nm_namebuf[0]), "%ld", ret);
	return b;
}

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

uint64_t nm_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Cheap (TCG runs it over hundreds of MiB) but different for every word
 * index and seed. */
static inline uint64_t nm_word(uint64_t seed, uint64_t idx)
{
	uint64_t x = (idx + 1) * 0x9e3779b97f4a7c15ULL ^ seed;

	return x ^ (x >> 29);
}

static size_t nm_verify_at_slow(const void *p, size_t len, uint64_t seed,
				uint64_t base);

void nm_fill_at(void *p, size_t len, uint64_t seed, uint64_t base)
{
	uint8_t *b = p;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = nm_word(seed, (base + i) / 8);

		memcpy(b + i, &w, len - i < 8 ? len - i : 8);
	}
}

size_t nm_verify_at(const void *p, size_t len, uint64_t seed, uint64_t base)
{
	const uint8_t *b = p;

	if (base % 8 == 0 && (uintptr_t)p % 8 == 0) {
		const uint64_t *w = p;
		size_t i, n = len / 8;

		for (i = 0; i < n; i++)
			if (w[i] != nm_word(seed, base / 8 + i))
				break;
		if (i == n && len % 8 == 0)
			return SIZE_MAX;
		/* find the exact byte below */
		b += i * 8;
		len -= i * 8;
		base += i * 8;
		p = b;
		{
			size_t r = nm_verify_at_slow(b, len, seed, base);

			return r == SIZE_MAX ? r : r + i * 8;
		}
	}
	return nm_verify_at_slow(p, len, seed, base);
}

static size_t nm_verify_at_slow(const void *p, size_t len, uint64_t seed,
				uint64_t base)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = nm_word(seed, (base + i) / 8);
		size_t n = len - i < 8 ? len - i : 8;

		if (memcmp(b + i, &w, n)) {
			for (size_t j = 0; j < n; j++)
				if (b[i + j] != ((uint8_t *)&w)[j])
					return i + j;
		}
	}
	return SIZE_MAX;
}

void nm_fill(void *p, size_t len, uint64_t seed)
{
	nm_fill_at(p, len, seed, 0);
}

size_t nm_verify(const void *p, size_t len, uint64_t seed)
{
	return nm_verify_at(p, len, seed, 0);
}

size_t nm_nonzero(const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i = 0;

	for (; i + 64 <= len; i += 64) {
		const uint64_t *w = (const uint64_t *)(b + i);

		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			break;
	}
	for (; i < len; i++)
		if (b[i])
			return i;
	return SIZE_MAX;
}

size_t nm_first_not(const void *p, size_t len, uint8_t v)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != v)
			return i;
	return SIZE_MAX;
}

/* volatile: the stores around the probing access must not be elided or moved */
static __thread sigjmp_buf *volatile nm_probe_jmp;

static void nm_probe_handler(int sig)
{
	if (nm_probe_jmp)
		siglongjmp(*nm_probe_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

int nm_probe(volatile void *addr, bool write)
{
	struct sigaction sa = { .sa_handler = nm_probe_handler }, old_segv,
			 old_bus;
	sigjmp_buf jb;
	int sig;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(jb, 1);
	if (sig == 0) {
		nm_probe_jmp = &jb;
		if (write)
			*(volatile uint8_t *)addr = *(volatile uint8_t *)addr;
		else
			(void)*(volatile uint8_t *)addr;
	}
	nm_probe_jmp = NULL;
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

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

int nm_wait_timeout(pid_t pid, double timeout_s)
{
	double end = nm_now() + timeout_s;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (nm_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

char *nm_read_file(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

int nm_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	return (size_t)n == strlen(text) ? 0 : -EIO;
}

int nm_kv_file(const char *path, const char *key, uint64_t *val)
{
	return nm_key_file(path, key, ':', val);
}

int nm_key_file(const char *path, const char *key, char sep, uint64_t *val)
{
	char *text = nm_read_file(path), *line, *save = NULL;
	size_t klen = strlen(key);
	int ret = -ENOENT;

	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (strncmp(line, key, klen) || line[klen] != sep)
			continue;
		errno = 0;
		*val = strtoull(line + klen + 1, &end, 10);
		ret = (errno || end == line + klen + 1) ? -EINVAL : 0;
		break;
	}
	free(text);
	return ret;
}

int nm_fdinfo(int fd, const char *key, uint64_t *val)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return nm_kv_file(path, key, val);
}

uint64_t nm_vmpin_bytes(void)
{
	uint64_t kb = 0;
	int ret = nm_kv_file("/proc/self/status", "VmPin", &kb);

	ck_assert_msg(ret == 0, "VmPin in /proc/self/status: %s",
		      nm_retname(ret));
	return kb * 1024;
}

int nm_param_get(const char *name, uint64_t *val)
{
	char path[128], *text, *end;

	snprintf(path, sizeof(path), NM_SYSMOD "/parameters/%s", name);
	text = nm_read_file(path);
	if (!text)
		return -errno;
	errno = 0;
	*val = strtoull(text, &end, 0);
	if (errno || end == text) {
		free(text);
		return -EINVAL;
	}
	free(text);
	return 0;
}

int nm_param_set(const char *name, uint64_t val)
{
	char path[128], text[32];

	snprintf(path, sizeof(path), NM_SYSMOD "/parameters/%s", name);
	snprintf(text, sizeof(text), "%llu", (unsigned long long)val);
	return nm_write_file(path, text);
}

int nm_drop_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t m = ~(uint32_t)(caps >> (32 * i));

		d[i].effective &= m;
		d[i].permitted &= m;
		d[i].inheritable &= m;
	}
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}

int nm_debugfs_mount(void)
{
	struct statfs sfs;

	if (statfs("/sys/kernel/debug", &sfs) == 0 &&
	    sfs.f_type == DEBUGFS_MAGIC)
		return 0;
	if (access("/sys/kernel/debug", F_OK))
		return -errno;
	if (unshare(CLONE_NEWNS))
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL))
		return -errno;
	return 0;
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

int nm_shell(const char *cmd, char **out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *full;
	FILE *f;
	int st;

	if (out)
		*out = NULL;
	if (!buf || asprintf(&full, "( %s ) 2>&1", cmd) < 0) {
		free(buf);
		return -1;
	}
	f = popen(full, "r");
	free(full);
	if (!f) {
		free(buf);
		return -1;
	}
	for (;;) {
		size_t n;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	buf[len] = 0;
	st = pclose(f);
	if (out)
		*out = buf;
	else
		free(buf);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

double nm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t nm_env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long r;

	if (!v || !*v)
		return def;
	errno = 0;
	r = strtoull(v, &end, 0);
	return (errno || *end) ? def : r;
}
