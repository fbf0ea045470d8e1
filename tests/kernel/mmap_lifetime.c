// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmap_lifetime: a mapping keeps its buffer alive.
 *  - FREE while mapped: the handle is gone at once (QUERY/FREE -> ENOENT,
 *    client_buffers/client_bytes drop, mmap at its old offset -> EINVAL),
 *    the memory stays readable and writable through the mapping, and the
 *    global counters drop only when the last mapping (or piece of one) goes;
 *  - close(fd) while mapped: the same, the file's buffers live on in the
 *    mappings (unmapped ones may live until the file's last mapping goes:
 *    the mappings hold the open file) and are all gone after the last
 *    munmap;
 *  - fork(): the child does not inherit the mapping (VM_DONTCOPY: touching
 *    the address faults in the child), it can map the buffer itself through
 *    the inherited file, and the parent freeing and unmapping while the child
 *    still maps it is fine for both; counters back at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_util.h"

static void free_while_mapped(uint64_t size, uint32_t policy)
{
	struct nm_counters start, live, c;
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	int fd = nm_open();
	uint8_t *p, *p2;

	nm_counters(fd, &start);
	nm_alloc_ok(fd, size, policy, 0, &a);
	nm_counters(fd, &live);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	p2 = nm_map_ok(fd, &a, PROT_READ);
	nm_fill(p, a.buf.size, 1);
	nm_free_ok(fd, a.handle);

	/* the handle is gone */
	nm_assert_ret(nm_query(fd, a.handle, &q), -ENOENT);
	nm_assert_ret(nm_free(fd, a.handle), -ENOENT);
	nm_assert_mmap_errno(nm_mmap(fd, a.buf.mmap_offset, a.buf.size,
				     PROT_READ), EINVAL);
	nm_counters(fd, &c);
	ck_assert_uint_eq(c.client_buffers, start.client_buffers);
	ck_assert_uint_eq(c.client_bytes, start.client_bytes);
	/* the memory is not */
	nm_assert_global_eq(&live, &c);
	ck_assert_uint_eq(nm_verify(p, a.buf.size, 1), SIZE_MAX);
	nm_fill(p, a.buf.size, 2);
	ck_assert_uint_eq(nm_verify(p2, a.buf.size, 2), SIZE_MAX);

	/* new buffers do not get its pages */
	{
		struct npu_mem_alloc b;
		uint8_t *pb;

		nm_alloc_ok(fd, size, policy, 0, &b);
		pb = nm_map_ok(fd, &b, PROT_READ | PROT_WRITE);
		ck_assert_uint_eq(nm_nonzero(pb, b.buf.size), SIZE_MAX);
		memset(pb, 0xee, b.buf.size);
		ck_assert_uint_eq(nm_verify(p, a.buf.size, 2), SIZE_MAX);
		munmap(pb, b.buf.size);
		nm_free_ok(fd, b.handle);
	}

	munmap(p, a.buf.size);
	nm_counters(fd, &c);
	nm_assert_global_eq(&live, &c);		/* p2 still maps it */
	ck_assert_uint_eq(nm_verify(p2, a.buf.size, 2), SIZE_MAX);
	munmap(p2, a.buf.size);
	nm_assert_counters_now(fd, &start);
	close(fd);
}

