// SPDX-License-Identifier: GPL-2.0-only
/*
 * The zero reserve: 2 MiB chunks cleared ahead of time, per NUMA node, so
 * that a large ALLOC does not pay for clearing its pages on its own path.
 *
 * A background thread at nice 19 fills a node's reserve up to the high
 * watermark once it is under the low one, and clears the chunks that
 * buffers give back (buffer.c recycles a chunk only when no one else
 * holds it, so nothing outside can see it being reused).  The thread
 * zeroes with clear_highpage(), per 4 KiB page, rescheduling as it goes:
 * non-temporal stores would leave the caches to the tasks that run
 * meanwhile, but they are not in every architecture's kernel API, and a
 * chunk handed out is usually written at once, where cached lines help.
 *
 * A chunk is zero before it is on a ready list: the clearing and the list
 * insertion are ordered by the node's lock, which the taker takes too.
 * On an architecture whose DMA is not coherent, the DMA mapping every
 * buffer gets (buffer.c, without DMA_ATTR_SKIP_CPU_SYNC) writes the zeroes
 * back before the device can read them, as for pages the allocator zeroed.
 *
 * The reserve is the module's memory, not a user's: it is in no one's
 * RLIMIT_MEMLOCK, VmPin, memory cgroup or the cap (max_bytes) until
 * ALLOC takes a chunk, which the buffer's charges then cover like any
 * other page.  Its chunks are allocated by the thread, without
 * __GFP_ACCOUNT, so they carry no memory cgroup charge; a caller in a
 * memory cgroup other than the root is therefore never served from it
 * (its pages are charged to it, as before), and a chunk that carries a
 * charge is never recycled.  Memory pressure wins over the reserve: a
 * shrinker gives chunks back to the kernel, refills stop while that
 * happens and while MemAvailable is under the module's reserve_bytes, and
 * buffer.c's charge check drains the reserve before it refuses an
 * allocation for want of available memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/freezer.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "npu_mem.h"

#define CHUNK_PAGES	(1UL << NPU_MEM_HUGE_ORDER)
#define MIB_PER_CHUNK	(NPU_MEM_HUGE_SIZE >> 20)

/*
 * Off by default: the reserve is pinned memory no process owns, and a host
 * that did not ask for it must not lose any (the shrinker gives it back,
 * but only once reclaim has started).  An administrator or the tests set
 * the watermarks, in MiB per node, at load or at run time.
 */
static unsigned long zero_reserve_low_mb;
static unsigned long zero_reserve_high_mb;

/* One node's chunks; @nr counts ready, dirty and the one being cleared. */
struct zr_node {
	spinlock_t lock;
	struct list_head ready;		/* zeroed, by their head page's lru */
	struct list_head dirty;		/* recycled, to be zeroed */
	unsigned long nr_ready;
	unsigned long nr;
	bool filling;			/* went under low: fill up to high */
};

static struct zr_node *zr_nodes;	/* nr_node_ids of them */
static struct task_struct *zr_thread;
static struct shrinker *zr_shrinker;
static DECLARE_WAIT_QUEUE_HEAD(zr_wait);
static atomic_t zr_kicked;
/* No refill before this (jiffies): the shrinker just gave chunks back. */
static unsigned long zr_quiet_until;
static atomic64_t zr_taken, zr_recycled, zr_refilled, zr_given_back;

static void zr_kick(void)
{
	atomic_set(&zr_kicked, 1);
	wake_up(&zr_wait);
}

/* Watermarks in chunks; a high under low is taken as low. */
static unsigned long zr_low(void)
{
	return READ_ONCE(zero_reserve_low_mb) / MIB_PER_CHUNK;
}

static unsigned long zr_high(void)
{
	return max(READ_ONCE(zero_reserve_high_mb) / MIB_PER_CHUNK, zr_low());
}

static int zr_param_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_ulong(val, kp);

	if (!ret)
		zr_kick();	/* to fill, or to drain to the new high */
	return ret;
}

static const struct kernel_param_ops zr_param_ops = {
	.set = zr_param_set,
	.get = param_get_ulong,
};
module_param_cb(zero_reserve_low_mb, &zr_param_ops, &zero_reserve_low_mb, 0644);
MODULE_PARM_DESC(zero_reserve_low_mb,
		 "Refill a node's reserve of zeroed 2 MiB chunks when under this many MiB (0: never)");
module_param_cb(zero_reserve_high_mb, &zr_param_ops, &zero_reserve_high_mb, 0644);
MODULE_PARM_DESC(zero_reserve_high_mb,
		 "Most MiB of zeroed 2 MiB chunks a node's reserve keeps, refilled or recycled (0: none)");

/**
 * npu_mem_pages_poisoned() - a memory error took one of the pages out of use
 * @page: the first page
 * @order: of the 2^order pages from @page
 */
