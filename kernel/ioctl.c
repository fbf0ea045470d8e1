// SPDX-License-Identifier: GPL-2.0-only
/*
 * ioctl dispatch and handlers.
 *
 * Commands are dispatched by _IOC_NR; the size in the caller's command is
 * the struct size it was built with (see the UAPI header for the rules).
 * A handler that creates something userspace must learn about (a handle,
 * an fd, a peer mapping's address) leaves it "pending" so that a failed
 * copy back to userspace can undo it instead of leaking it.
 */
#include <linux/dma-buf.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

#include "npu_mem.h"

struct npu_mem_pending {
	u32 handle;		/* undo: free it, if it still names @buf */
	struct npu_mem_buf *buf;	/* a reference, dropped either way */
	int fd;			/* commit: install @file there; undo: release */
	struct file *file;
	const u64 *key;		/* undo: revoke the IPC key it points to */
	struct npu_mem_npu *peer;	/* undo: unmap @buf for it */
};

/*
 * The NPU a call means: the index it gives (ALLOC, GET_INFO,
 * HOST_REGISTER, DMABUF_IMPORT), NPU 0 for callers built before indices,
 * whose zero pad (or missing tail) is index 0.  NULL: no such index.
 */
static struct npu_mem_npu *client_npu(struct npu_mem_client *client, u32 index)
{
	return npu_mem_npu_get(index);
}

union npu_mem_ioctl_arg {
	struct npu_mem_info info;
	struct npu_mem_alloc alloc;
	struct npu_mem_free free;
	struct npu_mem_query query;
	struct npu_mem_sync sync;
	struct npu_mem_export export;
	struct npu_mem_ipc_export ipc_export;
	struct npu_mem_ipc_set_pids ipc_set_pids;
	struct npu_mem_ipc_import ipc_import;
	struct npu_mem_ipc_revoke ipc_revoke;
	struct npu_mem_host_register host_register;
	struct npu_mem_dmabuf_import dmabuf_import;
	struct npu_mem_peer peer;
};

static int npu_mem_get_info(struct npu_mem_client *client, void *data,
			    struct npu_mem_pending *p)
{
	struct npu_mem_info *info = data;
	struct npu_mem_npu *npu;
	u32 index = info->device;

	if (info->flags || info->reserved)
		return -EINVAL;
	npu = client_npu(client, index);
	if (!npu)
		return -EINVAL;

	memset(info, 0, sizeof(*info));
	info->abi_major = NPU_MEM_ABI_MAJOR;
	info->abi_minor = NPU_MEM_ABI_MINOR;
	info->device = index;
	info->device_count = npu_mem_npu_count();
	info->dev_flags = npu_mem_dev_flags(npu);
	info->dev_node = npu_mem_npu_node(npu);
	npu_mem_npu_pci_addr(npu, &info->dev_pci_domain, &info->dev_pci_bdf);
	info->page_sizes = NPU_MEM_PAGE_4K | NPU_MEM_PAGE_2M;
	info->total_ram = (u64)totalram_pages() << PAGE_SHIFT;
	info->free_ram = (u64)global_zone_page_state(NR_FREE_PAGES) << PAGE_SHIFT;
	info->limit_bytes = npu_mem_limit_bytes();
	info->max_alloc = npu_mem_max_alloc();
	info->allocated_bytes = atomic64_read(&npu_mem_usage.bytes);
	info->huge_pages = atomic64_read(&npu_mem_usage.huge_pages);
	info->normal_pages = atomic64_read(&npu_mem_usage.normal_pages);
	info->buffers = atomic64_read(&npu_mem_usage.buffers);
	info->retained_bytes = atomic64_read(&npu_mem_usage.retained_bytes);
	npu_mem_reserve_info(&info->zero_reserve_bytes, &info->zero_reserve_low,
			     &info->zero_reserve_high);
	npu_mem_npu_usage(npu, &info->dev_bytes, &info->dev_buffers);
	info->dev_node_bytes = npu_mem_node_bytes(npu_mem_npu_node(npu));

	mutex_lock(&client->lock);
	info->client_buffers = client->nr_buffers;
	info->client_bytes = client->bytes;
	mutex_unlock(&client->lock);
	return 0;
}

/*
 * A new handle for @buf, taking over the caller's reference: one more
 * reference for the undo path, since another thread may FREE the handle as
 * soon as it exists.
 */
static int add_pending(struct npu_mem_client *client, struct npu_mem_buf *buf,
		       u32 hflags, u32 *handle, struct npu_mem_buffer *desc,
		       struct npu_mem_pending *p)
{
	int ret;

	npu_mem_buf_get(buf);
	ret = npu_mem_client_add(client, buf, hflags, handle, desc);
	if (ret) {
		npu_mem_buf_put(buf);
		npu_mem_buf_put(buf);
		return ret;
	}
	p->handle = *handle;
	p->buf = buf;
	return 0;
}

