// SPDX-License-Identifier: MIT
/*
 * acl.mdl: model run instances (stream capture, building, execution), and
 * acl.rt's labels.
 *
 * pyACL documents no binding for these calls: the names are the C names'
 * words, as pyACL names its others (aclmdlRICaptureBegin ->
 * acl.mdl.ri_capture_begin, aclrtSwitchLabelByIndex ->
 * acl.rt.switch_label_by_index).  Handles are ints (0 on failure); a label
 * list is made from a list (or tuple) of labels.  The GIL is released
 * around every library call.
 */
#include "acl/acl.h"
#include "aclpy.h"

/* ri_capture_thread_exchange_mode(mode) -> (previous mode, ret) */
ACLPY_FN(ri_capture_thread_exchange_mode)
{
	aclmdlRICaptureMode mode;
	int m, ret;

	if (!PyArg_ParseTuple(args, "i:ri_capture_thread_exchange_mode", &m))
		return NULL;
	mode = (aclmdlRICaptureMode)m;
	ret = aclmdlRICaptureThreadExchangeMode(&mode);
	return Py_BuildValue("(ii)", ret ? m : (int)mode, ret);
}

#define MDL_CALLS(CALL, HAND)						\
	CALL(ri_capture_begin, aclmdlRICaptureBegin, (p, i32), (),	\
	     "ret = ri_capture_begin(stream, mode)")			\
	CALL(ri_capture_get_info, aclmdlRICaptureGetInfo,		\
	     (p, out_i32, out_p), (),					\
	     "status, model_ri, ret = ri_capture_get_info(stream)")	\
	HAND(ri_capture_thread_exchange_mode, METH_VARARGS,		\
	     "previous_mode, ret = ri_capture_thread_exchange_mode(mode)") \
	CALL(ri_capture_end, aclmdlRICaptureEnd, (p, out_p), (),	\
	     "model_ri, ret = ri_capture_end(stream)")			\
	CALL(ri_build_begin, aclmdlRIBuildBegin, (out_p, u32), (),	\
	     "model_ri, ret = ri_build_begin(flag)")			\
	CALL(ri_bind_stream, aclmdlRIBindStream, (p, p, u32), (),	\
	     "ret = ri_bind_stream(model_ri, stream, flag)")		\
	CALL(ri_end_task, aclmdlRIEndTask, (p, p), (),			\
	     "ret = ri_end_task(model_ri, stream)")			\
	CALL(ri_build_end, aclmdlRIBuildEnd, (p, nul), (),		\
	     "ret = ri_build_end(model_ri)")				\
	CALL(ri_unbind_stream, aclmdlRIUnbindStream, (p, p), (),	\
	     "ret = ri_unbind_stream(model_ri, stream)")		\
	CALL(ri_execute, aclmdlRIExecute, (p, i32), (),		\
	     "ret = ri_execute(model_ri, timeout)")			\
	CALL(ri_execute_async, aclmdlRIExecuteAsync, (p, p), (),	\
	     "ret = ri_execute_async(model_ri, stream)")		\
	CALL(ri_destroy, aclmdlRIDestroy, (p), (),			\
	     "ret = ri_destroy(model_ri)")

ACLPY_TABLE(aclpy_mdl_methods, MDL_CALLS)

/* objn (calls.h): create_label_list's list (or tuple) of labels. */
static int conv_labels(PyObject *list, union aclpy_val *slot)
{
	return aclpy_seq(list, slot, "labels must be a list of ints", true,
			 conv_ptr, NULL, sizeof(aclrtLabel));
}

#define LABEL_CALLS(CALL, HAND)						\
	CALL(create_label, aclrtCreateLabel, (out_p), (),		\
	     "label, ret = create_label()")				\
	CALL(destroy_label, aclrtDestroyLabel, (p), (),		\
	     "ret = destroy_label(label)")				\
	CALL(set_label, aclrtSetLabel, (p, p), (),			\
	     "ret = set_label(label, stream)")				\
	CALL(create_label_list, aclrtCreateLabelList,			\
	     (objn(conv_labels), out_p), (),				\
	     "label_list, ret = create_label_list(labels)")		\
	CALL(destroy_label_list, aclrtDestroyLabelList, (p), (),	\
	     "ret = destroy_label_list(label_list)")			\
	CALL(switch_label_by_index, aclrtSwitchLabelByIndex,		\
	     (p, u32, p, p), (),					\
	     "ret = switch_label_by_index(ptr, max_value, label_list, stream)")

ACLPY_TABLE(aclpy_rt_label_methods, LABEL_CALLS)
