// SPDX-License-Identifier: MIT
/*
 * The buffer table's AVL tree against a brute-force model: random inserts,
 * removes and lookups (exact and "greatest key <= x"), with the AVL
 * invariants checked as it goes.  Also that it stays logarithmic in height.
 */
#include <stdlib.h>

#include "acltest.h"
#include "../../lib/addrtree.h"

#define N 4096

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

START_TEST(random_against_model)
{
	static struct addrtree_node nodes[N];
	static bool in[N];
	struct addrtree t;
	int i, step;

	addrtree_init(&t);
	for (i = 0; i < N; i++) {
		nodes[i].key = (uintptr_t)(i + 1) * 64;	/* distinct, ordered */
		in[i] = false;
	}
	for (step = 0; step < 200000; step++) {
		int k = (int)(rnd() % N), op = (int)(rnd() % 4);
		uintptr_t probe = (uintptr_t)(rnd() % ((N + 2) * 64));
		struct addrtree_node *n;
		int j;

		if (op == 0 || op == 1) {
			ck_assert_int_eq(addrtree_insert(&t, &nodes[k]),
					 in[k] ? -1 : 0);
			in[k] = true;
		} else if (op == 2) {
			n = addrtree_remove(&t, nodes[k].key);
			ck_assert_ptr_eq(n, in[k] ? &nodes[k] : NULL);
			in[k] = false;
		} else {
			/* greatest present key <= probe, by brute force */
			j = (int)(probe / 64) - 1;
			if (j >= N)
				j = N - 1;
			while (j >= 0 && !in[j])
				j--;
			n = addrtree_find_le(&t, probe);
			ck_assert_ptr_eq(n, j >= 0 ? &nodes[j] : NULL);
			n = addrtree_find(&t, nodes[k].key);
			ck_assert_ptr_eq(n, in[k] ? &nodes[k] : NULL);
			ck_assert_ptr_null(addrtree_find(&t, nodes[k].key + 1));
		}
		if (step % 1000 == 0)
			ck_assert_int_ge(addrtree_check(&t), 0);
	}
	ck_assert_int_ge(addrtree_check(&t), 0);
	for (i = 0; addrtree_pop(&t); i++)
		;
	for (step = 0; step < N; step++)
		i -= in[step];
	ck_assert_int_eq(i, 0);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_ptr_null(t.root);
}
END_TEST

START_TEST(height_is_logarithmic)
{
	enum { M = 100000 };
	struct addrtree_node *nodes = calloc(M, sizeof(*nodes));
	struct addrtree t;
	int i, h;

	ck_assert_ptr_nonnull(nodes);
	addrtree_init(&t);
	/* Ascending inserts: the worst case for an unbalanced tree. */
	for (i = 0; i < M; i++) {
		nodes[i].key = (uintptr_t)0x7f0000000000ull + (uintptr_t)i * 4096;
		ck_assert_int_eq(addrtree_insert(&t, &nodes[i]), 0);
	}
	h = addrtree_check(&t);
	ck_assert_int_ge(h, 17);
	ck_assert_int_le(h, 25);	/* 1.44 * log2(100000) ~ 24 */
	ck_assert_uint_eq(t.count, M);
	/* Interior addresses find their buffer. */
	ck_assert_ptr_eq(addrtree_find_le(&t, nodes[500].key + 4095), &nodes[500]);
	ck_assert_ptr_null(addrtree_find_le(&t, nodes[0].key - 1));
	for (i = 0; i < M; i += 2)
		ck_assert_ptr_eq(addrtree_remove(&t, nodes[i].key), &nodes[i]);
	ck_assert_int_ge(addrtree_check(&t), 0);
	ck_assert_ptr_eq(addrtree_find_le(&t, nodes[500].key + 8), &nodes[499]);
	free(nodes);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_addrtree");

	nm_add(s, random_against_model, 60);
	nm_add(s, height_is_logarithmic, 60);
	return acltest_run(s);
}
