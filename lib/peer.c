// SPDX-License-Identifier: MIT
/*
 * Peer access: aclrtDeviceCanAccessPeer, aclrtDeviceEnablePeerAccess,
 * aclrtDeviceDisablePeerAccess, aclrtDevicePeerAccessStatus, and what the
 * copies ask of it (peer.h).
 *
 * CANN enables peer access from the current device to another one, per
 * device (not per context or thread), and a copy between buffers of two
 * devices needs it.  Any two npu-mem devices can reach each other's
 * memory: every buffer is host RAM, so the answer to CanAccessPeer is 1
 * for every pair of different devices.  The state is kept here, one bit
 * per (device, peer), for the whole process while any context lives: it
 * is dropped when the last one goes (every device reset), at aclFinalize
 * and in a fork()ed child, which starts with no device state.
 *
 * Rules where CANN is silent (lib/README.md): enabling twice succeeds
 * and changes nothing; disabling what is not enabled is
 * ACL_ERROR_RT_PARAM_INVALID; a device is never its own peer
 * (ACL_ERROR_INVALID_PARAM, as the id checks of CanAccessPeer).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "args.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "peer.h"

static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
/* Bit p of enabled[d]: device d may access device p's memory. */
static uint64_t enabled[ACLMEM_MAX_DEVICES];
/*
 * Bits set in enabled[], changed under peer_lock: 0 lets an allocation
 * skip the lock.  An enable counts before it walks the buffer table, and
 * an allocation reads it after its buffer is in the table (the table's
 * lock orders the two), so a racing buffer is seen by the walk or by the
 * hook, never by neither (both: the second map is EEXIST).
 */
static atomic_uint enabled_count;

/*
 * The driver's side of peer access: a buffer of peer's that dev may access
 * is DMA-mapped for dev (PEER_MAP), which gives dev's DMA engine its own
 * address for it (under an IOMMU each device has its own domain).  The
 * copies are the CPU's and need none of it, so this is best effort: a
 * module without the peer ioctls (ENOTTY, or EINVAL from one that checks
 * the command's size), registered host memory and other drivers' buffers
 * (EOPNOTSUPP), a read-only import (EACCES), one already mapped (EEXIST)
 * leave peer access as the program asked.  FREE ends a mapping with its
 * buffer; PEER_UNMAP ends it when access is disabled.
 */
struct peer_op {
	unsigned long req;	/* NPU_MEM_IOCTL_PEER_MAP or _UNMAP */
	int32_t dev;		/* the device given access */
};

static void peer_op_one(uint32_t handle, void *arg)
{
	const struct peer_op *op = arg;
	struct npu_mem_peer p = { .handle = handle, .device = op->dev };
	int ret = aclmem_do_ioctl(aclmem_ctx_fd(), op->req, &p);

	if (ret && ret != -ENOTTY && ret != -EINVAL && ret != -EOPNOTSUPP &&
	    ret != -EACCES && ret != -EEXIST && ret != -ENXIO)
		aclmem_dbg("peer %smap of handle %u for device %d: %s",
			   op->req == NPU_MEM_IOCTL_PEER_MAP ? "" : "un",
			   handle, (int)op->dev, strerror(-ret));
}

/*
 * Every buffer of peer's this process holds, mapped for dev or unmapped.
 * Called under peer_lock, before the bit changes.
 */
static void peer_map(int32_t dev, int32_t peer, bool enable)
{
	struct peer_op op = {
		.req = enable ? NPU_MEM_IOCTL_PEER_MAP : NPU_MEM_IOCTL_PEER_UNMAP,
		.dev = dev,
	};

	aclmem_mem_foreach_device(peer, peer_op_one, &op);
}

/*
 * A new buffer of device's: mapped for each device with access to it.
 * Every device allocation comes here, almost always with no peer access
 * enabled at all: that case reads one counter and takes no lock.
 */
static void peer_allocated(uint32_t handle, int32_t device)
{
	struct peer_op op = { .req = NPU_MEM_IOCTL_PEER_MAP };

	if (!atomic_load(&enabled_count))
		return;
	pthread_mutex_lock(&peer_lock);
	for (op.dev = 0; op.dev < ACLMEM_MAX_DEVICES; op.dev++)
		if (enabled[op.dev] & (1ull << device))
			peer_op_one(handle, &op);
	pthread_mutex_unlock(&peer_lock);
}

static bool enabled_locked(int32_t dev, int32_t peer)
{
	return enabled[dev] & (1ull << peer);
}

bool aclmem_peer_copy_allowed(int32_t a, int32_t b)
{
	bool ok;

	if (a == b)
		return true;
	pthread_mutex_lock(&peer_lock);
	ok = enabled_locked(a, b) || enabled_locked(b, a);
	pthread_mutex_unlock(&peer_lock);
	return ok;
}