static int npu_mem_alloc_ioctl(struct npu_mem_client *client, void *data,
			       struct npu_mem_pending *p)
{
	struct npu_mem_alloc *args = data;
	struct npu_mem_npu *npu = client_npu(client, args->device);
	struct npu_mem_buf *buf;

	if (!args->size || args->policy >= NPU_MEM_POLICY_COUNT ||
	    (args->flags & ~NPU_MEM_ALLOC_VALID) || !npu)
		return -EINVAL;

	buf = npu_mem_buf_alloc(npu, args->size, args->policy,
				args->flags, client->cred, client->unlimited);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	return add_pending(client, buf, 0, &args->handle, &args->buf, p);
}

static int npu_mem_free_ioctl(struct npu_mem_client *client, void *data,
			      struct npu_mem_pending *p)
{
	struct npu_mem_free *args = data;

	if (args->flags)
		return -EINVAL;
	return npu_mem_client_remove(client, args->handle, NULL);
}

static int npu_mem_query_ioctl(struct npu_mem_client *client, void *data,
			       struct npu_mem_pending *p)
{
	struct npu_mem_query *args = data;
	struct npu_mem_buf *buf;
	u32 hflags;

	if (args->flags)
		return -EINVAL;
	/* The handle's own view (READONLY, IMPORTED) comes from describe. */
	buf = npu_mem_client_lookup(client, args->handle, &hflags);
	if (!buf)
		return -ENOENT;
	args->device = npu_mem_npu_index(buf->npu);
	args->node = buf->first_node;
	args->off_node_pages = buf->off_node_pages;
	npu_mem_buf_put(buf);
	return npu_mem_client_describe(client, args->handle, &args->buf);
}

static int npu_mem_sync_ioctl(struct npu_mem_client *client, void *data,
			      struct npu_mem_pending *p)
{
	struct npu_mem_sync *args = data;
	struct npu_mem_buf *buf;
	bool reader;
	u32 hflags;
	int ret;

	if (args->reserved || !args->length ||
	    args->direction < NPU_MEM_SYNC_TO_DEVICE ||
	    args->direction > NPU_MEM_SYNC_BIDIRECTIONAL)
		return -EINVAL;

	buf = npu_mem_client_lookup(client, args->handle, &hflags);
	if (!buf)
		return -ENOENT;
	reader = npu_mem_handle_reader(buf, hflags);
	if (buf->flags & NPU_MEM_BUF_FOREIGN)
		ret = npu_mem_import_sync(buf, args->offset, args->length,
					  args->direction, reader);
	else
		ret = npu_mem_buf_sync_request(buf, args->offset, args->length,
					       args->direction, reader);
	npu_mem_buf_put(buf);
	return ret;
}

static int npu_mem_export_ioctl(struct npu_mem_client *client, void *data,
				struct npu_mem_pending *p)
{
	struct npu_mem_export *args = data;
	struct npu_mem_buf *buf;
	struct dma_buf *dmabuf;
	u32 hflags;
	int fd;

	if ((args->flags & ~(O_CLOEXEC | O_RDWR)) || args->pad)
		return -EINVAL;

	buf = npu_mem_client_lookup(client, args->handle, &hflags);
	if (!buf)
		return -ENOENT;
	/*
	 * Registered host memory is the process's own, and a foreign import
	 * is its exporter's: not ours to share.
	 */
	if (buf->flags & (NPU_MEM_BUF_HOST | NPU_MEM_BUF_FOREIGN)) {
		npu_mem_buf_put(buf);
		return -EINVAL;
	}
	if (npu_mem_handle_readonly(buf, hflags) && (args->flags & O_RDWR)) {
		npu_mem_buf_put(buf);
		return -EACCES;
	}
	/* Importers could not map it for a device: there is none. */
	if (!npu_mem_buf_mapped(buf)) {
		npu_mem_buf_put(buf);
		return -ENODEV;
	}
	/* The dma-buf takes over the lookup's reference. */
	dmabuf = npu_mem_dmabuf_export(buf, args->flags);
	if (IS_ERR(dmabuf)) {
		npu_mem_buf_put(buf);
		return PTR_ERR(dmabuf);
	}
	fd = get_unused_fd_flags(args->flags & O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	args->fd = fd;
	p->fd = fd;
	p->file = dmabuf->file;
	return 0;
}

static int npu_mem_ipc_export_ioctl(struct npu_mem_client *client, void *data,
				    struct npu_mem_pending *p)
{
	struct npu_mem_ipc_export *args = data;
	int ret;

