// SPDX-License-Identifier: MIT
/*
 * acl.mdl: model run instances, and acl.rt's labels, as lib/README.md
 * documents them.  The GIL is released around every library call.
 */
#include "acl/acl.h"
#include "aclpy.h"

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

#define MDL_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	AUTO(aclmdlRICaptureBegin)					\
	AUTO(aclmdlRICaptureGetInfo)					\
	HAND(ri_capture_thread_exchange_mode, METH_VARARGS,		\
	     "previous_mode, ret = ri_capture_thread_exchange_mode(mode)") \
	AUTO(aclmdlRICaptureEnd)					\
	AUTO(aclmdlRIBuildBegin)					\
	AUTO(aclmdlRIBindStream)					\
	AUTO(aclmdlRIEndTask)						\
	CALL(ri_build_end, aclmdlRIBuildEnd, (p, nul), (),		\
	     "ret = ri_build_end(model_ri)")				\
	AUTO(aclmdlRIUnbindStream)					\
	AUTO(aclmdlRIExecute)						\
	AUTO(aclmdlRIExecuteAsync)					\
	AUTO(aclmdlRIDestroy)

ACLPY_TABLE(aclpy_mdl_methods, MDL_CALLS)

ACLPY_SEQ_CONV(labels, "labels must be a list of ints", true, conv_ptr, NULL,
	       aclrtLabel)

#define LABEL_CALLS(CALL, HAND, AUTO, DOC, VAL)				\
	AUTO(aclrtCreateLabel)						\
	AUTO(aclrtDestroyLabel)						\
	AUTO(aclrtSetLabel)						\
	CALL(create_label_list, aclrtCreateLabelList,			\
	     (objn(conv_labels), out_p), (),				\
	     "label_list, ret = create_label_list(labels)")		\
	AUTO(aclrtDestroyLabelList)					\
	AUTO(aclrtSwitchLabelByIndex)

ACLPY_TABLE(aclpy_rt_label_methods, LABEL_CALLS)
