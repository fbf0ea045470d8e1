// SPDX-License-Identifier: MIT
/*
 * aclrtHostRegister, aclrtHostRegisterV2, aclrtHostUnregister,
 * aclrtHostGetDevicePointer and aclrtHostMemMapCapabilities.
 *
 * Ordinary memory (malloc, mmap, the stack) is pinned and DMA-mapped for
 * the calling thread's current device (CANN registers for the current
 * context's device) with the driver's HOST_REGISTER, over the range
 * rounded out to whole pages (the driver's unit; CANN asks for 4 KiB-
 * aligned pointers, any pointer is taken here), and unregistered with
 * FREE.  Memory from
 * aclrtMallocHost is pinned and mapped already (the driver refuses to pin
 * its own pages again), so registering a range inside one of those
 * buffers only records it; aclrtFreeHost drops the record with the
 * buffer.  Device memory (aclrtMalloc*) is not host memory: refused.
 *
 * Where CANN is silent: a registration is named by the pointer it was made
 * with (aclrtHostUnregister takes exactly that pointer); ranges may not
 * overlap another live registration, and pinned ones may not share a page
 * (the DMA API maps a cache line once: a second mapping of the same page
 * is what DMA-API debugging calls unsupported);
 * ACL_HOST_REGISTER_READONLY / ACL_HOST_REG_READONLY, which CANN
 * reserves, are honoured (the pages are pinned without write access,
 * so read-only memory can be registered); IOMEMORY (another PCIe device's
 * registers) cannot be: ACL_ERROR_RT_FEATURE_NOT_SUPPORT.  A V2
 * registration without ACL_HOST_REG_MAPPED is pinned all the same, but
 * aclrtHostGetDevicePointer refuses it.
 *
 * Locking: one mutex of this file, taken after the buffer table's lock and
 * never held while calling into memory.c (its rank, context.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
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

struct hostreg {
	struct hostreg *next;
	uintptr_t start;		/* the pointer registered */
	uintptr_t end;			/* start + size */
	uintptr_t busy_start, busy_end;	/* what no other one may touch: the
					 * pages pinned, or [start, end) */
	uint32_t handle;		/* 0: in an aclrtMallocHost buffer */
	bool mapped;			/* has a device pointer */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hostreg *regs;

/* Under reg_lock: a registration whose busy range meets [start, end). */
static struct hostreg *overlap(uintptr_t start, uintptr_t end)
{
	struct hostreg *h;

	for (h = regs; h; h = h->next)
		if (h->busy_end > start && h->busy_start < end)
			return h;
	return NULL;
}

/* ptr and size, before anything is looked at: ACL code, logged. */
static int check_range(const char *fn, void *ptr, uint64_t size, long page)
{
	if (!ptr || !size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !ptr ? "ptr is NULL" : "size is 0");
	/* Rounded out to whole pages, it must not wrap either. */
	if (aclmem_range_wraps(ptr, size) ||
	    aclmem_range_wraps((void *)((uintptr_t)ptr + size),
			       (uint64_t)page))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s(%p, %" PRIu64 "): the range wraps", fn,
				   ptr, size);
	return ACL_SUCCESS;
}

/*
 * What [ptr, ptr + size) needs pinned, in *hr: nothing (hr->size stays 0)
 * inside an aclrtMallocHost buffer, else its whole pages.  ACL code, logged.
 */
static int plan_pin(const char *fn, void *ptr, uint64_t size, long page,
		    bool readonly, struct npu_mem_host_register *hr)
{
	uintptr_t start = (uintptr_t)ptr, end = start + size;
	struct aclmem_range r;

	switch (aclmem_mem_lookup(ptr, size, &r)) {
	case ACLMEM_RANGE_INSIDE:
		if (r.kind != ACLMEM_BUF_HOST)
			return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
					   "%s(%p): device memory is not host "
					   "memory", fn, ptr);
		break;		/* pinned and mapped already */
	case ACLMEM_RANGE_OVERRUN:
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p, %" PRIu64 "): runs past an ACL "
				   "buffer's end", fn, ptr, size);
	case ACLMEM_RANGE_NONE:
		hr->addr = start & ~((uintptr_t)page - 1);
		hr->size = ((end + (uintptr_t)page - 1) &
			    ~((uintptr_t)page - 1)) - hr->addr;
		hr->flags = readonly ? NPU_MEM_HOST_READONLY : 0;
		break;
	}
	return ACL_SUCCESS;
}

