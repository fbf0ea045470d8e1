// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pages that a writable registration (HOST_REGISTER without READONLY) has
 * for the device to write.  The DMA API lets a page be mapped for the
 * device to write only once at a time (DMA-API debugging reports a second
 * mapping as unsupported): with bounce buffering each mapping would get its
 * own copy, and whichever is copied back last would silently drop the
 * other's writes.  Two registrations of the same pages happen without
 * anyone meaning to: a range registered twice, two mappings of one shared
 * memory page, the same page twice in one range, another process of a
 * shared mapping.  So a writable registration claims its pages from the
 * moment they are pinned until they are unpinned, and one that meets a
 * claimed page is refused.  Read-only registrations (the device only
 * reads, DMA_TO_DEVICE) may share pages with anything and claim nothing.
 *
 * The claims are runs of physically contiguous pages, kept disjoint in one
 * tree for the whole module: a page is the same page whichever process,
 * file or NPU registers it (two NPUs writing one page through bounce
 * buffers would lose writes the same way).
 */
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "npu_mem.h"

struct claim_run {
	struct rb_node node;
	unsigned long first, last;	/* page frame numbers, inclusive */
};

struct npu_mem_claim {
	unsigned int nr_runs;
	struct claim_run runs[];
};

static DEFINE_MUTEX(claims_lock);
static struct rb_root claims = RB_ROOT;

/*
 * The claimed run meeting [first, last], if any.  The runs in the tree never
 * overlap, so one that lies wholly after (before) the range rules out its
 * whole right (left) subtree.
 */
static struct claim_run *claimed(unsigned long first, unsigned long last)
{
	struct rb_node *n = claims.rb_node;

	while (n) {
		struct claim_run *r = rb_entry(n, struct claim_run, node);

		if (last < r->first)
			n = n->rb_left;
		else if (first > r->last)
			n = n->rb_right;
		else
			return r;
	}
	return NULL;
}

static void link_run(struct claim_run *run)
{
	struct rb_node **p = &claims.rb_node, *parent = NULL;

	while (*p) {
		parent = *p;
		if (run->first < rb_entry(parent, struct claim_run, node)->first)
			p = &parent->rb_left;
		else
			p = &parent->rb_right;
	}
	rb_link_node(&run->node, parent, p);
	rb_insert_color(&run->node, &claims);
}

/* Under claims_lock: takes the first @n runs of @c out of the tree. */
static void unlink_runs(struct npu_mem_claim *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		rb_erase(&c->runs[i].node, &claims);
		if (!(i & 1023))
			cond_resched();
	}
}

/*
 * The buffer's chunks as runs of contiguous page frames, in the buffer's
 * order; @runs NULL only counts them.  A page that appears twice never
 * joins a run with itself, so the tree sees it twice.
 */
static unsigned int make_runs(const struct npu_mem_buf *buf,
			      struct claim_run *runs)
{
	unsigned long first = 0, last = 0;
	unsigned int i, n = 0;

	for (i = 0; i < buf->nr_chunks; i++) {
		unsigned long pfn = page_to_pfn(buf->chunks[i].page);

		if (!n || pfn != last + 1) {
			n++;
			first = pfn;
		}
		last = pfn + (1UL << buf->chunks[i].order) - 1;
		if (runs)
			runs[n - 1] = (struct claim_run){ .first = first,
							  .last = last };
	}
	return n;
}

/**
 * npu_mem_claim_pages() - claim a writable registration's pinned pages
 * @buf: its chunks pinned, not yet mapped for the device
 *
 * Return: 0 with every page claimed (npu_mem_unclaim_pages() lets go),
 * -EEXIST if one is claimed already (this buffer's own pages included:
 * nothing is claimed then), -ENOMEM.
 */
int npu_mem_claim_pages(struct npu_mem_buf *buf)
{
	unsigned int n = make_runs(buf, NULL), i;
	struct npu_mem_claim *c;
	int ret = 0;

	c = kvmalloc(struct_size(c, runs, n),
		     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!c)
		return -ENOMEM;
	c->nr_runs = make_runs(buf, c->runs);
	mutex_lock(&claims_lock);
	for (i = 0; i < c->nr_runs; i++) {
		if (claimed(c->runs[i].first, c->runs[i].last)) {
			ret = -EEXIST;
			break;
		}
		link_run(&c->runs[i]);
		if (!(i & 1023))
			cond_resched();
	}
	if (ret)
		unlink_runs(c, i);
	mutex_unlock(&claims_lock);
	if (ret) {
		kvfree(c);
		return ret;
	}
	buf->claim = c;
	return 0;
}

/* npu_mem_unclaim_pages() - before unpinning: let go of @buf's claim, if any */
void npu_mem_unclaim_pages(struct npu_mem_buf *buf)
{
	struct npu_mem_claim *c = buf->claim;

	if (!c)
		return;
	mutex_lock(&claims_lock);
	unlink_runs(c, c->nr_runs);
	mutex_unlock(&claims_lock);
	kvfree(c);
	buf->claim = NULL;
}
