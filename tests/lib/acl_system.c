// SPDX-License-Identifier: MIT
/*
 * System and device facts, and the errors they leave, with the driver:
 * versions, SoC name, CANN attributes, aclrtGetDeviceInfo against the
 * driver's GET_INFO, status, utilisation, resource limits, peers, identity,
 * every documented error code, and the last error / recent message of two
 * threads kept apart.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

static void clear_errors(void)
{
	aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	aclGetRecentErrMsg();
}

/* The first id past the devices there are: refused (107001) everywhere. */
#define BAD	((int32_t)acltest_device_count())

/* ret is code, left as this thread's last error with a message saying so. */
#define ck_fail(call, code) do {						\
	int r_ = (call);						\
	const char *m_;							\
	ck_assert_msg(r_ == (code), "%s = %d, want %d", #call, r_, (int)(code)); \
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), (code)); \
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL), (code)); \
	m_ = aclGetRecentErrMsg();					\
	ck_assert_msg(m_ && *m_, "%s left no message", #call);		\
} while (0)

START_TEST(versions)
{
	char v[ACL_PKG_VERSION_MAX_SIZE], pkg[32];
	int32_t num = -1, a = 0, b = 0, c = 0, maj, min, pat;
	FILE *f;

	clear_errors();
	strcpy(pkg, "runtime");
	ck_assert_int_eq(aclsysGetVersionStr(pkg, v), ACL_SUCCESS);
	ck_assert_int_eq(sscanf(v, "%d.%d.%d", &a, &b, &c), 3);
	ck_assert_int_eq(aclsysGetVersionNum(pkg, &num), ACL_SUCCESS);
	ck_assert_int_eq(num, a * 1000000 + b * 1000 + c);

	/* The driver: the loaded module's own version string. */
	strcpy(pkg, "driver");
	f = fopen("/sys/module/npu_mem/version", "r");
	if (f) {
		char want[64] = "";

		ck_assert_ptr_nonnull(fgets(want, sizeof(want), f));
		fclose(f);
		want[strcspn(want, "\n")] = '\0';
		ck_assert_int_eq(aclsysGetVersionStr(pkg, v), ACL_SUCCESS);
		ck_assert_str_eq(v, want);
	} else {
		ck_fail(aclsysGetVersionStr(pkg, v), ACL_ERROR_INVALID_FILE);
	}

	strcpy(pkg, "toolkit");
	ck_fail(aclsysGetVersionStr(pkg, v), ACL_ERROR_INVALID_FILE);
	ck_fail(aclsysGetVersionNum(pkg, &num), ACL_ERROR_INVALID_FILE);
	ck_fail(aclsysGetVersionStr(NULL, v), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclsysGetVersionStr(pkg, NULL), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclsysGetVersionNum(pkg, NULL), ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclrtGetVersion(&maj, &min, &pat), ACL_SUCCESS);
	ck_assert_int_eq(maj, ACL_MAJOR_VERSION);
	ck_assert_int_eq(min, ACL_MINOR_VERSION);
	ck_assert_int_eq(pat, ACL_PATCH_VERSION);
	ck_fail(aclrtGetVersion(&maj, NULL, &pat), ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(soc_and_cann_attributes)
{
	const aclCannAttr *list = NULL;
	const char *soc = aclrtGetSocName();
	int32_t v = -1;
	int64_t v64 = -1;
	size_t n = 99;

	clear_errors();
	ck_assert_ptr_nonnull(soc);
	ck_assert_str_eq(soc, "npu-mem");
	/* Not an Ascend SoC: programs keying on the prefix stay generic. */
	ck_assert_int_ne(strncmp(soc, "Ascend", 6), 0);
	ck_assert_int_eq(aclrtCheckArchCompatibility(soc, &v), ACL_SUCCESS);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(aclrtCheckArchCompatibility("Ascend910B1", &v),
			 ACL_SUCCESS);
	ck_assert_int_eq(v, 0);
	ck_fail(aclrtCheckArchCompatibility(NULL, &v), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtCheckArchCompatibility(soc, NULL), ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclGetCannAttributeList(&list, &n), ACL_SUCCESS);
	ck_assert_ptr_nonnull(list);
	ck_assert_uint_eq(n, 0);
	ck_fail(aclGetCannAttributeList(NULL, &n), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclGetCannAttributeList(&list, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclGetCannAttribute(ACL_CANN_ATTR_BF16, &v), ACL_SUCCESS);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(aclGetCannAttribute(ACL_CANN_ATTR_INF_NAN, &v),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclGetCannAttribute(ACL_CANN_ATTR_JIT_COMPILE, &v),
			 ACL_SUCCESS);
	ck_fail(aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &v),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclGetCannAttribute((aclCannAttr)3, &v), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclGetCannAttribute(ACL_CANN_ATTR_BF16, NULL),
		ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM,
						&v64), ACL_SUCCESS);
	ck_assert_int_eq(v64, 0);
	ck_assert_int_eq(aclGetDeviceCapability(0, ACL_DEVICE_INFO_VECTOR_CORE_NUM,
						&v64), ACL_SUCCESS);
	ck_assert_int_eq(v64, sysconf(_SC_NPROCESSORS_ONLN));
	ck_fail(aclGetDeviceCapability(BAD, ACL_DEVICE_INFO_L2_SIZE, &v64),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclGetDeviceCapability(0, (aclDeviceInfo)3, &v64),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, NULL),
		ACL_ERROR_INVALID_PARAM);
}
END_TEST

