// SPDX-License-Identifier: MIT
/*
 * The caching allocator's logic with fake buffers (no device): classes are
 * kept apart, the cap holds with least-recently-freed eviction, trims and
 * counters are right, and under 8 threads no buffer is ever handed out
 * twice and none is lost.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "acltest.h"
#include "../../lib/pool.h"

static _Atomic long released_count;
static _Atomic long released_bytes;

static void fake_release(struct aclmem_buf *b)
{
	atomic_fetch_add(&released_count, 1);
	atomic_fetch_add(&released_bytes, (long)b->map_len);
	free(b);
}

static struct aclmem_buf *fake(uint8_t kind, uint32_t kpolicy, uint32_t kflags,
			       size_t cls)
{
	struct aclmem_buf *b = calloc(1, sizeof(*b));

	ck_assert_ptr_nonnull(b);
	b->kind = kind;
	b->kpolicy = kpolicy;
	b->kflags = kflags;
	b->pool_class = cls;
	b->map_len = cls;
	return b;
}

static void reset_counts(void)
{
	atomic_store(&released_count, 0);
	atomic_store(&released_bytes, 0);
}

START_TEST(off_keeps_nothing)
{
	struct aclmem_pool p;
	struct aclmem_buf *b = fake(1, 2, 0, 4096);

	aclmem_pool_init(&p, 0, fake_release);
	ck_assert(!aclmem_pool_put(&p, b));
	ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 0, 4096));
	free(b);
}
END_TEST

START_TEST(classes_are_separate)
{
	struct aclmem_pool p;
	struct aclmem_buf *a = fake(1, 2, 0, 4096), *b = fake(1, 2, 0, 8192),
			  *c = fake(1, 0, 0, 4096), *d = fake(2, 2, 0, 4096),
			  *e = fake(1, 2, 1, 4096);

	aclmem_pool_init(&p, 1 << 20, fake_release);
	ck_assert(aclmem_pool_put(&p, a));
	ck_assert(aclmem_pool_put(&p, b));
	ck_assert(aclmem_pool_put(&p, c));
	ck_assert(aclmem_pool_put(&p, d));
	ck_assert(aclmem_pool_put(&p, e));
	ck_assert_uint_eq(p.count, 5);
	ck_assert_uint_eq(p.bytes, 4 * 4096 + 8192);
	ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 0, 12288));
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 1, 0, 4096), e);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 2, 2, 0, 0, 4096), d);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 0, 0, 0, 4096), c);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 8192), b);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 4096), a);
	ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 0, 4096));
	ck_assert_uint_eq(p.count, 0);
	ck_assert_uint_eq(p.bytes, 0);
	ck_assert_uint_eq(p.stats.hits, 5);
	ck_assert_uint_eq(p.stats.misses, 2);
	ck_assert_uint_eq(p.stats.puts, 5);
	free(a); free(b); free(c); free(d); free(e);
}
END_TEST

/*
 * A buffer is reused only for the device it was allocated for (its pages
 * are on that device's node), and each device's kept bytes are counted.
 */
START_TEST(devices_are_separate)
{
	struct aclmem_pool p;
	struct aclmem_buf *a = fake(1, 2, 0, 4096), *b = fake(1, 2, 0, 4096),
			  *c = fake(1, 2, 0, 4096);

	b->device = 2;
	c->device = 3;
	aclmem_pool_init(&p, 1 << 20, fake_release);
	ck_assert(aclmem_pool_put(&p, a));
	ck_assert(aclmem_pool_put(&p, b));
	ck_assert(aclmem_pool_put(&p, c));
	ck_assert_uint_eq(p.dev_bytes[0], 4096);
	ck_assert_uint_eq(p.dev_bytes[2], 4096);
	ck_assert_uint_eq(p.dev_bytes[3], 4096);
	ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 1, 4096));
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 2, 4096), b);
	ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 2, 4096));
	ck_assert_uint_eq(p.dev_bytes[2], 0);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 4096), a);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 3, 4096), c);
	ck_assert_uint_eq(p.bytes, 0);
	ck_assert_uint_eq(p.dev_bytes[0] + p.dev_bytes[3], 0);
	/* No device index past the table: such a buffer is not kept. */
	a->device = ACLMEM_DEVICES_MAX;
	ck_assert(!aclmem_pool_put(&p, a));
	free(a); free(b); free(c);
}
END_TEST

/*
 * More classes than hash buckets, so many share a bucket (4096 and 503808
 * bytes do): every get must still return a buffer of exactly the class,
 * kind, policy and flags asked for, and a class whose buffers are gone
 * must miss, not borrow a neighbour's.
 */
