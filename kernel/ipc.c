// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sharing buffers between processes by key (the UAPI header's "Sharing a
 * buffer between processes by key" is the contract).
 *
 * The registry lives here, in the kernel, because the key is the only
 * thing that crosses between the processes: whoever holds it and passes
 * the checks below gets a handle to the memory, so the checks must be made
 * by someone the importer cannot lie to.  A key is 128 random bits (64 for
 * NPU_MEM_IPC_KEY64, which admits only listed processes unless exported
 * with NPU_MEM_IPC_ANY_PID: the UAPI header says why).  It belongs to
 * the file that exported it and holds one buffer reference; it dies with
 * that file, with the handle it was made from, or on IPC_REVOKE.  Imports
 * are ordinary handles holding their own references, so they outlive it.
 *
 * Every lookup and change happens under npu_mem_ipc_lock, which nests
 * inside a client's lock (export and FREE hold the client's lock so that a
 * key can never name a handle already freed).
 */
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "npu_mem.h"

struct npu_mem_ipc_key {
	u64 key[2];
	struct rhash_head node;
	struct list_head client_node;	/* in owner->ipc_keys */
	struct npu_mem_client *owner;	/* not a reference: it revokes us */
	u32 handle;			/* in @owner, the handle exported */
	u32 flags;			/* NPU_MEM_IPC_* */
	bool readonly;			/* made from a handle without write access */
	struct npu_mem_buf *buf;	/* a reference */
	const struct cred *cred;	/* the exporter's, at export */
	struct pid **pids;		/* the allow-list: references */
	unsigned int nr_pids;
};

static DEFINE_MUTEX(npu_mem_ipc_lock);
static struct rhashtable npu_mem_ipc_keys;

static const struct rhashtable_params key_params = {
	.key_len = sizeof_field(struct npu_mem_ipc_key, key),
	.key_offset = offsetof(struct npu_mem_ipc_key, key),
	.head_offset = offsetof(struct npu_mem_ipc_key, node),
	.automatic_shrinking = true,
};

int npu_mem_ipc_init(void)
{
	return rhashtable_init(&npu_mem_ipc_keys, &key_params);
}

/* Every file is closed by now, and closing revoked its keys. */
void npu_mem_ipc_exit(void)
{
	rhashtable_destroy(&npu_mem_ipc_keys);
}

static void free_key(struct npu_mem_ipc_key *k)
{
	unsigned int i;

	for (i = 0; i < k->nr_pids; i++)
		put_pid(k->pids[i]);
	kfree(k->pids);
	if (k->buf)
		npu_mem_buf_put(k->buf);
	put_cred(k->cred);
	kfree(k);
}

static void unlink_key(struct npu_mem_ipc_key *k)
{
	lockdep_assert_held(&npu_mem_ipc_lock);
	rhashtable_remove_fast(&npu_mem_ipc_keys, &k->node, key_params);
	list_del(&k->client_node);
	k->owner->nr_ipc_keys--;
}

static struct npu_mem_ipc_key *lookup(const u64 key[2])
{
	lockdep_assert_held(&npu_mem_ipc_lock);
	return rhashtable_lookup_fast(&npu_mem_ipc_keys, key, key_params);
}

/* A fresh key in the table; never all zeroes, which callers may use as "none". */
static int insert_key(struct npu_mem_ipc_key *k)
{
	int ret;

	do {
		do {
			get_random_bytes(k->key, sizeof(k->key));
			if (k->flags & NPU_MEM_IPC_KEY64)
				k->key[1] = 0;
		} while (!k->key[0] && !k->key[1]);
		ret = rhashtable_lookup_insert_fast(&npu_mem_ipc_keys,
						    &k->node, key_params);
	} while (ret == -EEXIST);
	return ret == -EBUSY ? -ENOMEM : ret;
}

int npu_mem_ipc_export(struct npu_mem_client *client, u32 handle, u32 flags,
		       u64 key[2])
{
	struct npu_mem_ipc_key *k;
	struct npu_mem_handle *h;
	int ret;

	k = kzalloc(sizeof(*k), GFP_KERNEL_ACCOUNT);
	if (!k)
		return -ENOMEM;
	k->owner = client;
	k->handle = handle;
	k->flags = flags;
	k->cred = get_current_cred();

	mutex_lock(&client->lock);
	h = xa_load(&client->handles, handle);
	if (!h) {
		ret = -ENOENT;
	} else if (h->buf->flags & (NPU_MEM_BUF_HOST | NPU_MEM_BUF_FOREIGN)) {
		ret = -EINVAL;
	} else {
		mutex_lock(&npu_mem_ipc_lock);
		ret = client->nr_ipc_keys >= NPU_MEM_IPC_MAX_KEYS ? -ENOSPC :
		      insert_key(k);
		if (!ret) {
			k->buf = h->buf;
			k->readonly = npu_mem_handle_readonly(h->buf, h->flags);
			npu_mem_buf_get(k->buf);
			list_add_tail(&k->client_node, &client->ipc_keys);
			client->nr_ipc_keys++;
			memcpy(key, k->key, sizeof(k->key));
		}
		mutex_unlock(&npu_mem_ipc_lock);
	}
	mutex_unlock(&client->lock);
	if (ret)
		free_key(k);
	return ret;
}

