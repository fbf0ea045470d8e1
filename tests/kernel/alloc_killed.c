// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_killed: a process killed during a large ALLOC stops taking
 * pages at once, rather than when the allocation is done.
 *
 * Allocating and zeroing a large buffer of 4 KiB pages takes a while; a
 * process killed meanwhile (the OOM killer's victim, a ^C'd job) must stop
 * allocating, or it pins memory nobody will use and holds its exit back.
 * exit_cleanup checks that such a process dies at all (within 60 s) and
 * that everything is given back; this checks it stops early.
 *
 * Time under QEMU says little (a guest zeroes hundreds of MiB in well
 * under a second, or in several, as the host is loaded), so the test
 * watches memory: the buffer's pages come out of free RAM as they are
 * allocated.  First the whole ALLOC (NORMAL_ONLY, the slowest policy) of
 * S = min(1 GiB, free RAM / 3, the largest ALLOC, half the bounce pool
 * where every mapping bounces) in a child, GET_INFO's
 * free_ram polled until it is reaped: free RAM falls by F at its lowest
 * (F < S/2: nothing to watch, exit 77).  Then ROUNDS times: a child starts
 * the same ALLOC and is killed as soon as free RAM has fallen by F/10 (its
 * allocation is under way), with the same polling until it is reaped; free
 * RAM must fall by less than F/2 in all (an allocation that ignores the
 * kill takes all of F before the process can die, every round).  The
 * best round is judged: a round where the host stalled the watcher (the
 * kill lands late) says nothing about the driver.  The driver's
 * counters must be back at the start after each round.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nmtest_bounce.h"
#include "nmtest_util.h"

#define ROUNDS	3

/* A child that opens the device and ALLOCs @size, then waits to be killed
 * (or exits 0 at once with @then_exit). */
static pid_t alloc_child(uint64_t size, int then_exit)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct npu_mem_alloc a;
		int fd = nm_open();

		if (nm_alloc(fd, size, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a))
			_exit(2);
		if (then_exit)
			_exit(0);
		pause();
		_exit(0);
	}
	return pid;
}

/*
 * Start a child ALLOCing @size and reap it, polling GET_INFO's free_ram on
 * @obs all along; with @kill_at, SIGKILL it as soon as free RAM has fallen
 * by that much (its allocation is under way).  Returns how far free RAM
 * fell at its lowest; *status gets the wait status, *killed whether the
 * kill was sent.
 */
static uint64_t watch_child(int obs, uint64_t size, uint64_t kill_at,
			    int *status, bool *killed)
{
	struct npu_mem_info info;
	uint64_t free0, low;
	double t0 = nm_now();
	pid_t pid;

	nm_get_info_ok(obs, &info);
	free0 = low = info.free_ram;
	pid = alloc_child(size, !kill_at);
	*killed = false;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		ck_assert_int_ge(w, 0);
		nm_get_info_ok(obs, &info);
		if (info.free_ram < low)
			low = info.free_ram;
		if (w == pid)
			break;
		if (kill_at && !*killed && free0 - low >= kill_at) {
			ck_assert_int_eq(kill(pid, SIGKILL), 0);
			*killed = true;
		}
		/* An ALLOC of up to 1 GiB in a loaded TCG guest: slow, not
		 * hung, for minutes. */
		ck_assert_msg(nm_now() - t0 < 300, "child not reaped within "
			      "300 s");
	}
	return free0 > low ? free0 - low : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(killed_during_alloc_dies_early)
{
	struct nm_counters start;
	struct npu_mem_info info;
	uint64_t size, full, taken[ROUNDS];
	bool killed;
	int obs = nm_open(), st;

	nm_get_info_ok(obs, &info);
	nm_counters(obs, &start);
	size = NM_1G;
	if (size > info.free_ram / 3)
		size = (info.free_ram / 3) & ~(NM_2M - 1);
	if (size > info.max_alloc)
		size = info.max_alloc & ~(NM_2M - 1);
	/* A bounced buffer needs as much again from the bounce pool. */
	if (nm_swiotlb_forced() && size > nm_swiotlb_pool_bytes() / 2)
		size = (nm_swiotlb_pool_bytes() / 2) & ~(NM_2M - 1);

	full = watch_child(obs, size, 0, &st, &killed);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "uninterrupted ALLOC of %llu bytes: status %#x",
		      (unsigned long long)size, st);
	nm_assert_counters_now(obs, &start);
	printf("NORMAL_ONLY %llu MiB: free RAM fell by %llu MiB\n",
	       (unsigned long long)(size / NM_MiB),
	       (unsigned long long)(full / NM_MiB));
	if (full < size / 2)
		nm_skip("free RAM fell by only %llu MiB for a %llu MiB ALLOC: "
			"cannot watch it", (unsigned long long)(full / NM_MiB),
			(unsigned long long)(size / NM_MiB));

	for (int i = 0; i < ROUNDS; i++) {
		taken[i] = watch_child(obs, size, full / 10, &st, &killed);
		ck_assert_msg(killed, "the ALLOC never got %llu MiB in",
			      (unsigned long long)(full / 10 / NM_MiB));
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			      "killed child: status %#x", st);
		nm_assert_counters_now(obs, &start);
		printf("  round %d: killed %llu MiB in, free RAM fell by %llu "
		       "MiB\n", i, (unsigned long long)(full / 10 / NM_MiB),
		       (unsigned long long)(taken[i] / NM_MiB));
	}
	qsort(taken, ROUNDS, sizeof(taken[0]), cmp_u64);
	ck_assert_msg(taken[0] < full / 2,
		      "a process killed %llu MiB into an ALLOC of %llu MiB "
		      "still took %llu MiB (the least of %d rounds; %llu MiB when "
		      "not killed): the allocation went on after the kill",
		      (unsigned long long)(full / 10 / NM_MiB),
		      (unsigned long long)(size / NM_MiB),
		      (unsigned long long)(taken[0] / NM_MiB), ROUNDS,
		      (unsigned long long)(full / NM_MiB));
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("alloc_killed");

	nm_add(s, killed_during_alloc_dies_early, 600);
	return nm_run(s, NM_NEEDS_DEVICE);
}