	if (args->flags & ~NPU_MEM_IPC_EXPORT_VALID)
		return -EINVAL;
	ret = npu_mem_ipc_export(client, args->handle, args->flags, args->key);
	if (!ret)
		p->key = args->key;
	return ret;
}

static int npu_mem_ipc_set_pids_ioctl(struct npu_mem_client *client,
				      void *data, struct npu_mem_pending *p)
{
	struct npu_mem_ipc_set_pids *args = data;

	if (args->flags)
		return -EINVAL;
	return npu_mem_ipc_set_pids(client, args->key,
				    u64_to_user_ptr(args->pids), args->count);
}

static int npu_mem_ipc_import_ioctl(struct npu_mem_client *client, void *data,
				    struct npu_mem_pending *p)
{
	struct npu_mem_ipc_import *args = data;
	struct npu_mem_buf *buf;
	u32 hflags;

	if (args->flags)
		return -EINVAL;
	buf = npu_mem_ipc_lookup(args->key, &hflags);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	/* As EXPORT: nothing to share with a device that is gone. */
	if (!npu_mem_buf_mapped(buf)) {
		npu_mem_buf_put(buf);
		return -ENODEV;
	}
	return add_pending(client, buf, hflags, &args->handle, &args->buf, p);
}

static int npu_mem_ipc_revoke_ioctl(struct npu_mem_client *client, void *data,
				    struct npu_mem_pending *p)
{
	struct npu_mem_ipc_revoke *args = data;

	if (args->flags || args->pad)
		return -EINVAL;
	return npu_mem_ipc_revoke(client, args->key);
}

static int npu_mem_host_register_ioctl(struct npu_mem_client *client,
				       void *data, struct npu_mem_pending *p)
{
	struct npu_mem_host_register *args = data;
	struct npu_mem_npu *npu = client_npu(client, args->device);
	struct npu_mem_buf *buf;

	if ((args->flags & ~NPU_MEM_HOST_VALID) || args->pad || !npu)
		return -EINVAL;
	buf = npu_mem_buf_register(npu, args->addr, args->size, args->flags,
				   client->cred, client->unlimited);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	return add_pending(client, buf, 0, &args->handle, &args->buf, p);
}

static int npu_mem_dmabuf_import_ioctl(struct npu_mem_client *client,
				       void *data, struct npu_mem_pending *p)
{
	struct npu_mem_dmabuf_import *args = data;
	struct npu_mem_npu *npu = client_npu(client, args->device);
	struct npu_mem_buf *buf;
	u32 hflags;

	if (args->flags || !npu)
		return -EINVAL;
	buf = npu_mem_import_dmabuf(npu, args->fd, &hflags);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	return add_pending(client, buf, hflags, &args->handle, &args->buf, p);
}

/*
 * The buffer and the NPU a peer call names, checked in the UAPI header's
 * order of errors; @writer: a call that changes the buffer's mappings,
 * which a handle with less access than the owner's may not (the peer
 * could write through its mapping).  On success the caller puts *@bufp.
 */
static int peer_args(struct npu_mem_client *client, struct npu_mem_peer *args,
		     bool writer, struct npu_mem_buf **bufp,
		     struct npu_mem_npu **npup)
{
	struct npu_mem_npu *npu;
	struct npu_mem_buf *buf;
	u32 hflags;
	int ret;

	if (args->flags || args->pad || args->reserved)
		return -EINVAL;
	npu = client_npu(client, args->device);
	if (!npu)
		return -EINVAL;
	buf = npu_mem_client_lookup(client, args->handle, &hflags);
	if (!buf)
		return -ENOENT;
	ret = -EOPNOTSUPP;
	if (buf->flags & (NPU_MEM_BUF_HOST | NPU_MEM_BUF_FOREIGN))
		goto err;
	ret = -EINVAL;
	if (writer && npu == buf->npu)
		goto err;
	ret = -EACCES;
	if (writer && npu_mem_handle_reader(buf, hflags))
		goto err;
	*bufp = buf;
	*npup = npu;
	return 0;
err:
	npu_mem_buf_put(buf);
	return ret;
}

enum peer_op { PEER_MAP, PEER_UNMAP, PEER_QUERY };

static int peer_ioctl(struct npu_mem_client *client, void *data,
		      struct npu_mem_pending *p, enum peer_op op)
{
	struct npu_mem_peer *args = data;
	struct npu_mem_npu *npu;
	struct npu_mem_buf *buf;
	int ret;

