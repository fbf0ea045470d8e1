// SPDX-License-Identifier: MIT
/*
 * aclrtIpcMemGetExportKey, aclrtIpcMemSetImportPid, aclrtIpcMemImportByKey,
 * aclrtIpcMemClose and aclrtIpcMemSetAttr over the driver's IPC ioctls.
 *
 * Who may import is the kernel's decision: it keeps each key's allow-list.
 * CANN's default flag turns pid validation on, so a key is usable only by
 * the pids aclrtIpcMemSetImportPid names; the driver admits every process
 * of the exporter's user to a key without a list, so the export puts the
 * exporter itself on the list at once, which closes that window (and lets
 * the exporter import its own key).  ..._DISABLE_PID_VALIDATION is the
 * driver's ANY_PID: any process of the exporter's user.
 *
 * Where CANN is silent: devPtr may be anywhere inside a buffer (the key
 * carries its offset; the importer maps the whole buffer); each call makes
 * a new key; importing one key again in a process gives the same pointer
 * and needs one more close; a process that exported and imported one key
 * closes its import first.  aclrtFree of exported memory revokes its keys
 * (imports made keep the pages), and such memory goes back to the driver,
 * never to the pool, since other processes may still map it.
 *
 * A key string names a 128-bit driver key and the offset of the exported
 * pointer in its buffer: "aclmem:mem:<32 hex digits>:<12 hex digits>",
 * always KEY_LEN - 1 characters.  The process keeps a list of the keys it
 * exported (for aclrtIpcMemSetImportPid and aclrtIpcMemClose) and of those
 * it imported (one mapping per key, counted).
 *
 * Locking: one mutex of this file, taken after the buffer table's lock and
 * never held while calling into memory.c (its rank, context.h).  A new key
 * is recorded under both (aclmem_mem_share_commit): aclrtFree takes the
 * buffer out of the table, then forgets its keys, so a free racing the
 * export either comes wholly after the record, and forgets the key, or
 * before it, and the export fails; never a key recorded after its buffer's
 * keys were forgotten, which the FREE has revoked.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "aclmem/aclmem.h"
#include "args.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "peer.h"

/* A key's size with its NUL; CANN's key buffers are 65 bytes. */
#define KEY_LEN	57

#define KEY_PREFIX	"aclmem:mem:"
#define KEY_OFF_DIGITS	12

struct ipc_key {
	uint64_t key[2];
	uint64_t offset;
};

struct ipc_export {
	struct ipc_export *next;
	struct ipc_key k;
	uint32_t handle;
};

struct ipc_import {
	struct ipc_import *next;
	struct ipc_key k;
	void *base;			/* the mapping: aclmem_buf.addr */
	unsigned int refs;
};

static pthread_mutex_t ipc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ipc_export *exports;
static struct ipc_import *imports;

