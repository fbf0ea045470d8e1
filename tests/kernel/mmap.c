// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmap: CPU mappings of buffers through the /dev/npu-mem file.
 *  - MAP_SHARED at buf.mmap_offset maps the buffer read/write, for each
 *    policy; two mappings of one buffer see each other's writes;
 *  - a page-aligned part (offset + k*4 KiB, shorter length) maps exactly
 *    those bytes, also across 2 MiB chunk boundaries;
 *  - MAP_PRIVATE -> EINVAL; an offset that is no buffer's (never was, freed,
 *    far away) -> EINVAL; a length past the buffer's end (also into the next
 *    buffer's offsets) -> EINVAL; unaligned offset / length 0 -> EINVAL;
 *  - READONLY buffers: PROT_WRITE -> EACCES, PROT_READ works, a later
 *    mprotect(PROT_WRITE) -> EACCES, and stores fault;
 *  - mremap growing -> EFAULT (mm/mremap.c refuses to expand a
 *    VM_DONTEXPAND mapping with -EFAULT, in 6.1 and 6.12 alike), with and
 *    without MREMAP_MAYMOVE; the mapping is intact afterwards;
 *  - partial munmap (also inside a 2 MiB chunk) keeps the rest valid and
 *    the hole unmapped;
 *  - MADV_DONTNEED (part of a chunk, a chunk, all) loses nothing: the
 *    bytes fault back in; mprotect of a writable buffer's mapping works
 *    both ways;
 *  - which page-table level 2 MiB chunks get is reported (informational).
 * Every refused mmap leaves an unrelated live buffer and the counters alone.
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_util.h"

static const uint32_t policies[] = { NPU_MEM_POLICY_NORMAL_ONLY,
				     NPU_MEM_POLICY_HUGE_ONLY,
				     NPU_MEM_POLICY_HUGE_FIRST };