static void peer_set(int32_t dev, int32_t peer, bool enable)
{
	pthread_mutex_lock(&peer_lock);
	if (enabled_locked(dev, peer) != enable) {
		/* Counted before the walk: see enabled_count. */
		if (enable)
			atomic_fetch_add(&enabled_count, 1);
		peer_map(dev, peer, enable);
		enabled[dev] ^= 1ull << peer;
		if (!enable)
			atomic_fetch_sub(&enabled_count, 1);
	}
	pthread_mutex_unlock(&peer_lock);
}

void aclmem_peer_enable(int32_t dev, int32_t peer)
{
	peer_set(dev, peer, true);
}

/* Two device ids, each naming a device: ACL code. */
static int two_devices(const char *fn, int32_t deviceId, int32_t peerDeviceId)
{
	if (!aclmem_device_valid(deviceId))
		return aclmem_device_refused(fn, deviceId);
	if (!aclmem_device_valid(peerDeviceId))
		return aclmem_device_refused(fn, peerDeviceId);
	return ACL_SUCCESS;
}

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId,
				  int32_t peerDeviceId)
{
	int ret;

	if (!canAccessPeer)
		return aclmem_arg_null("aclrtDeviceCanAccessPeer", "canAccessPeer");
	ret = two_devices("aclrtDeviceCanAccessPeer", deviceId, peerDeviceId);
	if (ret)
		return ret;
	/* CANN: the two ids must differ. */
	if (deviceId == peerDeviceId)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDeviceCanAccessPeer: device %d is not its own peer",
				   (int)deviceId);
	*canAccessPeer = 1;
	return ACL_SUCCESS;
}

/* The current device and a valid peer other than it: ACL code. */
static int peer_args(const char *fn, int32_t peerDeviceId, int32_t *cur)
{
	int ret = aclmem_ctx_require();

	if (ret)
		return aclmem_fail(ret, "%s: no current device on this thread",
				   fn);
	*cur = aclmem_ctx_device(aclmem_ctx_current());
	if (!aclmem_device_valid(peerDeviceId))
		return aclmem_device_refused(fn, peerDeviceId);
	if (peerDeviceId == *cur)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: device %d is the current device, not a peer",
				   fn, (int)peerDeviceId);
	return ACL_SUCCESS;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
	static const char fn[] = "aclrtDeviceEnablePeerAccess";
	int32_t cur;
	int ret;

	if (flags)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: flags must be 0",
				   fn);
	ret = peer_args(fn, peerDeviceId, &cur);
	if (!ret)
		peer_set(cur, peerDeviceId, true);
	return ret;
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)
{
	static const char fn[] = "aclrtDeviceDisablePeerAccess";
	int32_t cur;
	bool was;
	int ret;

	ret = peer_args(fn, peerDeviceId, &cur);
	if (ret)
		return ret;
	pthread_mutex_lock(&peer_lock);
	was = enabled_locked(cur, peerDeviceId);
	pthread_mutex_unlock(&peer_lock);
	if (!was)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s: access of device %d to device %d is not enabled",
				   fn, (int)cur, (int)peerDeviceId);
	peer_set(cur, peerDeviceId, false);
	return ACL_SUCCESS;
}

/* Access of a device to itself is no peer access: 0, never enabled. */
aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId,
				     int32_t *status)
{
	int ret;

	if (!status)
		return aclmem_arg_null("aclrtDevicePeerAccessStatus", "status");
	ret = two_devices("aclrtDevicePeerAccessStatus", deviceId,
			  peerDeviceId);
	if (ret)
		return ret;
	pthread_mutex_lock(&peer_lock);
	*status = deviceId != peerDeviceId &&
		  enabled_locked(deviceId, peerDeviceId);
	pthread_mutex_unlock(&peer_lock);
	return ACL_SUCCESS;
}

/* No context left, aclFinalize, a fork()ed child: nothing is enabled. */
static void peer_forget(void)
{
	memset(enabled, 0, sizeof(enabled));
	atomic_store(&enabled_count, 0);
}

static void peer_idle(bool finalize)
{
	(void)finalize;
	pthread_mutex_lock(&peer_lock);
	peer_forget();
	pthread_mutex_unlock(&peer_lock);
}

static void peer_fork_child(void)
{
	pthread_mutex_init(&peer_lock, NULL);
	peer_forget();
}

ACLMEM_PART(.rank = ACLMEM_RANK_HOSTREG, .idle = peer_idle,
	    .fork_child = peer_fork_child);
ACLMEM_MEM_EXT(.allocated = peer_allocated)
