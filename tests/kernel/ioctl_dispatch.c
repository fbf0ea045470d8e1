// SPDX-License-Identifier: GPL-2.0-only
/*
 * ioctl_dispatch: how /dev/npu-mem decodes an ioctl command and its argument,
 * for each v1 command (GET_INFO, ALLOC, FREE, QUERY):
 *  - wrong magic, unknown nr, wrong direction bits: -ENOTTY;
 *  - size in the command smaller than the v1 struct: -EINVAL;
 *  - larger with the extra bytes zero: accepted, output limited to the
 *    caller's size (bytes past it untouched, extra bytes stay zero);
 *    larger with a non-zero extra byte: -EINVAL;
 *  - NULL, unmapped, or partly unmapped argument: -EFAULT; an argument that
 *    ends exactly at the end of a page followed by a PROT_NONE page works
 *    (no over-read, tt-kmd style); output into a read-only page: -EFAULT, and
 *    an ALLOC that cannot report its handle leaves nothing allocated.
 * After every call: an unrelated live buffer's contents and QUERY answer and
 * the driver's counters are unchanged (NM_SENTINEL_CHECK).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_fixture.h"

#define IOC_MAX_SIZE	((1U << _IOC_SIZEBITS) - 1)	/* 16383 */
#define GUARD_BYTE	0xa5

struct ctx {
	struct nm_ctx nm;
	uint32_t victim;		/* a buffer for FREE to free */
	struct npu_mem_buffer victim_buf;
};

/* The four v1 commands this binary covers (SYNC/EXPORT have their own). */
static const struct nm_ioctl_desc *desc(int i)
{
	ck_assert(i >= 0 && i < 4);
	return &nm_ioctls_v1[i];
}
#define FOR_EACH_DESC(d) \
	for (int _i = 0; _i < 4 && ((d) = desc(_i)); _i++)

static void ctx_init(struct ctx *c)
{
	nm_ctx_init(&c->nm, 0);
	c->victim = 0;
}

/* Before a call: FREE needs a buffer to free (allocated and freed within
 * one step, so the sentinel's counters still hold afterwards). */
static void before(struct ctx *c, const struct nm_ioctl_desc *d)
{
	struct npu_mem_alloc a;

	if (d->cmd != NPU_MEM_IOCTL_FREE)
		return;
	c->victim = nm_alloc_ok(c->nm.fd, 3 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
				0, &a);
	c->victim_buf = a.buf;
}

/* A valid v1 argument for d, written to p (which has room for v1). */
static void fill_valid(struct ctx *c, const struct nm_ioctl_desc *d, void *p)
{
	switch (_IOC_NR(d->cmd)) {
	case 0x00:
		memset(p, 0, sizeof(struct npu_mem_info));
		break;
	case 0x01: {
		struct npu_mem_alloc a = {
			.size = NM_4K + 1,
			.policy = NPU_MEM_POLICY_NORMAL_ONLY,
		};

		memcpy(p, &a, sizeof(a));
		break;
	}
	case 0x02: {
		struct npu_mem_free f = { .handle = c->victim };

		memcpy(p, &f, sizeof(f));
		break;
	}
	case 0x03: {
		struct npu_mem_query q = { .handle = c->nm.s.alloc[1].handle };

		memcpy(p, &q, sizeof(q));
		break;
	}
	}
}

/*
 * After a call that returned ret (expected: want): check its effect through
 * p (NULL when p is not readable), undo it, and check nothing else moved.
 */
static void after(struct ctx *c, const struct nm_ioctl_desc *d, const void *p,
		  int ret, int want, const char *what)
{
	struct npu_mem_buffer b;

	ck_assert_msg(ret == want, "%s %s: expected %s, got %s", d->name, what,
		      nm_retname(want), nm_retname(ret));
	switch (_IOC_NR(d->cmd)) {
	case 0x00:
		if (!ret && p) {
			struct npu_mem_info info;

			memcpy(&info, p, sizeof(info));
			ck_assert_uint_eq(info.abi_major, NPU_MEM_ABI_MAJOR);
			ck_assert_uint_eq(info.client_buffers, 2);
		}
		break;
	case 0x01:
		if (!ret && p) {
			struct npu_mem_alloc a;

			memcpy(&a, p, sizeof(a));
			ck_assert_uint_ne(a.handle, 0);
			nm_assert_buffer_sane(NM_4K + 1,
					      NPU_MEM_POLICY_NORMAL_ONLY, 0,
					      &a.buf);
			nm_assert_ok(nm_query(c->nm.fd, a.handle, &b));
			nm_assert_buf_eq(&a.buf, &b);
			nm_free_ok(c->nm.fd, a.handle);
		}
		break;
	case 0x02:
		/* Freed exactly when the call succeeded. */
		nm_assert_ret(nm_query(c->nm.fd, c->victim, &b),
			      ret ? 0 : -ENOENT);
		if (ret) {
			nm_assert_buf_eq(&c->victim_buf, &b);
			nm_free_ok(c->nm.fd, c->victim);
		}
		c->victim = 0;
		break;
	case 0x03:
		if (!ret && p) {
			struct npu_mem_query q;

			memcpy(&q, p, sizeof(q));
			nm_assert_buf_eq(&c->nm.s.alloc[1].buf, &q.buf);
		}
		break;
	}
	NM_SENTINEL_CHECK(&c->nm.s);
}