bool npu_mem_pages_poisoned(struct page *page, unsigned int order)
{
	unsigned long i;

	for (i = 0; i < 1UL << order; i++)
		if (PageHWPoison(nth_page(page, i)))
			return true;
	return false;
}

/*
 * The one place a reserve chunk is zeroed, for new and recycled chunks
 * alike (the allocator is not asked to, so that init_on_alloc=0 shows a
 * chunk this misses).
 */
static void zr_clear(struct page *page)
{
	unsigned long i;

	for (i = 0; i < CHUNK_PAGES; i++) {
		clear_highpage(nth_page(page, i));
		if (!(i & 63))
			cond_resched();
	}
}

/*
 * Memory cgroup charges cannot be moved or dropped from a module
 * (__memcg_kmem_charge_page and its uncharge are not exported), so the
 * reserve serves only callers whose pages no cgroup would be charged
 * for: the root cgroup's, or all when memory cgroups are off.
 */
bool npu_mem_reserve_usable(void)
{
#ifdef CONFIG_MEMCG
	struct cgroup_subsys_state *css;
	bool root;

	if (mem_cgroup_disabled())
		return true;
	rcu_read_lock();
	css = task_css(current, memory_cgrp_id);
	root = !css->parent;
	rcu_read_unlock();
	return root;
#else
	return true;
#endif
}

/**
 * npu_mem_reserve_take() - a zeroed 2 MiB chunk of @nid's reserve
 * @nid: the node, NUMA_NO_NODE for the calling CPU's
 *
 * Return: a compound 2 MiB page with one reference, all zero; NULL when
 * the reserve has none (the caller allocates and clears one itself).
 */
struct page *npu_mem_reserve_take(int nid)
{
	struct page *page = NULL;
	struct zr_node *n;
	bool low;

	if (!zr_nodes)
		return NULL;
	if (nid == NUMA_NO_NODE)
		nid = numa_mem_id();
	n = &zr_nodes[nid];
	while (READ_ONCE(n->nr_ready)) {
		spin_lock(&n->lock);
		page = list_first_entry_or_null(&n->ready, struct page, lru);
		if (page) {
			list_del_init(&page->lru);
			n->nr_ready--;
			n->nr--;
		}
		low = n->nr < zr_low();
		spin_unlock(&n->lock);
		if (low)
			zr_kick();
		/* Lost while it waited: no one's, never anyone's again. */
		if (page && npu_mem_pages_poisoned(page, NPU_MEM_HUGE_ORDER)) {
			put_page(page);
			page = NULL;
			continue;
		}
		break;
	}
	if (page)
		atomic64_inc(&zr_taken);
	return page;
}

/* Does a page carry a memory cgroup charge? */
static bool zr_charged(struct page *page)
{
#ifdef CONFIG_MEMCG
	return npu_page_memcg_data(page) != 0;
#else
	return false;
#endif
}

/**
 * npu_mem_reserve_recycle() - offer a freed 2 MiB chunk to the reserve
 * @page: its head page, whose one reference (ours) no one else shares
 *
 * Return: true if the reserve took the reference (the chunk is zeroed in
 * the background); false if the caller is to put it (the reserve is at its
 * high watermark, or the chunk is charged to a memory cgroup).
 */
bool npu_mem_reserve_recycle(struct page *page)
{
	struct zr_node *n;
	bool taken = false;

	if (!zr_nodes || !zr_high() || zr_charged(page))
		return false;
	n = &zr_nodes[page_to_nid(page)];
	spin_lock(&n->lock);
	if (n->nr < zr_high()) {
		list_add_tail(&page->lru, &n->dirty);
		n->nr++;
		taken = true;
	}
	spin_unlock(&n->lock);
	if (taken) {
		atomic64_inc(&zr_recycled);
		zr_kick();
	}
	return taken;
}

/* Unlink one chunk to give back, a dirty one first; under n->lock. */
static struct page *zr_unlink_any(struct zr_node *n)
{
	struct page *page;

	page = list_first_entry_or_null(&n->dirty, struct page, lru);
	if (!page) {
		page = list_first_entry_or_null(&n->ready, struct page, lru);
		if (!page)
			return NULL;
		n->nr_ready--;
	}
	list_del_init(&page->lru);
	n->nr--;
	return page;
}

/* Give back up to @max chunks of @n's, and no more than leave @keep. */
static unsigned long zr_give_back(struct zr_node *n, unsigned long max,
				  unsigned long keep)
{
	unsigned long done = 0;
	struct page *page;

	while (done < max) {
		spin_lock(&n->lock);
		page = n->nr > keep ? zr_unlink_any(n) : NULL;
		spin_unlock(&n->lock);
		if (!page)
			break;
		put_page(page);
		done++;
		cond_resched();
	}
	atomic64_add(done, &zr_given_back);
	return done;
}

