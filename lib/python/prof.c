// SPDX-License-Identifier: MIT
/*
 * acl.prof: profiling (acl/acl_prof.h) with pyACL's names.  Configs,
 * stamps and step infos are ints (0 where the C call gave NULL); strings
 * are passed with their length, as the C calls take them.  The GIL is
 * released around every call that can wait (start, stop and finalize
 * write the trace; marks take the profiler's lock).
 */
#include "acl/acl_prof.h"
#include "aclpy.h"

ACLPY_SEQ_CONV(u32_list, "device_list must be a list of ints", true, conv_u32,
	       NULL, uint32_t)

#define PROF_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	CALL(init, aclprofInit, (sl), (), "ret = init(profiler_result_path)") \
	AUTO(aclprofFinalize)						\
	VAL(create_config, aclprofCreateConfig,				\
	    (objn(conv_u32_list), i32, p, u64), ptr,			\
	    "prof_config = create_config(device_list, aicore_metrics, "	\
	    "aicore_events, data_type_config)")				\
	DOC(aclprofDestroyConfig, "ret = destroy_config(prof_config)")	\
	DOC(aclprofStart, "ret = start(prof_config)")			\
	DOC(aclprofStop, "ret = stop(prof_config)")			\
	CALL(set_config, aclprofSetConfig, (i32, sl), (.hold_gil = true), \
	     "ret = set_config(config_type, config)")			\
	VAL(create_stamp, aclprofCreateStamp, (), ptr,			\
	    "stamp = create_stamp()")					\
	VAL(destroy_stamp, aclprofDestroyStamp, (p), none,		\
	    "destroy_stamp(stamp)")					\
	AUTO(aclprofSetStampTraceMessage)				\
	AUTO(aclprofMark)						\
	CALL(mark_ex, aclprofMarkEx, (sl, p), (),			\
	     "ret = mark_ex(msg, stream)")				\
	AUTO(aclprofPush)						\
	AUTO(aclprofPop)						\
	AUTO(aclprofRangeStart)						\
	AUTO(aclprofRangeStop)						\
	VAL(create_step_info, aclprofCreateStepInfo, (), ptr,		\
	    "step_info = create_step_info()")				\
	VAL(destroy_step_info, aclprofDestroyStepInfo, (p), none,	\
	    "destroy_step_info(step_info)")				\
	AUTO(aclprofGetStepTimestamp)

ACLPY_TABLE(aclpy_prof_methods, PROF_CALLS)