static int raw(struct ctx *c, unsigned long cmd, void *p)
{
	return nm_ioctl(c->nm.fd, cmd, p);
}

/* ------------------------------------------------------------------ */

START_TEST(wrong_magic)
{
	static const unsigned int magics[] = { 0, 'X', 0xB8, 0xBA, 0xFF,
					       NPU_MEM_IOCTL_MAGIC ^ 0x80 };
	const struct nm_ioctl_desc *d;
	struct ctx c;
	uint8_t arg[512];

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		for (size_t m = 0; m < NM_ARRAY_SIZE(magics); m++) {
			unsigned long cmd = _IOC(d->dir, magics[m], d->nr,
						 d->size);

			before(&c, d);
			fill_valid(&c, d, arg);
			after(&c, d, NULL, raw(&c, cmd, arg), -ENOTTY,
			      "with another magic");
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(unknown_nr)
{
	static const unsigned int nrs[] = { 0x0f, 0x11, 0x20, 0x10, 0x3f,
					    0x40, 0x7f, 0x80, 0xfe, 0xff };
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     NM_IOC_RW };
	static const unsigned int sizes[] = { 0, 8, 64, 144, 4096 };
	struct ctx c;
	static uint8_t arg[4096];

	ctx_init(&c);
	for (size_t n = 0; n < NM_ARRAY_SIZE(nrs); n++)
		for (size_t i = 0; i < NM_ARRAY_SIZE(dirs); i++)
			for (size_t s = 0; s < NM_ARRAY_SIZE(sizes); s++) {
				unsigned long cmd = NM_IOC(dirs[i], nrs[n],
							   sizes[s]);

				int r;

				memset(arg, 0, sizeof(arg));
				r = raw(&c, cmd, arg);
				NM_REQUIRE(r == -ENOTTY, "unknown ioctl %#lx: %s",
					   cmd, nm_retname(r));
				NM_REQUIRE(nm_nonzero(arg, sizeof(arg)) ==
					   SIZE_MAX, "unknown ioctl %#lx wrote "
					   "to its argument", cmd);
			}
	NM_SENTINEL_CHECK(&c.nm.s);
	/* A plain _IO with the magic and nothing else. */
	nm_assert_ret(raw(&c, _IO(NPU_MEM_IOCTL_MAGIC, 0x0c), NULL), -ENOTTY);
	NM_SENTINEL_CHECK(&c.nm.s);
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(wrong_direction)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     NM_IOC_RW };
	const struct nm_ioctl_desc *d;
	struct ctx c;
	uint8_t arg[512];

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		for (size_t i = 0; i < NM_ARRAY_SIZE(dirs); i++) {
			if (dirs[i] == d->dir)
				continue;
			/* both with the right size and with size 0 (_IO) */
			for (int zero = 0; zero < 2; zero++) {
				unsigned long cmd = NM_IOC(dirs[i], d->nr,
							   zero ? 0 : d->size);

				before(&c, d);
				fill_valid(&c, d, arg);
				after(&c, d, NULL, raw(&c, cmd, arg), -ENOTTY,
				      "with wrong direction bits");
			}
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(right_command_works)
{
	/*
	 * The control for the tests around: the exact command works, and for
	 * a struct that grew, the v1 one a binary built before sends.
	 */
	const struct nm_ioctl_desc *d;
	struct ctx c;
	uint8_t arg[512];

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		before(&c, d);
		fill_valid(&c, d, arg);
		after(&c, d, arg, raw(&c, d->cmd, arg), 0, "v1");
		if (d->v1_size == d->size)
			continue;
		before(&c, d);
		fill_valid(&c, d, arg);
		memset(arg + d->v1_size, 0, d->size - d->v1_size);
		after(&c, d, arg, raw(&c, NM_IOC(d->dir, d->nr, d->v1_size), arg),
		      0, "of the v1 size");
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(size_smaller)
{
	const struct nm_ioctl_desc *d;
	struct ctx c;
	uint8_t arg[512];

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		const size_t sizes[] = { 0, 1, 4, d->v1_size / 2,
					 d->v1_size - 8, d->v1_size - 1 };

		for (size_t s = 0; s < NM_ARRAY_SIZE(sizes); s++) {
			size_t us = sizes[s];

			before(&c, d);
			memset(arg, GUARD_BYTE, sizeof(arg));
			fill_valid(&c, d, arg);
			/* the bytes the caller does not own */
			memset(arg + us, GUARD_BYTE, sizeof(arg) - us);
			after(&c, d, NULL, raw(&c, NM_IOC(d->dir, d->nr, us),
					       arg), -EINVAL,
			      "with a size smaller than v1");
			{
				size_t k = nm_first_not(arg + us,
							sizeof(arg) - us,
							GUARD_BYTE);

				ck_assert_msg(k == SIZE_MAX, "%s size %zu wrote "
					      "byte %zu", d->name, us, us + k);
			}
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(size_larger_zero)
{
	const struct nm_ioctl_desc *d;
	struct ctx c;
	static uint8_t arg[IOC_MAX_SIZE + 4096];

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		const size_t sizes[] = { d->size + 1, d->size + 4,
					 d->size + 8, d->size + 64, 4096,
					 IOC_MAX_SIZE };

		for (size_t s = 0; s < NM_ARRAY_SIZE(sizes); s++) {
			size_t us = sizes[s];

			before(&c, d);
			memset(arg, 0, us);
			memset(arg + us, GUARD_BYTE, sizeof(arg) - us);
			fill_valid(&c, d, arg);
			after(&c, d, arg, raw(&c, NM_IOC(d->dir, d->nr, us),
					      arg), 0,
			      "with a larger size, extra bytes zero");
			{
				size_t k = nm_nonzero(arg + d->size,
						      us - d->size);

				ck_assert_msg(k == SIZE_MAX, "%s size %zu: "
					      "extra byte %zu became %#x",
					      d->name, us, d->size + k,
					      arg[d->size + k]);
				k = nm_first_not(arg + us, sizeof(arg) - us,
						 GUARD_BYTE);
				ck_assert_msg(k == SIZE_MAX, "%s size %zu wrote "
					      "byte %zu past the caller's size",
					      d->name, us, us + k);
			}
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(size_larger_nonzero)
{
	const struct nm_ioctl_desc *d;
	struct ctx c;
	static uint8_t arg[IOC_MAX_SIZE + 1];

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		const size_t sizes[] = { d->size + 1, d->size + 8, 4096,
					 IOC_MAX_SIZE };

		for (size_t s = 0; s < NM_ARRAY_SIZE(sizes); s++) {
			size_t us = sizes[s];
			/* the first extra byte (low bit), the last (high
			 * bit), and one in the middle */
			const struct {
				size_t at;
				uint8_t v;
			} bad[] = { { d->size, 0x01 }, { us - 1, 0x80 },
				    { d->size + (us - d->size) / 2, 0x10 } };

			for (size_t w = 0; w < NM_ARRAY_SIZE(bad); w++) {
				before(&c, d);
				memset(arg, 0, us);
				fill_valid(&c, d, arg);
				arg[bad[w].at] = bad[w].v;
				after(&c, d, NULL,
				      raw(&c, NM_IOC(d->dir, d->nr, us), arg),
				      -EINVAL, "with a non-zero extra byte");
			}
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(efault_null)
{
	const struct nm_ioctl_desc *d;
	struct ctx c;

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		before(&c, d);
		after(&c, d, NULL, raw(&c, d->cmd, NULL), -EFAULT, "NULL");
		/* and with a larger size */
		before(&c, d);
		after(&c, d, NULL, raw(&c, NM_IOC(d->dir, d->nr, d->size + 8),
				       NULL), -EFAULT, "NULL, larger size");
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(efault_unmapped)
{
	const struct nm_ioctl_desc *d;
	struct ctx c;
	void *none, *bad[4];

	/*
	 * Addresses are taken after ctx_init(): its mappings could otherwise
	 * land in a hole picked earlier (seen on arm64).  A PROT_NONE mapping
	 * stays unreadable whatever else gets mapped.
	 */
	ctx_init(&c);
	none = mmap(NULL, 2 * NM_4K, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ck_assert(none != MAP_FAILED);
	bad[0] = (uint8_t *)none + 64;
	bad[1] = nm_unmapped_addr();
	bad[2] = (void *)(uintptr_t)-4096;
	bad[3] = (void *)(uintptr_t)0x1000;
	FOR_EACH_DESC(d) {
		for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
			before(&c, d);
			after(&c, d, NULL, raw(&c, d->cmd, bad[i]), -EFAULT,
			      "unmapped");
		}
	}
	munmap(none, 2 * NM_4K);
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(efault_straddles_page)
{
	/* The argument's last bytes are in a PROT_NONE page. */
	const struct nm_ioctl_desc *d;
	struct ctx c;

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		const size_t overhang[] = { 1, 4, 8, d->size / 2, d->size };

		for (size_t i = 0; i < NM_ARRAY_SIZE(overhang); i++) {
			struct nm_guard g;
			uint8_t tmp[512];
			uint8_t *p = nm_guard_place(&g, d->size, overhang[i]);

			before(&c, d);
			fill_valid(&c, d, tmp);
			memcpy(p, tmp, d->size - overhang[i]);
			after(&c, d, NULL, raw(&c, d->cmd, p), -EFAULT,
			      "straddling into a PROT_NONE page");
			nm_guard_release(&g);
		}
		/* A larger size whose extra bytes are in the PROT_NONE page. */
		{
			struct nm_guard g;
			uint8_t *p = nm_guard_place(&g, d->size + 8, 8);

			before(&c, d);
			fill_valid(&c, d, p);
			after(&c, d, NULL, raw(&c, NM_IOC(d->dir, d->nr,
							  d->size + 8), p),
			      -EFAULT, "extra bytes in a PROT_NONE page");
			nm_guard_release(&g);
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(page_end_no_overread)
{
	/* Flush against a PROT_NONE page: the kernel must read exactly the
	 * caller's size, not a byte more. */
	const struct nm_ioctl_desc *d;
	struct ctx c;

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		const size_t sizes[] = { d->size, d->size + 8, d->size + 1 };

		for (size_t s = 0; s < NM_ARRAY_SIZE(sizes); s++) {
			struct nm_guard g;
			uint8_t *p = nm_guard_place(&g, sizes[s], 0);

			before(&c, d);
			fill_valid(&c, d, p);
			after(&c, d, p, raw(&c, NM_IOC(d->dir, d->nr, sizes[s]),
					    p), 0,
			      "ending flush at a PROT_NONE page");
			nm_guard_release(&g);
		}
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(efault_readonly_output)
{
	/* Output into a read-only page: -EFAULT for the commands that write
	 * back; FREE only reads its argument and works. */
	const struct nm_ioctl_desc *d;
	struct ctx c;

	ctx_init(&c);
	FOR_EACH_DESC(d) {
		struct nm_guard g;
		uint8_t *p = nm_guard_place(&g, d->size, 0);
		int want = (d->dir & _IOC_READ) ? -EFAULT : 0;

		before(&c, d);
		fill_valid(&c, d, p);
		nm_guard_readonly(&g);
		/* For ALLOC: the buffer must not survive a handle nobody
		 * learned (the sentinel's counters prove it). */
		after(&c, d, NULL, raw(&c, d->cmd, p), want,
		      "with a read-only argument");
		nm_guard_release(&g);
	}
	nm_ctx_fini(&c.nm);
}
END_TEST

START_TEST(alloc_efault_no_handle_leak)
{
	/* After an ALLOC whose copy-out failed, the next handles and the
	 * counters look as if it never happened; close then frees nothing
	 * unexpected. */
	struct nm_counters start, end;
	int fd = nm_open(), fd2 = nm_open();

	nm_counters(fd2, &start);
	for (int i = 0; i < 64; i++) {
		struct nm_guard g;
		struct npu_mem_alloc *a = nm_guard_place(&g, sizeof(*a), 0);

		a->size = (i + 1) * NM_4K;
		a->policy = i % 2 ? NPU_MEM_POLICY_HUGE_FIRST :
				    NPU_MEM_POLICY_NORMAL_ONLY;
		nm_guard_readonly(&g);
		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_ALLOC, a), -EFAULT);
		nm_guard_release(&g);
	}
	nm_assert_global_now(fd2, &start);
	nm_assert_global_now(fd, &start);
	{
		struct npu_mem_info info;

		nm_get_info_ok(fd, &info);
		ck_assert_uint_eq(info.client_buffers, 0);
		ck_assert_uint_eq(info.client_bytes, 0);
	}
	close(fd);
	nm_counters(fd2, &end);
	nm_assert_counters_eq(&start, &end);
	close(fd2);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("ioctl_dispatch");

	nm_add(s, right_command_works, 60);
	nm_add(s, wrong_magic, 60);
	nm_add(s, unknown_nr, 60);
	nm_add(s, wrong_direction, 60);
	nm_add(s, size_smaller, 60);
	nm_add(s, size_larger_zero, 120);
	nm_add(s, size_larger_nonzero, 120);
	nm_add(s, efault_null, 60);
	nm_add(s, efault_unmapped, 60);
	nm_add(s, efault_straddles_page, 60);
	nm_add(s, page_end_no_overread, 60);
	nm_add(s, efault_readonly_output, 60);
	nm_add(s, alloc_efault_no_handle_leak, 60);
	return nm_run(s, NM_NEEDS_DEVICE);
}
