// SPDX-License-Identifier: GPL-2.0-only
/*
 * Clients: one per open file.  A client owns its handles and its mmap
 * offset space; both map to buffer references it holds.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "npu_mem.h"

/*
 * mmap offsets are page offsets in [PGOFF_MIN, PGOFF_LIMIT), below 2^32
 * pages so that 32-bit processes (mmap2 takes a 32-bit page offset) can
 * reach every buffer.  Page 0 stays unused so no buffer sits at offset 0.
 */
#define PGOFF_MIN	1ULL
#define PGOFF_LIMIT	(1ULL << 32)

#ifdef NPU_MEM_TEST_ENGINE
/*
 * Test build only (debugfs npu_mem/pgoff_limit, root): files opened while
 * it is set get the offsets [PGOFF_MIN, it) instead, so that a test can
 * use up and reuse the space with a few small buffers.  0: the real limit.
 */
u64 npu_mem_test_pgoff_limit;

static u64 pgoff_limit(void)
{
	u64 limit = READ_ONCE(npu_mem_test_pgoff_limit);

	return limit > PGOFF_MIN && limit < PGOFF_LIMIT ? limit : PGOFF_LIMIT;
}
#else
static u64 pgoff_limit(void)
{
	return PGOFF_LIMIT;
}
#endif

/* Every open file of the device, for debugfs's per-process view. */
DEFINE_MUTEX(npu_mem_clients_lock);
LIST_HEAD(npu_mem_clients);
static atomic64_t next_client_id = ATOMIC64_INIT(0);

/*
 * Called from open(): @cred are the opener's credentials, and privileges
 * are theirs for the life of the file (whoever the file is passed to), as
 * for any file.  Checked here without audit: lacking CAP_IPC_LOCK or
 * CAP_SYS_ADMIN is the normal case, not a denial worth logging.
 */
struct npu_mem_client *npu_mem_client_create(const struct cred *cred)
{
	struct npu_mem_client *client;

	client = kzalloc(sizeof(*client), GFP_KERNEL_ACCOUNT);
	if (!client)
		return NULL;
	mutex_init(&client->lock);
	xa_init_flags(&client->handles, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	client->offsets = RB_ROOT;
	client->next_pgoff = PGOFF_MIN;
	client->pgoff_limit = pgoff_limit();
	client->id = atomic64_inc_return(&next_client_id);
	client->cred = get_cred(cred);
	client->unlimited = ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK);
	client->sees_phys = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	client->pid = task_tgid_nr(current);
	INIT_LIST_HEAD(&client->ipc_keys);
	get_task_comm(client->comm, current);

	mutex_lock(&npu_mem_clients_lock);
	list_add_tail(&client->node, &npu_mem_clients);
	mutex_unlock(&npu_mem_clients_lock);
	return client;
}

void npu_mem_client_destroy(struct npu_mem_client *client)
{
	struct npu_mem_handle *h;
	unsigned long handle;

	mutex_lock(&npu_mem_clients_lock);
	list_del(&client->node);
	mutex_unlock(&npu_mem_clients_lock);

	/* Its keys die with it: importers must not outlive-import the owner. */
	npu_mem_ipc_revoke_client(client);
	/* Last reference to the file: nobody else can reach these tables. */
	xa_for_each(&client->handles, handle, h) {
		npu_mem_buf_put(h->buf);
		kfree(h);
		cond_resched();
	}
	xa_destroy(&client->handles);
	put_cred(client->cred);
	mutex_destroy(&client->lock);
	kfree(client);
}

static void account(struct npu_mem_client *client, struct npu_mem_buf *buf,
		    int sign)
{
	lockdep_assert_held(&client->lock);
	client->nr_buffers += sign;
	client->bytes += sign * (s64)buf->size;
	client->huge_pages += sign * (s64)buf->nr_huge;
	client->normal_pages += sign * (s64)buf->nr_normal;
}

static inline u64 buf_pages(const struct npu_mem_buf *buf)
{
	return buf->size >> PAGE_SHIFT;
}

static bool offset_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct npu_mem_handle, offset_node)->pgoff <
	       rb_entry(b, struct npu_mem_handle, offset_node)->pgoff;
}