START_TEST(colliding_classes_never_mix)
{
	enum { N = 3 * ACLMEM_POOL_BUCKETS };
	struct aclmem_buf **bufs = calloc(2 * N, sizeof(*bufs));
	struct aclmem_pool p;

	ck_assert_ptr_nonnull(bufs);
	aclmem_pool_init(&p, SIZE_MAX, fake_release);
	for (size_t i = 0; i < N; i++) {
		size_t cls = (i + 1) * 4096;

		bufs[2 * i] = fake(1, 2, 0, cls);
		bufs[2 * i + 1] = fake(1, (i & 1) ? 0 : 2, (i & 2) ? 1 : 0,
				       cls);
		ck_assert(aclmem_pool_put(&p, bufs[2 * i]));
		/* i = 0 gives the same class twice: both in it, LIFO */
		ck_assert(aclmem_pool_put(&p, bufs[2 * i + 1]));
	}
	ck_assert_uint_eq(p.count, 2 * N);
	/* Take them back in a different order from the puts. */
	for (size_t k = 0; k < 2 * N; k++) {
		size_t j = (k * 7919) % (2 * N);
		struct aclmem_buf *want = bufs[j], *got;

		got = aclmem_pool_get(&p, want->kind, want->kpolicy,
				      want->kflags, want->device,
				      want->pool_class);
		ck_assert_msg(got, "class %zu (policy %u, flags %u) missed",
			      want->pool_class, want->kpolicy, want->kflags);
		ck_assert_msg(got->pool_class == want->pool_class &&
			      got->kind == want->kind &&
			      got->kpolicy == want->kpolicy &&
			      got->kflags == want->kflags,
			      "asked for class %zu/%u/%u/%u, got %zu/%u/%u/%u",
			      want->pool_class, want->kind, want->kpolicy,
			      want->kflags, got->pool_class, got->kind,
			      got->kpolicy, got->kflags);
		/* Put it back under its own identity for the next rounds. */
		ck_assert(aclmem_pool_put(&p, got));
	}
	/* Empty one class of a shared bucket: it misses from then on. */
	{
		struct aclmem_buf *a = aclmem_pool_get(&p, 1, 2, 0, 0, 4096);
		struct aclmem_buf *b = aclmem_pool_get(&p, 1, 2, 0, 0, 4096);

		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(b);
		ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 0, 4096));
		ck_assert_ptr_nonnull(aclmem_pool_get(&p, 1, 2, 0, 0, 503808));
		ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 0, 503808));
		free(a);
		free(b);
	}
	reset_counts();
	aclmem_pool_trim(&p, 0);
	ck_assert_uint_eq(p.count, 0);
	ck_assert_int_eq(atomic_load(&released_count), 2 * N - 3);
	free(bufs);
}
END_TEST

START_TEST(lifo_within_class)
{
	struct aclmem_pool p;
	struct aclmem_buf *a = fake(1, 2, 0, 4096), *b = fake(1, 2, 0, 4096);

	aclmem_pool_init(&p, 1 << 20, fake_release);
	aclmem_pool_put(&p, a);
	aclmem_pool_put(&p, b);
	/* The most recently freed is the warmest. */
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 4096), b);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 4096), a);
	free(a); free(b);
}
END_TEST

START_TEST(cap_evicts_oldest)
{
	struct aclmem_pool p;
	struct aclmem_buf *b[6];
	int i;

	reset_counts();
	aclmem_pool_init(&p, 4 * 4096, fake_release);
	for (i = 0; i < 6; i++) {
		b[i] = fake(1, 2, 0, 4096 * (i % 2 + 1));
		ck_assert(aclmem_pool_put(&p, b[i]));
		ck_assert_uint_le(p.bytes, p.cap);
	}
	/* 4K,8K,4K,8K,4K,8K: only the last 4K+8K fit after the 8K... */
	ck_assert_uint_eq(p.bytes, 4096 + 8192);
	ck_assert_uint_eq(p.count, 2);
	ck_assert_int_eq(atomic_load(&released_count), 4);
	ck_assert_uint_eq(p.stats.evictions, 4);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 8192), b[5]);
	ck_assert_ptr_eq(aclmem_pool_get(&p, 1, 2, 0, 0, 4096), b[4]);
	free(b[4]);
	free(b[5]);
	/* A buffer alone above the cap is refused, not cached. */
	b[0] = fake(1, 2, 0, 8 * 4096);
	ck_assert(!aclmem_pool_put(&p, b[0]));
	free(b[0]);
}
END_TEST