/* HOST_REGISTER of *hr failed with errno err: its ACL code, logged. */
static int pin_failed(const char *fn, void *ptr, uint64_t size,
		      const struct npu_mem_host_register *hr, int err)
{
	int ret;

	switch (err) {
	case EEXIST:	/* npu-mem's own mappings, or pages registered
			 * writable elsewhere (another process's mapping) */
	case EFAULT:	/* not wholly mapped (or not writable) */
	case EINVAL:
		ret = ACL_ERROR_RT_PARAM_INVALID;
		break;
	default:
		ret = aclmem_ioctl_errno_to_acl(err);
	}
	return aclmem_fail(ret, "%s(%p, %" PRIu64 "): "
			   "HOST_REGISTER of [%#llx, +%#llx): "
			   "%s", fn, ptr, size,
			   (unsigned long long)hr->addr,
			   (unsigned long long)hr->size,
			   strerror(err));
}

/*
 * Links h, pinning hr first where it has a size, unless h's busy range
 * meets a live registration's.  Frees h on failure.  ACL code, logged.
 */
static int link_reg(const char *fn, void *ptr, uint64_t size,
		    struct hostreg *h, struct npu_mem_host_register *hr)
{
	struct hostreg *o;
	int ret;

	pthread_mutex_lock(&reg_lock);
	o = overlap(h->busy_start, h->busy_end);
	if (o) {
		uintptr_t other = o->start;

		pthread_mutex_unlock(&reg_lock);
		free(h);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID, "%s(%p, %"
				   PRIu64 "): overlaps the registration of %p",
				   fn, ptr, size, (void *)other);
	}
	/*
	 * Pinned under the lock so that two threads cannot both pass the
	 * overlap check; the ioctl takes no library lock.
	 */
	if (hr->size) {
		ret = aclmem_do_ioctl(aclmem_ctx_fd(),
				      NPU_MEM_IOCTL_HOST_REGISTER, hr);
		if (ret) {
			pthread_mutex_unlock(&reg_lock);
			free(h);
			return pin_failed(fn, ptr, size, hr, -ret);
		}
		h->handle = hr->handle;
	}
	h->next = regs;
	regs = h;
	pthread_mutex_unlock(&reg_lock);
	return ACL_SUCCESS;
}

static int do_register(const char *fn, void *ptr, uint64_t size,
		       bool mapped, bool readonly)
{
	uintptr_t start = (uintptr_t)ptr;
	long page = sysconf(_SC_PAGESIZE);
	struct npu_mem_host_register hr = { 0 };
	struct hostreg *h;
	int ret;

	ret = check_range(fn, ptr, size, page);
	if (ret)
		return ret;
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	hr.device = (uint32_t)aclmem_ctx_device(aclmem_ctx_current());
	ret = plan_pin(fn, ptr, size, page, readonly, &hr);
	if (ret)
		return ret;

	h = calloc(1, sizeof(*h));
	if (!h)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	h->start = start;
	h->end = start + size;
	h->busy_start = hr.size ? hr.addr : h->start;
	h->busy_end = hr.size ? hr.addr + hr.size : h->end;
	h->mapped = mapped;
	return link_reg(fn, ptr, size, h, &hr);
}

aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type,
			   void **devPtr)
{
	static const char fn[] = "aclrtHostRegister";
	int ret;

	if (!devPtr)
		return aclmem_arg_null(fn, "devPtr");
	switch (type) {
	case ACL_HOST_REGISTER_MAPPED:
	case ACL_HOST_REGISTER_READONLY:
		break;
	case ACL_HOST_REGISTER_IOMEMORY:
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "%s: no IO memory of other devices here", fn);
	default:
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: type %d", fn,
				   (int)type);
	}
	ret = do_register(fn, ptr, size, true,
			  type == ACL_HOST_REGISTER_READONLY);
	if (ret)
		return ret;
	/* The NPU sees the pages at the CPU's address (device = CPU pointer). */
	*devPtr = ptr;
	return ACL_SUCCESS;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)
{
	static const char fn[] = "aclrtHostRegisterV2";
	const uint32_t known = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY |
			       ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;

	if (!flag || (flag & ~known))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: flag 0x%x", fn,
				   flag);
	if (flag & ACL_HOST_REG_IOMEMORY)
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "%s: no IO memory of other devices here", fn);
	return do_register(fn, ptr, size, flag & ACL_HOST_REG_MAPPED,
			   flag & ACL_HOST_REG_READONLY);
}