static void key_format(const struct ipc_key *k, char *s)
{
	snprintf(s, KEY_LEN, KEY_PREFIX "%016" PRIx64 "%016"
		 PRIx64 ":%0*" PRIx64, k->key[0], k->key[1], KEY_OFF_DIGITS,
		 k->offset);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static bool hex_parse(const char *s, int digits, uint64_t *out)
{
	uint64_t v = 0;
	int i, d;

	for (i = 0; i < digits; i++) {
		d = hexval(s[i]);
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

/* The exact form key_format() writes, and nothing else: ACL code. */
static int key_parse(const char *fn, const char *s, struct ipc_key *k)
{
	const size_t pl = sizeof(KEY_PREFIX) - 1;

	if (strnlen(s, KEY_LEN) != KEY_LEN - 1 ||
	    strncmp(s, KEY_PREFIX, pl) || s[pl + 32] != ':' ||
	    !hex_parse(s + pl, 16, &k->key[0]) ||
	    !hex_parse(s + pl + 16, 16, &k->key[1]) ||
	    !hex_parse(s + pl + 33, KEY_OFF_DIGITS, &k->offset))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: \"%.80s\" is not an IPC memory key", fn,
				   s);
	return ACL_SUCCESS;
}

static bool key_eq(const struct ipc_key *a, const struct ipc_key *b)
{
	return a->key[0] == b->key[0] && a->key[1] == b->key[1] &&
	       a->offset == b->offset;
}

/* Under ipc_lock. */
static struct ipc_export *export_find(const struct ipc_key *k)
{
	struct ipc_export *e;

	for (e = exports; e; e = e->next)
		if (key_eq(&e->k, k))
			return e;
	return NULL;
}

static struct ipc_import *import_find(const struct ipc_key *k)
{
	struct ipc_import *i;

	for (i = imports; i; i = i->next)
		if (key_eq(&i->k, k))
			return i;
	return NULL;
}

/* errno of an IPC ioctl -> ACL code, as lib/README.md tells. */
static int ipc_errno_to_acl(int err)
{
	switch (err) {
	case ENOENT:	/* never issued, revoked, or its exporter gone */
	case ESRCH:	/* a pid naming no process */
	case EPERM:	/* a key of another file */
		return ACL_ERROR_RT_PARAM_INVALID;
	case EACCES:	/* an importer the key's rules refuse */
		return ACL_ERROR_RT_NO_PERMISSION;
	case ENOSPC:	/* the allow-list is full */
		return ACL_ERROR_RT_OVER_LIMIT;
	default:
		return aclmem_ioctl_errno_to_acl(err);
	}
}

static int key_revoke(const struct ipc_key *k)
{
	struct npu_mem_ipc_revoke r = {
		.key = { k->key[0], k->key[1] },
	};

	return aclmem_do_ioctl(aclmem_ctx_fd(), NPU_MEM_IOCTL_IPC_REVOKE, &r);
}

/*
 * A new key for r's buffer, into k: IPC_EXPORT, then with validation on
 * the exporter alone on its list (see the top).  ACL code, logged.
 */
static int export_key(const char *fn, const struct aclmem_range *r,
		      uint64_t flags, struct ipc_key *k)
{
	struct npu_mem_ipc_export x = { 0 };
	int32_t self = getpid();
	int ret;

	x.handle = r->handle;
	if (flags == ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
		x.flags = NPU_MEM_IPC_ANY_PID;
	ret = aclmem_do_ioctl(aclmem_ctx_fd(), NPU_MEM_IOCTL_IPC_EXPORT, &x);
	if (ret)
		return aclmem_fail(ipc_errno_to_acl(-ret), "%s: IPC_EXPORT of "
				   "handle %u: %s", fn, r->handle,
				   strerror(-ret));
	k->key[0] = x.key[0];
	k->key[1] = x.key[1];
	k->offset = r->offset;
	if (!x.flags) {
		/* Validation on: no one but the listed (see the top). */
		struct npu_mem_ipc_set_pids sp = {
			.key = { x.key[0], x.key[1] },
			.pids = (uintptr_t)&self,
			.count = 1,
		};

		ret = aclmem_do_ioctl(aclmem_ctx_fd(),
				      NPU_MEM_IOCTL_IPC_SET_PIDS, &sp);
		if (ret) {
			key_revoke(k);
			return aclmem_fail(ipc_errno_to_acl(-ret),
					   "%s: IPC_SET_PIDS: %s", fn,
					   strerror(-ret));
		}
	}
	return ACL_SUCCESS;
}

/* Under the buffer table's lock (aclmem_mem_share_commit). */
static void export_record(void *arg)
{
	struct ipc_export *e = arg;

	pthread_mutex_lock(&ipc_lock);
	e->next = exports;
	exports = e;
	pthread_mutex_unlock(&ipc_lock);
}

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key,
				 size_t len, uint64_t flags)
{
	static const char fn[] = "aclrtIpcMemGetExportKey";
	struct aclmem_range r;
	struct ipc_export *e;
	struct ipc_key k;
	int ret;

	if (!devPtr || !key || !size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !devPtr ? "devPtr is NULL" : !key ?
				   "key is NULL" : "size is 0");
	if (len < KEY_LEN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: len %zu < %d, the key's size", fn, len,
				   KEY_LEN);
	if (flags != ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT &&
	    flags != ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: unknown flags 0x%" PRIx64, fn, flags);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (aclmem_mem_share(devPtr, size, &r))
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p, %zu): not inside one device buffer "
				   "of this process's own", fn, devPtr, size);
	e = calloc(1, sizeof(*e));
	if (!e)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	ret = export_key(fn, &r, flags, &e->k);
	if (ret) {
		free(e);
		return ret;
	}
	e->handle = r.handle;
	/* Once recorded, e is the buffer's free's to drop: keep a copy. */
	k = e->k;
	if (aclmem_mem_share_commit(devPtr, size, r.handle, export_record, e)) {
		key_revoke(&k);
		free(e);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p, %zu): the buffer was freed meanwhile",
				   fn, devPtr, size);
	}
	key_format(&k, key);
	return ACL_SUCCESS;
}

aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num)
{
	static const char fn[] = "aclrtIpcMemSetImportPid";
	struct npu_mem_ipc_set_pids sp = { 0 };
	struct ipc_key k;
	int ret;

	if (!key || !pid || !num)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !key ? "key is NULL" : !pid ?
				   "pid is NULL" : "num is 0");
	ret = key_parse(fn, key, &k);
	if (ret)
		return ret;
	if (num > NPU_MEM_IPC_MAX_PIDS)
		return aclmem_fail(ACL_ERROR_RT_OVER_LIMIT,
				   "%s: %zu pids, at most %d", fn, num,
				   NPU_MEM_IPC_MAX_PIDS);
	sp.key[0] = k.key[0];
	sp.key[1] = k.key[1];
	sp.pids = (uintptr_t)pid;
	sp.count = (uint32_t)num;
	/* Under the lock: a concurrent close must not revoke in between. */
	pthread_mutex_lock(&ipc_lock);
	if (!export_find(&k)) {
		pthread_mutex_unlock(&ipc_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: %s is not a key this process exported "
				   "(or it was closed)", fn, key);
	}
	ret = aclmem_do_ioctl(aclmem_ctx_fd(), NPU_MEM_IOCTL_IPC_SET_PIDS, &sp);
	pthread_mutex_unlock(&ipc_lock);
	if (ret)
		return aclmem_fail(ipc_errno_to_acl(-ret),
				   "%s: IPC_SET_PIDS: %s", fn, strerror(-ret));
	return ACL_SUCCESS;
}

/*
 * The NPU an imported buffer belongs to: the exporter's device, which
 * decides what copies between it and this process's buffers need (peer
 * access).  A module before ABI 1.3 has one NPU.
 */
static int32_t import_device(int fd, uint32_t handle)
{
	struct npu_mem_query q = { .handle = handle };

	if (aclmem_do_ioctl(fd, NPU_MEM_IOCTL_QUERY, &q))
		return 0;
	return (int32_t)q.device;
}

/* A new mapping of the buffer a key names, in the table: ACL code. */
static int import_map(const char *fn, const struct ipc_key *k, void **base)
{
	struct npu_mem_ipc_import im = { 0 };
	int fd = aclmem_ctx_fd();
	struct aclmem_buf *b;
	void *addr;
	int ret;

	im.key[0] = k->key[0];
	im.key[1] = k->key[1];
	ret = aclmem_do_ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, &im);
	if (ret)
		return aclmem_fail(ipc_errno_to_acl(-ret),
				   "%s: IPC_IMPORT: %s%s", fn, strerror(-ret),
				   ret == -ENOENT ?
				   " (never issued, closed, or freed)" : "");
	if (k->offset >= im.buf.size) {
		aclmem_free(fd, im.handle);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: offset %" PRIu64 " past the buffer's %llu "
				   "bytes", fn, k->offset,
				   (unsigned long long)im.buf.size);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		aclmem_free(fd, im.handle);
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	}
	ret = aclmem_map(fd, &im.buf, &addr);
	if (ret) {
		free(b);
		aclmem_free(fd, im.handle);
		return aclmem_fail(aclmem_mmap_errno_to_acl(-ret),
				   "%s: mmap of %llu bytes: %s", fn,
				   (unsigned long long)im.buf.size,
				   strerror(-ret));
	}
	b->addr = addr;
	b->size = im.buf.size;
	b->map_len = im.buf.size;
	b->handle = im.handle;
	b->kpolicy = im.buf.policy;
	b->kflags = im.buf.flags & NPU_MEM_BUF_READONLY ?
		    NPU_MEM_ALLOC_READONLY : 0;
	b->page_size = aclmem_buffer_page_size(&im.buf);
	b->device = import_device(fd, im.handle);
	b->kind = ACLMEM_BUF_DEVICE;
	b->share = ACLMEM_SHARE_IMPORTED;
	ret = aclmem_mem_insert(b);
	if (ret) {
		aclmem_buf_release(b);
		return aclmem_api_ret(fn, ret);
	}
	*base = addr;
	return ACL_SUCCESS;
}