START_TEST(map_whole_rw)
{
	int fd = nm_open();

	for (size_t i = 0; i < NM_ARRAY_SIZE(policies); i++) {
		struct npu_mem_alloc a;
		uint8_t *p, *p2;
		size_t bad;

		nm_alloc_ok(fd, 6 * NM_MiB + 3 * NM_4K, policies[i], 0, &a);
		p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		nm_fill(p, a.buf.size, 100 + i);
		bad = nm_verify(p, a.buf.size, 100 + i);
		ck_assert_msg(bad == SIZE_MAX, "%s: readback differs at %zu",
			      nm_policy_name(policies[i]), bad);
		/* a second mapping of the same buffer sees the same bytes,
		 * and writes through either are seen by the other */
		p2 = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		ck_assert_ptr_ne(p, p2);
		ck_assert_uint_eq(nm_verify(p2, a.buf.size, 100 + i), SIZE_MAX);
		nm_fill(p2, a.buf.size, 200 + i);
		ck_assert_uint_eq(nm_verify(p, a.buf.size, 200 + i), SIZE_MAX);
		p[a.buf.size - 1] = 0x42;
		ck_assert_uint_eq(p2[a.buf.size - 1], 0x42);
		munmap(p2, a.buf.size);
		/* PROT_READ alone works on a writable buffer too */
		p2 = nm_map_ok(fd, &a, PROT_READ);
		ck_assert_uint_eq(p2[a.buf.size - 1], 0x42);
		munmap(p2, a.buf.size);
		munmap(p, a.buf.size);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

START_TEST(map_part)
{
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *whole;
	uint64_t npages;
	const uint64_t seed = 0xbeef;

	nm_alloc_ok(fd, 8 * NM_MiB + 5 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0,
		    &a);
	npages = a.buf.size / NM_4K;
	whole = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(whole, a.buf.size, seed);
	{
		const struct {
			uint64_t page, len_pages;
		} parts[] = {
			{ 0, 1 }, { 1, 1 }, { 1, 3 }, { 511, 2 }, { 512, 512 },
			{ 513, 1000 }, { 1023, 2 }, { npages - 1, 1 },
			{ npages - 5, 5 }, { 2047, npages - 2047 },
			{ 1, npages - 1 },
		};

		for (size_t i = 0; i < NM_ARRAY_SIZE(parts); i++) {
			uint64_t off = parts[i].page * NM_4K;
			size_t len = parts[i].len_pages * NM_4K;
			uint8_t *p = nm_mmap(fd, a.buf.mmap_offset + off, len,
					     PROT_READ | PROT_WRITE);
			size_t bad;

			ck_assert_msg(p != MAP_FAILED, "mmap part at page "
				      "%llu, %zu bytes: %s",
				      (unsigned long long)parts[i].page, len,
				      nm_errname(errno));
			bad = nm_verify_at(p, len, seed, off);
			ck_assert_msg(bad == SIZE_MAX, "part at page %llu: "
				      "byte %zu differs from the buffer's "
				      "byte %llu", (unsigned long long)
				      parts[i].page, bad,
				      (unsigned long long)(off + bad));
			/* write through the part, see it in the whole */
			p[0] ^= 0xff;
			p[len - 1] ^= 0xff;
			ck_assert_uint_eq(whole[off], p[0]);
			ck_assert_uint_eq(whole[off + len - 1], p[len - 1]);
			p[0] ^= 0xff;
			p[len - 1] ^= 0xff;
			munmap(p, len);
		}
	}
	ck_assert_uint_eq(nm_verify(whole, a.buf.size, seed), SIZE_MAX);
	munmap(whole, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

START_TEST(map_private_einval)
{
	struct nm_sentinel s;
	int fd = nm_open();

	nm_sentinel_init(&s, fd);
	for (int i = 0; i < 2; i++) {
		const struct npu_mem_buffer *b = &s.alloc[i].buf;

		nm_assert_mmap_errno(mmap(NULL, b->size, PROT_READ,
					  MAP_PRIVATE, fd, b->mmap_offset),
				     EINVAL);
		NM_SENTINEL_CHECK(&s);
		nm_assert_mmap_errno(mmap(NULL, b->size,
					  PROT_READ | PROT_WRITE, MAP_PRIVATE,
					  fd, b->mmap_offset), EINVAL);
		NM_SENTINEL_CHECK(&s);
		nm_assert_mmap_errno(mmap(NULL, NM_4K, PROT_READ,
					  MAP_PRIVATE | MAP_POPULATE, fd,
					  b->mmap_offset), EINVAL);
		NM_SENTINEL_CHECK(&s);
	}
	nm_sentinel_fini(&s);
	close(fd);
}
END_TEST

START_TEST(map_offset_not_a_buffer)
{
	struct npu_mem_alloc a;
	struct nm_sentinel s;
	uint64_t end = 0, freed_off;
	int fd = nm_open();

	nm_sentinel_init(&s, fd);
	nm_alloc_ok(fd, 3 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	freed_off = a.buf.mmap_offset;
	nm_free_ok(fd, a.handle);
	NM_SENTINEL_CHECK(&s);
	for (int i = 0; i < 2; i++) {
		uint64_t e = s.alloc[i].buf.mmap_offset + s.alloc[i].buf.size;

		if (e > end)
			end = e;
	}
	{
		const uint64_t offs[] = {
			freed_off,		/* was a buffer's */
			end + 64 * NM_MiB,	/* past every buffer */
			1ULL << 40, 1ULL << 46,
			(1ULL << 62),
			(uint64_t)INT64_MAX & ~(NM_4K - 1),
		};

		for (size_t i = 0; i < NM_ARRAY_SIZE(offs); i++) {
			if (offs[i] >= s.alloc[0].buf.mmap_offset &&
			    offs[i] < end)
				continue;	/* belongs to a live buffer */
			nm_assert_mmap_errno(nm_mmap(fd, offs[i], NM_4K,
						     PROT_READ), EINVAL);
			NM_SENTINEL_CHECK(&s);
		}
	}
	/* offset 0, unless it is a live buffer's */
	if (s.alloc[0].buf.mmap_offset && s.alloc[1].buf.mmap_offset) {
		nm_assert_mmap_errno(nm_mmap(fd, 0, NM_4K, PROT_READ), EINVAL);
		NM_SENTINEL_CHECK(&s);
	}
	/* not page aligned (refused before the driver sees it) */
	nm_assert_mmap_errno(nm_mmap(fd, s.alloc[0].buf.mmap_offset + 1, NM_4K,
				     PROT_READ), EINVAL);
	NM_SENTINEL_CHECK(&s);
	/* length 0 */
	nm_assert_mmap_errno(nm_mmap(fd, s.alloc[0].buf.mmap_offset, 0,
				     PROT_READ), EINVAL);
	NM_SENTINEL_CHECK(&s);
	/* another file's buffer offsets mean nothing here */
	{
		int other = nm_open();

		nm_assert_mmap_errno(nm_mmap(other, s.alloc[1].buf.mmap_offset,
					     NM_4K, PROT_READ), EINVAL);
		close(other);
		NM_SENTINEL_CHECK(&s);
	}
	nm_sentinel_fini(&s);
	close(fd);
}
END_TEST

START_TEST(map_length_past_end)
{
	struct npu_mem_alloc a, b;
	struct nm_sentinel s;
	int fd = nm_open();

	nm_sentinel_init(&s, fd);
	nm_alloc_ok(fd, 4 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_alloc_ok(fd, 4 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &b);
	nm_sentinel_resnap(&s);		/* a and b stay live */
	{
		const struct {
			uint64_t off;
			size_t len;
		} bad[] = {
			{ 0, 5 * NM_4K }, { NM_4K, 4 * NM_4K },
			{ 3 * NM_4K, 2 * NM_4K }, { 0, 64 * NM_MiB },
			{ 4 * NM_4K, NM_4K },	/* starts at the end */
			{ 0, 8 * NM_4K },	/* into the next buffer, if
						 * it happens to be next */
		};

		for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
			uint64_t o = a.buf.mmap_offset + bad[i].off;

			/* a start that is another live buffer's offset is
			 * a valid mapping of that buffer: not this case */
			if (o == b.buf.mmap_offset ||
			    o == s.alloc[0].buf.mmap_offset ||
			    o == s.alloc[1].buf.mmap_offset)
				continue;
			nm_assert_mmap_errno(nm_mmap(fd, o, bad[i].len,
						     PROT_READ), EINVAL);
			NM_SENTINEL_CHECK(&s);
			nm_assert_mmap_errno(nm_mmap(fd, s.alloc[1].buf.
						     mmap_offset + bad[i].off,
						     s.alloc[1].buf.size -
						     4 * NM_4K + bad[i].len,
						     PROT_READ), EINVAL);
			NM_SENTINEL_CHECK(&s);
		}
	}
	/* exactly to the end is fine */
	{
		uint8_t *p = nm_mmap(fd, a.buf.mmap_offset + NM_4K, 3 * NM_4K,
				     PROT_READ | PROT_WRITE);

		ck_assert_msg(p != MAP_FAILED, "mmap to the end: %s",
			      nm_errname(errno));
		munmap(p, 3 * NM_4K);
	}
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, b.handle);
	close(fd);
}
END_TEST

START_TEST(readonly_buffer)
{
	int fd = nm_open();

	for (size_t i = 0; i < NM_ARRAY_SIZE(policies); i++) {
		struct npu_mem_alloc a;
		struct nm_counters c;
		uint8_t *p;

		nm_alloc_ok(fd, 2 * NM_MiB + NM_4K, policies[i],
			    NPU_MEM_ALLOC_READONLY, &a);
		nm_counters(fd, &c);
		nm_assert_mmap_errno(nm_mmap(fd, a.buf.mmap_offset, a.buf.size,
					     PROT_READ | PROT_WRITE), EACCES);
		nm_assert_mmap_errno(nm_mmap(fd, a.buf.mmap_offset, NM_4K,
					     PROT_WRITE), EACCES);
		nm_assert_mmap_errno(nm_mmap(fd, a.buf.mmap_offset + NM_4K,
					     NM_4K, PROT_READ | PROT_WRITE),
				     EACCES);
		nm_assert_counters_now(fd, &c);
		p = nm_map_ok(fd, &a, PROT_READ);
		ck_assert_uint_eq(nm_nonzero(p, a.buf.size), SIZE_MAX);
		nm_assert_errno(mprotect(p, a.buf.size, PROT_READ | PROT_WRITE),
				EACCES);
		nm_assert_errno(mprotect(p, NM_4K, PROT_WRITE), EACCES);
		ck_assert_int_eq(nm_probe(p, false), 0);
		ck_assert_int_eq(nm_probe(p + a.buf.size - 1, true), SIGSEGV);
		ck_assert_int_eq(nm_probe(p, true), SIGSEGV);
		ck_assert_uint_eq(nm_nonzero(p, a.buf.size), SIZE_MAX);
		munmap(p, a.buf.size);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

START_TEST(mremap_grow_refused)
{
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p, *part;

	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 7);
	/* past the buffer */
	nm_assert_errno(mremap(p, a.buf.size, a.buf.size + NM_4K, 0), EFAULT);
	nm_assert_errno(mremap(p, a.buf.size, a.buf.size + NM_4K,
			       MREMAP_MAYMOVE), EFAULT);
	nm_assert_errno(mremap(p, a.buf.size, 2 * a.buf.size, MREMAP_MAYMOVE),
			EFAULT);
	ck_assert_uint_eq(nm_verify(p, a.buf.size, 7), SIZE_MAX);
	/* growing a part of the buffer (still inside it) is refused too */
	part = nm_mmap(fd, a.buf.mmap_offset, NM_4K, PROT_READ | PROT_WRITE);
	ck_assert(part != MAP_FAILED);
	nm_assert_errno(mremap(part, NM_4K, 2 * NM_4K, MREMAP_MAYMOVE),
			EFAULT);
	ck_assert_uint_eq(nm_verify(part, NM_4K, 7), SIZE_MAX);
	munmap(part, NM_4K);
	ck_assert_uint_eq(nm_verify(p, a.buf.size, 7), SIZE_MAX);
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

static void partial_munmap(uint32_t policy, uint64_t size, uint64_t hole,
			   uint64_t hole_len)
{
	struct nm_counters start, live;
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p;

	nm_counters(fd, &start);
	nm_alloc_ok(fd, size, policy, 0, &a);
	nm_counters(fd, &live);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 77);
	ck_assert_int_eq(munmap(p + hole, hole_len), 0);
	/* before and after the hole: intact, readable and writable */
	ck_assert_uint_eq(nm_verify(p, hole, 77), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(p + hole + hole_len,
				       a.buf.size - hole - hole_len, 77,
				       hole + hole_len), SIZE_MAX);
	ck_assert_int_eq(nm_probe(p, true), 0);
	ck_assert_int_eq(nm_probe(p + a.buf.size - 1, true), 0);
	/* the hole is gone */
	ck_assert_int_eq(nm_probe(p + hole, false), SIGSEGV);
	ck_assert_int_eq(nm_probe(p + hole + hole_len - 1, false), SIGSEGV);
	/* the buffer is still whole: map the hole's bytes again */
	{
		uint8_t *h = nm_mmap(fd, a.buf.mmap_offset + hole, hole_len,
				     PROT_READ);

		ck_assert(h != MAP_FAILED);
		ck_assert_uint_eq(nm_verify_at(h, hole_len, 77, hole),
				  SIZE_MAX);
		munmap(h, hole_len);
	}
	nm_assert_counters_now(fd, &live);
	/* FREE with the two remaining pieces mapped: counted until the last
	 * piece goes */
	nm_free_ok(fd, a.handle);
	munmap(p, hole);
	{
		struct nm_counters c;

		nm_counters(fd, &c);
		nm_assert_global_eq(&live, &c);
	}
	ck_assert_uint_eq(nm_verify_at(p + hole + hole_len,
				       a.buf.size - hole - hole_len, 77,
				       hole + hole_len), SIZE_MAX);
	munmap(p + hole + hole_len, a.buf.size - hole - hole_len);
	nm_assert_counters_now(fd, &start);
	close(fd);
}

START_TEST(partial_munmap_normal)
{
	partial_munmap(NPU_MEM_POLICY_NORMAL_ONLY, 16 * NM_4K, 4 * NM_4K,
		       4 * NM_4K);
}
END_TEST

START_TEST(partial_munmap_inside_huge_chunk)
{
	/* one 4 KiB page out of the middle of the second 2 MiB chunk */
	partial_munmap(NPU_MEM_POLICY_HUGE_ONLY, 6 * NM_MiB, NM_2M + 17 * NM_4K,
		       NM_4K);
}
END_TEST

START_TEST(partial_munmap_whole_huge_chunk)
{
	partial_munmap(NPU_MEM_POLICY_HUGE_FIRST, 6 * NM_MiB + NM_4K, NM_2M,
		       NM_2M);
}
END_TEST

START_TEST(madv_dontneed_keeps_contents)
{
	/* MADV_DONTNEED on a shared device mapping only drops page table
	 * entries: the next access faults the same bytes back in. */
	int fd = nm_open();

	for (size_t i = 0; i < NM_ARRAY_SIZE(policies); i++) {
		struct npu_mem_alloc a;
		uint8_t *p;

		nm_alloc_ok(fd, 6 * NM_MiB, policies[i], 0, &a);
		p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
		nm_fill(p, a.buf.size, 300 + i);
		/* one page inside a 2 MiB chunk, a whole chunk, everything */
		ck_assert_int_eq(madvise(p + NM_2M + 5 * NM_4K, NM_4K,
					 MADV_DONTNEED), 0);
		ck_assert_uint_eq(nm_verify(p, a.buf.size, 300 + i), SIZE_MAX);
		ck_assert_int_eq(madvise(p + NM_2M, NM_2M, MADV_DONTNEED), 0);
		ck_assert_uint_eq(nm_verify(p, a.buf.size, 300 + i), SIZE_MAX);
		ck_assert_int_eq(madvise(p, a.buf.size, MADV_DONTNEED), 0);
		nm_fill(p, a.buf.size, 400 + i);	/* write faults */
		ck_assert_int_eq(madvise(p, a.buf.size, MADV_DONTNEED), 0);
		ck_assert_uint_eq(nm_verify(p, a.buf.size, 400 + i), SIZE_MAX);
		/* and the same bytes through a second mapping */
		{
			uint8_t *q = nm_map_ok(fd, &a, PROT_READ);

			ck_assert_int_eq(memcmp(p, q, a.buf.size), 0);
			munmap(q, a.buf.size);
		}
		munmap(p, a.buf.size);
		nm_free_ok(fd, a.handle);
	}
	close(fd);
}
END_TEST

START_TEST(mprotect_writable_buffer)
{
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p;

	nm_alloc_ok(fd, NM_2M + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	p[0] = 1;
	ck_assert_int_eq(mprotect(p, a.buf.size, PROT_READ), 0);
	ck_assert_int_eq(nm_probe(p, true), SIGSEGV);
	ck_assert_uint_eq(p[0], 1);
	ck_assert_int_eq(mprotect(p, a.buf.size, PROT_READ | PROT_WRITE), 0);
	p[a.buf.size - 1] = 2;
	ck_assert_uint_eq(p[a.buf.size - 1], 2);
	/* mapped read-only first, made writable later: allowed for a
	 * writable buffer */
	{
		uint8_t *q = nm_map_ok(fd, &a, PROT_READ);

		ck_assert_int_eq(mprotect(q, a.buf.size,
					  PROT_READ | PROT_WRITE), 0);
		q[1] = 3;
		ck_assert_uint_eq(p[1], 3);
		munmap(q, a.buf.size);
	}
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

START_TEST(pmd_mapping_report)
{
	/* Informational: how the kernel maps a 2 MiB chunk (one PMD or 512
	 * PTEs) on this kernel.  I/O on either is tested in io_paths. */
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p;
	char *smaps, *line, *save = NULL;
	char hex[32];
	bool in = false;

	nm_alloc_ok(fd, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	memset(p, 1, a.buf.size);
	printf("8 MiB HUGE_ONLY mapping at %p (%s2 MiB aligned)\n", p,
	       ((uintptr_t)p & (NM_2M - 1)) ? "NOT " : "");
	snprintf(hex, sizeof(hex), "%lx-", (unsigned long)(uintptr_t)p);
	smaps = nm_read_file("/proc/self/smaps");
	ck_assert(smaps);
	for (line = strtok_r(smaps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *dash = strchr(line, '-'), *sp = strchr(line, ' ');
		/* "start-end perms ..." vs "Key: value" */
		bool header = (isdigit((unsigned char)line[0]) ||
			       (line[0] >= 'a' && line[0] <= 'f')) &&
			      dash && sp && dash < sp;

		if (header) {
			if (in)
				break;
			in = !strncmp(line, hex, strlen(hex));
		}
		if (in && (header || strstr(line, "Rss") ||
			   strstr(line, "PmdMapped") ||
			   strstr(line, "VmFlags")))
			printf("  %s\n", line);
	}
	free(smaps);
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("mmap");

	nm_add(s, map_whole_rw, 120);
	nm_add(s, map_part, 120);
	nm_add(s, map_private_einval, 30);
	nm_add(s, map_offset_not_a_buffer, 30);
	nm_add(s, map_length_past_end, 30);
	nm_add(s, readonly_buffer, 60);
	nm_add(s, mremap_grow_refused, 60);
	nm_add(s, partial_munmap_normal, 30);
	nm_add(s, partial_munmap_inside_huge_chunk, 60);
	nm_add(s, partial_munmap_whole_huge_chunk, 60);
	nm_add(s, madv_dontneed_keeps_contents, 60);
	nm_add(s, mprotect_writable_buffer, 30);
	nm_add(s, pmd_mapping_report, 30);
	return nm_run(s, NM_NEEDS_DEVICE);
}