START_TEST(trim_and_forget)
{
	struct aclmem_pool p;
	int i;

	reset_counts();
	aclmem_pool_init(&p, 1 << 20, fake_release);
	for (i = 0; i < 10; i++)
		ck_assert(aclmem_pool_put(&p, fake(1, 2, 0, 4096 * (i + 1))));
	ck_assert_uint_eq(p.bytes, 4096 * 55);
	/* Oldest first: 1..7 must go before 30 pages or fewer remain. */
	ck_assert_uint_eq(aclmem_pool_trim(&p, 4096 * 30),
			  4096 * (1 + 2 + 3 + 4 + 5 + 6 + 7));
	ck_assert_uint_eq(p.bytes, 4096 * (8 + 9 + 10));
	ck_assert_uint_eq(aclmem_pool_trim(&p, 0), 4096 * 27);
	ck_assert_uint_eq(p.bytes, 0);
	ck_assert_uint_eq(p.count, 0);
	ck_assert_int_eq(atomic_load(&released_count), 10);
	ck_assert_uint_eq(aclmem_pool_trim(&p, 0), 0);
	for (i = 0; i < 3; i++)
		ck_assert(aclmem_pool_put(&p, fake(1, 2, 0, 4096)));
	aclmem_pool_forget(&p);		/* frees without release */
	ck_assert_int_eq(atomic_load(&released_count), 10);
	ck_assert_uint_eq(p.count, 0);
	ck_assert_ptr_null(aclmem_pool_get(&p, 1, 2, 0, 0, 4096));
}
END_TEST

/* Each fake buffer carries an owner flag: taking it twice is caught. */
struct owned {
	struct aclmem_buf b;
	_Atomic int owner;
};

static struct aclmem_pool mt_pool;
static _Atomic long mt_double, mt_created;

static void *mt_thread(void *arg)
{
	uint64_t r = (uintptr_t)arg * 7919 + 1;
	struct owned *held[16] = { 0 };
	int i, k;

	for (i = 0; i < 200000; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		k = (int)(r >> 60);
		if (held[k]) {
			atomic_store(&held[k]->owner, 0);
			if (!aclmem_pool_put(&mt_pool, &held[k]->b))
				fake_release(&held[k]->b);
			held[k] = NULL;
		} else {
			size_t cls = 4096 << (r >> 61 & 3);
			struct owned *o = (struct owned *)
				aclmem_pool_get(&mt_pool, 1, 2, 0, 0, cls);

			if (!o) {
				o = calloc(1, sizeof(*o));
				o->b.kind = 1;
				o->b.kpolicy = 2;
				o->b.pool_class = cls;
				o->b.map_len = cls;
				atomic_fetch_add(&mt_created, 1);
			}
			if (atomic_exchange(&o->owner, 1))
				atomic_fetch_add(&mt_double, 1);
			held[k] = o;
		}
	}
	for (k = 0; k < 16; k++)
		if (held[k]) {
			atomic_store(&held[k]->owner, 0);
			if (!aclmem_pool_put(&mt_pool, &held[k]->b))
				fake_release(&held[k]->b);
		}
	return NULL;
}

START_TEST(threads_never_share)
{
	pthread_t th[8];
	uintptr_t i;

	reset_counts();
	aclmem_pool_init(&mt_pool, 64 * 4096, fake_release);
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, mt_thread,
						(void *)(i + 1)), 0);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(atomic_load(&mt_double), 0);
	ck_assert_uint_le(mt_pool.bytes, mt_pool.cap);
	/* Every buffer made is either kept or was released: none lost. */
	ck_assert_int_eq(atomic_load(&mt_created),
			 atomic_load(&released_count) + (long)mt_pool.count);
	ck_assert_uint_gt(mt_pool.stats.hits, 0);
	aclmem_pool_trim(&mt_pool, 0);
	ck_assert_int_eq(atomic_load(&mt_created), atomic_load(&released_count));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_pool");

	nm_add(s, off_keeps_nothing, 10);
	nm_add(s, classes_are_separate, 10);
	nm_add(s, devices_are_separate, 10);
	nm_add(s, colliding_classes_never_mix, 30);
	nm_add(s, lifo_within_class, 10);
	nm_add(s, cap_evicts_oldest, 10);
	nm_add(s, trim_and_forget, 10);
	nm_add(s, threads_never_share, 120);
	return acltest_run(s);
}
