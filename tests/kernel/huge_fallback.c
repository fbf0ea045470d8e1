// SPDX-License-Identifier: GPL-2.0-only
/*
 * huge_fallback: what the policies do when 2 MiB pages run out.
 *
 * Memory is fragmented first: most of it taken in 64 KiB NORMAL_ONLY
 * buffers, 7 of every 8 freed again, which leaves plenty of free memory but
 * few free 2 MiB blocks.  Then HUGE_ONLY 2 MiB buffers are allocated until
 * ALLOC says ENOMEM (bounded by total_ram / 2 MiB, and stopping when
 * free_ram < 96 MiB so that the guest's OOM killer never picks this test;
 * without the fragmenting, a 2 GiB guest reaches that floor first).  With
 * 2 MiB pages exhausted:
 *  - HUGE_FIRST 8 MiB succeeds, with normal_pages > 0 and
 *    huge*2M + normal*4K == 8 MiB, and its memory is zeroed and usable;
 *  - HUGE_ONLY 2 MiB and 8 MiB fail with ENOMEM and leave the counters
 *    unchanged; with one 2 MiB chunk freed, HUGE_ONLY 4 MiB still fails
 *    with nothing left allocated;
 * and closing everything brings the counters back to the start values.
 *
 * A 2 MiB attempt that fails must still wake kswapd and kcompactd (only
 * direct reclaim is off for it), so the blocks come back in the background:
 * a kprobe on the kernel's wakeup_kswapd() counts order-9 calls made by the
 * test process during the HUGE_FIRST allocation.
 *
 * The module's default cap (3/4 of RAM) and reserve would stop the
 * allocations with ENOMEM long before 2 MiB pages run out, and that
 * ENOMEM would look like exhaustion: the test lifts both for its run.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmtest_trace.h"
#include "nmtest_util.h"

#define FLOOR	(96 * NM_MiB)
#define KSWAPD_GROUP	"npumem_hf"
#define KSWAPD_INST	"instances/npumem_huge_fallback"

/*
 * Count wakeup_kswapd(zone, gfp, order, ...) calls of order 9 made by this
 * process, from now until kswapd_wakeups(): 0, or -errno where kprobes or
 * tracefs are missing (the debug kernel has no kprobes).
 */
static int kswapd_watch(void)
{
	char text[64], path[256];
	int r;

	if (nm_tracefs_find())
		return -ENOENT;
	nm_tracefs_write(KSWAPD_INST "/events/" KSWAPD_GROUP "/enable", "0", 0);
	snprintf(path, sizeof(path), "%s/" KSWAPD_INST, nm_tracefs_dir());
	rmdir(path);
	nm_tracefs_write("kprobe_events", "-:" KSWAPD_GROUP "/wake", O_APPEND);
	r = nm_tracefs_write("kprobe_events", "p:" KSWAPD_GROUP "/wake "
			     "wakeup_kswapd order=$arg3:s32", O_APPEND);
	if (r)
		return r;
	if (mkdir(path, 0700))
		return -errno;
	snprintf(text, sizeof(text), "order == 9 && common_pid == %d",
		 (int)getpid());
	r = nm_tracefs_write(KSWAPD_INST "/events/" KSWAPD_GROUP "/filter",
			     text, 0);
	return r ? r : nm_tracefs_write(KSWAPD_INST "/events/" KSWAPD_GROUP
					"/enable", "1", 0);
}

static int kswapd_wakeups(void)
{
	char path[256], *text, *p;
	int n = 0;

	snprintf(path, sizeof(path), "%s/" KSWAPD_INST "/trace",
		 nm_tracefs_dir());
	text = nm_read_file(path);
	for (p = text; p && (p = strstr(p, " wake: ")); p++)
		n++;
	free(text);
	nm_tracefs_write(KSWAPD_INST "/events/" KSWAPD_GROUP "/enable", "0", 0);
	snprintf(path, sizeof(path), "%s/" KSWAPD_INST, nm_tracefs_dir());
	rmdir(path);
	nm_tracefs_write("kprobe_events", "-:" KSWAPD_GROUP "/wake", O_APPEND);
	return n;
}

