// SPDX-License-Identifier: MIT
/*
 * Converters too large to be inline in aclpy.h, shared by the binding
 * files.
 */
#include "aclpy.h"

/*
 * A Python list or tuple of ints as a new int32_t array for the pid-list
 * calls (notifies, IPC memory, shareable handles): free it with
 * PyMem_Free.  Never NULL for an empty list, so that the library, not a
 * NULL pointer, judges a count of 0.  NULL with an exception set on error.
 */
int32_t *aclpy_pid_list(PyObject *list, size_t *num)
{
	Py_ssize_t i, len;
	PyObject *seq;
	int32_t *pids;

	if (!PyList_Check(list) && !PyTuple_Check(list)) {
		PyErr_Format(PyExc_TypeError,
			     "pids must be a list of ints, not %.200s",
			     Py_TYPE(list)->tp_name);
		return NULL;
	}
	seq = PySequence_Fast(list, "pids must be a list of ints");
	if (!seq)
		return NULL;
	len = PySequence_Fast_GET_SIZE(seq);
	pids = PyMem_Calloc((size_t)len + 1, sizeof(*pids));
	if (!pids) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return NULL;
	}
	for (i = 0; i < len; i++) {
		if (!conv_i32(PySequence_Fast_GET_ITEM(seq, i), &pids[i])) {
			PyMem_Free(pids);
			Py_DECREF(seq);
			return NULL;
		}
	}
	Py_DECREF(seq);
	*num = (size_t)len;
	return pids;
}