/* References to the processes @nrs name in the caller's pid namespace. */
static int resolve_pids(const s32 *nrs, u32 count, struct pid **out)
{
	u32 i;

	for (i = 0; i < count; i++) {
		struct pid *pid = nrs[i] > 0 ? find_get_pid(nrs[i]) : NULL;

		/* A process, not a thread of one: importers are matched by tgid. */
		if (!pid || !pid_has_task(pid, PIDTYPE_TGID)) {
			put_pid(pid);
			while (i--)
				put_pid(out[i]);
			return -ESRCH;
		}
		out[i] = pid;
	}
	return 0;
}

int npu_mem_ipc_set_pids(struct npu_mem_client *client, const u64 key[2],
			 const s32 __user *upids, u32 count)
{
	struct pid **added, **all = NULL;
	struct npu_mem_ipc_key *k;
	s32 *nrs;
	u32 i;
	int ret;

	if (!count || count > NPU_MEM_IPC_MAX_PIDS)
		return -EINVAL;
	nrs = memdup_user(upids, array_size(count, sizeof(*nrs)));
	if (IS_ERR(nrs))
		return PTR_ERR(nrs);
	added = kcalloc(count, sizeof(*added), GFP_KERNEL_ACCOUNT);
	ret = added ? resolve_pids(nrs, count, added) : -ENOMEM;
	kfree(nrs);
	if (ret)
		goto out;

	mutex_lock(&npu_mem_ipc_lock);
	k = lookup(key);
	if (!k)
		ret = -ENOENT;
	else if (k->owner != client)
		ret = -EPERM;
	else if (k->nr_pids + count > NPU_MEM_IPC_MAX_PIDS)
		ret = -ENOSPC;
	else if (!(all = kcalloc(k->nr_pids + count, sizeof(*all),
				 GFP_KERNEL_ACCOUNT)))
		ret = -ENOMEM;
	if (!ret) {
		memcpy(all, k->pids, k->nr_pids * sizeof(*all));
		memcpy(all + k->nr_pids, added, count * sizeof(*all));
		kfree(k->pids);
		k->pids = all;
		k->nr_pids += count;
	}
	mutex_unlock(&npu_mem_ipc_lock);
	if (ret)
		for (i = 0; i < count; i++)
			put_pid(added[i]);
out:
	kfree(added);
	return ret;
}

static bool listed(const struct npu_mem_ipc_key *k)
{
	struct pid *me = task_tgid(current);
	unsigned int i;

	for (i = 0; i < k->nr_pids; i++)
		if (k->pids[i] == me)
			return true;
	return false;
}

/* The exporter's user, in the exporter's user namespace, and nobody else. */
static bool same_user(const struct cred *exporter)
{
	const struct cred *cred = current_cred();

	return cred->user_ns == exporter->user_ns &&
	       uid_eq(cred->uid, exporter->euid) &&
	       uid_eq(cred->euid, exporter->euid);
}

static bool may_import(const struct npu_mem_ipc_key *k)
{
	if (k->flags & NPU_MEM_IPC_ANY_PID)
		return same_user(k->cred);
	if ((k->flags & NPU_MEM_IPC_KEY64) || k->nr_pids)
		return listed(k);
	return same_user(k->cred);
}

/*
 * Returns a new reference to the buffer @key names, or an ERR_PTR; @hflags
 * gets the flags of the importer's handle: a key gives no more access than
 * the handle it was made from had.
 */
struct npu_mem_buf *npu_mem_ipc_lookup(const u64 key[2], u32 *hflags)
{
	struct npu_mem_ipc_key *k;
	struct npu_mem_buf *buf;

	mutex_lock(&npu_mem_ipc_lock);
	k = lookup(key);
	if (!k) {
		buf = ERR_PTR(-ENOENT);
	} else if (!may_import(k)) {
		buf = ERR_PTR(-EACCES);
	} else {
		buf = k->buf;
		*hflags = NPU_MEM_BUF_IMPORTED |
			  (k->readonly ? NPU_MEM_BUF_READONLY : 0);
		npu_mem_buf_get(buf);
	}
	mutex_unlock(&npu_mem_ipc_lock);
	return buf;
}

int npu_mem_ipc_revoke(struct npu_mem_client *client, const u64 key[2])
{
	struct npu_mem_ipc_key *k;
	int ret = 0;

	mutex_lock(&npu_mem_ipc_lock);
	k = lookup(key);
	if (!k)
		ret = -ENOENT;
	else if (k->owner != client)
		ret = -EPERM;
	else
		unlink_key(k);
	mutex_unlock(&npu_mem_ipc_lock);
	if (!ret)
		free_key(k);
	return ret;
}

/* Unlinks @client's keys (all, or those of @handle) and frees them. */
static void revoke_where(struct npu_mem_client *client, bool all, u32 handle)
{
	struct npu_mem_ipc_key *k, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&npu_mem_ipc_lock);
	list_for_each_entry_safe(k, tmp, &client->ipc_keys, client_node) {
		if (all || k->handle == handle) {
			unlink_key(k);
			list_add(&k->client_node, &dead);
		}
	}
	mutex_unlock(&npu_mem_ipc_lock);
	list_for_each_entry_safe(k, tmp, &dead, client_node)
		free_key(k);
}

/*
 * FREE of @handle: under the client's lock, which also still holds the
 * handle's own buffer reference, so no put here is the last.
 */
void npu_mem_ipc_revoke_handle(struct npu_mem_client *client, u32 handle)
{
	lockdep_assert_held(&client->lock);
	revoke_where(client, false, handle);
}

void npu_mem_ipc_revoke_client(struct npu_mem_client *client)
{
	revoke_where(client, true, 0);
}