/* Give back up to @max chunks from all nodes.  Return: how many. */
static unsigned long zr_give_back_all(unsigned long max)
{
	unsigned long done = 0;
	int nid;

	if (!zr_nodes)
		return 0;
	for_each_node(nid)
		done += zr_give_back(&zr_nodes[nid], max - done, 0);
	return done;
}

/**
 * npu_mem_reserve_release() - give reserve chunks back to the kernel now
 * @bytes: at least this much, if the reserve has it
 *
 * For the charge check, which must not refuse an allocation for memory the
 * reserve holds idle.  Return: bytes given back.
 */
u64 npu_mem_reserve_release(u64 bytes)
{
	unsigned long want = DIV_ROUND_UP_ULL(bytes, NPU_MEM_HUGE_SIZE);

	return (u64)zr_give_back_all(want) * NPU_MEM_HUGE_SIZE;
}

/* A new chunk for @nid, when the system can spare it. */
static struct page *zr_new_chunk(int nid)
{
	/* As buffer.c's 2 MiB attempts, and never charged to a memcg. */
	const gfp_t gfp = (GFP_HIGHUSER | __GFP_COMP | __GFP_NOWARN |
			   __GFP_NORETRY | __GFP_THISNODE) & ~__GFP_DIRECT_RECLAIM;
	long avail = si_mem_available();

	if (time_before(jiffies, READ_ONCE(zr_quiet_until)))
		return NULL;
	if (avail < 0 || ((u64)avail << PAGE_SHIFT) <
	    npu_mem_reserve_bytes() + NPU_MEM_HUGE_SIZE)
		return NULL;
	return alloc_pages_node(nid, gfp, NPU_MEM_HUGE_ORDER);
}

/*
 * One pass over a node: give back what is over high, zero what was
 * recycled, and fill up to high once under low.  Return: true when a
 * refill stopped for want of memory (retried later).
 */
static bool zr_tend(int nid)
{
	struct zr_node *n = &zr_nodes[nid];
	unsigned long high = zr_high();
	struct page *page;
	bool starved = false;

	zr_give_back(n, ULONG_MAX, high);
	for (;;) {
		bool over;

		spin_lock(&n->lock);
		page = list_first_entry_or_null(&n->dirty, struct page, lru);
		if (page)
			list_del_init(&page->lru);
		/* Lowered meanwhile: what is over goes back, not zeroed. */
		over = page && n->nr > zr_high();
		if (over)
			n->nr--;
		spin_unlock(&n->lock);
		if (!page)
			break;
		if (over) {
			put_page(page);
			atomic64_inc(&zr_given_back);
			continue;
		}
		zr_clear(page);
		spin_lock(&n->lock);
		list_add_tail(&page->lru, &n->ready);
		n->nr_ready++;
		spin_unlock(&n->lock);
		if (kthread_should_stop())
			return false;
	}

	spin_lock(&n->lock);
	if (n->nr < zr_low())
		n->filling = true;
	spin_unlock(&n->lock);
	while (READ_ONCE(n->filling) && !kthread_should_stop()) {
		spin_lock(&n->lock);
		if (n->nr >= zr_high())
			n->filling = false;
		else
			n->nr++;	/* its place, while it is made */
		spin_unlock(&n->lock);
		if (!READ_ONCE(n->filling))
			break;
		page = zr_new_chunk(nid);
		if (page)
			zr_clear(page);
		spin_lock(&n->lock);
		if (page) {
			list_add_tail(&page->lru, &n->ready);
			n->nr_ready++;
		} else {
			n->nr--;
		}
		spin_unlock(&n->lock);
		if (!page) {
			starved = true;
			break;
		}
		atomic64_inc(&zr_refilled);
	}
	return starved;
}

static int zr_thread_fn(void *unused)
{
	bool starved = false;
	int nid;

	set_user_nice(current, MAX_NICE);
	set_freezable();
	while (!kthread_should_stop()) {
		/* A starved refill tries again every second until it is fed. */
		if (starved)
			wait_event_freezable_timeout(zr_wait,
					atomic_read(&zr_kicked) ||
					kthread_should_stop(), HZ);
		else
			wait_event_freezable(zr_wait, atomic_read(&zr_kicked) ||
					     kthread_should_stop());
		atomic_set(&zr_kicked, 0);
		starved = false;
		for_each_node_state(nid, N_MEMORY)
			starved |= zr_tend(nid);
	}
	return 0;
}

/*
 * Per node: reclaim for one node takes back that node's chunks only, and
 * leaves the other nodes' devices their zeroed memory.
 */
