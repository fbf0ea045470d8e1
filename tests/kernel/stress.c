// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress: NPU_MEM_STRESS_PROCS (8) processes x NPU_MEM_STRESS_THREADS (8)
 * threads for NPU_MEM_STRESS_SECONDS (10) seconds allocate random sizes with
 * random policies (some READONLY), check each new buffer (rounding, QUERY,
 * zeroed contents), map it, write a pattern, verify it, and free it again in
 * random ways: munmap then FREE, FREE then munmap, close of a per-thread
 * file with buffers live, or process exit with buffers live.  Even
 * processes share one file among their threads, odd ones use one per thread.
 * The only acceptable failure is ENOMEM from ALLOC, and only rarely: each
 * process must make progress (ten allocations a thread on average, under a tenth
 * of them ENOMEM, at least half freed again); at the end every
 * counter is back to its start value.  A process runs the seconds and
 * then on until it made its allocations, up to the common ceiling
 * (nm_span): a slow guest takes longer, it does not fail.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_util.h"

#define MAX_LIVE	3
#define MAX_LIVE_BYTES	(6 * NM_MiB)

struct live {
	int fd;
	uint32_t handle;
	struct npu_mem_buffer buf;
	uint8_t *map;
	uint64_t seed;
	bool ro;
};

struct proc_ctx {
	int shared_fd;		/* -1: per-thread files */
	struct nm_span span;
	unsigned long allocs, min_allocs;	/* of all its threads */
	int proc;
	volatile int failures;
};

struct thread_ctx {
	struct proc_ctx *pc;
	int idx;
	uint64_t rng;
	int fd;
	struct live live[MAX_LIVE];
	int nlive;
	uint64_t live_bytes;
	unsigned long allocs, frees, enomem, closes;
};

#define FAIL(t, ...) do {						\
	fprintf(stderr, "stress p%d t%d: ", (t)->pc->proc, (t)->idx);	\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	__atomic_add_fetch(&(t)->pc->failures, 1, __ATOMIC_RELAXED);	\
	return false;							\
} while (0)

/* Sampled check: the first and last word of every page. */
static bool sample_ok(const struct live *l, bool zero)
{
	for (uint64_t off = 0; off < l->buf.size; off += NM_4K) {
		const uint8_t *p = l->map + off;
		uint64_t offs[2] = { 0, NM_4K - 8 };

		for (int k = 0; k < 2; k++) {
			if (zero) {
				if (nm_nonzero(p + offs[k], 8) != SIZE_MAX)
					return false;
			} else if (nm_verify_at(p + offs[k], 8, l->seed,
						off + offs[k]) != SIZE_MAX) {
				return false;
			}
		}
	}
	return true;
}

static uint64_t pick_size(uint64_t *rng)
{
	uint64_t r = nm_rand64(rng) % 100;

	if (r < 75)
		return 1 + nm_rand64(rng) % (256 * NM_KiB);
	if (r < 95)
		return 256 * NM_KiB + nm_rand64(rng) % (2 * NM_MiB);
	return 2 * NM_MiB + nm_rand64(rng) % (2 * NM_MiB);
}

