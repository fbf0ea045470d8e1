// SPDX-License-Identifier: MIT
/*
 * Settings CANN keeps and programs read back: system parameter options for
 * the process and per context (never set: ACL_ERROR_RT_SYSPARAMOPT_NOT_SET;
 * a context's options are its own and go with it), the saturation mode,
 * aclrtSetTsDevice, the SIMT/SIMD limits there is no hardware for, and the
 * device id mappings and topology of a one-device system.
 */
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"

START_TEST(process_options)
{
	int64_t v = -1;

	ck_assert_int_eq(aclrtGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &v),
			 ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
	ck_assert_int_eq(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), 0);
	ck_assert_int_eq(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(aclrtSetSysParamOpt((aclSysParamOpt)7, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, -1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, NULL),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(context_options_are_the_contexts)
{
	aclrtContext def, ctx;
	int64_t v = -1;

	ck_assert_int_eq(aclrtGetCurrentContext(&def), 0);
	ck_assert_int_eq(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v),
			 ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
	ck_assert_int_eq(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1), 0);
	ck_assert_int_eq(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), 0);
	ck_assert_int_eq(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v),
			 ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
	ck_assert_int_eq(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 0), 0);
	ck_assert_int_eq(aclrtSetCurrentContext(def), 0);
	ck_assert_int_eq(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(aclrtDestroyContext(ctx), 0);
	/* A new context, maybe at the old one's address, starts unset. */
	ck_assert_int_eq(aclrtCreateContext(&ctx, 0), 0);
	ck_assert_int_eq(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &v),
			 ACL_ERROR_RT_SYSPARAMOPT_NOT_SET);
	ck_assert_int_eq(aclrtDestroyContext(ctx), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
}
END_TEST

START_TEST(sat_mode_ts_limits)
{
	aclrtFloatOverflowMode m = ACL_RT_OVERFLOW_MODE_UNDEF;
	size_t v;

	ck_assert_int_eq(aclrtGetDeviceSatMode(&m), 0);
	ck_assert_int_eq(m, ACL_RT_OVERFLOW_MODE_SATURATION);
	ck_assert_int_eq(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN), 0);
	ck_assert_int_eq(aclrtGetDeviceSatMode(&m), 0);
	ck_assert_int_eq(m, ACL_RT_OVERFLOW_MODE_INFNAN);
	ck_assert_int_eq(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetDeviceSatMode(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetTsDevice(ACL_TS_ID_AIVECTOR), 0);
	ck_assert_int_eq(aclrtSetTsDevice(ACL_TS_ID_RESERVED),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, &v),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtDeviceSetLimit((aclrtDeviceLimit)9, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtGetDeviceSatMode(&m), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
}
END_TEST

START_TEST(device_ids_and_topology)
{
	int32_t id = -1;
	uint64_t topo;

	ck_assert_int_eq(aclrtGetLogicDevIdByPhyDevId(0, &id), 0);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(aclrtGetPhyDevIdByLogicDevId(0, &id), 0);
	ck_assert_int_eq(aclrtGetUserDevIdByPhyDevId(0, &id), 0);
	ck_assert_int_eq(aclrtGetPhyDevIdByUserDevId(0, &id), 0);
	ck_assert_int_eq(aclrtGetLogicDevIdByUserDevId(0, &id), 0);
	ck_assert_int_eq(aclrtGetUserDevIdByLogicDevId(0, &id), 0);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(aclrtGetLogicDevIdByPhyDevId(
			 (int32_t)acltest_device_count(), &id),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetUserDevIdByLogicDevId(-1, &id),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetPhyDevIdByUserDevId(0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetDevicesTopo(0, 0, &topo),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetDevicesTopo(0, acltest_device_count(), &topo),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetDevicesTopo(0, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(stream_and_thread_core_limits)
{
	uint32_t ncpu = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	aclrtStream s;
	uint32_t v = 9;
	void *addr;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v),
			 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, 0),
			 0);
	/* Vector cores: the device's, the CPUs online. */
	ck_assert_int_eq(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, &v),
			 0);
	ck_assert_uint_eq(v, ncpu);
	ck_assert_int_eq(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE,
						ncpu), 0);
	ck_assert_int_eq(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE,
						ncpu + 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetStreamResLimit(s, (aclrtDevResLimitType)5, &v),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtResetStreamResLimit(s), 0);
	ck_assert_int_eq(aclrtUseStreamResInCurrentThread(s), 0);
	v = 9;
	ck_assert_int_eq(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE,
						    &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE,
						    &v), 0);
	ck_assert_uint_eq(v, ncpu);
	ck_assert_int_eq(aclrtUnuseStreamResInCurrentThread(s), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtUseStreamResInCurrentThread(s),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCtxGetFloatOverflowAddr(&addr),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtActiveStream(NULL, NULL),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_settings");

	acltest_require_device();
	nm_add_fx(s, process_options, 30, &acltest_device);
	nm_add_fx(s, context_options_are_the_contexts, 30, &acltest_device);
	nm_add_fx(s, sat_mode_ts_limits, 30, &acltest_device);
	nm_add_fx(s, device_ids_and_topology, 30, &acltest_device);
	nm_add_fx(s, stream_and_thread_core_limits, 30, &acltest_device);
	return acltest_run(s);
}
