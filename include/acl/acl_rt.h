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
#include "acl_rt_allocator.h"

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
	ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
	ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
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

/* aclrtMallocWithCfg / aclrtMallocHostWithCfg configuration. */
typedef enum {
	ACL_RT_MEM_ATTR_RSV = 0,
	ACL_RT_MEM_ATTR_MODULE_ID,
	ACL_RT_MEM_ATTR_DEVICE_ID,
	ACL_RT_MEM_ATTR_VA_FLAG,
} aclrtMallocAttrType;

typedef union {
	uint16_t moduleId;
	uint32_t deviceId;
	uint32_t vaFlag;
	uint8_t rsv[8];
} aclrtMallocAttrValue;

typedef struct {
	aclrtMallocAttrType attr;
	aclrtMallocAttrValue value;
} aclrtMallocAttribute;

typedef struct {
	aclrtMallocAttribute *attrs;
	size_t numAttrs;
} aclrtMallocConfig;

/* aclrtGetMemUsageInfo: one entry per component. */
typedef struct aclrtMemUsageInfo {
	char name[32];
	uint64_t curMemSize;
	uint64_t memPeakSize;
	size_t reserved[8];
} aclrtMemUsageInfo;

/* aclrtMemGetAllocationGranularity's description of an allocation. */
typedef enum aclrtMemAllocationType {
	ACL_MEM_ALLOCATION_TYPE_PINNED = 0,
} aclrtMemAllocationType;

typedef enum aclrtMemHandleType {
	ACL_MEM_HANDLE_TYPE_NONE = 0,
	ACL_MEM_HANDLE_TYPE_POSIX = 2,
} aclrtMemHandleType;