/* TOTAL_GLOBAL_MEM_SIZE is the driver's cap, as aclrtGetMemInfo's total. */
static void check_total_mem(void)
{
	struct npu_mem_info info;
	int64_t v = -1;

	acltest_driver_info(&info);
	ck_assert_int_eq(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
					    &v), ACL_SUCCESS);
	ck_assert_int_eq(v, (int64_t)info.limit_bytes);
}

START_TEST(device_info)
{
	static const aclrtDevAttr zero[] = {
		ACL_DEV_ATTR_AICPU_CORE_NUM, ACL_DEV_ATTR_AICORE_CORE_NUM,
		ACL_DEV_ATTR_CUBE_CORE_NUM,
		ACL_DEV_ATTR_WARP_SIZE, ACL_DEV_ATTR_L2_CACHE_SIZE,
		ACL_DEV_ATTR_MAX_BLOCK_DIM_Z, ACL_DEV_ATTR_SMP_ID,
		ACL_DEV_ATTR_PHY_CHIP_ID, ACL_DEV_ATTR_IS_VIRTUAL,
	};
	size_t i;
	size_t fr, total;
	int64_t v;

	clear_errors();
	/* Without aclrtSetDevice: answered through a file of its own. */
	check_total_mem();
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	check_total_mem();
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, &fr, &total), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
					    &v), ACL_SUCCESS);
	ck_assert_int_eq(v, (int64_t)total);
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		v = -1;
		ck_assert_int_eq(aclrtGetDeviceInfo(0, zero[i], &v), ACL_SUCCESS);
		ck_assert_int_eq(v, 0);
	}
	/* Vector cores: the CPUs a CPU path for vector kernels would use. */
	ck_assert_int_eq(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v),
			 ACL_SUCCESS);
	ck_assert_int_eq(v, sysconf(_SC_NPROCESSORS_ONLN));
	ck_fail(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_ID, &v),
		ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_fail(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, &v),
		ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_fail(aclrtGetDeviceInfo(0, (aclrtDevAttr)303, &v),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtGetDeviceInfo(BAD, ACL_DEV_ATTR_AICORE_CORE_NUM, &v),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, NULL),
		ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

