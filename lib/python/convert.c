// SPDX-License-Identifier: MIT
/*
 * Converters too large to be inline in aclpy.h, shared by the binding
 * files.
 */
#include "aclpy.h"

/*
 * A Python sequence as a new array in slot->a.p of its slot->a.n items,
 * each size bytes made by item(o, &a[i]), or without item the struct s
 * describes: the lists of ints and of structs, freed after the call.
 * strict takes only a list or a tuple (what is then the TypeError's
 * message, "..., not <type>"), otherwise any sequence (what is
 * PySequence_Fast's message).  Never NULL for an empty list, so that the
 * library, not a NULL pointer, judges a count of 0.  0 with an exception
 * set on error.
 */
int aclpy_seq(PyObject *list, union aclpy_val *slot, const char *what,
	      bool strict, int (*item)(PyObject *, void *),
	      const struct aclpy_struct *s, size_t size)
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
	for (i = 0; a && i < len; i++) {
		PyObject *o = PySequence_Fast_GET_ITEM(seq, i);

		if (item ? !item(o, a + i * size) :
			   !aclpy_read_struct(o, s, a + i * size))
			break;
	}
	Py_DECREF(seq);
	slot->a.n = (size_t)len;
	return a && i == len;
}

/* objn (calls.h): a list of pids as the array and count the C call takes. */
int aclpy_conv_pids(PyObject *o, union aclpy_val *slot)
{
	return aclpy_seq(o, slot, "pids must be a list of ints", true,
			 conv_i32, NULL, sizeof(int32_t));
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

/*
 * bytes (calls.h): the bytes parsed into slot->a.b, zero-padded to size in
 * slot->a.p, so that a handle whose trailing zero bytes were lost in
 * transit still opens.  The buffer goes at once, as the C call needs only
 * the copy.
 */
int aclpy_bytes(union aclpy_val *slot, size_t size, const char *name)
{
	Py_buffer *b = &slot->a.b;

	if ((size_t)b->len > size)
		PyErr_Format(PyExc_ValueError, "%s is %zd bytes, at most %u",
			     name, b->len, (unsigned int)size);
	else if (aclpy_slot_alloc(slot, 1, size))
		memcpy(slot->a.p, b->buf, (size_t)b->len);
	PyBuffer_Release(b);
	return slot->a.p != NULL;
}

/*
 * The three ways the module's structs word their errors, as they always
 * have.  Each format is given, in this order, the struct's name or what
 * and the key, and the offending object's type: "%.0s" skips one.
 * Without a missing format no key is required.
 */
const struct aclpy_dialect aclpy_named = {
	"%s must be dict, not %.200s", "%s needs \"%s\"",
	"%s[\"%s\"] must be int, not %.200s", "%s[\"%s\"] out of range",
};

const struct aclpy_dialect aclpy_keyed = {
	"%s", NULL, "%.0s%s must be int, not %.200s", "%.0s%s out of range",
};

const struct aclpy_dialect aclpy_plain = {
	"%s, not %.200s", "%.0s%s",
	"%.0s%.0sargument must be int, not %.200s",
	"%.0s%.0sargument out of uint32 range",
};

/*
 * d[f->key] into the member f describes of the struct at out, which the
 * caller zeroed: an unsigned integer no larger than f->max, or a struct
 * s->sub describes.  0 with an exception set on failure.
 */
int aclpy_read_field(PyObject *d, const struct aclpy_struct *s,
		     const struct aclpy_field *f, void *out)
{
	PyObject *v = PyDict_GetItemString(d, f->key);	/* borrowed */
	char *m = (char *)out + f->off;
	unsigned long long x;

	if (!v && f->required && s->dl->missing) {
		PyErr_Format(PyExc_KeyError, s->dl->missing, s->what, f->key);
		return 0;
	}
	if (!v)
		return 1;
	if (!f->size)
		return aclpy_read_struct(v, s->sub, m);
	if (!PyLong_Check(v)) {
		PyErr_Format(PyExc_TypeError, s->dl->not_int, s->what, f->key,
			     Py_TYPE(v)->tp_name);
		return 0;
	}
	x = PyLong_AsUnsignedLongLong(v);
	if (x == (unsigned long long)-1 && PyErr_Occurred())
		return 0;
	if (x > f->max) {
		PyErr_Format(PyExc_OverflowError, s->dl->range, s->what,
			     f->key);
		return 0;
	}
	/* An enum is an int here, as the library's headers assume. */
	if (f->size == sizeof(uint16_t))
		*(uint16_t *)m = (uint16_t)x;
	else if (f->size == sizeof(uint32_t))
		*(uint32_t *)m = (uint32_t)x;
	else
		*(uint64_t *)m = (uint64_t)x;
	return 1;
}

/*
 * The struct s describes at out, zeroed by the caller, from the dict d:
 * its members in the order given, or what s->read makes of d.
 */
int aclpy_read_struct(PyObject *d, const struct aclpy_struct *s, void *out)
{
	size_t i;

	if (!PyDict_Check(d)) {
		PyErr_Format(PyExc_TypeError, s->dl->not_dict, s->name,
			     Py_TYPE(d)->tp_name);
		return 0;
	}
	if (s->read)
		return s->read(d, out);
	for (i = 0; i < s->n; i++)
		if (!aclpy_read_field(d, s, &s->f[i], out))
			return 0;
	return 1;
}

/*
 * aclrtPhysicalMemProp and its aclrtMemLocation, the members in the order
 * they are read.  "memAttr", "location", "id" and "type" decide the
 * answer and are required where the dialect requires keys;
 * "handleType", "allocationType" and "reserve" default to 0, the only
 * values CANN takes.
 */
const struct aclpy_field aclpy_prop_fields[5] = {
	ACLPY_FIELD(aclrtPhysicalMemProp, handleType, INT32_MAX, false),
	ACLPY_FIELD(aclrtPhysicalMemProp, allocationType, INT32_MAX, false),
	ACLPY_FIELD(aclrtPhysicalMemProp, memAttr, INT32_MAX, true),
	ACLPY_FIELD(aclrtPhysicalMemProp, reserve, UINT64_MAX, false),
	ACLPY_SUB(aclrtPhysicalMemProp, location, true),
};

const struct aclpy_field aclpy_location_fields[2] = {
	ACLPY_FIELD(aclrtMemLocation, id, UINT32_MAX, true),
	ACLPY_FIELD(aclrtMemLocation, type, INT32_MAX, true),
};