	ret = peer_args(client, args, op != PEER_QUERY, &buf, &npu);
	if (ret)
		return ret;
	if (op == PEER_MAP)
		ret = npu_mem_buf_peer_map(buf, npu, client->sees_phys, args);
	else if (op == PEER_UNMAP)
		ret = npu_mem_buf_peer_unmap(buf, npu);
	else
		ret = npu_mem_buf_peer_describe(buf, npu, client->sees_phys,
						args);
	if (ret || op != PEER_MAP) {
		npu_mem_buf_put(buf);
		return ret;
	}
	/* The lookup's reference goes with the pending undo. */
	p->buf = buf;
	p->peer = npu;
	return 0;
}

static int npu_mem_peer_map_ioctl(struct npu_mem_client *client, void *data,
				  struct npu_mem_pending *p)
{
	return peer_ioctl(client, data, p, PEER_MAP);
}

static int npu_mem_peer_unmap_ioctl(struct npu_mem_client *client, void *data,
				    struct npu_mem_pending *p)
{
	return peer_ioctl(client, data, p, PEER_UNMAP);
}

static int npu_mem_peer_query_ioctl(struct npu_mem_client *client, void *data,
				    struct npu_mem_pending *p)
{
	return peer_ioctl(client, data, p, PEER_QUERY);
}

struct npu_mem_ioctl_desc {
	unsigned int cmd;
	size_t min_size;	/* the struct's ABI v1 size: nothing older exists */
	int (*fn)(struct npu_mem_client *client, void *data,
		  struct npu_mem_pending *p);
};

#define NPU_MEM_IOCTL(_cmd, _fn) \
	[_IOC_NR(_cmd)] = { .cmd = _cmd, .min_size = _IOC_SIZE(_cmd), .fn = _fn }
/* A struct that grew: callers built before may pass its v1 size. */
#define NPU_MEM_IOCTL_V1(_cmd, _v1_size, _fn) \
	[_IOC_NR(_cmd)] = { .cmd = _cmd, .min_size = _v1_size, .fn = _fn }

static const struct npu_mem_ioctl_desc npu_mem_ioctls[] = {
	NPU_MEM_IOCTL_V1(NPU_MEM_IOCTL_GET_INFO,
			 offsetofend(struct npu_mem_info, reserved),
			 npu_mem_get_info),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_ALLOC, npu_mem_alloc_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_FREE, npu_mem_free_ioctl),
	NPU_MEM_IOCTL_V1(NPU_MEM_IOCTL_QUERY,
			 offsetofend(struct npu_mem_query, buf),
			 npu_mem_query_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_SYNC, npu_mem_sync_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_EXPORT, npu_mem_export_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_IPC_EXPORT, npu_mem_ipc_export_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_IPC_SET_PIDS, npu_mem_ipc_set_pids_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_IPC_IMPORT, npu_mem_ipc_import_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_IPC_REVOKE, npu_mem_ipc_revoke_ioctl),
	NPU_MEM_IOCTL_V1(NPU_MEM_IOCTL_HOST_REGISTER,
			 offsetofend(struct npu_mem_host_register, buf),
			 npu_mem_host_register_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_DMABUF_IMPORT, npu_mem_dmabuf_import_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_PEER_MAP, npu_mem_peer_map_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_PEER_UNMAP, npu_mem_peer_unmap_ioctl),
	NPU_MEM_IOCTL(NPU_MEM_IOCTL_PEER_QUERY, npu_mem_peer_query_ioctl),
};

long npu_mem_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct npu_mem_client *client = file->private_data;
	void __user *uptr = (void __user *)arg;
	const struct npu_mem_ioctl_desc *desc;
	struct npu_mem_pending pending = { .fd = -1 };
	union npu_mem_ioctl_arg karg;
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd), ksize;
	int ret;

	if (_IOC_TYPE(cmd) != NPU_MEM_IOCTL_MAGIC ||
	    nr >= ARRAY_SIZE(npu_mem_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(npu_mem_ioctls));
	desc = &npu_mem_ioctls[nr];
	if (!desc->fn || _IOC_DIR(cmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;

	ksize = _IOC_SIZE(desc->cmd);
	if (usize < desc->min_size)
		return -EINVAL;
	/* Zero-extends older structs, refuses newer ones with unknown bits set. */
	ret = copy_struct_from_user(&karg, ksize, uptr, usize);
	if (ret)
		return ret == -E2BIG ? -EINVAL : ret;

	ret = desc->fn(client, &karg, &pending);
	if (ret)
		return ret;

	if ((_IOC_DIR(desc->cmd) & _IOC_READ) &&
	    copy_to_user(uptr, &karg, min(usize, ksize))) {
		if (pending.file) {
			fput(pending.file);
			put_unused_fd(pending.fd);
		}
		if (pending.handle)
			npu_mem_client_remove(client, pending.handle, pending.buf);
		if (pending.key)
			npu_mem_ipc_revoke(client, pending.key);
		if (pending.peer)
			npu_mem_buf_peer_unmap(pending.buf, pending.peer);
		ret = -EFAULT;
	} else if (pending.file) {
		fd_install(pending.fd, pending.file);
	}
	if (pending.buf)
		npu_mem_buf_put(pending.buf);
	return ret;
}
