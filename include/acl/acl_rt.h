/* SPDX-License-Identifier: MIT */
/*
 * The runtime part of the ACL API (CANN's acl/acl_rt.h) that libaclmem
 * implements: process and device set-up, streams, and device memory.
 * Enumerators keep CANN's names and values (they are ABI: never renumber);
 * only what libaclmem implements is declared.
 *
 * Device memory is host RAM handed out by the npu-mem kernel driver: pinned,
 * DMA-mapped for the NPU, and mapped into the caller, so a device pointer is
 * also a CPU pointer.  See lib/README or the header comments of each call
 * for the few places where behaviour is defined beyond CANN's documentation.
 */
#ifndef ACLMEM_ACL_RT_H
#define ACLMEM_ACL_RT_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtRunMode {
	ACL_DEVICE,
	ACL_HOST,
} aclrtRunMode;

typedef enum aclrtMemcpyKind {
	ACL_MEMCPY_HOST_TO_HOST,
	ACL_MEMCPY_HOST_TO_DEVICE,
	ACL_MEMCPY_DEVICE_TO_HOST,
	ACL_MEMCPY_DEVICE_TO_DEVICE,
	ACL_MEMCPY_DEFAULT,
	ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
	ACL_MEM_MALLOC_HUGE_FIRST,
	ACL_MEM_MALLOC_HUGE_ONLY,
	ACL_MEM_MALLOC_NORMAL_ONLY,
	ACL_MEM_MALLOC_HUGE_FIRST_P2P,
	ACL_MEM_MALLOC_HUGE_ONLY_P2P,
	ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
	ACL_MEM_MALLOC_HUGE1G_ONLY,
	ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
	ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
	ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
	ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
	ACL_DDR_MEM,
	ACL_HBM_MEM,
	ACL_DDR_MEM_HUGE,
	ACL_DDR_MEM_NORMAL,
	ACL_HBM_MEM_HUGE,
	ACL_HBM_MEM_NORMAL,
	ACL_DDR_MEM_P2P_HUGE,
	ACL_DDR_MEM_P2P_NORMAL,
	ACL_HBM_MEM_P2P_HUGE,
	ACL_HBM_MEM_P2P_NORMAL,
	ACL_HBM_MEM_HUGE1G,
	ACL_HBM_MEM_P2P_HUGE1G,
	ACL_MEM_NORMAL,
	ACL_MEM_HUGE,
	ACL_MEM_HUGE1G,
	ACL_MEM_P2P_NORMAL,
	ACL_MEM_P2P_HUGE,
	ACL_MEM_P2P_HUGE1G,
} aclrtMemAttr;

typedef enum aclrtMemLocationType {
	ACL_MEM_LOCATION_TYPE_HOST = 0,
	ACL_MEM_LOCATION_TYPE_DEVICE,
	ACL_MEM_LOCATION_TYPE_UNREGISTERED,
	ACL_MEM_LOCATION_TYPE_MANAGED,
	ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4,
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
	uint32_t id;
	aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPtrAttributes {
	aclrtMemLocation location;
	uint32_t pageSize;
	uint32_t rsv[4];
} aclrtPtrAttributes;

/* Process set-up.  configPath may be NULL or "" (no configuration). */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/* Devices.  The current device is per thread; SetDevice is reference counted. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

/* Streams.  A NULL stream is the default stream of the current device. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

/* Device and host memory. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
					 aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
						aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void **devPtr, size_t size,
					       aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemFlush(void *devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtMemInvalidate(void *devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount,
					 int32_t value, size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
					 const void *src, size_t count,
					 aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax,
					      const void *src, size_t count,
					      aclrtMemcpyKind kind,
					      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount,
					      int32_t value, size_t count,
					      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free,
					     size_t *total);
ACL_FUNC_VISIBILITY aclError aclrtPointerGetAttributes(const void *ptr,
						       aclrtPtrAttributes *attributes);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_RT_H */