static bool do_alloc(struct thread_ctx *t)
{
	static const uint32_t pols[] = { NPU_MEM_POLICY_NORMAL_ONLY,
					 NPU_MEM_POLICY_HUGE_FIRST,
					 NPU_MEM_POLICY_NORMAL_ONLY,
					 NPU_MEM_POLICY_HUGE_FIRST,
					 NPU_MEM_POLICY_HUGE_ONLY };
	uint64_t size = pick_size(&t->rng);
	uint32_t policy = pols[nm_rand64(&t->rng) % NM_ARRAY_SIZE(pols)];
	bool ro = nm_rand64(&t->rng) % 10 == 0;
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	struct live *l;
	int r;

	if (t->nlive == MAX_LIVE ||
	    t->live_bytes + NM_ALIGN(size, NM_2M) > MAX_LIVE_BYTES)
		return true;
	r = nm_alloc(t->fd, size, policy, ro ? NPU_MEM_ALLOC_READONLY : 0, &a);
	if (r == -ENOMEM) {
		t->enomem++;
		return true;
	}
	if (r)
		FAIL(t, "ALLOC %llu %s: %s", (unsigned long long)size,
		     nm_policy_name(policy), nm_retname(r));
	t->allocs++;
	__atomic_add_fetch(&t->pc->allocs, 1, __ATOMIC_RELAXED);
	if (!a.handle || a.buf.policy != policy ||
	    a.buf.size < size ||
	    a.buf.size != NM_ALIGN(size, policy == NPU_MEM_POLICY_HUGE_ONLY ?
					 NM_2M : NM_4K) ||
	    (uint64_t)a.buf.huge_pages * NM_2M +
	    (uint64_t)a.buf.normal_pages * NM_4K != a.buf.size)
		FAIL(t, "ALLOC %llu %s: handle %u size %llu huge %u normal %u",
		     (unsigned long long)size, nm_policy_name(policy),
		     a.handle, (unsigned long long)a.buf.size,
		     a.buf.huge_pages, a.buf.normal_pages);
	r = nm_query(t->fd, a.handle, &q);
	if (r || memcmp(&q, &a.buf, sizeof(q)))
		FAIL(t, "QUERY %u: %s or different", a.handle, nm_retname(r));
	l = &t->live[t->nlive++];
	t->live_bytes += a.buf.size;
	*l = (struct live){ .fd = t->fd, .handle = a.handle, .buf = a.buf,
			    .seed = nm_rand64(&t->rng), .ro = ro };
	l->map = mmap(NULL, a.buf.size,
		      ro ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
		      t->fd, a.buf.mmap_offset);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		FAIL(t, "mmap %u: %s", a.handle, nm_errname(errno));
	}
	if (!sample_ok(l, true))
		FAIL(t, "new buffer %u (%s) not zero", a.handle,
		     nm_policy_name(policy));
	if (!ro) {
		nm_fill(l->map, l->buf.size, l->seed);
		if (!sample_ok(l, false))
			FAIL(t, "buffer %u pattern wrong after fill",
			     a.handle);
	}
	return true;
}

static bool release(struct thread_ctx *t, int i, bool free_first)
{
	struct live *l = &t->live[i];
	int r;

	if (l->map && !sample_ok(l, l->ro))
		FAIL(t, "buffer %u contents changed", l->handle);
	if (free_first && l->handle) {
		r = nm_free(l->fd, l->handle);
		if (r)
			FAIL(t, "FREE %u: %s", l->handle, nm_retname(r));
		if (l->map && !sample_ok(l, l->ro))
			FAIL(t, "buffer %u changed by FREE while mapped",
			     l->handle);
	}
	if (l->map)
		munmap(l->map, l->buf.size);
	if (!free_first && l->handle) {
		r = nm_free(l->fd, l->handle);
		if (r)
			FAIL(t, "FREE %u: %s", l->handle, nm_retname(r));
	}
	t->frees++;
	t->live_bytes -= l->buf.size;
	t->live[i] = t->live[--t->nlive];
	return true;
}

/* Per-thread file: close it with buffers live (their mappings stay valid
 * until munmap), then open a new one. */
static bool close_and_reopen(struct thread_ctx *t)
{
	if (close(t->fd))
		FAIL(t, "close: %s", nm_errname(errno));
	for (int i = 0; i < t->nlive; i++)
		t->live[i].handle = 0;	/* gone with the file */
	while (t->nlive)
		if (!release(t, 0, false))
			return false;
	t->fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (t->fd < 0)
		FAIL(t, "open: %s", nm_errname(errno));
	t->closes++;
	return true;
}