static void unmap_import(void *base)
{
	struct aclmem_buf *b = aclmem_mem_take(base);

	/* Gone already if aclFinalize released it. */
	if (b)
		aclmem_buf_release(b);
}

static int import_key(const char *fn, void **devPtr, const char *key,
		      uint64_t flags)
{
	struct ipc_import *i, *n;
	struct ipc_key k;
	void *base = NULL;
	int ret;

	if (!devPtr || !key)
		return aclmem_arg_null(fn, !devPtr ? "devPtr" : "key");
	if (flags != ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT &&
	    flags != ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: unknown flags 0x%" PRIx64, fn, flags);
	ret = key_parse(fn, key, &k);
	if (ret)
		return ret;
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);

	pthread_mutex_lock(&ipc_lock);
	i = import_find(&k);
	if (i) {
		i->refs++;
		*devPtr = (char *)i->base + k.offset;
		pthread_mutex_unlock(&ipc_lock);
		return ACL_SUCCESS;
	}
	pthread_mutex_unlock(&ipc_lock);

	n = calloc(1, sizeof(*n));
	if (!n)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	ret = import_map(fn, &k, &base);
	if (ret) {
		free(n);
		return ret;
	}
	n->k = k;
	n->base = base;
	n->refs = 1;
	pthread_mutex_lock(&ipc_lock);
	i = import_find(&k);
	if (i) {
		/* Another thread imported it meanwhile: use that one. */
		i->refs++;
		*devPtr = (char *)i->base + k.offset;
		pthread_mutex_unlock(&ipc_lock);
		free(n);
		unmap_import(base);
		return ACL_SUCCESS;
	}
	n->next = imports;
	imports = n;
	pthread_mutex_unlock(&ipc_lock);
	*devPtr = (char *)base + k.offset;
	return ACL_SUCCESS;
}

/*
 * Memory another device's buffer: CANN copies between it and the current
 * device's memory only with peer access, which the flag
 * ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS enables here (else the
 * program calls aclrtDeviceEnablePeerAccess).
 */
