// SPDX-License-Identifier: MIT
/*
 * Converters too large to be inline in aclpy.h, shared by the binding
 * files.
 */
#include "aclpy.h"

/*
 * A Python sequence as a new array in slot->a.p of its slot->a.n items,
 * each size bytes made by item(o, &a[i]): the lists of ints and of
 * structs, freed after the call.  strict takes only a list or a tuple
 * (what is then the TypeError's message, "..., not <type>"), otherwise
 * any sequence (what is PySequence_Fast's message).  Never NULL for an
 * empty list, so that the library, not a NULL pointer, judges a count of
 * 0.  0 with an exception set on error.
 */
int aclpy_seq(PyObject *list, union aclpy_val *slot, const char *what,
	      bool strict, int (*item)(PyObject *, void *), size_t size)
{
	Py_ssize_t i, len;
	PyObject *seq;
	char *a;

	if (strict && !PyList_Check(list) && !PyTuple_Check(list)) {
		PyErr_Format(PyExc_TypeError, "%s, not %.200s", what,
			     Py_TYPE(list)->tp_name);
		return 0;
	}
	seq = PySequence_Fast(list, what);
	if (!seq)
		return 0;
	len = PySequence_Fast_GET_SIZE(seq);
	a = aclpy_slot_alloc(slot, (size_t)len + 1, size);
	for (i = 0; a && i < len; i++)
		if (!item(PySequence_Fast_GET_ITEM(seq, i), a + i * size))
			break;
	Py_DECREF(seq);
	slot->a.n = (size_t)len;
	return a && i == len;
}

/* objn (calls.h): a list of pids as the array and count the C call takes. */
int aclpy_conv_pids(PyObject *o, union aclpy_val *slot)
{
	return aclpy_seq(o, slot, "pids must be a list of ints", true,
			 conv_i32, sizeof(int32_t));
}

/*
 * For an obj converter (calls.h): n zeroed items of size bytes in
 * slot->a.p, freed after the call.  NULL with an exception set on failure.
 */
void *aclpy_slot_alloc(union aclpy_val *slot, size_t n, size_t size)
{
	slot->a.p = PyMem_Calloc(n, size);
	if (!slot->a.p)
		PyErr_NoMemory();
	return slot->a.p;
}

/*
 * key (calls.h): the buffer for a key of slot->a.n bytes, one more so that
 * it is always terminated.  CANN's keys fit 65 bytes; a larger len asks for
 * 1024 at most.
 */
int aclpy_key_buf(union aclpy_val *slot)
{
	if (slot->a.n > 1024)
		slot->a.n = 1024;
	return aclpy_slot_alloc(slot, 1, slot->a.n + 1) != NULL;
}

/* (ptr, ret) of a call that makes a pointer or handle: ptr 0 on failure. */
PyObject *aclpy_ptr_ret(const void *p, aclError ret)
{
	return Py_BuildValue("(Ki)",
			     ret ? 0ULL : (unsigned long long)(uintptr_t)p,
			     (int)ret);
}

/*
 * d[key] as an unsigned integer no larger than max, into *out (0 when the
 * key is missing and not required: a KeyError when it is).  Messages name
 * what["key"], or the key alone where what is NULL.  Returns 0 with an
 * exception set on failure.
 */
int aclpy_dict_uint(PyObject *d, const char *what, const char *key,
		    unsigned long long max, bool required,
		    unsigned long long *out)
{
	PyObject *v = PyDict_GetItemString(d, key);	/* borrowed */

	*out = 0;
	if (!v) {
		if (!required)
			return 1;
		PyErr_Format(PyExc_KeyError, "%s needs \"%s\"", what, key);
		return 0;
	}
	if (!what && !need_int(v, key))
		return 0;
	if (!PyLong_Check(v)) {
		PyErr_Format(PyExc_TypeError,
			     "%s[\"%s\"] must be int, not %.200s", what, key,
			     Py_TYPE(v)->tp_name);
		return 0;
	}
	*out = PyLong_AsUnsignedLongLong(v);
	if (*out == (unsigned long long)-1 && PyErr_Occurred())
		return 0;
	if (*out <= max)
		return 1;
	if (what)
		PyErr_Format(PyExc_OverflowError, "%s[\"%s\"] out of range",
			     what, key);
	else
		PyErr_Format(PyExc_OverflowError, "%s out of range", key);
	return 0;
}

/*
 * The n members f describes of the struct at out, from the dict d in the
 * order given, by aclpy_dict_uint: with what NULL, every key is optional.
 */
int aclpy_dict_struct(PyObject *d, const char *what,
		      const struct aclpy_field *f, size_t n, void *out)
{
	unsigned long long x;
	char *m;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!aclpy_dict_uint(d, what, f[i].key, f[i].max,
				     what && f[i].required, &x))
			return 0;
		m = (char *)out + f[i].off;
		/* An enum is an int here, as the library's headers assume. */
		if (f[i].size == sizeof(uint16_t))
			*(uint16_t *)m = (uint16_t)x;
		else if (f[i].size == sizeof(uint32_t))
			*(uint32_t *)m = (uint32_t)x;
		else
			*(uint64_t *)m = (uint64_t)x;
	}
	return 1;
}

/*
 * aclrtPhysicalMemProp and its aclrtMemLocation, the members in the order
 * they are read.  "memAttr", "id" and "type" decide the answer and are
 * required where a what names the struct; "handleType",
 * "allocationType" and "reserve" default to 0, the only values CANN takes.
 */
const struct aclpy_field aclpy_prop_fields[4] = {
	ACLPY_FIELD(aclrtPhysicalMemProp, handleType, INT32_MAX, false),
	ACLPY_FIELD(aclrtPhysicalMemProp, allocationType, INT32_MAX, false),
	ACLPY_FIELD(aclrtPhysicalMemProp, memAttr, INT32_MAX, true),
	ACLPY_FIELD(aclrtPhysicalMemProp, reserve, UINT64_MAX, false),
};

const struct aclpy_field aclpy_location_fields[2] = {
	ACLPY_FIELD(aclrtMemLocation, id, UINT32_MAX, true),
	ACLPY_FIELD(aclrtMemLocation, type, INT32_MAX, true),
};
