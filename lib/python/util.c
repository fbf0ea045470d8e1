// SPDX-License-Identifier: MIT
/*
 * acl.util: pointer and numpy helpers and threads, as pyACL documents them.
 * numpy is imported only by the calls that need it (Debian's
 * python3-numpy).  A thread_id is the pthread_t, which
 * acl.rt.subscribe_report expects: the library recognises a subscribed
 * thread by pthread_self().
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclpy.h"

/*
 * Valid while the object lives unresized: the caller keeps it, as in
 * pyACL.  A strided view is given with pyACL's warning.
 */
static PyObject *buffer_ptr(PyObject *args, const char *fmt, const char *need,
			    int flags)
{
	Py_buffer view;
	PyObject *obj;
	void *p;

	if (!PyArg_ParseTuple(args, fmt, &obj))
		return NULL;
	if (!PyObject_CheckBuffer(obj)) {
		PyErr_Format(PyExc_TypeError, "%s, not %.200s", need,
			     Py_TYPE(obj)->tp_name);
		return NULL;
	}
	if (PyObject_GetBuffer(obj, &view, flags))
		return NULL;
	p = view.buf;
	if (!PyBuffer_IsContiguous(&view, 'C'))
		PySys_WriteStderr("Warning:The input ndarray is discontiguous. "
				  "Please use acl.util.numpy_contiguous_to_ptr "
				  "instead.\n");
	PyBuffer_Release(&view);
	return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)p);
}

/* PyBUF_SIMPLE: always contiguous, never warned about. */
ACLPY_FN(bytes_to_ptr)
{
	return buffer_ptr(args, "O:bytes_to_ptr",
			  "bytes_to_ptr needs bytes, bytearray or a buffer",
			  PyBUF_SIMPLE);
}

ACLPY_FN(ptr_to_bytes)
{
	void *p;
	size_t size;

	if (!PyArg_ParseTuple(args, "O&O&:ptr_to_bytes", conv_ptr, &p,
			      conv_size, &size))
		return NULL;
	if (size > PY_SSIZE_T_MAX) {
		PyErr_SetString(PyExc_OverflowError, "size too large");
		return NULL;
	}
	if (!p && size) {
		PyErr_SetString(PyExc_ValueError, "NULL pointer");
		return NULL;
	}
	return PyBytes_FromStringAndSize(p, (Py_ssize_t)size);
}

ACLPY_FN(numpy_to_ptr)
{
	return buffer_ptr(args, "O:numpy_to_ptr",
			  "numpy_to_ptr needs a numpy.ndarray", PyBUF_RECORDS_RO);
}

ACLPY_FN(numpy_contiguous_to_ptr)
{
	PyObject *obj, *np, *out;
	Py_buffer view;
	void *p;

	if (!PyArg_ParseTuple(args, "O:numpy_contiguous_to_ptr", &obj))
		return NULL;
	np = PyImport_ImportModule("numpy");
	if (!np)
		return NULL;
	/* The same array when it is already row-contiguous. */
	out = PyObject_CallMethod(np, "ascontiguousarray", "O", obj);
	Py_DECREF(np);
	if (!out)
		return NULL;
	if (PyObject_GetBuffer(out, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) {
		Py_DECREF(out);
		return NULL;
	}
	p = view.buf;
	PyBuffer_Release(&view);
	return Py_BuildValue("(KN)", (unsigned long long)(uintptr_t)p, out);
}

/*
 * numpy's type numbers (NPY_TYPES), as pyACL takes them, with their
 * array-protocol codes; object, string and datetime types are refused.
 */
static const char *const npy_codes[] = {
	[0] = "?", [1] = "b", [2] = "B", [3] = "h", [4] = "H", [5] = "i",
	[6] = "I", [7] = "l", [8] = "L", [9] = "q", [10] = "Q", [11] = "f",
	[12] = "d", [13] = "g", [14] = "F", [15] = "D", [16] = "G",
	[23] = "e",
};

/* How many elements a shape holds, at most PY_SSIZE_T_MAX. */
static int shape_elements(PyObject *seq, size_t *total)
{
	Py_ssize_t i, n = PySequence_Fast_GET_SIZE(seq);
	PyObject *item;

	*total = 1;
	for (i = 0; i < n; i++) {
		Py_ssize_t d;

		item = PySequence_Fast_GET_ITEM(seq, i);
		if (!need_int(item, "shape dimension"))
			return 0;
		d = PyLong_AsSsize_t(item);
		if (d == -1 && PyErr_Occurred())
			return 0;
		if (d < 0) {
			PyErr_SetString(PyExc_ValueError,
					"negative shape dimension");
			return 0;
		}
		if (d && *total > PY_SSIZE_T_MAX / (size_t)d) {
			PyErr_SetString(PyExc_OverflowError, "shape too large");
			return 0;
		}
		*total *= (size_t)d;
	}
	return 1;
}

/* numpy's dtype, and in *bytes the size of count of it, bounded too. */
static PyObject *npy_dtype(PyObject *np, int32_t type, size_t count,
			   size_t *bytes)
{
	PyObject *dtype, *item;
	Py_ssize_t itemsize;

	dtype = PyObject_CallMethod(np, "dtype", "s", npy_codes[type]);
	if (!dtype)
		return NULL;
	item = PyObject_GetAttrString(dtype, "itemsize");
	if (!item)
		goto fail;
	itemsize = PyLong_AsSsize_t(item);
	Py_DECREF(item);
	if (itemsize <= 0 || count > PY_SSIZE_T_MAX / (size_t)itemsize) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_OverflowError, "shape too large");
		goto fail;
	}
	*bytes = count * (size_t)itemsize;
	return dtype;