static uint64_t free_ram(int fd)
{
	struct npu_mem_info info;

	nm_get_info_ok(fd, &info);
	return info.free_ram;
}

/* HUGE_ONLY 2 MiB into fd until ENOMEM (true) or the floor/bound (false) */
static bool exhaust_huge(int fd, uint32_t *handles, size_t max, size_t *n)
{
	while (*n < max) {
		struct npu_mem_alloc a;
		int r;

		if (free_ram(fd) < FLOOR)
			return false;
		r = nm_alloc(fd, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
		if (r == -ENOMEM)
			return true;
		ck_assert_msg(r == 0, "HUGE_ONLY 2 MiB #%zu: %s", *n,
			      nm_retname(r));
		nm_assert_buffer_sane(NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0,
				      &a.buf);
		handles[(*n)++] = a.handle;
	}
	return false;
}

START_TEST(huge_first_falls_back)
{
	struct nm_counters start, c;
	struct npu_mem_info info;
	struct npu_mem_alloc hf, x;
	int obs = nm_open(), hfd = nm_open(), ffd = -1;
	uint32_t *huge;
	size_t nhuge = 0, max;
	uint64_t saved_max, saved_reserve;
	int watch;
	bool exhausted;
	cpu_set_t one;

	/* one CPU: freed 2 MiB pages stay in reach of this CPU's lists */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);

	nm_get_info_ok(obs, &info);
	nm_counters(obs, &start);
	nm_assert_ok(nm_param_get("max_bytes", &saved_max));
	nm_assert_ok(nm_param_get("reserve_bytes", &saved_reserve));
	nm_assert_ok(nm_param_set("max_bytes", info.total_ram));
	nm_assert_ok(nm_param_set("reserve_bytes", 32 * NM_MiB));
	max = info.total_ram / NM_2M;
	huge = calloc(max, sizeof(*huge));
	ck_assert(huge);

	/*
	 * Fragment first: take most of memory in 64 KiB buffers and give 7 of
	 * every 8 back.  The kept ones sit in (nearly) every 2 MiB block, so
	 * those blocks cannot merge again; the blocks that escaped are what
	 * HUGE_ONLY then takes until ENOMEM, with lots of memory still free.
	 */
	{
		uint32_t *small;
		size_t nsmall = 0, maxsmall, kept = 0;

		ffd = nm_open();
		maxsmall = info.total_ram / (64 * NM_KiB);
		small = calloc(maxsmall, sizeof(*small));
		ck_assert(small);
		while (nsmall < maxsmall) {
			if (nsmall % 128 == 0 &&
			    free_ram(obs) < 256 * NM_MiB)
				break;
			small[nsmall++] = nm_alloc_ok(ffd, 64 * NM_KiB,
						      NPU_MEM_POLICY_NORMAL_ONLY,
						      0, &x);
		}
		for (size_t i = 0; i < nsmall; i++) {
			if (i % 8 == 0)
				kept++;
			else
				nm_free_ok(ffd, small[i]);
		}
		free(small);
		printf("fragmenting: %zu x 64 KiB allocated, %zu kept, "
		       "free_ram %llu MiB\n", nsmall, kept,
		       (unsigned long long)(free_ram(obs) / NM_MiB));
	}
	exhausted = exhaust_huge(hfd, huge, max, &nhuge);
	printf("%zu HUGE_ONLY chunks, %s, free_ram %llu MiB\n", nhuge,
	       exhausted ? "then ENOMEM" : "stopped at the free_ram floor",
	       (unsigned long long)(free_ram(obs) / NM_MiB));
	ck_assert_msg(exhausted, "could not exhaust 2 MiB pages above the "
		      "%llu MiB free_ram floor", (unsigned long long)
		      (FLOOR / NM_MiB));

	/*
	 * HUGE_FIRST falls back to 4 KiB pages.  A failed 2 MiB allocation
	 * wakes kcompactd, which may make a new 2 MiB block a moment later:
	 * re-exhaust right before each attempt, a few times.
	 */
	/* Probes patch kernel text: one CPU online for that (nmtest_trace.h) */
	nm_cpus_solo();
	watch = kswapd_watch();
	for (int attempt = 0; attempt < 5; attempt++) {
		if (attempt) {
			nm_free_ok(hfd, hf.handle);
			exhaust_huge(hfd, huge, max, &nhuge);
		}
		nm_alloc_ok(hfd, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0,
			    &hf);
		nm_assert_buffer_sane(8 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0,
				      &hf.buf);
		printf("HUGE_FIRST 8 MiB: %u huge + %u normal pages\n",
		       hf.buf.huge_pages, hf.buf.normal_pages);
		if (hf.buf.normal_pages > 0)
			break;
	}
	ck_assert_msg(hf.buf.normal_pages > 0,
		      "HUGE_FIRST with 2 MiB pages exhausted got %u huge, %u "
		      "normal pages", hf.buf.huge_pages, hf.buf.normal_pages);
	if (watch) {
		nm_cpus_restore();
		nm_skip_note("no kprobe on wakeup_kswapd (%s): whether failed "
			     "2 MiB attempts wake kswapd is not checked",
			     nm_retname(watch));
	} else {
		int wakeups = kswapd_wakeups();

		nm_cpus_restore();
		printf("order-9 wakeup_kswapd calls during HUGE_FIRST: %d\n",
		       wakeups);
		ck_assert_msg(wakeups > 0, "2 MiB attempts failed without "
			      "waking kswapd: fragmentation is never repaired "
			      "in the background");
	}
	{
		uint8_t *p = nm_map_ok(hfd, &hf, PROT_READ | PROT_WRITE);

		ck_assert_uint_eq(nm_nonzero(p, hf.buf.size), SIZE_MAX);
		nm_fill(p, hf.buf.size, 99);
		ck_assert_uint_eq(nm_verify(p, hf.buf.size, 99), SIZE_MAX);
		munmap(p, hf.buf.size);
	}

	/* HUGE_ONLY fails cleanly: ENOMEM leaves the counters unchanged
	 * (chunks compaction made meanwhile are taken first) */
	for (int sz = 2; sz <= 8; sz += 6) {
		int r;

		exhaust_huge(hfd, huge, max, &nhuge);
		nm_counters(obs, &c);
		r = nm_alloc(hfd, sz * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &x);
		if (r == 0) {
			printf("note: HUGE_ONLY %d MiB found new chunks\n", sz);
			nm_free_ok(hfd, x.handle);
			continue;
		}
		ck_assert_msg(r == -ENOMEM, "HUGE_ONLY %d MiB: %s", sz,
			      nm_retname(r));
		nm_assert_counters_now(obs, &c);
	}
	if (nhuge) {
		/* one chunk free: a 2-chunk HUGE_ONLY gets at most it, fails
		 * on the second, and must give the first back */
		int r;

		nm_free_ok(hfd, huge[--nhuge]);
		nm_counters(obs, &c);
		r = nm_alloc(hfd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &x);
		printf("HUGE_ONLY 4 MiB with one chunk freed: %s\n",
		       nm_retname(r));
		if (r == 0) {
			nm_assert_buffer_sane(4 * NM_MiB,
					      NPU_MEM_POLICY_HUGE_ONLY, 0,
					      &x.buf);
			nm_free_ok(hfd, x.handle);
		} else {
			ck_assert_int_eq(r, -ENOMEM);
			nm_assert_counters_now(obs, &c);
		}
	}
	close(hfd);
	if (ffd >= 0)
		close(ffd);
	nm_assert_counters_now(obs, &start);
	nm_assert_ok(nm_param_set("max_bytes", saved_max));
	nm_assert_ok(nm_param_set("reserve_bytes", saved_reserve));
	free(huge);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("huge_fallback");

	nm_add(s, huge_first_falls_back, 600);
	return nm_run(s, NM_NEEDS_DEVICE);
}
