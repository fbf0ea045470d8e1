/* SPDX-License-Identifier: MIT */
/*
 * Base types and error codes of the ACL API (CANN's acl/acl_base.h), as far
 * as libaclmem implements it.  Names and values are CANN's: applications
 * written against CANN compile unchanged.  Never renumber anything here.
 */
#ifndef ACLMEM_ACL_BASE_H
#define ACLMEM_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "error_codes/rt_error_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * CANN exports its API only when FUNC_VISIBILITY is defined while building
 * the library; ours is built with hidden visibility by default, so the
 * public declarations always carry default visibility.
 */
#ifndef ACL_FUNC_VISIBILITY
#if defined(__GNUC__)
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ACL_FUNC_VISIBILITY
#endif
#endif

typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
/* Custom allocators (acl_rt_allocator.h): opaque handles. */
typedef void *aclrtAllocatorDesc;
typedef void *aclrtAllocator;
typedef void *aclrtAllocatorBlock;
typedef void *aclrtAllocatorAddr;
typedef int aclError;

/* CANN declares these as static const ints, not macros: keep it so. */
static const int ACL_ERROR_NONE = 0;
static const int ACL_SUCCESS = 0;

static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_WRITE_FILE = 100004;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_PROF_ALREADY_RUN = 100042;
static const int ACL_ERROR_PROF_NOT_RUN = 100043;
static const int ACL_ERROR_PROF_API_CONFLICT = 148047;

static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;

static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;

/* ---- data types, float16, system facts (CANN's acl_base_rt.h) ---- */

/* IEEE 754 binary16 bits: C has no half type. */
typedef uint16_t aclFloat16;

typedef enum {
	ACL_DT_UNDEFINED = -1,
	ACL_FLOAT = 0,
	ACL_FLOAT16 = 1,
	ACL_INT8 = 2,
	ACL_INT32 = 3,
	ACL_UINT8 = 4,
	ACL_INT16 = 6,
	ACL_UINT16 = 7,
	ACL_UINT32 = 8,
	ACL_INT64 = 9,
	ACL_UINT64 = 10,
	ACL_DOUBLE = 11,
	ACL_BOOL = 12,
	ACL_STRING = 13,
	ACL_COMPLEX64 = 16,
	ACL_COMPLEX128 = 17,
	ACL_BF16 = 27,
	ACL_INT4 = 29,
	ACL_UINT1 = 30,
	ACL_COMPLEX32 = 33,
	ACL_HIFLOAT8 = 34,
	ACL_FLOAT8_E5M2 = 35,
	ACL_FLOAT8_E4M3FN = 36,
	ACL_FLOAT8_E8M0 = 37,
	ACL_FLOAT6_E3M2 = 38,
	ACL_FLOAT6_E2M3 = 39,
	ACL_FLOAT4_E2M1 = 40,
	ACL_FLOAT4_E1M2 = 41,
	ACL_HIFLOAT4 = 42,
	ACL_HIFLOAT4_SCALE = 43,
} aclDataType;

typedef enum {
	ACL_CANN_ATTR_UNDEFINED = -1,
	ACL_CANN_ATTR_INF_NAN = 0,
	ACL_CANN_ATTR_BF16 = 1,
	ACL_CANN_ATTR_JIT_COMPILE = 2,
} aclCannAttr;

typedef enum {
	ACL_OPT_DETERMINISTIC = 0,
	ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
} aclSysParamOpt;

typedef enum {
	ACL_DEVICE_INFO_UNDEFINED = -1,
	ACL_DEVICE_INFO_AI_CORE_NUM = 0,
	ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1,
	ACL_DEVICE_INFO_L2_SIZE = 2,
} aclDeviceInfo;

/*
 * float16 <-> float as CANN converts (its documented saturation mode):
 * finite values round to nearest even, subnormals included; a float whose
 * half would overflow, +-Inf and NaN give +-65504 (0x7BFF/0xFBFF); half
 * values with the all-ones exponent (Inf, NaN) read as ordinary numbers,
 * +-(1 + m/1024) * 65536 (0x7C00 is 65536.0, 0x7E00 98304.0).
 */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

/* Bytes per element; 0 for ACL_STRING, ACL_DT_UNDEFINED and unknown values. */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/* The processor's name ("npu-mem" here: no Ascend AI cores); never NULL. */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);

ACL_FUNC_VISIBILITY aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList,
						     size_t *num);
ACL_FUNC_VISIBILITY aclError aclGetCannAttribute(aclCannAttr cannAttr,
						 int32_t *value);
ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId,
						    aclDeviceInfo deviceInfo,
						    int64_t *value);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_BASE_H */
