// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmap_offsets: no two live handles of one file ever have overlapping mmap
 * offset ranges, also once the file's offset space has been used up and
 * the module reuses the gaps that FREE left (kernel/client.c).
 *
 * The real space is 2^32 pages (16 TiB) per file: no test fills it.  The
 * test build of the module has debugfs npu_mem/pgoff_limit (root): files
 * opened while it holds N get the offsets [1, N) pages only.  With a space
 * of 100 pages the wrap takes a handful of small buffers:
 *  - A (50 pages) and B (40) fill [1, 91); FREE B; C (45 pages) no longer
 *    fits above B's end, so it goes into the gap [51, 96), across where
 *    B ended; D (5 pages) must then not land at 91, inside C;
 *  - a few hundred ALLOC/FREE rounds of random sizes in a space of 256
 *    pages: every ALLOC gives a range inside the space that meets no live
 *    one, or -ENOSPC, and every live handle's mapping shows its own bytes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_util.h"

#define KNOB	NM_DEBUGFS "/pgoff_limit"

static void restore_knob(void)
{
	if (access(KNOB, W_OK) == 0)
		nm_write_file(KNOB, "0");
}

static const struct nm_fixture knob_fx = {
	.teardown = restore_knob, .unchecked = true,
};

/* A file whose offset space is [1, limit) pages; -1 without the knob. */
static int open_small(uint64_t limit)
{
	char text[32];
	int fd;

	if (access(KNOB, W_OK))
		return -1;
	snprintf(text, sizeof(text), "%llu", (unsigned long long)limit);
	nm_assert_ok(nm_write_file(KNOB, text));
	fd = nm_open();
	nm_assert_ok(nm_write_file(KNOB, "0"));
	return fd;
}

#define SKIP_WITHOUT_KNOB() do {					\
	if (access(KNOB, W_OK))						\
		nm_skip("%s: %s (the test build of the module has it; "	\
			"root only)", KNOB, nm_errname(errno));		\
} while (0)

struct live {
	uint32_t handle;
	uint64_t off, size;	/* bytes */
};

/* Every pair of live ranges is disjoint and inside [1, limit) pages. */
#define assert_disjoint(l, n, limit) \
	_assert_disjoint((l), (n), (limit), __FILE__, __LINE__)
static void _assert_disjoint(const struct live *l, int n, uint64_t limit,
			     const char *f, int line)
{
	for (int i = 0; i < n; i++) {
		if (l[i].off < NM_4K || l[i].off + l[i].size > limit * NM_4K)
			_ck_assert_failed(f, line, "range", "handle %u at "
					  "[%#llx, %#llx) outside the space "
					  "[0x1000, %#llx)", l[i].handle,
					  (unsigned long long)l[i].off,
					  (unsigned long long)(l[i].off + l[i].size),
					  (unsigned long long)(limit * NM_4K));
		for (int j = i + 1; j < n; j++)
			if (l[i].off < l[j].off + l[j].size &&
			    l[j].off < l[i].off + l[i].size)
				_ck_assert_failed(f, line, "overlap", "handles "
						  "%u [%#llx, %#llx) and %u "
						  "[%#llx, %#llx) overlap",
						  l[i].handle,
						  (unsigned long long)l[i].off,
						  (unsigned long long)(l[i].off + l[i].size),
						  l[j].handle,
						  (unsigned long long)l[j].off,
						  (unsigned long long)(l[j].off + l[j].size));
	}
}

static void add(int fd, struct live *l, uint64_t pages)
{
	struct npu_mem_alloc a;

	nm_alloc_ok(fd, pages * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	l->handle = a.handle;
	l->off = a.buf.mmap_offset;
	l->size = a.buf.size;
}

START_TEST(gap_across_the_end)
{
	struct npu_mem_alloc a;
	struct live l[4];
	uint8_t *m;
	int fd;

	SKIP_WITHOUT_KNOB();
	fd = open_small(101);
	add(fd, &l[0], 50);
	add(fd, &l[1], 40);
	ck_assert_uint_eq(l[1].off, 51 * NM_4K);
	nm_free_ok(fd, l[1].handle);
	/* [91, 101) cannot take 45 pages: the gap B left, [51, 101), can */
	add(fd, &l[1], 45);
	ck_assert_uint_eq(l[1].off, 51 * NM_4K);
	add(fd, &l[2], 5);
	assert_disjoint(l, 3, 101);
	/* and a mapping of the last shows its own pages, not C's */
	m = nm_mmap(fd, l[2].off, l[2].size, PROT_READ | PROT_WRITE);
	ck_assert(m != MAP_FAILED);
	nm_fill(m, l[2].size, 0xd);
	munmap(m, l[2].size);
	m = nm_mmap(fd, l[1].off, l[1].size, PROT_READ);
	ck_assert(m != MAP_FAILED);
	ck_assert_msg(nm_nonzero(m, l[1].size) == SIZE_MAX, "C's mapping "
		      "shows D's bytes at %zu", nm_nonzero(m, l[1].size));
	munmap(m, l[1].size);
	/* the space is full now */
	nm_assert_ret(nm_alloc(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a),
		      -ENOSPC);
	close(fd);
}
END_TEST

START_TEST(churn_in_a_small_space)
{
	const uint64_t limit = 257;
	struct live l[64];
	unsigned int seed = 12345, allocs = 0, full = 0;
	int n = 0, fd;

	SKIP_WITHOUT_KNOB();
	fd = open_small(limit);
	for (int round = 0; round < 600; round++) {
		if (n && (n == 64 || rand_r(&seed) % 3 == 0)) {
			int i = (int)(rand_r(&seed) % (unsigned int)n);

			nm_free_ok(fd, l[i].handle);
			l[i] = l[--n];
			continue;
		}
		uint64_t pages = 1 + rand_r(&seed) % 40;
		struct npu_mem_alloc a;
		int ret = nm_alloc(fd, pages * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY,
				   0, &a);

		if (ret == -ENOSPC) {
			full++;
			continue;
		}
		ck_assert_msg(ret == 0, "ALLOC of %llu pages: %s",
			      (unsigned long long)pages, nm_retname(ret));
		allocs++;
		l[n].handle = a.handle;
		l[n].off = a.buf.mmap_offset;
		l[n].size = a.buf.size;
		n++;
		assert_disjoint(l, n, limit);
	}
	printf("%u ALLOCs, %u refused for want of space, %d live at the end\n",
	       allocs, full, n);
	ck_assert_uint_gt(full, 0);
	/* every live mapping shows its own bytes */
	for (int i = 0; i < n; i++) {
		uint8_t *m = nm_mmap(fd, l[i].off, l[i].size,
				     PROT_READ | PROT_WRITE);

		ck_assert(m != MAP_FAILED);
		nm_fill(m, l[i].size, 100 + (uint64_t)i);
		munmap(m, l[i].size);
	}
	for (int i = 0; i < n; i++) {
		uint8_t *m = nm_mmap(fd, l[i].off, l[i].size, PROT_READ);

		ck_assert(m != MAP_FAILED);
		nm_assert_pattern(m, l[i].size, 100 + (uint64_t)i, 0);
		munmap(m, l[i].size);
	}
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("mmap_offsets");

	nm_add_fx(s, gap_across_the_end, 60, &knob_fx);
	nm_add_fx(s, churn_in_a_small_space, 120, &knob_fx);
	return nm_run(s, NM_NEEDS_DEVICE);
}
