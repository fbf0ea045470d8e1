// SPDX-License-Identifier: GPL-2.0-only
/*
 * exit_cleanup: a process that ends with buffers live gives everything back.
 *  - exit() with buffers allocated, mapped, freed-while-mapped, in several
 *    open files: counters back to their start values after waitpid;
 *  - SIGKILL with the same state: the same;
 *  - SIGKILL during a big allocation (1 GiB NORMAL_ONLY or what free memory
 *    allows, and HUGE_FIRST), after a few ms: no hang, counters back;
 *  - buffers belong to the open file, not the process: a child allocating
 *    through an inherited fd and exiting leaves them to the parent, which
 *    frees them (charged to a process that is gone) or closes the file;
 *  - a thread of a multi-threaded process calling exit_group while others
 *    allocate and map.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nmtest_util.h"

/* Child body: leave a mess; end with exit(0) or by SIGKILL from itself. */
static void make_mess(bool kill_self)
{
	int fd1 = open(NM_DEV_PATH, O_RDWR), fd2 = open(NM_DEV_PATH, O_RDWR);
	struct npu_mem_alloc a;
	uint8_t *p;

	if (fd1 < 0 || fd2 < 0)
		_exit(1);
	for (int i = 0; i < 12; i++) {
		int fd = i % 2 ? fd1 : fd2;

		if (nm_alloc(fd, (i + 1) * 300 * NM_KiB, i % 3, 0, &a))
			_exit(2);
		if (i % 3 == 0)
			continue;		/* allocated, never mapped */
		p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, a.buf.mmap_offset);
		if (p == MAP_FAILED)
			_exit(3);
		memset(p, i, a.buf.size);
		if (i % 3 == 2 && nm_free(fd, a.handle))  /* freed, mapped */
			_exit(4);
	}
	/* one more mapping of a file that is closed */
	if (nm_alloc(fd2, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0, &a))
		_exit(5);
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd2,
		 a.buf.mmap_offset);
	if (p == MAP_FAILED)
		_exit(6);
	close(fd2);
	if (kill_self)
		raise(SIGKILL);
	exit(0);
}

static void mess_and_end(bool kill_self)
{
	struct nm_counters start;
	int obs = nm_open(), st;
	pid_t pid;

	nm_counters(obs, &start);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		make_mess(kill_self);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (kill_self)
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			      "child status %#x", st);
	else
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "child status %#x", st);
	nm_assert_counters_now(obs, &start);
	close(obs);
}

START_TEST(exit_with_buffers_live)
{
	mess_and_end(false);
}
END_TEST

START_TEST(sigkill_with_buffers_live)
{
	mess_and_end(true);
}
END_TEST

static void kill_during_alloc(uint32_t policy)
{
	static const int delays_ms[] = { 1, 3, 10, 30, 100, 300 };
	struct nm_counters start;
	struct npu_mem_info info;
	uint64_t size;
	int obs = nm_open();

	nm_get_info_ok(obs, &info);
	nm_counters(obs, &start);
	size = NM_1G;
	if (size > info.free_ram / 2)
		size = (info.free_ram / 2) & ~(NM_2M - 1);
	printf("%s: killing allocations of %llu bytes\n",
	       nm_policy_name(policy), (unsigned long long)size);
	for (size_t i = 0; i < NM_ARRAY_SIZE(delays_ms); i++) {
		struct timespec ts = { 0, delays_ms[i] * 1000000L };
		double t0;
		pid_t pid;
		int st;

		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int fd = open(NM_DEV_PATH, O_RDWR);
			struct npu_mem_alloc a;

			if (fd < 0)
				_exit(1);
			nm_alloc(fd, size, policy, 0, &a);
			pause();	/* done before the kill: wait for it */
			_exit(0);
		}
		nanosleep(&ts, NULL);
		t0 = nm_now();
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		st = nm_wait_timeout(pid, 60);
		ck_assert_msg(st != -1, "child did not die within 60 s of "
			      "SIGKILL during ALLOC (%d ms in)", delays_ms[i]);
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			      "child status %#x", st);
		printf("  killed after %d ms: reaped %.3f s after SIGKILL\n",
		       delays_ms[i], nm_now() - t0);
		nm_assert_counters_now(obs, &start);
	}
	close(obs);
}