static void *thread_main(void *arg)
{
	struct thread_ctx *t = arg;
	struct proc_ctx *pc = t->pc;

	t->fd = pc->shared_fd >= 0 ? pc->shared_fd :
				     open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		__atomic_add_fetch(&pc->failures, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	while (nm_span_more(&pc->span, __atomic_load_n(&pc->allocs,
						       __ATOMIC_RELAXED) >=
			    pc->min_allocs) && !pc->failures) {
		uint64_t op = nm_rand64(&t->rng) % 100;
		bool ok = true;

		if (op < 50)
			ok = do_alloc(t);
		else if (op < 95 && t->nlive)
			ok = release(t, nm_rand64(&t->rng) % t->nlive,
				     op < 72);
		else if (op >= 98 && pc->shared_fd < 0)
			ok = close_and_reopen(t);
		if (!ok)
			break;
	}
	/* a third of the processes leave their buffers to exit() */
	if (pc->proc % 3 != 0)
		while (t->nlive && release(t, 0, t->nlive % 2))
			;
	return NULL;
}

static int process_main(int proc, int nthreads, double seconds)
{
	struct proc_ctx pc = {
		.proc = proc,
		.min_allocs = 10 * (unsigned long)nthreads,
	};
	struct thread_ctx *t = calloc(nthreads, sizeof(*t));
	pthread_t *th = calloc(nthreads, sizeof(*th));
	unsigned long allocs = 0, frees = 0, enomem = 0, closes = 0;

	pc.shared_fd = proc % 2 ? -1 : open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	nm_span_start(&pc.span, seconds);
	for (int i = 0; i < nthreads; i++) {
		t[i] = (struct thread_ctx){ .pc = &pc, .idx = i,
					    .rng = (uint64_t)proc << 32 | i };
		pthread_create(&th[i], NULL, thread_main, &t[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		allocs += t[i].allocs;
		frees += t[i].frees;
		enomem += t[i].enomem;
		closes += t[i].closes;
	}
	printf("  process %d (%s files%s): %.1f s: %lu allocs, %lu frees, "
	       "%lu ENOMEM, %lu closes, %d failures\n", proc,
	       proc % 2 ? "per-thread" : "one shared",
	       proc % 3 ? "" : ", exits with buffers live",
	       nm_span_secs(&pc.span), allocs, frees, enomem, closes,
	       pc.failures);
	fflush(stdout);
	/*
	 * Progress, not just the absence of errors: a driver that refused
	 * everything with ENOMEM would otherwise pass.  Each thread's live
	 * bytes stay far below the guest's memory, so nearly every
	 * allocation must succeed.
	 */
	if (allocs < pc.min_allocs || enomem * 10 > allocs) {
		fprintf(stderr, "process %d: only %lu allocations succeeded "
			"(%lu ENOMEM) in %.0f s\n", proc, allocs, enomem,
			nm_span_secs(&pc.span));
		return 1;
	}
	if (frees < allocs / 2) {
		fprintf(stderr, "process %d: %lu frees for %lu allocations\n",
			proc, frees, allocs);
		return 1;
	}
	return pc.failures ? 1 : 0;
}

START_TEST(stress_alloc_map_free)
{
	int procs = nm_env_u64("NPU_MEM_STRESS_PROCS", 8);
	int threads = nm_env_u64("NPU_MEM_STRESS_THREADS", 8);
	double seconds = nm_env_u64("NPU_MEM_STRESS_SECONDS", 10);
	struct nm_counters start, end;
	pid_t pids[64];
	int obs = nm_open(), failed = 0;

	ck_assert_int_le(procs, 64);
	nm_counters(obs, &start);
	printf("stress: %d processes x %d threads for %.0f s\n", procs,
	       threads, seconds);
	fflush(stdout);
	for (int i = 0; i < procs; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0)
			_exit(process_main(i, threads, seconds));
	}
	for (int i = 0; i < procs; i++) {
		int st = nm_wait_timeout(pids[i], nm_span_ceiling(seconds) +
					 240);

		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "process %d: %s %#x\n", i,
				st == -1 ? "timed out" : "status", st);
			failed++;
		}
	}
	nm_counters(obs, &end);
	nm_counters_print("start", &start);
	nm_counters_print("end  ", &end);
	ck_assert_msg(!failed, "%d of %d stress processes failed", failed,
		      procs);
	nm_assert_counters_eq(&start, &end);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("stress");
	double secs = nm_env_u64("NPU_MEM_STRESS_SECONDS", 10);

	nm_add(s, stress_alloc_map_free, nm_span_ceiling(secs) + 300);
	return nm_run(s, NM_NEEDS_DEVICE);
}