START_TEST(capability_status_utilization)
{
	aclrtUtilizationInfo u;
	aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_END;
	struct npu_mem_info info;
	int32_t v = -1;
	void *p;

	clear_errors();
	ck_assert_int_eq(aclrtGetDeviceCapability(0,
			ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &v),
			ACL_SUCCESS);
	ck_assert_int_eq(v, ACL_DEV_FEATURE_NOT_SUPPORT);
	ck_fail(aclrtGetDeviceCapability(0, (aclrtDevFeatureType)2, &v),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtGetDeviceCapability(-1,
			ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &v),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtGetDeviceCapability(0,
			ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, NULL),
		ACL_ERROR_INVALID_PARAM);

	acltest_driver_info(&info);
	ck_assert_int_eq(aclrtQueryDeviceStatus(0, &st), ACL_SUCCESS);
	ck_assert_int_eq(st, (info.dev_flags & NPU_MEM_DEV_REMOVED) ?
			 ACL_RT_DEVICE_STATUS_ABNORMAL :
			 ACL_RT_DEVICE_STATUS_NORMAL);
	ck_fail(aclrtQueryDeviceStatus(BAD, &st), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtQueryDeviceStatus(0, NULL), ACL_ERROR_INVALID_PARAM);

	/* Memory use follows an allocation of a quarter of the cap... */
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(aclrtGetDeviceUtilizationRate(0, &u), ACL_SUCCESS);
	ck_assert_int_eq(u.cubeUtilization, -1);
	ck_assert_int_eq(u.vectorUtilization, -1);
	ck_assert_int_eq(u.aicpuUtilization, -1);
	ck_assert_int_ge(u.memoryUtilization, 0);
	ck_assert_int_le(u.memoryUtilization, 100);
	if (info.limit_bytes / 4 <= (64ULL << 20) &&
	    aclrtMalloc(&p, info.limit_bytes / 4, ACL_MEM_MALLOC_NORMAL_ONLY) ==
	    ACL_SUCCESS) {
		aclrtUtilizationInfo u2 = { 0, 0, 0, 0, NULL };

		ck_assert_int_eq(aclrtGetDeviceUtilizationRate(0, &u2),
				 ACL_SUCCESS);
		ck_assert_int_ge(u2.memoryUtilization, u.memoryUtilization + 20);
		ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	}
	u.utilizationExtend = (aclrtUtilizationExtendInfo *)&u;
	ck_fail(aclrtGetDeviceUtilizationRate(0, &u), ACL_ERROR_INVALID_PARAM);
	u.utilizationExtend = NULL;
	ck_fail(aclrtGetDeviceUtilizationRate(BAD + 2, &u),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtGetDeviceUtilizationRate(0, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

/*
 * No cube cores; the vector cores are the CPUs online, and a vector limit
 * up to them is kept until the reset: a program that limits its vector
 * cores (CANN's samples do) is not refused.
 */
START_TEST(resource_limits)
{
	uint32_t n = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN), v = 7;

	clear_errors();
	ck_assert_int_eq(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v),
			 ACL_SUCCESS);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v),
			 ACL_SUCCESS);
	ck_assert_uint_eq(v, n);
	ck_assert_int_eq(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 1),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v),
			 ACL_SUCCESS);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, n),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 0),
			 ACL_SUCCESS);
	ck_fail(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, n + 1),
		ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 0),
			 ACL_SUCCESS);
	ck_fail(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 1),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtGetDeviceResLimit(0, (aclrtDevResLimitType)2, &v),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtSetDeviceResLimit(0, (aclrtDevResLimitType)2, 0),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, NULL),
		ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtGetDeviceResLimit(BAD, ACL_RT_DEV_RES_CUBE_CORE, &v),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtSetDeviceResLimit(BAD, ACL_RT_DEV_RES_VECTOR_CORE, 1),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDeviceResLimit(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &v),
			 ACL_SUCCESS);
	ck_assert_uint_eq(v, n);
	ck_fail(aclrtResetDeviceResLimit(BAD), ACL_ERROR_RT_INVALID_DEVICEID);
}
END_TEST