START_TEST(sigkill_during_big_alloc_normal)
{
	kill_during_alloc(NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(sigkill_during_big_alloc_huge_first)
{
	kill_during_alloc(NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(buffers_belong_to_the_file)
{
	struct nm_counters start, c;
	struct npu_mem_alloc a[3];
	int fd = nm_open(), obs = nm_open(), p[2];
	pid_t pid;

	nm_counters(obs, &start);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (int i = 0; i < 3; i++) {
			uint8_t *m;

			if (nm_alloc(fd, (i + 1) * NM_MiB, i, 0, &a[i]))
				_exit(1);
			m = mmap(NULL, a[i].buf.size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, a[i].buf.mmap_offset);
			if (m == MAP_FAILED)
				_exit(2);
			memset(m, 0x3c, a[i].buf.size);
			/* mapping ends with the process, the handle not */
		}
		if (write(p[1], a, sizeof(a)) != sizeof(a))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], a, sizeof(a)), (ssize_t)sizeof(a));
	close(p[0]);
	nm_wait_ok(pid, "allocating child");
	/* still there, with their contents */
	nm_counters(obs, &c);
	ck_assert_uint_eq(c.buffers, start.buffers + 3);
	for (int i = 0; i < 3; i++) {
		struct npu_mem_buffer q;
		uint8_t *m;

		nm_assert_ok(nm_query(fd, a[i].handle, &q));
		nm_assert_buf_eq(&a[i].buf, &q);
		m = nm_map_ok(fd, &a[i], PROT_READ);
		ck_assert_uint_eq(m[0], 0x3c);
		ck_assert_uint_eq(m[a[i].buf.size - 1], 0x3c);
		munmap(m, a[i].buf.size);
	}
	/* the parent frees one (charged to the dead child), closes the rest */
	nm_free_ok(fd, a[1].handle);
	close(fd);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

struct thr {
	int fd;
	volatile bool *stop;
};

static void *alloc_loop(void *arg)
{
	struct thr *t = arg;
	struct npu_mem_alloc a;

	for (unsigned i = 0; !*t->stop && i < 200; i++) {
		uint8_t *p;

		if (nm_alloc(t->fd, (i % 4 + 1) * 100 * NM_KiB, i % 3, 0, &a))
			continue;
		p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 t->fd, a.buf.mmap_offset);
		if (p != MAP_FAILED)
			p[0] = 1;	/* left mapped and allocated */
	}
	return NULL;
}

START_TEST(exit_group_while_threads_allocate)
{
	struct nm_counters start;
	int obs = nm_open();

	nm_counters(obs, &start);
	for (int round = 0; round < 5; round++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			static volatile bool stop;
			struct thr t = { open(NM_DEV_PATH, O_RDWR), &stop };
			pthread_t th[4];

			for (int i = 0; i < 4; i++)
				pthread_create(&th[i], NULL, alloc_loop, &t);
			usleep(20000 + round * 20000);
			exit(0);	/* exit_group with threads inside
					 * the driver */
		}
		nm_wait_ok(pid, "threaded child");
		nm_assert_counters_now(obs, &start);
	}
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("exit_cleanup");

	nm_add(s, exit_with_buffers_live, 60);
	nm_add(s, sigkill_with_buffers_live, 60);
	nm_add(s, sigkill_during_big_alloc_normal, 300);
	nm_add(s, sigkill_during_big_alloc_huge_first, 300);
	nm_add(s, buffers_belong_to_the_file, 60);
	nm_add(s, exit_group_while_threads_allocate, 120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