typedef struct aclrtPhysicalMemProp {
	aclrtMemHandleType handleType;
	aclrtMemAllocationType allocationType;
	aclrtMemAttr memAttr;
	aclrtMemLocation location;
	uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum aclrtMemGranularityOptions {
	ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
	ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
	ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF,
} aclrtMemGranularityOptions;

/* ---- virtual memory: reservations, physical handles (lib/vmm.c) ---- */

typedef void *aclrtDrvMemHandle;

/* aclrtReserveMemAddress's flags: the page type of what will be mapped. */
enum aclrtMemPgType {
	NORMAL_PAGE_TYPE = 0U,
	HUGE_PAGE_TYPE,
	HUGE1G_PAGE_TYPE,
};

typedef enum aclrtMemSharedHandleType {
	ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0x1,
	ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 0x2,
} aclrtMemSharedHandleType;

typedef struct aclrtMemFabricHandle {
	uint8_t data[128];
} aclrtMemFabricHandle;

#define ACL_RT_VMM_EXPORT_FLAG_DEFAULT			0x0UL
#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION	0x1UL

typedef enum {
	ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
	ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
	ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3,
} aclrtMemAccessFlags;

typedef struct {
	aclrtMemAccessFlags flags;
	aclrtMemLocation location;
	uint8_t rsv[12];
} aclrtMemAccessDesc;

/* aclrtCheckMemType's memory types (bits). */
#define ACL_RT_MEM_TYPE_DEV	(0X2U)
#define ACL_RT_MEM_TYPE_DVPP	(0X8U)
#define ACL_RT_MEM_TYPE_RSVD	(0X10U)

/* Events: aclrtCreateEventWithFlag flags. */
#define ACL_EVENT_SYNC				0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS	0x00000002U
#define ACL_EVENT_TIME_LINE			0x00000008U
#define ACL_EVENT_DEVICE_USE_ONLY		0x00000010U
#define ACL_EVENT_EXTERNAL			0x00000020U
#define ACL_EVENT_IPC				0x00000040U

#define ACL_EVENT_RECORD_DEFAULT	0x0U
#define ACL_EVENT_RECORD_EXTERNAL	0x01U
#define ACL_EVENT_WAIT_DEFAULT		0x0U
#define ACL_EVENT_WAIT_EXTERNAL		0x01U

/* Streams: aclrtCreateStreamWithConfig flags, failure modes. */
#define ACL_STREAM_FAST_LAUNCH		0x00000001U
#define ACL_STREAM_FAST_SYNC		0x00000002U
#define ACL_STREAM_PERSISTENT		0x00000004U
#define ACL_STREAM_HUGE			0x00000008U
#define ACL_STREAM_CPU_SCHEDULE		0x00000010U
#define ACL_STREAM_DEVICE_USE_ONLY	0x00000020U

#define ACL_STREAM_WAIT_VALUE_GEQ	0x00000000U
#define ACL_STREAM_WAIT_VALUE_EQ	0x00000001U
#define ACL_STREAM_WAIT_VALUE_AND	0x00000002U
#define ACL_STREAM_WAIT_VALUE_NOR	0x00000003U

#define ACL_CONTINUE_ON_FAILURE		0x00000000U
#define ACL_STOP_ON_FAILURE		0x00000001U

typedef enum aclrtEventStatus {
	ACL_EVENT_STATUS_COMPLETE = 0,
	ACL_EVENT_STATUS_NOT_READY = 1,
	ACL_EVENT_STATUS_RESERVED = 2,
} aclrtEventStatus;

typedef enum aclrtEventRecordedStatus {
	ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
	ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtEventWaitStatus {
	ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
	ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
	ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF,
} aclrtEventWaitStatus;

typedef enum aclrtStreamStatus {
	ACL_STREAM_STATUS_COMPLETE = 0,
	ACL_STREAM_STATUS_NOT_READY = 1,
	ACL_STREAM_STATUS_RESERVED = 0xFFFF,
} aclrtStreamStatus;

typedef enum aclrtCallbackBlockType {
	ACL_CALLBACK_NO_BLOCK,
	ACL_CALLBACK_BLOCK,
} aclrtCallbackBlockType;

#define ACL_IPC_EVENT_HANDLE_SIZE	64U

typedef struct aclrtIpcEventHandle {
	char reserved[ACL_IPC_EVENT_HANDLE_SIZE];
} aclrtIpcEventHandle;

/* Notifies. */
typedef void *aclrtNotify;

#define ACL_NOTIFY_DEFAULT				0x00000000U
#define ACL_NOTIFY_DEVICE_USE_ONLY			0x00000001U
#define ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT		0x0UL
#define ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION	0x02UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT		0x0UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS	0x02UL

/* ---- IPC memory and registered host memory (lib/ipcmem.c, hostreg.c) ---- */

#define ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT		0x0UL
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION	0x1UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT		0x0UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS	0x1UL

/* aclrtIpcMemSetAttr's ACL_RT_IPC_MEM_ATTR_ACCESS_LINK values */
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO		0
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS		1
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH	2
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH	3

typedef enum {
	ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,
} aclrtIpcMemAttrType;

/* aclrtHostRegisterV2's flags */
#define ACL_HOST_REG_MAPPED	0x2UL
#define ACL_HOST_REG_IOMEMORY	0x4UL
#define ACL_HOST_REG_READONLY	0x8UL
#define ACL_HOST_REG_PINNED	0x10000000UL

typedef enum {
	ACL_HOST_REGISTER_MAPPED = 0,
	ACL_HOST_REGISTER_IOMEMORY = 0x04,
	ACL_HOST_REGISTER_READONLY = 0x08
} aclrtHostRegisterType;

typedef enum {
	ACL_RT_HAC_TYPE_STARS = 0,
	ACL_RT_HAC_TYPE_AICPU,
	ACL_RT_HAC_TYPE_AIC,
	ACL_RT_HAC_TYPE_AIV,
	ACL_RT_HAC_TYPE_PCIEDMA,
	ACL_RT_HAC_TYPE_RDMA,
	ACL_RT_HAC_TYPE_SDMA,
	ACL_RT_HAC_TYPE_DVPP,
	ACL_RT_HAC_TYPE_UDMA,
	ACL_RT_HAC_TYPE_CCU
} aclrtHacType;

typedef enum {
	ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,
	ACL_RT_HOST_MEM_MAP_SUPPORTED
} aclrtHostMemMapCapability;

typedef enum aclrtTsId {
	ACL_TS_ID_AICORE = 0,
	ACL_TS_ID_AIVECTOR = 1,
	ACL_TS_ID_RESERVED = 2,
} aclrtTsId;

typedef enum aclrtFloatOverflowMode {
	ACL_RT_OVERFLOW_MODE_SATURATION = 0,
	ACL_RT_OVERFLOW_MODE_INFNAN,
	ACL_RT_OVERFLOW_MODE_UNDEF,
} aclrtFloatOverflowMode;

typedef enum aclrtDeviceLimit {
	ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE = 0,
	ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE = 1,
	ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2,
	ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE = 3,
	ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE = 4,
} aclrtDeviceLimit;

typedef enum {
	ACL_RT_STREAM_WORK_ADDR_PTR = 0,
	ACL_RT_STREAM_WORK_SIZE,
	ACL_RT_STREAM_FLAG,
	ACL_RT_STREAM_PRIORITY,
} aclrtStreamConfigAttr;

typedef struct aclrtStreamConfigHandle {
	void *workptr;
	size_t workSize;
	size_t flag;
	uint32_t priority;
} aclrtStreamConfigHandle;

typedef enum {
	ACL_STREAM_ATTR_FAILURE_MODE = 1,
	ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2,
	ACL_STREAM_ATTR_USER_CUSTOM_TAG = 3,
	ACL_STREAM_ATTR_CACHE_OP_INFO = 4,
	ACL_STREAM_ATTR_PRIORITY = 5,
} aclrtStreamAttr;

typedef union {
	uint64_t failureMode;
	uint32_t overflowSwitch;
	uint32_t userCustomTag;
	uint32_t cacheOpInfoSwitch;
	uint32_t streamPriority;
	uint32_t reserve[4];
} aclrtStreamAttrValue;

typedef enum {
	ACL_RT_STREAM_STATE_CREATE_POST = 1,
	ACL_RT_STREAM_STATE_DESTROY_PRE,
} aclrtStreamState;

typedef void (*aclrtStreamStateCallback)(aclrtStream stm,
					 aclrtStreamState state, void *args);

typedef enum {
	ACL_RT_DEVICE_STATE_SET_PRE = 0,
	ACL_RT_DEVICE_STATE_SET_POST,
	ACL_RT_DEVICE_STATE_RESET_PRE,
	ACL_RT_DEVICE_STATE_RESET_POST,
} aclrtDeviceState;

typedef void (*aclrtDeviceStateCallback)(int32_t deviceId,
					 aclrtDeviceState state, void *args);

typedef enum {
	ACL_RT_DEVICE_TASK_ABORT_PRE = 0,
	ACL_RT_DEVICE_TASK_ABORT_POST,
} aclrtDeviceTaskAbortStage;

typedef int32_t (*aclrtDeviceTaskAbortCallback)(int32_t deviceId,
						aclrtDeviceTaskAbortStage stage,
						uint32_t timeout, void *args);

typedef void (*aclrtCallback)(void *userData);
typedef void (*aclrtHostFunc)(void *args);

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
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
/* Told when the device comes into use and when its last reset ends it. */
ACL_FUNC_VISIBILITY aclError aclrtRegDeviceStateCallback(const char *regName,
							 aclrtDeviceStateCallback callback,
							 void *args);
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceTaskAbortCallback(const char *regName,
							     aclrtDeviceTaskAbortCallback callback,
							     void *args);
ACL_FUNC_VISIBILITY aclError aclrtDeviceTaskAbort(int32_t deviceId,
						  uint32_t timeout);

/* Streams.  A NULL stream is the default stream of the current device. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

/*
 * Contexts.  aclrtSetDevice makes the device's default context current;
 * aclrtCreateContext makes another and makes it current; any thread may
 * aclrtSetCurrentContext a live context.  Destroying a context (or
 * resetting the device, for the default one) destroys its streams and
 * events.
 */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context,
						int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtGetPrimaryCtxState(int32_t deviceId,
						     uint32_t *flags,
						     int32_t *active);

/* Streams beyond create/destroy/synchronize. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream,
							 uint32_t priority,
							 uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority,
							       int32_t *greatestPriority);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
							       int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream,
					      aclrtStreamStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream,
						       uint64_t mode);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream,
					      int32_t *streamId);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetPriority(aclrtStream stream,
						    uint32_t *priority);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetFlags(aclrtStream stream,
						 uint32_t *flags);
ACL_FUNC_VISIBILITY aclError aclrtStreamAbort(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtStreamStop(aclrtStream stream);
ACL_FUNC_VISIBILITY aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle,
						     aclrtStreamConfigAttr attr,
						     const void *attrValue,
						     size_t valueSize);
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamV2(aclrtStream *stream,
						 const aclrtStreamConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamAttribute(aclrtStream stream,
						     aclrtStreamAttr stmAttrType,
						     aclrtStreamAttrValue *value);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamAttribute(aclrtStream stream,
						     aclrtStreamAttr stmAttrType,
						     aclrtStreamAttrValue *value);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream,
							  uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream,
							  uint32_t *flag);
ACL_FUNC_VISIBILITY aclError aclrtGetOverflowStatus(void *outputAddr,
						    size_t outputSize,
						    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtResetOverflowStatus(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetThreadLastTaskId(uint32_t *taskId);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamAvailableNum(uint32_t *streamCount);
ACL_FUNC_VISIBILITY aclError aclrtRegStreamStateCallback(const char *regName,
							 aclrtStreamStateCallback callback,
							 void *args);
/* A 64-bit device word written or waited for in stream order. */
ACL_FUNC_VISIBILITY aclError aclrtValueWrite(void *devAddr, uint64_t value,
					     uint32_t flag, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtValueWait(void *devAddr, uint64_t value,
					    uint32_t flag, aclrtStream stream);

/* Events. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event,
						      uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent *event,
							uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event,
					      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtRecordEventWithFlag(aclrtEvent event,
						      aclrtStream stream,
						      uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event,
					     aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event,
					     aclrtEventStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
						   aclrtEventRecordedStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventWaitStatus(aclrtEvent event,
						       aclrtEventWaitStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event,
							      int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms,
						   aclrtEvent startEvent,
						   aclrtEvent endEvent);
ACL_FUNC_VISIBILITY aclError aclrtEventGetTimestamp(aclrtEvent event,
						    uint64_t *timestamp);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream,
						  aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithFlag(aclrtStream stream,
							  aclrtEvent event,
							  uint32_t timeout,
							  uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream,
							     aclrtEvent event,
							     int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtGetEventId(aclrtEvent event,
					     uint32_t *eventId);
ACL_FUNC_VISIBILITY aclError aclrtGetEventAvailNum(uint32_t *eventCount);
/* An ACL_EVENT_IPC event, waited for in another process. */
ACL_FUNC_VISIBILITY aclError aclrtIpcGetEventHandle(aclrtEvent event,
						    aclrtIpcEventHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle,
						     aclrtEvent *event);

/*
 * Notifies: set by one stream, waited for and cleared by another, in this
 * process or another one that imported the notify's key.
 */
ACL_FUNC_VISIBILITY aclError aclrtCreateNotify(aclrtNotify *notify,
					       uint64_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyNotify(aclrtNotify notify);
ACL_FUNC_VISIBILITY aclError aclrtRecordNotify(aclrtNotify notify,
					       aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtWaitAndResetNotify(aclrtNotify notify,
						     aclrtStream stream,
						     uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtGetNotifyId(aclrtNotify notify,
					      uint32_t *notifyId);
ACL_FUNC_VISIBILITY aclError aclrtNotifyBatchReset(aclrtNotify *notifies,
						   size_t num);
ACL_FUNC_VISIBILITY aclError aclrtNotifyGetExportKey(aclrtNotify notify,
						     char *key, size_t len,
						     uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtNotifySetImportPid(aclrtNotify notify,
						     int32_t *pid, size_t num);
ACL_FUNC_VISIBILITY aclError aclrtNotifyImportByKey(aclrtNotify *notify,
						    const char *key,
						    uint64_t flags);

/*
 * Settings kept as CANN keeps them, though nothing here computes with them
 * (lib/settings.c): an option never set is ACL_ERROR_RT_SYSPARAMOPT_NOT_SET.
 */
ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt,
						 int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt,
						 int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt,
						    int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt,
						    int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode);
ACL_FUNC_VISIBILITY aclError aclrtSetTsDevice(aclrtTsId tsId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit,
						 size_t value);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit,
						 size_t *value);

/* Device id mappings (one device: the identity on 0) and topology. */
ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId,
							  int32_t *const logicDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId,
							  int32_t *const phyDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId,
							 int32_t *const userDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId,
							 int32_t *const phyDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevId,
							   int32_t *const logicDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId,
							   int32_t *const userDevId);
/* aclrtGetDevicesTopo's answer: how two devices are connected. */
#define ACL_RT_DEVS_TOPOLOGY_HCCS	0x01ULL
#define ACL_RT_DEVS_TOPOLOGY_PIX	0x02ULL
#define ACL_RT_DEVS_TOPOLOGY_PIB	0x04ULL
#define ACL_RT_DEVS_TOPOLOGY_PHB	0x08ULL
#define ACL_RT_DEVS_TOPOLOGY_SYS	0x10ULL
#define ACL_RT_DEVS_TOPOLOGY_SIO	0x20ULL
#define ACL_RT_DEVS_TOPOLOGY_HCCS_SW	0x40ULL

ACL_FUNC_VISIBILITY aclError aclrtGetDevicesTopo(uint32_t deviceId,
						 uint32_t otherDeviceId,
						 uint64_t *value);

/* Host callbacks in stream order, run by subscribed threads. */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId,
						  aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId,
						    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn,
						 void *userData,
						 aclrtCallbackBlockType blockType,
						 aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream,
						 aclrtHostFunc fn, void *args);
ACL_FUNC_VISIBILITY aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId,
						    aclrtStream exeStream);
ACL_FUNC_VISIBILITY aclError aclrtProcessHostFunc(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId,
						      aclrtStream exeStream);

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

/*
 * More of CANN's memory calls.  aclrtMemset/aclrtMemcpy judge host or
 * device from the address; aclrtMemcpy's kind is reserved (any value of
 * aclrtMemcpyKind), the stream calls' kind is the direction.
 */
ACL_FUNC_VISIBILITY aclError aclrtMallocWithCfg(void **devPtr, size_t size,
						aclrtMemMallocPolicy policy,
						aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size,
						    aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtFreeWithDevSync(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtFreeHostWithDevSync(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void *dst, size_t dpitch,
					   const void *src, size_t spitch,
					   size_t width, size_t height,
					   aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch,
						const void *src, size_t spitch,
						size_t width, size_t height,
						aclrtMemcpyKind kind,
						aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32(void *ptr, size_t memSize,
					    uint32_t value, size_t N);
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32Async(void *ptr, size_t memSize,
						 uint32_t value, size_t N,
						 aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(
	aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions option,
	size_t *granularity);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAddressRange(void *ptr,
						     void **baseUserVa,
						     size_t *baseVaSize);
ACL_FUNC_VISIBILITY aclError aclrtGetMemUsageInfo(int32_t deviceId,
						  aclrtMemUsageInfo *memUsageInfo,
						  size_t inputNum,
						  size_t *outputNum);
ACL_FUNC_VISIBILITY aclError aclrtCheckMemType(void **addrList, uint32_t size,
					       uint32_t memType,
					       uint32_t *checkResult,
					       uint32_t reserve);

/*
 * Virtual memory (lib/vmm.c).  A reserved range is CPU address space; each
 * aclrtMapMem piece in it is a physical handle's pages, mapped at that
 * address.  Device pointers are CPU pointers here, so a range is contiguous
 * for the CPU and for every call of this library (aclrtMemcpy etc. may
 * cross pieces), but for the NPU each piece keeps its own device address:
 * the driver controls no IOMMU domain in which to lay the pieces out as
 * one device range.  A piece is usable (read/write) once mapped;
 * aclrtMemSetAccess changes the protection of whole pieces.
 */
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size,
						    size_t alignment,
						    void *expectPtr,
						    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle,
						 size_t size,
						 const aclrtPhysicalMemProp *prop,
						 uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size,
					 size_t offset,
					 aclrtDrvMemHandle handle,
					 uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemSetAccess(void *virPtr, size_t size,
					       aclrtMemAccessDesc *desc,
					       size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAccess(void *virPtr,
					       aclrtMemLocation *location,
					       uint64_t *flag);
ACL_FUNC_VISIBILITY aclError aclrtMemRetainAllocationHandle(
	void *virPtr, aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationPropertiesFromHandle(
	aclrtDrvMemHandle handle, aclrtPhysicalMemProp *prop);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(
	aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
	uint64_t flags, uint64_t *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(
	uint64_t shareableHandle, int32_t deviceId, aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(
	uint64_t shareableHandle, int32_t *pid, size_t pidNum);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandleV2(
	aclrtDrvMemHandle handle, uint64_t flags,
	aclrtMemSharedHandleType shareType, void *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandleV2(
	void *shareableHandle, aclrtMemSharedHandleType shareType,
	uint64_t flags, aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandleV2(
	void *shareableHandle, aclrtMemSharedHandleType shareType,
	int32_t *pid, size_t pidNum);

/* ---- batched copies and cache maintenance (lib/batch.c, lib/cmo.c) ---- */

typedef struct {
	aclrtMemLocation dstLoc;
	aclrtMemLocation srcLoc;
	uint8_t rsv[16];
} aclrtMemcpyBatchAttr;

typedef enum aclrtCmoType {
	ACL_RT_CMO_TYPE_PREFETCH = 0,
	ACL_RT_CMO_TYPE_WRITEBACK,
	ACL_RT_CMO_TYPE_INVALID,
	ACL_RT_CMO_TYPE_FLUSH,
} aclrtCmoType;

typedef struct {
	aclrtCmoType cmoType;
	uint32_t barrierId;
} aclrtBarrierCmoInfo;

#define ACL_RT_CMO_MAX_BARRIER_NUM 6U

typedef struct {
	size_t barrierNum;
	aclrtBarrierCmoInfo cmoInfo[ACL_RT_CMO_MAX_BARRIER_NUM];
} aclrtBarrierTaskInfo;

ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs,
					      void **srcs, size_t *sizes,
					      size_t numBatches,
					      aclrtMemcpyBatchAttr *attrs,
					      size_t *attrsIndexes,
					      size_t numAttrs,
					      size_t *failIndex);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs,
						void **srcs, size_t *sizes,
						size_t numBatches,
						aclrtMemcpyBatchAttr *attrs,
						size_t *attrsIndexes,
						size_t numAttrs);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsync(void **dsts,
						   size_t *destMaxs,
						   void **srcs, size_t *sizes,
						   size_t numBatches,
						   aclrtMemcpyBatchAttr *attrs,
						   size_t *attrsIndexes,
						   size_t numAttrs,
						   size_t *failIndex,
						   aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsyncV2(void **dsts,
						     size_t *destMaxs,
						     void **srcs,
						     size_t *sizes,
						     size_t numBatches,
						     aclrtMemcpyBatchAttr *attrs,
						     size_t *attrsIndexes,
						     size_t numAttrs,
						     aclrtStream stream);
/* Deprecated in CANN in favour of aclrtMemcpyAsync. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithCondition(void *dst,
							   size_t destMax,
							   const void *src,
							   size_t count,
							   aclrtMemcpyKind kind,
							   aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCmoAsync(void *src, size_t size,
					   aclrtCmoType cmoType,
					   aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithBarrier(void *src, size_t size,
						      aclrtCmoType cmoType,
						      uint32_t barrierId,
						      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo *taskInfo,
						 aclrtStream stream,
						 uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtCmoGetDescSize(size_t *size);
ACL_FUNC_VISIBILITY aclError aclrtCmoSetDesc(void *cmoDesc, void *src,
					     size_t size);
ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithDesc(void *cmoDesc,
						   aclrtCmoType cmoType,
						   aclrtStream stream,
						   const void *reserve);
ACL_FUNC_VISIBILITY aclError aclrtDeviceL2CacheFlush(void *rsv);

/* ---- errors, exception callbacks, system and device facts ---- */

/* The version of CANN's acl_rt.h whose names these headers follow. */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0

#define ACL_DEV_FEATURE_SUPPORT 0x00000001
#define ACL_DEV_FEATURE_NOT_SUPPORT 0x00000000

#define ACL_PKG_VERSION_MAX_SIZE 128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64

typedef enum aclrtLastErrLevel {
	ACL_RT_THREAD_LEVEL = 0,
} aclrtLastErrLevel;

/* Opaque: read it with the aclrtGet*FromExceptionInfo calls. */
typedef struct rtExceptionInfo aclrtExceptionInfo;
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo *exceptionInfo);
/* Kernel binaries, their kernels, argument lists and arguments (lib/binary.c). */
typedef void *aclrtBinHandle;
typedef void *aclrtFuncHandle;
typedef void *aclrtArgsHandle;
typedef void *aclrtParamHandle;

typedef enum aclrtDeviceStatus {
	ACL_RT_DEVICE_STATUS_NORMAL = 0,
	ACL_RT_DEVICE_STATUS_ABNORMAL,
	ACL_RT_DEVICE_STATUS_END = 0xFFFF,
} aclrtDeviceStatus;

typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;

typedef struct aclrtUtilizationInfo {
	int32_t cubeUtilization;
	int32_t vectorUtilization;
	int32_t aicpuUtilization;
	int32_t memoryUtilization;
	aclrtUtilizationExtendInfo *utilizationExtend; /* must be NULL */
} aclrtUtilizationInfo;

#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14

typedef struct aclrtMemUceInfo {
	void *addr;
	size_t len;
	size_t reserved[UCE_INFO_RESERVED_SIZE];
} aclrtMemUceInfo;

typedef enum {
	ACL_RT_NO_ERROR = 0,
	ACL_RT_ERROR_MEMORY = 1,
	ACL_RT_ERROR_L2 = 2,
	ACL_RT_ERROR_AICORE = 3,
	ACL_RT_ERROR_LINK = 4,
	ACL_RT_ERROR_L3_PORT = 5,
	ACL_RT_ERROR_OTHERS = 0xFFFF,
} aclrtErrorType;

typedef enum aclrtAicoreErrorType {
	ACL_RT_AICORE_ERROR_UNKNOWN,
	ACL_RT_AICORE_ERROR_SW,
	ACL_RT_AICORE_ERROR_HW_LOCAL,
} aclrtAicoreErrorType;

#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20
typedef struct {
	size_t arraySize;
	aclrtMemUceInfo memUceInfoArray[ACL_RT_MEM_UCE_INFO_MAX_NUM];
} aclrtMemUceInfoArray;

typedef union aclrtErrorInfoDetail {
	aclrtMemUceInfoArray uceInfo;
	aclrtAicoreErrorType aicoreErrType;
} aclrtErrorInfoDetail;

typedef struct aclrtErrorInfo {
	uint8_t tryRepair;
	uint8_t hasDetail;
	uint8_t reserved[2];
	aclrtErrorType errorType;
	aclrtErrorInfoDetail detail;
} aclrtErrorInfo;

typedef enum {
	ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
	ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
	ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
	ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
	ACL_DEV_ATTR_WARP_SIZE = 202,
	ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
	ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE = 204,	/* deprecated name */
	ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
	ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
	ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
	ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
	ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
	ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
	ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
	ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
	ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
	ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
	ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
	ACL_DEV_ATTR_SMP_ID = 401U,
	ACL_DEV_ATTR_PHY_CHIP_ID = 402U,
	ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID = 403U,	/* deprecated name */
	ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403U,
	ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404U,
	ACL_DEV_ATTR_SUPER_POD_ID = 405U,
	ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406U,
	ACL_DEV_ATTR_MAINBOARD_ID = 407U,
	ACL_DEV_ATTR_HD_CONNECT_TYPE = 408U,
	ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409U,
	ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID = 410U,
	ACL_DEV_ATTR_IS_VIRTUAL = 501U,
	ACL_DEV_ATTR_NPU_ARCH = 601U,
} aclrtDevAttr;

typedef enum {
	ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV = 1,
	ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 21,
} aclrtDevFeatureType;

typedef enum {
	ACL_RT_DEV_RES_CUBE_CORE = 0,
	ACL_RT_DEV_RES_VECTOR_CORE,
} aclrtDevResLimitType;

typedef struct aclrtUuid {
	char bytes[16];
} aclrtUuid;

/* Errors of the calling thread (lib/README.md, "Errors and exceptions"). */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);
ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId,
						  aclrtErrorInfo *errorInfo);

/* Failed stream tasks are reported to these callbacks. */
ACL_FUNC_VISIBILITY aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info);
ACL_FUNC_VISIBILITY aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo *info,
							   void **devArgsPtr,
							   uint32_t *devArgsLen);
ACL_FUNC_VISIBILITY aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo *info,
								 aclrtFuncHandle *func);

/* Versions: pkgName "runtime" (libaclmem) or "driver" (npu_mem.ko). */
ACL_FUNC_VISIBILITY aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
ACL_FUNC_VISIBILITY aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum);
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion,
					     int32_t *minorVersion,
					     int32_t *patchVersion);
ACL_FUNC_VISIBILITY aclError aclrtCheckArchCompatibility(const char *socVersion,
							 int32_t *canCompatible);

/* The device and its peers (there is one device: no peers). */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceInfo(uint32_t deviceId,
						aclrtDevAttr attr,
						int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCapability(int32_t deviceId,
						      aclrtDevFeatureType devFeatureType,
						      int32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtQueryDeviceStatus(int32_t deviceId,
						    aclrtDeviceStatus *deviceStatus);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceUtilizationRate(int32_t deviceId,
							   aclrtUtilizationInfo *utilizationInfo);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceResLimit(int32_t deviceId,
						    aclrtDevResLimitType type,
						    uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceResLimit(int32_t deviceId,
						    aclrtDevResLimitType type,
						    uint32_t value);

/* Core limits of streams and threads: there are no AI cores, all 0. */
ACL_FUNC_VISIBILITY aclError aclrtGetStreamResLimit(aclrtStream stream,
						    aclrtDevResLimitType type,
						    uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamResLimit(aclrtStream stream,
						    aclrtDevResLimitType type,
						    uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtResetStreamResLimit(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUseStreamResInCurrentThread(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type,
							uint32_t *value);
/* Need a model or AI cores: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtCtxGetFloatOverflowAddr(void **overflowAddr);
ACL_FUNC_VISIBILITY aclError aclrtActiveStream(aclrtStream activeStream,
					       aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceResLimit(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer,
						      int32_t deviceId,
						      int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId,
							 uint32_t flags);
ACL_FUNC_VISIBILITY aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDevicePeerAccessStatus(int32_t deviceId,
							 int32_t peerDeviceId,
							 int32_t *status);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid);
/* "dddd:bb:dd.f", 12 characters and a NUL: 13 bytes at least. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetPCIBusId(int32_t devId,
						    char *pciBusId,
						    int32_t len);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetByPCIBusId(const char *pciBusId,
						      int32_t *devId);

/*
 * Device memory shared between processes (lib/ipcmem.c).  A key is a
 * string of 56 characters (len >= 57; CANN passes 65) naming the buffer
 * and the offset of devPtr in it; the importer maps the whole buffer and
 * gets the pointer at that offset.  aclrtIpcMemClose frees an import, or
 * in the exporter makes the key unusable; aclrtFree refuses imported
 * memory.  aclrtIpcMemImportPidInterServer (super-pod servers) is absent.
 */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size,
						     char *key, size_t len,
						     uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetImportPid(const char *key,
						     int32_t *pid, size_t num);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr,
						    const char *key,
						    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetAttr(const char *key,
						aclrtIpcMemAttrType type,
						uint64_t attr);

/*
 * Registered host memory (lib/hostreg.c): the pages are pinned and
 * DMA-mapped for the NPU.  The device pointer is the host pointer itself
 * (device pointers are CPU pointers here); as CANN documents, it is for
 * the device, not for aclrtMemcpy and the like, which take the host
 * pointer as host memory.
 */
ACL_FUNC_VISIBILITY aclError aclrtHostRegister(void *ptr, uint64_t size,
					       aclrtHostRegisterType type,
					       void **devPtr);
ACL_FUNC_VISIBILITY aclError aclrtHostRegisterV2(void *ptr, uint64_t size,
						 uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtHostUnregister(void *ptr);
ACL_FUNC_VISIBILITY aclError aclrtHostGetDevicePointer(void *pHost,
						       void **pDevice,
						       uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtHostMemMapCapabilities(
	uint32_t deviceId, aclrtHacType hacType,
	aclrtHostMemMapCapability *capabilities);

/*
 * Reduce copies (lib/reduce.c): dst[i] = dst[i] op src[i] over count bytes
 * of device memory, in stream order.
 */
typedef enum {
	ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM = 10,
	ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 11,
	ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN = 12,
	ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13,
} aclrtReduceKind;

ACL_FUNC_VISIBILITY aclError aclrtReduceAsync(void *dst, const void *src,
					      uint64_t count,
					      aclrtReduceKind kind,
					      aclDataType type,
					      aclrtStream stream,
					      void *reserve);

/*
 * Random numbers in stream order (lib/random.c).  A parameter is either
 * its value (isAddr 0: size bytes of valueOrAddr) or the address of its
 * value in device memory (isAddr 1: valueOrAddr holds the pointer).
 */
typedef struct {
	uint8_t isAddr;
	uint8_t valueOrAddr[8];
	uint8_t size;
	uint8_t rsv[6];
} aclrtRandomParaInfo;

typedef struct {
	aclrtRandomParaInfo dropoutRation;
} aclrtDropoutBitmaskInfo;

typedef struct {
	aclrtRandomParaInfo min;
	aclrtRandomParaInfo max;
} aclrtUniformDisInfo;

typedef struct {
	aclrtRandomParaInfo mean;
	aclrtRandomParaInfo stddev;
} aclrtNormalDisInfo;

typedef enum {
	ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK = 0,
	ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
	ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
	ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
} aclrtRandomNumFuncType;

typedef struct {
	aclrtRandomNumFuncType funcType;
	union {
		aclrtDropoutBitmaskInfo dropoutBitmaskInfo;
		aclrtUniformDisInfo uniformDisInfo;
		aclrtNormalDisInfo normalDisInfo;
	} paramInfo;
} aclrtRandomNumFuncParaInfo;

typedef struct {
	aclDataType dataType;
	aclrtRandomNumFuncParaInfo randomNumFuncParaInfo;
	void *randomParaAddr;
	void *randomResultAddr;
	void *randomCounterAddr;
	aclrtRandomParaInfo randomSeed;
	aclrtRandomParaInfo randomNum;
	uint8_t rsv[8];
} aclrtRandomNumTaskInfo;

ACL_FUNC_VISIBILITY aclError aclrtRandomNumAsync(
	const aclrtRandomNumTaskInfo *taskInfo, const aclrtStream stream,
	void *reserve);

/*
 * Kernel binaries (lib/binary.c, doc/ascendc.md): a binary is the shared
 * object ascendc_library(NAME SHARED ...) builds, a kernel its
 * aclmem_kernel_entry_<name>, its arguments one block packed in order.
 */
#define ACL_RT_BINARY_MAGIC_ELF_AICORE 0x43554245U
#define ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE 0x41415246U
#define ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE 0x41494343U

typedef enum aclrtBinaryLoadOptionType {
	ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1,
	ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2,	/* deprecated name */
	ACL_RT_BINARY_LOAD_OPT_MAGIC = 2,
	ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3,
} aclrtBinaryLoadOptionType;

typedef union aclrtBinaryLoadOptionValue {
	uint32_t isLazyLoad;
	uint32_t magic;
	int32_t cpuKernelMode;
	uint32_t rsv[4];
} aclrtBinaryLoadOptionValue;

typedef struct {
	aclrtBinaryLoadOptionType type;
	aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;

typedef struct aclrtBinaryLoadOptions {
	aclrtBinaryLoadOption *options;
	size_t numOpt;
} aclrtBinaryLoadOptions;

typedef enum {
	ACL_RT_ENGINE_TYPE_AIC = 0,
	ACL_RT_ENGINE_TYPE_AIV,
} aclrtEngineType;

typedef enum aclrtLaunchKernelAttrId {
	ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1,
	ACL_RT_LAUNCH_KERNEL_ATTR_LOCAL_MEMORY_SIZE = 2,	/* deprecated name */
	ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE = 2,
	ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE = 3,
	ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET = 4,
	ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH = 5,
	ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP = 6,
	ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT = 7,
	ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US = 8,
	ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING = 9,
} aclrtLaunchKernelAttrId;

typedef struct {
	uint32_t timeoutLow;
	uint32_t timeoutHigh;
} aclrtTimeoutUs;

typedef union aclrtLaunchKernelAttrValue {
	uint8_t schemMode;
	uint32_t localMemorySize;	/* deprecated name */
	uint32_t dynUBufSize;
	aclrtEngineType engineType;
	uint32_t blockDimOffset;
	uint8_t isBlockTaskPrefetch;
	uint8_t isDataDump;
	uint16_t timeout;		/* s */
	aclrtTimeoutUs timeoutUs;	/* us */
	uint8_t enableProfiling;
	uint32_t rsv[4];
} aclrtLaunchKernelAttrValue;

typedef struct aclrtLaunchKernelAttr {
	aclrtLaunchKernelAttrId id;
	aclrtLaunchKernelAttrValue value;
} aclrtLaunchKernelAttr;

typedef struct aclrtLaunchKernelCfg {
	aclrtLaunchKernelAttr *attrs;
	size_t numAttrs;
} aclrtLaunchKernelCfg;

ACL_FUNC_VISIBILITY aclError aclrtBinaryLoadFromFile(const char *binPath,
						     aclrtBinaryLoadOptions *options,
						     aclrtBinHandle *binHandle);
ACL_FUNC_VISIBILITY aclError aclrtBinaryLoadFromData(const void *data, size_t length,
						     const aclrtBinaryLoadOptions *options,
						     aclrtBinHandle *binHandle);
ACL_FUNC_VISIBILITY aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle,
						    const char *kernelName,
						    aclrtFuncHandle *funcHandle);
ACL_FUNC_VISIBILITY aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle);
ACL_FUNC_VISIBILITY aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle,
						 aclrtArgsHandle *argsHandle);
ACL_FUNC_VISIBILITY aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle,
						   void *param, size_t paramSize,
						   aclrtParamHandle *paramHandle);
ACL_FUNC_VISIBILITY aclError aclrtKernelArgsAppendPlaceHolder(aclrtArgsHandle argsHandle,
							      aclrtParamHandle *paramHandle);
ACL_FUNC_VISIBILITY aclError aclrtKernelArgsGetPlaceHolderBuffer(aclrtArgsHandle argsHandle,
								 aclrtParamHandle paramHandle,
								 size_t dataSize,
								 void **bufferAddr);
ACL_FUNC_VISIBILITY aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle,
						       aclrtParamHandle paramHandle,
						       void *param, size_t paramSize);
ACL_FUNC_VISIBILITY aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle);
ACL_FUNC_VISIBILITY aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle,
							 uint32_t numBlocks,
							 aclrtStream stream,
							 aclrtLaunchKernelCfg *cfg,
							 aclrtArgsHandle argsHandle,
							 void *reserve);
ACL_FUNC_VISIBILITY aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle,
					       uint32_t numBlocks,
					       const void *argsData, size_t argsSize,
					       aclrtStream stream);
/* Labels: positions in a model run instance's work (lib/label.c). */
typedef void *aclrtLabel;
typedef void *aclrtLabelList;

ACL_FUNC_VISIBILITY aclError aclrtCreateLabel(aclrtLabel *label);
ACL_FUNC_VISIBILITY aclError aclrtSetLabel(aclrtLabel label,
					   aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyLabel(aclrtLabel label);
ACL_FUNC_VISIBILITY aclError aclrtCreateLabelList(aclrtLabel *labels,
						  size_t num,
						  aclrtLabelList *labelList);
ACL_FUNC_VISIBILITY aclError aclrtDestroyLabelList(aclrtLabelList labelList);
ACL_FUNC_VISIBILITY aclError aclrtSwitchLabelByIndex(void *ptr,
						     uint32_t maxValue,
						     aclrtLabelList labelList,
						     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_RT_H */
