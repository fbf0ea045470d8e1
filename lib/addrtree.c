// SPDX-License-Identifier: MIT
/*
 * AVL tree of buffers by start address.  Recursive: the height of an AVL
 * tree is below 1.45 * log2(n + 2), so recursion depth stays under ~64 even
 * with every address a process can hold.
 */
#include "addrtree.h"

static inline int height(const struct addrtree_node *n)
{
	return n ? n->height : 0;
}

static inline void fix_height(struct addrtree_node *n)
{
	int l = height(n->left), r = height(n->right);

	n->height = 1 + (l > r ? l : r);
}

static struct addrtree_node *rotate_right(struct addrtree_node *y)
{
	struct addrtree_node *x = y->left;

	y->left = x->right;
	x->right = y;
	fix_height(y);
	fix_height(x);
	return x;
}

static struct addrtree_node *rotate_left(struct addrtree_node *x)
{
	struct addrtree_node *y = x->right;

	x->right = y->left;
	y->left = x;
	fix_height(x);
	fix_height(y);
	return y;
}

static struct addrtree_node *rebalance(struct addrtree_node *n)
{
	int bf;

	fix_height(n);
	bf = height(n->left) - height(n->right);
	if (bf > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (bf < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	return n;
}

static struct addrtree_node *insert(struct addrtree_node *root,
				    struct addrtree_node *n, int *dup)
{
	if (!root) {
		n->left = n->right = NULL;
		n->height = 1;
		return n;
	}
	if (n->key < root->key)
		root->left = insert(root->left, n, dup);
	else if (n->key > root->key)
		root->right = insert(root->right, n, dup);
	else
		*dup = 1;
	return *dup ? root : rebalance(root);
}

int addrtree_insert(struct addrtree *t, struct addrtree_node *n)
{
	int dup = 0;

	t->root = insert(t->root, n, &dup);
	if (dup)
		return -1;
	t->count++;
	return 0;
}

struct addrtree_node *addrtree_find(const struct addrtree *t, uintptr_t key)
{
	struct addrtree_node *n = t->root;

	while (n && n->key != key)
		n = key < n->key ? n->left : n->right;
	return n;
}

struct addrtree_node *addrtree_find_le(const struct addrtree *t, uintptr_t key)
{
	struct addrtree_node *n = t->root, *best = NULL;

	while (n) {
		if (n->key == key)
			return n;
		if (n->key < key) {
			best = n;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return best;
}

static struct addrtree_node *remove_min(struct addrtree_node *n,
					struct addrtree_node **min)
{
	if (!n->left) {
		*min = n;
		return n->right;
	}
	n->left = remove_min(n->left, min);
	return rebalance(n);
}

static struct addrtree_node *remove_key(struct addrtree_node *root,
					uintptr_t key,
					struct addrtree_node **out)
{
	struct addrtree_node *l, *r, *m;

	if (!root)
		return NULL;
	if (key < root->key) {
		root->left = remove_key(root->left, key, out);
	} else if (key > root->key) {
		root->right = remove_key(root->right, key, out);
	} else {
		*out = root;
		l = root->left;
		r = root->right;
		if (!r)
			return l;
		r = remove_min(r, &m);
		m->left = l;
		m->right = r;
		return rebalance(m);
	}
	return rebalance(root);
}

struct addrtree_node *addrtree_remove(struct addrtree *t, uintptr_t key)
{
	struct addrtree_node *out = NULL;

	t->root = remove_key(t->root, key, &out);
	if (out)
		t->count--;
	return out;
}

struct addrtree_node *addrtree_pop(struct addrtree *t)
{
	return t->root ? addrtree_remove(t, t->root->key) : NULL;
}

static int check(const struct addrtree_node *n, uintptr_t lo, uintptr_t hi,
		 int have_lo, int have_hi, size_t *count)
{
	int l, r;

	if (!n)
		return 0;
	if ((have_lo && n->key <= lo) || (have_hi && n->key >= hi))
		return -1;
	l = check(n->left, lo, n->key, have_lo, 1, count);
	r = check(n->right, n->key, hi, 1, have_hi, count);
	if (l < 0 || r < 0 || l - r > 1 || r - l > 1)
		return -1;
	if (n->height != 1 + (l > r ? l : r))
		return -1;
	(*count)++;
	return n->height;
}

int addrtree_check(const struct addrtree *t)
{
	size_t count = 0;
	int h = check(t->root, 0, 0, 0, 0, &count);

	return h < 0 || count != t->count ? -1 : h;
}