/*
 * The offset space is an rbtree of the handles themselves, so adding and
 * removing one allocates nothing and costs O(log n) whatever the history.
 */
static struct npu_mem_handle *offset_lookup(struct npu_mem_client *client,
					    u64 pgoff)
{
	struct rb_node *n = client->offsets.rb_node;

	lockdep_assert_held(&client->lock);
	while (n) {
		struct npu_mem_handle *h = rb_entry(n, struct npu_mem_handle,
						    offset_node);

		if (pgoff < h->pgoff)
			n = n->rb_left;
		else if (pgoff - h->pgoff >= buf_pages(h->buf))
			n = n->rb_right;
		else
			return h;
	}
	return NULL;
}

/*
 * Offsets are handed out upwards, so the common case costs nothing; once
 * the space is used up, free gaps between live buffers are reused (first
 * fit, a walk that only a client with 16 TiB of history ever pays for).
 * Buffers with 2 MiB chunks start at 2 MiB-aligned offsets, so that the
 * address mmap picks (thp_get_unmapped_area) can map them with PMDs.
 * The fast path relies on nothing live at or above next_pgoff: a gap that
 * first fit finds may reach past it (the last buffers were freed), so
 * next_pgoff moves past whatever first fit hands out.
 */
static int alloc_pgoff(struct npu_mem_client *client, u64 npages, u64 align,
		       u64 *pgoff)
{
	const u64 limit = client->pgoff_limit;
	u64 start = round_up(client->next_pgoff, align);
	struct rb_node *n;

	lockdep_assert_held(&client->lock);
	if (start < limit && npages <= limit - start) {
		*pgoff = start;
		client->next_pgoff = start + npages;
		return 0;
	}

	start = round_up(PGOFF_MIN, align);
	for (n = rb_first(&client->offsets); n; n = rb_next(n)) {
		struct npu_mem_handle *h = rb_entry(n, struct npu_mem_handle,
						    offset_node);

		if (h->pgoff >= start && h->pgoff - start >= npages)
			break;
		start = max(start, round_up(h->pgoff + buf_pages(h->buf), align));
	}
	if (start >= limit || limit - start < npages)
		return -ENOSPC;
	*pgoff = start;
	client->next_pgoff = max(client->next_pgoff, start + npages);
	return 0;
}

static void describe(struct npu_mem_client *client,
		     const struct npu_mem_handle *h, struct npu_mem_buffer *desc)
{
	npu_mem_buf_describe(h->buf, client->sees_phys, desc);
	desc->mmap_offset = h->pgoff << PAGE_SHIFT;
	desc->flags |= h->flags;
}

/**
 * npu_mem_client_add() - a new handle for @buf in @client
 * @client: the open file
 * @buf: the buffer; the caller's reference passes to the handle on success
 * @hflags: NPU_MEM_BUF_IMPORTED when the buffer is another file's,
 *	NPU_MEM_BUF_READONLY when the handle may not write it
 * @handle: out: the handle number
 * @desc: out: the buffer as this handle describes it
 *
 * Describes under the same lock hold: once the lock drops, another thread
 * can FREE the new handle (handles are predictable), and the buffer with it.
 * Registered host memory gets no mmap offset: it is not mapped through us.
 */
