// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmap_race: concurrent operations on one buffer from two threads, many
 * times over (NPU_MEM_RACE_LOOPS, default 500, bounded by
 * NPU_MEM_RACE_SECONDS, default 5 s, per test, but at least
 * NPU_MEM_RACE_MIN_ROUNDS, default 100, however long a slow guest takes
 * for them, up to a ceiling):
 *  - FREE vs mmap of the same handle: each mmap either succeeds with a valid
 *    mapping of the (zeroed) buffer or fails with EINVAL; no crash;
 *  - close(fd) vs mmap: the mmap either succeeds (the mapping then keeps the
 *    buffer) or fails with EBADF;
 *  - FREE vs munmap, and munmap of two mappings at once;
 *  - QUERY vs FREE: 0 with the right answer, or ENOENT.
 * Afterwards the counters are back to their start values.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_util.h"

struct race {
	pthread_barrier_t go, done;
	int fd;
	struct npu_mem_alloc a;
	volatile bool stop;
	/* results of one round */
	void *map;
	int map_err;
	int op_ret;
	int kind;
};

enum { FREE_VS_MMAP, CLOSE_VS_MMAP, FREE_VS_MUNMAP, QUERY_VS_FREE };

static uint64_t loops(void)
{
	return nm_env_u64("NPU_MEM_RACE_LOOPS", 500);
}

static double seconds(void)
{
	return (double)nm_env_u64("NPU_MEM_RACE_SECONDS", 5);
}

/* Fewer rounds than this prove little: the seconds do not cut a run
 * short of them (no more than the loops asked for, though). */
static uint64_t min_rounds(void)
{
	uint64_t m = nm_env_u64("NPU_MEM_RACE_MIN_ROUNDS", 100);

	return m < loops() ? m : loops();
}

/* Thread B: the "other" operation of each round. */
static void *thread_b(void *arg)
{
	struct race *r = arg;

	for (;;) {
		pthread_barrier_wait(&r->go);
		if (r->stop)
			break;
		switch (r->kind) {
		case FREE_VS_MMAP:
		case QUERY_VS_FREE:
		case FREE_VS_MUNMAP:
			r->op_ret = nm_free(r->fd, r->a.handle);
			break;
		case CLOSE_VS_MMAP:
			r->op_ret = close(r->fd) ? -errno : 0;
			break;
		}
		pthread_barrier_wait(&r->done);
	}
	return NULL;
}

static void run(int kind)
{
	struct nm_counters start;
	struct race r = { .kind = kind };
	pthread_t tb;
	uint64_t n = loops(), min = min_rounds(), i, ok = 0, failed = 0;
	struct nm_span span;
	int obs = nm_open();
	static const uint32_t pol[] = { NPU_MEM_POLICY_NORMAL_ONLY,
					NPU_MEM_POLICY_HUGE_FIRST,
					NPU_MEM_POLICY_HUGE_ONLY };

	nm_counters(obs, &start);
	pthread_barrier_init(&r.go, NULL, 2);
	pthread_barrier_init(&r.done, NULL, 2);
	ck_assert_int_eq(pthread_create(&tb, NULL, thread_b, &r), 0);
	if (kind != CLOSE_VS_MMAP)
		r.fd = nm_open();

	nm_span_start(&span, seconds());
	for (i = 0; i < n && nm_span_more(&span, i >= min); i++) {
		uint64_t size = (i % 7 == 0) ? NM_2M + NM_4K : (i % 5 + 1) * NM_4K;
		uint32_t policy = pol[i % 3];
		void *pre = MAP_FAILED;

		if (kind == CLOSE_VS_MMAP)
			r.fd = nm_open();
		nm_alloc_ok(r.fd, size, policy, 0, &r.a);
		if (kind == FREE_VS_MUNMAP)
			pre = nm_map_ok(r.fd, &r.a, PROT_READ | PROT_WRITE);

		pthread_barrier_wait(&r.go);
		/* thread A's half */
		switch (kind) {
		case FREE_VS_MMAP:
		case CLOSE_VS_MMAP:
			r.map = nm_mmap(r.fd, r.a.buf.mmap_offset, r.a.buf.size,
					PROT_READ | PROT_WRITE);
			r.map_err = r.map == MAP_FAILED ? errno : 0;
			break;
		case FREE_VS_MUNMAP:
			r.map_err = munmap(pre, r.a.buf.size) ? errno : 0;
			break;
		case QUERY_VS_FREE: {
			struct npu_mem_buffer q;
			int qr = nm_query(r.fd, r.a.handle, &q);

			NM_REQUIRE(qr == 0 || qr == -ENOENT,
				   "QUERY racing FREE: %s", nm_retname(qr));
			if (!qr)
				nm_assert_buf_eq(&r.a.buf, &q);
			r.map_err = -qr;
			break;
		}
		}
		pthread_barrier_wait(&r.done);

		/* judge the round */
		switch (kind) {
		case FREE_VS_MMAP:
		case CLOSE_VS_MMAP:
			NM_REQUIRE(r.op_ret == 0, "%s: %s",
				      kind == CLOSE_VS_MMAP ? "close" : "FREE",
				      nm_retname(r.op_ret));
			if (r.map != MAP_FAILED) {
				uint8_t *m = r.map;

				NM_REQUIRE(nm_nonzero(m, r.a.buf.size) ==
					   SIZE_MAX, "round %llu: mapping "
					   "not zero", (unsigned long long)i);
				m[0] = 1;
				m[r.a.buf.size - 1] = 2;
				NM_REQUIRE(m[0] + m[r.a.buf.size - 1] == 3,
					   "round %llu: mapping not writable",
					   (unsigned long long)i);
				munmap(m, r.a.buf.size);
				ok++;
			} else {
				NM_REQUIRE(r.map_err ==
					   (kind == CLOSE_VS_MMAP ? EBADF :
								    EINVAL),
					      "mmap racing %s: %s",
					      kind == CLOSE_VS_MMAP ? "close" :
								      "FREE",
					      nm_errname(r.map_err));
				failed++;
			}
			break;
		case FREE_VS_MUNMAP:
			NM_REQUIRE(r.op_ret == 0 && r.map_err == 0,
				   "FREE %s / munmap %s racing",
				   nm_retname(r.op_ret),
				   nm_errname(r.map_err));
			ok++;
			break;
		case QUERY_VS_FREE:
			NM_REQUIRE(r.op_ret == 0, "FREE racing QUERY: %s",
				   nm_retname(r.op_ret));
			if (r.map_err)
				failed++;
			else
				ok++;
			break;
		}
	}
	r.stop = true;
	pthread_barrier_wait(&r.go);
	pthread_join(tb, NULL);
	if (kind != CLOSE_VS_MMAP)
		close(r.fd);
	printf("%llu rounds in %.1f s: %llu first-op wins, %llu losses\n",
	       (unsigned long long)i, nm_span_secs(&span),
	       (unsigned long long)ok, (unsigned long long)failed);
	ck_assert_msg(i >= min, "only %llu rounds in %.0f s, the ceiling "
		      "(NPU_MEM_RACE_MIN_ROUNDS %llu)", (unsigned long long)i,
		      nm_span_secs(&span), (unsigned long long)min);
	nm_assert_counters_now(obs, &start);
	close(obs);
}

