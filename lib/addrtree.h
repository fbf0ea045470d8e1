/* SPDX-License-Identifier: MIT */
/*
 * An intrusive AVL tree keyed by address: the library's table of live
 * buffers.  Lookups of any address inside a buffer (greatest key <= addr)
 * and inserts/removes are O(log n), so the cost of a call does not grow with
 * the number of live buffers.  Not locked: the caller serialises.
 */
#ifndef ACLMEM_ADDRTREE_H
#define ACLMEM_ADDRTREE_H

#include <stddef.h>
#include <stdint.h>

struct addrtree_node {
	struct addrtree_node *left;
	struct addrtree_node *right;
	uintptr_t key;
	int height;
};

struct addrtree {
	struct addrtree_node *root;
	size_t count;
};

static inline void addrtree_init(struct addrtree *t)
{
	t->root = NULL;
	t->count = 0;
}

/* Insert n (n->key set by the caller); -1 if the key is already present. */
int addrtree_insert(struct addrtree *t, struct addrtree_node *n);

/* The node with exactly this key, or NULL. */
struct addrtree_node *addrtree_find(const struct addrtree *t, uintptr_t key);

/* The node with the greatest key <= key, or NULL. */
struct addrtree_node *addrtree_find_le(const struct addrtree *t, uintptr_t key);

/* Remove and return the node with this key, or NULL if there is none. */
struct addrtree_node *addrtree_remove(struct addrtree *t, uintptr_t key);

/* Remove and return some node (for teardown), or NULL when empty. */
struct addrtree_node *addrtree_pop(struct addrtree *t);

/* Check the AVL invariants; returns the height, or -1 if broken (tests). */
int addrtree_check(const struct addrtree *t);

#endif /* ACLMEM_ADDRTREE_H */