aclError aclrtIpcMemImportByKey(void **devPtr, const char *key,
				uint64_t flags)
{
	static const char fn[] = "aclrtIpcMemImportByKey";
	struct aclmem_range r;
	int32_t cur;
	int ret = import_key(fn, devPtr, key, flags);

	if (ret || flags != ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
		return ret;
	cur = aclmem_ctx_device(aclmem_ctx_current());
	if (aclmem_mem_lookup(*devPtr, 0, &r) == ACLMEM_RANGE_INSIDE &&
	    r.device != cur)
		aclmem_peer_enable(cur, r.device);
	return ACL_SUCCESS;
}

aclError aclrtIpcMemClose(const char *key)
{
	static const char fn[] = "aclrtIpcMemClose";
	struct ipc_import **ip, *i = NULL;
	struct ipc_export **ep, *e = NULL;
	struct ipc_key k;
	void *base = NULL;
	int ret;

	if (!key)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: key is NULL",
				   fn);
	ret = key_parse(fn, key, &k);
	if (ret)
		return ret;
	pthread_mutex_lock(&ipc_lock);
	for (ip = &imports; *ip; ip = &(*ip)->next)
		if (key_eq(&(*ip)->k, &k))
			break;
	if (*ip) {
		i = *ip;
		if (--i->refs) {
			pthread_mutex_unlock(&ipc_lock);
			return ACL_SUCCESS;
		}
		*ip = i->next;
		base = i->base;
		free(i);
		pthread_mutex_unlock(&ipc_lock);
		unmap_import(base);
		return ACL_SUCCESS;
	}
	for (ep = &exports; *ep; ep = &(*ep)->next)
		if (key_eq(&(*ep)->k, &k))
			break;
	if (*ep) {
		e = *ep;
		*ep = e->next;
		/* Under the lock: the buffer's FREE cannot come first. */
		ret = key_revoke(&k);
	}
	pthread_mutex_unlock(&ipc_lock);
	if (!e)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: %s is not a key this process exported "
				   "or imported (or it was closed)", fn, key);
	free(e);
	if (ret)
		return aclmem_fail(ipc_errno_to_acl(-ret), "%s: IPC_REVOKE: %s",
				   fn, strerror(-ret));
	return ACL_SUCCESS;
}

/*
 * The link between the two dies of a chip that an import's accesses take:
 * there is one path to host memory here, so the value is checked, not
 * kept.  Exporter or importer may set it.
 */
aclError aclrtIpcMemSetAttr(const char *key, aclrtIpcMemAttrType type,
			    uint64_t attr)
{
	static const char fn[] = "aclrtIpcMemSetAttr";
	struct ipc_key k;
	bool known;
	int ret;

	if (!key)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: key is NULL",
				   fn);
	ret = key_parse(fn, key, &k);
	if (ret)
		return ret;
	if (type != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK ||
	    attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: type %d, attr %" PRIu64, fn, (int)type,
				   attr);
	pthread_mutex_lock(&ipc_lock);
	known = import_find(&k) || export_find(&k);
	pthread_mutex_unlock(&ipc_lock);
	if (!known)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: %s is not a key this process exported "
				   "or imported", fn, key);
	return ACL_SUCCESS;
}

/* ---- the buffer table's hooks (memory.c) ---- */

/* A buffer with keys is being freed (its FREE revokes them): forget them. */
static void buf_freed(uint32_t handle)
{
	struct ipc_export **ep = &exports, *e;

	pthread_mutex_lock(&ipc_lock);
	while ((e = *ep)) {
		if (e->handle == handle) {
			*ep = e->next;
			free(e);
		} else {
			ep = &e->next;
		}
	}
	pthread_mutex_unlock(&ipc_lock);
}

static void forget_locked(void)
{
	struct ipc_export *e;
	struct ipc_import *i;

	while ((e = exports)) {
		exports = e->next;
		free(e);
	}
	while ((i = imports)) {
		imports = i->next;
		free(i);
	}
}

/* aclFinalize: the device file closes next, and its keys with it. */
static size_t ipcmem_release(void)
{
	pthread_mutex_lock(&ipc_lock);
	forget_locked();
	pthread_mutex_unlock(&ipc_lock);
	return 0;
}

static void ipcmem_fork_prepare(void)
{
	pthread_mutex_lock(&ipc_lock);
}

static void ipcmem_fork_parent(void)
{
	pthread_mutex_unlock(&ipc_lock);
}

/* The child has no device file yet: the parent's keys are not its own. */
static void ipcmem_fork_child(void)
{
	pthread_mutex_init(&ipc_lock, NULL);
	forget_locked();
}

ACLMEM_MEM_EXT(.exported_freed = buf_freed)

ACLMEM_PART(.rank = ACLMEM_RANK_IPCMEM,
	    .release = ipcmem_release,
	    .fork_prepare = ipcmem_fork_prepare,
	    .fork_parent = ipcmem_fork_parent,
	    .fork_child = ipcmem_fork_child)