fail:
	Py_DECREF(dtype);
	return NULL;
}

static PyObject *view_array(PyObject *np, PyObject *dtype, void *p,
			    size_t size, PyObject *seq)
{
	PyObject *mv, *flat, *res = NULL;

	if (!p && size) {
		PyErr_SetString(PyExc_ValueError, "NULL pointer");
		return NULL;
	}
	/* Zero-copy, as pyACL: the array is a writable view of the memory,
	 * valid while the memory is. */
	mv = PyMemoryView_FromMemory(size ? p : (char *)"", (Py_ssize_t)size,
				     PyBUF_WRITE);
	if (!mv)
		return NULL;
	flat = PyObject_CallMethod(np, "frombuffer", "OO", mv, dtype);
	if (flat) {
		res = PyObject_CallMethod(flat, "reshape", "(O)", seq);
		Py_DECREF(flat);
	}
	Py_DECREF(mv);
	return res;
}

ACLPY_FN(ptr_to_numpy)
{
	PyObject *shape, *seq, *np = NULL, *dtype = NULL, *res = NULL;
	size_t count, bytes;
	int32_t type;
	void *p;

	if (!PyArg_ParseTuple(args, "O&OO&:ptr_to_numpy", conv_ptr, &p,
			      &shape, conv_i32, &type))
		return NULL;
	if (type < 0 || (size_t)type >= sizeof(npy_codes) / sizeof(*npy_codes) ||
	    !npy_codes[type]) {
		PyErr_Format(PyExc_ValueError, "unsupported numpy type %d",
			     (int)type);
		return NULL;
	}
	seq = PySequence_Fast(shape, "shape must be a tuple of ints");
	if (!seq)
		return NULL;
	if (!shape_elements(seq, &count))
		goto out;
	np = PyImport_ImportModule("numpy");
	if (!np)
		goto out;
	dtype = npy_dtype(np, type, count, &bytes);
	if (dtype)
		res = view_array(np, dtype, p, bytes, seq);
out:
	Py_XDECREF(dtype);
	Py_XDECREF(np);
	Py_DECREF(seq);
	return res;
}

struct pythread {
	struct pythread *next;
	pthread_t th;
	PyObject *func;
	PyObject *args;
};

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pythread *threads;	/* started, not stopped */

static void *thread_main(void *arg)
{
	struct pythread *t = arg;
	PyGILState_STATE g;
	PyObject *res;

	g = PyGILState_Ensure();
	res = PyObject_CallOneArg(t->func, t->args);
	if (res)
		Py_DECREF(res);
	else
		PyErr_WriteUnraisable(t->func);
	/* The record stays for stop_thread; the references go now. */
	Py_CLEAR(t->func);
	Py_CLEAR(t->args);
	PyGILState_Release(g);
	return NULL;
}