int npu_mem_client_add(struct npu_mem_client *client, struct npu_mem_buf *buf,
		       u32 hflags, u32 *handle, struct npu_mem_buffer *desc)
{
	bool mappable = !(buf->flags & NPU_MEM_BUF_HOST);
	struct npu_mem_handle *h;
	int ret;

	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->buf = buf;
	h->flags = hflags;

	mutex_lock(&client->lock);
	if (mappable) {
		ret = alloc_pgoff(client, buf_pages(buf),
				  buf->nr_huge ? NPU_MEM_HUGE_SIZE >> PAGE_SHIFT : 1,
				  &h->pgoff);
		if (ret)
			goto err_unlock;
	}
	/* Cyclic, so a stale handle names nothing rather than a newer buffer. */
	ret = xa_alloc_cyclic(&client->handles, handle, h, xa_limit_32b,
			      &client->next_handle, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_unlock;
	if (mappable)
		rb_add(&h->offset_node, &client->offsets, offset_less);
	account(client, buf, 1);
	describe(client, h, desc);
	mutex_unlock(&client->lock);
	return 0;

err_unlock:
	mutex_unlock(&client->lock);
	kfree(h);
	return ret;
}

/*
 * Drops @handle.  With @only, only if the handle still names that buffer:
 * ALLOC's undo must not free a buffer another thread put there after
 * freeing the one ALLOC made.  Keys exported from the handle go with it,
 * under the same lock hold, so no import can follow a completed FREE.
 */
int npu_mem_client_remove(struct npu_mem_client *client, u32 handle,
			  const struct npu_mem_buf *only)
{
	struct npu_mem_handle *h;

	mutex_lock(&client->lock);
	h = xa_load(&client->handles, handle);
	if (h && only && h->buf != only)
		h = NULL;
	if (h) {
		xa_erase(&client->handles, handle);
		/* The offset dies with the handle; live mappings keep the buffer. */
		if (h->pgoff)
			rb_erase(&h->offset_node, &client->offsets);
		account(client, h->buf, -1);
		npu_mem_ipc_revoke_handle(client, handle);
	}
	mutex_unlock(&client->lock);
	if (!h)
		return -ENOENT;
	npu_mem_buf_put(h->buf);
	kfree(h);
	return 0;
}

int npu_mem_client_describe(struct npu_mem_client *client, u32 handle,
			    struct npu_mem_buffer *desc)
{
	struct npu_mem_handle *h;

	mutex_lock(&client->lock);
	h = xa_load(&client->handles, handle);
	if (h)
		describe(client, h, desc);
	mutex_unlock(&client->lock);
	return h ? 0 : -ENOENT;
}

/* Returns a new reference, or NULL; @hflags (if set) gets the handle's flags. */
struct npu_mem_buf *npu_mem_client_lookup(struct npu_mem_client *client,
					  u32 handle, u32 *hflags)
{
	struct npu_mem_handle *h;
	struct npu_mem_buf *buf = NULL;

	mutex_lock(&client->lock);
	h = xa_load(&client->handles, handle);
	if (h) {
		buf = h->buf;
		if (hflags)
			*hflags = h->flags;
		npu_mem_buf_get(buf);
	}
	mutex_unlock(&client->lock);
	return buf;
}

/*
 * Returns a new reference to the buffer whose offset range holds @pgoff,
 * in @first the page offset where that range starts and in @hflags the
 * flags of the handle it belongs to.
 */
struct npu_mem_buf *npu_mem_client_lookup_pgoff(struct npu_mem_client *client,
						unsigned long pgoff,
						u64 *first, u32 *hflags)
{
	struct npu_mem_handle *h;
	struct npu_mem_buf *buf = NULL;

	mutex_lock(&client->lock);
	h = offset_lookup(client, pgoff);
	if (h) {
		buf = h->buf;
		*first = h->pgoff;
		*hflags = h->flags;
		npu_mem_buf_get(buf);
	}
	mutex_unlock(&client->lock);
	return buf;
}

/* DRM-style "key: value" lines (Documentation/gpu/drm-usage-stats.rst). */
void npu_mem_client_show_fdinfo(struct seq_file *m,
				struct npu_mem_client *client)
{
	mutex_lock(&client->lock);
	seq_printf(m, "npu-mem-client-id:\t%llu\n", client->id);
	seq_printf(m, "npu-mem-buffers:\t%llu\n", client->nr_buffers);
	seq_printf(m, "npu-mem-bytes:\t%llu\n", client->bytes);
	seq_printf(m, "npu-mem-huge-pages:\t%llu\n", client->huge_pages);
	seq_printf(m, "npu-mem-normal-pages:\t%llu\n", client->normal_pages);
	mutex_unlock(&client->lock);
	/*
	 * All users' together, as GET_INFO has it: a retained chunk belongs
	 * to no file any more, the file that had it may be long gone.
	 */
	seq_printf(m, "npu-mem-retained-bytes:\t%lld\n",
		   atomic64_read(&npu_mem_usage.retained_bytes));
}