aclError aclrtHostUnregister(void *ptr)
{
	static const char fn[] = "aclrtHostUnregister";
	struct hostreg **p, *h;
	int ret = 0;

	if (!ptr)
		return aclmem_arg_null(fn, "ptr");
	pthread_mutex_lock(&reg_lock);
	for (p = &regs; (h = *p); p = &h->next)
		if (h->start == (uintptr_t)ptr)
			break;
	if (h) {
		*p = h->next;
		/* Under the lock: the range is not taken again before. */
		if (h->handle)
			ret = aclmem_free(aclmem_ctx_fd(), h->handle);
	}
	pthread_mutex_unlock(&reg_lock);
	if (!h)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p): not a registered pointer", fn, ptr);
	free(h);
	if (ret)
		return aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				   "%s(%p): FREE: %s", fn, ptr, strerror(-ret));
	return ACL_SUCCESS;
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)
{
	static const char fn[] = "aclrtHostGetDevicePointer";
	uintptr_t p = (uintptr_t)pHost;
	struct hostreg *h, found = { 0 };

	if (!pHost || !pDevice || flag)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !pHost ? "pHost is NULL" : !pDevice ?
				   "pDevice is NULL" : "flag must be 0");
	pthread_mutex_lock(&reg_lock);
	for (h = regs; h; h = h->next)
		if (p >= h->start && p < h->end) {
			found = *h;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	if (!h || !found.mapped)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p): not in memory registered %s", fn,
				   pHost, h ? "with ACL_HOST_REG_MAPPED" :
				   "with aclrtHostRegister*");
	*pDevice = pHost;
	return ACL_SUCCESS;
}

/*
 * Registered pages are DMA-mapped for the NPU's PCI function: its DMA
 * reaches them.  There are no AI cores, AI CPUs, vector cores, DVPP,
 * collective or RDMA engines, and the system DMA of an Ascend SoC is not
 * here either: those answer not supported.
 */
aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType,
				     aclrtHostMemMapCapability *capabilities)
{
	static const char fn[] = "aclrtHostMemMapCapabilities";
	int ret;

	if (!capabilities)
		return aclmem_arg_null(fn, "capabilities");
	if ((unsigned int)hacType > ACL_RT_HAC_TYPE_CCU)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: hacType %d",
				   fn, (int)hacType);
	ret = aclmem_arg_device(fn, deviceId);
	if (ret)
		return ret;
	*capabilities = hacType == ACL_RT_HAC_TYPE_PCIEDMA ?
			ACL_RT_HOST_MEM_MAP_SUPPORTED :
			ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
	return ACL_SUCCESS;
}

/* ---- the buffer table's hooks (memory.c) ---- */

/* An aclrtMallocHost buffer is freed: drop the registrations inside it. */
static void host_freed(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	struct hostreg **p = &regs, *h;

	pthread_mutex_lock(&reg_lock);
	while ((h = *p)) {
		if (!h->handle && h->start >= a && h->start - a < len) {
			*p = h->next;
			free(h);
		} else {
			p = &h->next;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}

static void forget_locked(void)
{
	struct hostreg *h;

	while ((h = regs)) {
		regs = h->next;
		free(h);
	}
}

/* aclFinalize: the device file closes next, and its registrations with it. */
static size_t hostreg_release(void)
{
	pthread_mutex_lock(&reg_lock);
	forget_locked();
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

static void hostreg_fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void hostreg_fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

/* The pins stay with the parent (the child's pages are copies). */
static void hostreg_fork_child(void)
{
	pthread_mutex_init(&reg_lock, NULL);
	forget_locked();
}

ACLMEM_MEM_EXT(.host_freed = host_freed)

ACLMEM_PART(.rank = ACLMEM_RANK_HOSTREG,
	    .release = hostreg_release,
	    .fork_prepare = hostreg_fork_prepare,
	    .fork_parent = hostreg_fork_parent,
	    .fork_child = hostreg_fork_child)