START_TEST(peers)
{
	int32_t can = 5, st = 5;

	clear_errors();
	ck_fail(aclrtDeviceCanAccessPeer(&can, 0, 0), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtDeviceCanAccessPeer(&can, 0, BAD),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtDeviceCanAccessPeer(&can, -1, 0),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtDeviceCanAccessPeer(NULL, 0, 0), ACL_ERROR_INVALID_PARAM);

	/* Enable/Disable act on the current device. */
	ck_fail(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_fail(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtDeviceEnablePeerAccess(BAD, 0),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_INVALID_PARAM);
	ck_fail(aclrtDeviceDisablePeerAccess(BAD), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_fail(aclrtDeviceDisablePeerAccess(1), ACL_ERROR_RT_CONTEXT_NULL);

	ck_assert_int_eq(aclrtDevicePeerAccessStatus(0, 0, &st), ACL_SUCCESS);
	ck_assert_int_eq(st, 0);
	ck_fail(aclrtDevicePeerAccessStatus(0, BAD, &st),
		ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtDevicePeerAccessStatus(0, 0, NULL), ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(identity_and_verbose)
{
	aclrtUuid a, b;
	aclrtErrorInfo ei;
	int32_t pid = 0;
	int ret;

	clear_errors();
	ck_assert_int_eq(aclrtDeviceGetBareTgid(&pid), ACL_SUCCESS);
	ck_assert_int_eq(pid, getpid());
	ck_fail(aclrtDeviceGetBareTgid(NULL), ACL_ERROR_INVALID_PARAM);

	ret = aclrtDeviceGetUuid(0, &a);
	if (access("/etc/machine-id", R_OK) == 0) {
		ck_assert_int_eq(ret, ACL_SUCCESS);
		ck_assert_int_eq(aclrtDeviceGetUuid(0, &b), ACL_SUCCESS);
		ck_assert_mem_eq(a.bytes, b.bytes, 16);
		ck_assert_int_eq(a.bytes[6] & 0xF0, 0x40);
		ck_assert_int_eq(a.bytes[8] & 0xC0, 0x80);
	} else {
		ck_assert_int_eq(ret, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	}
	clear_errors();
	ck_fail(aclrtDeviceGetUuid(BAD, &a), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtDeviceGetUuid(0, NULL), ACL_ERROR_INVALID_PARAM);

	memset(&ei, 0xAA, sizeof(ei));
	ck_assert_int_eq(aclrtGetErrorVerbose(0, &ei), ACL_SUCCESS);
	ck_assert_int_eq(ei.errorType, ACL_RT_NO_ERROR);
	ck_assert_int_eq(ei.tryRepair, 0);
	ck_assert_int_eq(ei.hasDetail, 0);
	ck_fail(aclrtGetErrorVerbose(BAD, &ei), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_fail(aclrtGetErrorVerbose(0, NULL), ACL_ERROR_INVALID_PARAM);
}
END_TEST

/* ---- per-thread errors, through real API failures ---- */

struct thr {
	pthread_barrier_t *bar;
	int dev;			/* a bad device id to ask about */
	int want;
	int got_peek, got_get, got_after;
	char msg[128];
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	const char *m;
	int64_t v;

	aclrtGetDeviceInfo((uint32_t)t->dev, ACL_DEV_ATTR_AICORE_CORE_NUM, &v);
	if (t->want == ACL_ERROR_INVALID_PARAM)
		aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, NULL);
	/* Both threads have failed before either reads. */
	pthread_barrier_wait(t->bar);
	t->got_peek = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	t->got_get = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	t->got_after = aclrtGetLastError(ACL_RT_THREAD_LEVEL);
	m = aclGetRecentErrMsg();
	snprintf(t->msg, sizeof(t->msg), "%s", m ? m : "(null)");
	pthread_barrier_wait(t->bar);
	return NULL;
}

START_TEST(errors_per_thread)
{
	pthread_barrier_t bar;
	char ids[32], want[160];
	struct thr t[2];
	pthread_t th[2];
	int i;

	clear_errors();
	memset(t, 0, sizeof(t));
	pthread_barrier_init(&bar, NULL, 2);
	t[0].bar = t[1].bar = &bar;
	t[0].dev = BAD + 5;
	t[0].want = ACL_ERROR_RT_INVALID_DEVICEID;
	t[1].dev = BAD + 9;
	t[1].want = ACL_ERROR_INVALID_PARAM;
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, thr_main, &t[i]), 0);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&bar);

	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(t[i].got_peek, t[i].want);
		ck_assert_int_eq(t[i].got_get, t[i].want);
		ck_assert_int_eq(t[i].got_after, ACL_SUCCESS);
	}
	/* Each thread sees its own messages only, newest first. */
	if (BAD == 1)
		snprintf(ids, sizeof(ids), "one device: 0");
	else
		snprintf(ids, sizeof(ids), "devices 0 to %d", BAD - 1);
	snprintf(want, sizeof(want), "aclrtGetDeviceInfo: no device %d (%s)",
		 t[0].dev, ids);
	ck_assert_str_eq(t[0].msg, want);
	snprintf(want, sizeof(want), "aclrtGetDeviceInfo: value is NULL\n"
		 "aclrtGetDeviceInfo: no device %d (%s)", t[1].dev, ids);
	ck_assert_str_eq(t[1].msg, want);
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
	ck_assert_ptr_null(aclGetRecentErrMsg());
}
END_TEST

START_TEST(success_keeps_last_error)
{
	int64_t v;

	clear_errors();
	ck_fail(aclrtGetDeviceInfo(BAD + 1, ACL_DEV_ATTR_AICORE_CORE_NUM, &v),
		ACL_ERROR_RT_INVALID_DEVICEID);
	aclrtGetDeviceInfo(BAD + 1, ACL_DEV_ATTR_AICORE_CORE_NUM, &v);
	/* A later success neither clears the code nor the message (CANN). */
	ck_assert_int_eq(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &v),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_ptr_nonnull(aclGetRecentErrMsg());
	ck_assert_ptr_null(aclGetRecentErrMsg());
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetLastError((aclrtLastErrLevel)1),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_system");

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "0", 1);
	nm_add(s, versions, 30);
	nm_add(s, soc_and_cann_attributes, 30);
	nm_add(s, device_info, 30);
	nm_add(s, capability_status_utilization, 60);
	nm_add(s, resource_limits, 30);
	nm_add(s, peers, 30);
	nm_add(s, identity_and_verbose, 30);
	nm_add(s, errors_per_thread, 30);
	nm_add(s, success_keeps_last_error, 30);
	return acltest_run(s);
}