START_TEST(free_while_mapped_normal)
{
	free_while_mapped(3 * NM_MiB + NM_4K, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(free_while_mapped_huge)
{
	free_while_mapped(6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(free_while_mapped_huge_first)
{
	free_while_mapped(5 * NM_MiB + 3, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(free_while_partly_mapped)
{
	/* only a part mapped, FREE, then the part unmapped in two pieces */
	struct nm_counters start, live, c;
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p;

	nm_counters(fd, &start);
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	nm_counters(fd, &live);
	p = nm_mmap(fd, a.buf.mmap_offset + NM_2M - 2 * NM_4K, 4 * NM_4K,
		    PROT_READ | PROT_WRITE);
	ck_assert(p != MAP_FAILED);
	nm_fill(p, 4 * NM_4K, 3);
	nm_free_ok(fd, a.handle);
	munmap(p, 2 * NM_4K);
	nm_counters(fd, &c);
	nm_assert_global_eq(&live, &c);
	ck_assert_uint_eq(nm_verify_at(p + 2 * NM_4K, 2 * NM_4K, 3, 2 * NM_4K),
			  SIZE_MAX);
	munmap(p + 2 * NM_4K, 2 * NM_4K);
	nm_assert_counters_now(fd, &start);
	close(fd);
}
END_TEST

START_TEST(close_while_mapped)
{
	struct nm_counters start, live, c;
	struct npu_mem_alloc a[3];
	uint8_t *p[3];
	int obs = nm_open(), fd = nm_open();
	static const uint32_t pol[3] = { NPU_MEM_POLICY_NORMAL_ONLY,
					 NPU_MEM_POLICY_HUGE_ONLY,
					 NPU_MEM_POLICY_HUGE_FIRST };

	nm_counters(obs, &start);
	for (int i = 0; i < 3; i++) {
		nm_alloc_ok(fd, 2 * NM_MiB + 5 * NM_4K, pol[i], 0, &a[i]);
		p[i] = nm_map_ok(fd, &a[i], PROT_READ | PROT_WRITE);
		nm_fill(p[i], a[i].buf.size, 10 + i);
	}
	nm_counters(obs, &live);
	ck_assert_int_eq(close(fd), 0);
	nm_counters(obs, &c);
	nm_assert_global_eq(&live, &c);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(nm_verify(p[i], a[i].buf.size, 10 + i),
				  SIZE_MAX);
		nm_fill(p[i], a[i].buf.size, 20 + i);
		ck_assert_uint_eq(nm_verify(p[i], a[i].buf.size, 20 + i),
				  SIZE_MAX);
	}
	/* Buffers go at the latest when the last mapping of the file's
	 * buffers goes (the mappings hold the file): until then each still
	 * mapped one is counted. */
	for (int i = 0; i < 3; i++) {
		munmap(p[i], a[i].buf.size);
		nm_counters_add(&live, &a[i].buf, -1, false);
		nm_counters(obs, &c);
		ck_assert_uint_ge(c.buffers, live.buffers);
		ck_assert_uint_ge(c.allocated_bytes, live.allocated_bytes);
		for (int j = i + 1; j < 3; j++)
			ck_assert_uint_eq(nm_verify(p[j], a[j].buf.size,
						    20 + j), SIZE_MAX);
	}
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

START_TEST(close_with_unmapped_and_mapped_buffers)
{
	/* close with one buffer mapped and one not: the mapped one stays
	 * until munmap (the unmapped one may stay as long: the mapping holds
	 * the file); all gone after munmap */
	struct nm_counters start, c, expect;
	struct npu_mem_alloc a, b;
	int obs = nm_open(), fd = nm_open();
	uint8_t *pb;

	nm_counters(obs, &start);
	nm_alloc_ok(fd, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	nm_alloc_ok(fd, 16 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &b);
	pb = nm_map_ok(fd, &b, PROT_READ | PROT_WRITE);
	close(fd);
	expect = start;
	nm_counters_add(&expect, &b.buf, +1, false);
	nm_counters(obs, &c);
	if (c.buffers != expect.buffers) {
		printf("note: the unmapped buffer of the closed file is "
		       "still allocated while another is mapped\n");
		nm_counters_add(&expect, &a.buf, +1, false);
	}
	nm_assert_global_eq(&expect, &c);
	pb[0] = 1;
	munmap(pb, b.buf.size);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

START_TEST(fork_child_does_not_inherit_mapping)
{
	struct nm_counters start;
	struct npu_mem_alloc a;
	int fd = nm_open(), obs = nm_open();
	uint8_t *p;
	pid_t pid;
	int to_child[2], to_parent[2];
	char tok;

	nm_counters(obs, &start);
	nm_alloc_ok(fd, 4 * NM_MiB + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 5);
	ck_assert_int_eq(pipe(to_child), 0);
	ck_assert_int_eq(pipe(to_parent), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint8_t *c;
		/* no mapping at p in the child */
		if (nm_probe(p, false) != SIGSEGV)
			_exit(10);
		if (nm_probe(p + a.buf.size - 1, true) != SIGSEGV)
			_exit(11);
		/* the file is inherited: the child maps the buffer itself
		 * (handles belong to the open file, shared with the parent) */
		c = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, a.buf.mmap_offset);
		if (c == MAP_FAILED)
			_exit(12);
		if (nm_verify(c, a.buf.size, 5) != SIZE_MAX)
			_exit(13);
		if (write(to_parent[1], "m", 1) != 1)
			_exit(14);
		/* parent frees and unmaps now */
		if (read(to_child[0], &tok, 1) != 1)
			_exit(15);
		if (nm_verify(c, a.buf.size, 6) != SIZE_MAX)
			_exit(16);
		nm_fill(c, a.buf.size, 7);
		if (write(to_parent[1], "w", 1) != 1)
			_exit(17);
		if (read(to_child[0], &tok, 1) != 1)
			_exit(18);
		munmap(c, a.buf.size);
		_exit(0);
	}
	ck_assert_int_eq(read(to_parent[0], &tok, 1), 1);
	/* the child's writes and ours meet in the same pages */
	nm_fill(p, a.buf.size, 6);
	nm_free_ok(fd, a.handle);
	munmap(p, a.buf.size);
	{
		struct nm_counters c, live = start;

		nm_counters_add(&live, &a.buf, +1, false);
		nm_counters(obs, &c);
		nm_assert_global_eq(&live, &c);	/* the child maps it */
	}
	ck_assert_int_eq(write(to_child[1], "f", 1), 1);
	ck_assert_int_eq(read(to_parent[0], &tok, 1), 1);
	ck_assert_int_eq(write(to_child[1], "x", 1), 1);
	nm_wait_ok(pid, "forked mapper");
	close(fd);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

START_TEST(fork_parent_frees_child_keeps_file)
{
	/* The child holds only the inherited fd (no mapping); the parent
	 * frees its buffer and exits the picture; the child's view of the
	 * handle is the file's: ENOENT. */
	struct nm_counters start;
	struct npu_mem_alloc a;
	int fd = nm_open(), obs = nm_open();
	uint8_t *p;
	pid_t pid;
	int sync_pipe[2];
	char tok;

	nm_counters(obs, &start);
	nm_alloc_ok(fd, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	memset(p, 0x11, a.buf.size);
	ck_assert_int_eq(pipe(sync_pipe), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct npu_mem_buffer q;

		if (nm_probe(p, false) != SIGSEGV)
			_exit(10);
		if (read(sync_pipe[0], &tok, 1) != 1)
			_exit(11);
		if (nm_query(fd, a.handle, &q) != -ENOENT)
			_exit(12);
		_exit(0);
	}
	nm_free_ok(fd, a.handle);
	ck_assert_uint_eq(p[a.buf.size - 1], 0x11);
	munmap(p, a.buf.size);
	ck_assert_int_eq(write(sync_pipe[1], "g", 1), 1);
	nm_wait_ok(pid, "child with the inherited fd");
	close(fd);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("mmap_lifetime");

	nm_add(s, free_while_mapped_normal, 60);
	nm_add(s, free_while_mapped_huge, 60);
	nm_add(s, free_while_mapped_huge_first, 60);
	nm_add(s, free_while_partly_mapped, 60);
	nm_add(s, close_while_mapped, 60);
	nm_add(s, close_with_unmapped_and_mapped_buffers, 60);
	nm_add(s, fork_child_does_not_inherit_mapping, 60);
	nm_add(s, fork_parent_frees_child_keeps_file, 60);
	return nm_run(s, NM_NEEDS_DEVICE);
}
