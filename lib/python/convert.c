// SPDX-License-Identifier: MIT
/* Converters too large to be inline in aclpy.h. */
#include "aclpy.h"

/*
 * A sequence as the array slot->a.p of slot->a.n items made by item, or
 * without item the struct s describes.  strict takes only a list or a
 * tuple.  Never NULL for an empty list, so that the library, not a NULL
 * pointer, judges a count of 0.
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

int aclpy_conv_pids(PyObject *o, union aclpy_val *slot)
{
	return aclpy_seq(o, slot, "pids must be a list of ints", true,
			 conv_i32, NULL, sizeof(int32_t));
}

/* For an obj converter (calls.h): freed after the call. */
void *aclpy_slot_alloc(union aclpy_val *slot, size_t n, size_t size)
{
	slot->a.p = PyMem_Calloc(n, size);
	if (!slot->a.p)
		PyErr_NoMemory();
	return slot->a.p;
}

/* key (calls.h): one byte more, always terminated; CANN's keys fit 65. */
int aclpy_key_buf(union aclpy_val *slot)
{
	if (slot->a.n > 1024)
		slot->a.n = 1024;
	return aclpy_slot_alloc(slot, 1, slot->a.n + 1) != NULL;
}

/*
 * bytes (calls.h): zero-padded to size, so that a handle whose trailing
 * zero bytes were lost in transit still opens.
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
 * have.  Each format is given the struct's name or what, the key and the
 * object's type, in this order: "%.0s" skips one.  Without a missing
 * format no key is required.
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

/* Into the zeroed struct at out: an integer up to f->max, or s->sub. */
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
 * In the order they are read.  "memAttr", "location", "id" and "type" are
 * required where the dialect requires keys; the others default to 0, the
 * only values CANN takes.
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