static unsigned long zr_count(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long chunks = READ_ONCE(zr_nodes[sc->nid].nr);

	return chunks ? chunks * CHUNK_PAGES : SHRINK_EMPTY;
}

static unsigned long zr_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long chunks;

	WRITE_ONCE(zr_quiet_until, jiffies + HZ);
	chunks = zr_give_back(&zr_nodes[sc->nid],
			      DIV_ROUND_UP(sc->nr_to_scan, CHUNK_PAGES), 0);
	sc->nr_scanned = chunks * CHUNK_PAGES;
	return chunks ? chunks * CHUNK_PAGES : SHRINK_STOP;
}

/**
 * npu_mem_reserve_info() - the reserve now, for GET_INFO
 * @held: bytes it holds, zeroed or being zeroed, all nodes
 * @low: the low watermark, bytes per node
 * @high: the high watermark, bytes per node
 */
void npu_mem_reserve_info(u64 *held, u64 *low, u64 *high)
{
	u64 chunks = 0;
	int nid;

	if (zr_nodes)
		for_each_node(nid)
			chunks += READ_ONCE(zr_nodes[nid].nr);
	*held = chunks * NPU_MEM_HUGE_SIZE;
	*low = (u64)zr_low() * NPU_MEM_HUGE_SIZE;
	*high = (u64)zr_high() * NPU_MEM_HUGE_SIZE;
}

void npu_mem_reserve_show(struct seq_file *m)
{
	u64 held, low, high, ready = 0;
	int nid;

	npu_mem_reserve_info(&held, &low, &high);
	if (zr_nodes)
		for_each_node(nid)
			ready += READ_ONCE(zr_nodes[nid].nr_ready);
	seq_printf(m, "zero_reserve_bytes: %llu\n", held);
	seq_printf(m, "zero_reserve_ready_bytes: %llu\n",
		   ready * NPU_MEM_HUGE_SIZE);
	seq_printf(m, "zero_reserve_low_bytes: %llu\n", low);
	seq_printf(m, "zero_reserve_high_bytes: %llu\n", high);
	seq_printf(m, "zero_reserve_taken: %lld\n", atomic64_read(&zr_taken));
	seq_printf(m, "zero_reserve_recycled: %lld\n",
		   atomic64_read(&zr_recycled));
	seq_printf(m, "zero_reserve_refilled: %lld\n",
		   atomic64_read(&zr_refilled));
	seq_printf(m, "zero_reserve_given_back: %lld\n",
		   atomic64_read(&zr_given_back));
	if (zr_nodes)
		for_each_node_state(nid, N_MEMORY)
			seq_printf(m, "zero_reserve_node%d_bytes: %llu\n", nid,
				   (u64)READ_ONCE(zr_nodes[nid].nr) *
				   NPU_MEM_HUGE_SIZE);
}

int npu_mem_reserve_init(void)
{
	struct zr_node *nodes;
	int nid, ret;

	nodes = kcalloc(nr_node_ids, sizeof(*nodes), GFP_KERNEL);
	if (!nodes)
		return -ENOMEM;
	for_each_node(nid) {
		spin_lock_init(&nodes[nid].lock);
		INIT_LIST_HEAD(&nodes[nid].ready);
		INIT_LIST_HEAD(&nodes[nid].dirty);
	}
	zr_shrinker = npu_shrinker_alloc(SHRINKER_NUMA_AWARE,
					 "npu_mem-zero-reserve");
	if (!zr_shrinker) {
		ret = -ENOMEM;
		goto err_free;
	}
	zr_shrinker->count_objects = zr_count;
	zr_shrinker->scan_objects = zr_scan;
	/* Chunks are cheap to make again, next to what pressure costs. */
	zr_shrinker->seeks = 0;
	zr_nodes = nodes;
	zr_quiet_until = jiffies;
	zr_thread = kthread_run(zr_thread_fn, NULL, "npu_mem_zero");
	if (IS_ERR(zr_thread)) {
		ret = PTR_ERR(zr_thread);
		goto err_shrinker;
	}
	ret = npu_shrinker_register(zr_shrinker, "npu_mem-zero-reserve");
	if (ret)
		goto err_thread;
	zr_kick();
	return 0;

err_thread:
	kthread_stop(zr_thread);
err_shrinker:
	npu_shrinker_free(zr_shrinker);
err_free:
	zr_nodes = NULL;
	kfree(nodes);
	return ret;
}

/* Module unload: no buffer is left to recycle; everything goes back. */
void npu_mem_reserve_exit(void)
{
	int nid;

	npu_shrinker_free(zr_shrinker);
	kthread_stop(zr_thread);
	for_each_node(nid)
		zr_give_back(&zr_nodes[nid], ULONG_MAX, 0);
	kfree(zr_nodes);
	zr_nodes = NULL;
}