ACLPY_FN(start_thread)
{
	PyObject *func, *fargs;
	struct pythread *t;
	int err;

	if (!PyArg_ParseTuple(args, "OO:start_thread", &func, &fargs))
		return NULL;
	if (!PyCallable_Check(func)) {
		PyErr_Format(PyExc_TypeError,
			     "start_thread needs a callable, not %.200s",
			     Py_TYPE(func)->tp_name);
		return NULL;
	}
	t = PyMem_RawCalloc(1, sizeof(*t));
	if (!t)
		return PyErr_NoMemory();
	Py_INCREF(func);
	Py_INCREF(fargs);
	t->func = func;
	t->args = fargs;
	/* Registered before it runs: it may call stop_thread on itself. */
	pthread_mutex_lock(&threads_lock);
	err = pthread_create(&t->th, NULL, thread_main, t);
	if (!err) {
		t->next = threads;
		threads = t;
	}
	pthread_mutex_unlock(&threads_lock);
	if (err) {
		Py_DECREF(func);
		Py_DECREF(fargs);
		PyMem_RawFree(t);
		return Py_BuildValue("(Ki)", 0ULL, ACL_ERROR_FAILURE);
	}
	return Py_BuildValue("(Ki)", (unsigned long long)(uint64_t)t->th,
			     ACL_SUCCESS);
}

ACLPY_CONV(thread_id, uint64_t, "thread_id", unsigned long long,
	   PyLong_AsUnsignedLongLong, 1, "")

ACLPY_FN(stop_thread)
{
	struct pythread **pt, *t;
	uint64_t id;
	int err;

	if (!PyArg_ParseTuple(args, "O&:stop_thread", conv_thread_id, &id))
		return NULL;
	pthread_mutex_lock(&threads_lock);
	for (pt = &threads; (t = *pt); pt = &t->next) {
		if ((uint64_t)t->th != id)
			continue;
		/* A thread cannot wait for itself to end. */
		if (pthread_equal(t->th, pthread_self()))
			t = NULL;
		else
			*pt = t->next;
		break;
	}
	pthread_mutex_unlock(&threads_lock);
	if (!t)
		return PyLong_FromLong(ACL_ERROR_INVALID_PARAM);
	Py_BEGIN_ALLOW_THREADS
	err = pthread_join(t->th, NULL);
	Py_END_ALLOW_THREADS
	PyMem_RawFree(t);
	return PyLong_FromLong(err ? ACL_ERROR_FAILURE : ACL_SUCCESS);
}

PyMethodDef aclpy_util_methods[] = {
	{ "bytes_to_ptr", py_bytes_to_ptr, METH_VARARGS,
	  "ptr = bytes_to_ptr(data): address of the object's buffer" },
	{ "ptr_to_bytes", py_ptr_to_bytes, METH_VARARGS,
	  "data = ptr_to_bytes(ptr, size): a copy of size bytes at ptr" },
	{ "numpy_to_ptr", py_numpy_to_ptr, METH_VARARGS,
	  "ptr = numpy_to_ptr(array): address of the array's data" },
	{ "numpy_contiguous_to_ptr", py_numpy_contiguous_to_ptr, METH_VARARGS,
	  "ptr, array_out = numpy_contiguous_to_ptr(array): a row-contiguous "
	  "array (array itself if it is one) and its data's address" },
	{ "ptr_to_numpy", py_ptr_to_numpy, METH_VARARGS,
	  "array = ptr_to_numpy(ptr, shape, npy_type): a numpy view of the "
	  "memory at ptr (no copy); npy_type is numpy's type number "
	  "(0 bool ... 11 float32, 12 float64, 23 float16)" },
	{ "start_thread", py_start_thread, METH_VARARGS,
	  "thread_id, ret = start_thread(func, args): func(args) on a new "
	  "thread; thread_id is what subscribe_report takes" },
	{ "stop_thread", py_stop_thread, METH_VARARGS,
	  "ret = stop_thread(thread_id): wait for the thread to end" },
	{ NULL, NULL, 0, NULL },
};