START_TEST(free_vs_mmap)
{
	run(FREE_VS_MMAP);
}
END_TEST

START_TEST(close_vs_mmap)
{
	run(CLOSE_VS_MMAP);
}
END_TEST

START_TEST(free_vs_munmap)
{
	run(FREE_VS_MUNMAP);
}
END_TEST

START_TEST(query_vs_free)
{
	run(QUERY_VS_FREE);
}
END_TEST

/* Many threads mapping and unmapping one buffer while the main thread frees
 * it: every mapping made is valid and sees the others' writes. */
struct many {
	int fd;
	struct npu_mem_alloc a;
	volatile int go;
	int maps, fails, bad;
};

static void *mapper(void *arg)
{
	struct many *m = arg;

	while (!m->go)
		;
	for (int i = 0; i < 200; i++) {
		uint8_t *p = nm_mmap(m->fd, m->a.buf.mmap_offset,
				     m->a.buf.size, PROT_READ | PROT_WRITE);

		if (p == MAP_FAILED) {
			if (errno != EINVAL)
				__atomic_add_fetch(&m->bad, 1,
						   __ATOMIC_RELAXED);
			__atomic_add_fetch(&m->fails, 1, __ATOMIC_RELAXED);
			break;		/* freed: it stays freed */
		}
		__atomic_add_fetch(&p[NM_4K], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&m->maps, 1, __ATOMIC_RELAXED);
		munmap(p, m->a.buf.size);
	}
	return NULL;
}

START_TEST(many_mappers_vs_free)
{
	enum { T = 6 };
	struct nm_counters start;
	int obs = nm_open();

	nm_counters(obs, &start);
	for (int round = 0; round < 20; round++) {
		struct many m = { .fd = nm_open() };
		pthread_t t[T];
		uint8_t *keep;

		nm_alloc_ok(m.fd, 2 * NM_MiB, round % 2 ?
			    NPU_MEM_POLICY_HUGE_ONLY :
			    NPU_MEM_POLICY_NORMAL_ONLY, 0, &m.a);
		keep = nm_map_ok(m.fd, &m.a, PROT_READ | PROT_WRITE);
		for (int i = 0; i < T; i++)
			ck_assert_int_eq(pthread_create(&t[i], NULL, mapper,
							&m), 0);
		m.go = 1;
		usleep(round * 500);
		nm_free_ok(m.fd, m.a.handle);
		for (int i = 0; i < T; i++)
			pthread_join(t[i], NULL);
		ck_assert_int_eq(m.bad, 0);
		/* every increment made through any mapping is visible */
		ck_assert_int_eq(keep[NM_4K], (uint8_t)m.maps);
		munmap(keep, m.a.buf.size);
		close(m.fd);
	}
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("mmap_race");

	double t = nm_span_ceiling(seconds()) + 120;

	nm_add(s, free_vs_mmap, t);
	nm_add(s, close_vs_mmap, t);
	nm_add(s, free_vs_munmap, t);
	nm_add(s, query_vs_free, t);
	nm_add(s, many_mappers_vs_free, 120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
