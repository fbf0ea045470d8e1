/* SPDX-License-Identifier: MIT */
/*
 * Shared by the files of the "acl" Python module, one file per concern as
 * in the C library; aclmodule.c builds the module from their tables.
 */
#ifndef ACLPY_H
#define ACLPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* ---- argument converters: ints only, range-checked ---- */

static inline int need_int(PyObject *o, const char *what)
{
	if (PyLong_Check(o))
		return 1;
	PyErr_Format(PyExc_TypeError, "%s must be int, not %.200s", what,
		     Py_TYPE(o)->tp_name);
	return 0;
}

/*
 * conv_name: an int read as a vtype by get (whose OverflowError stands)
 * and refused outside what ok allows, with msg.
 */
#define ACLPY_CONV(name, type, what, vtype, get, ok, msg)		\
static inline int conv_##name(PyObject *o, void *out)			\
{									\
	vtype v;							\
									\
	if (!need_int(o, what))						\
		return 0;						\
	v = get(o);							\
	if (v == (vtype)-1 && PyErr_Occurred())				\
		return 0;						\
	if (!(ok)) {							\
		PyErr_SetString(PyExc_OverflowError, msg);		\
		return 0;						\
	}								\
	*(type *)out = (type)v;						\
	return 1;							\
}

ACLPY_CONV(ptr, void *, "pointer", unsigned long long,
	   PyLong_AsUnsignedLongLong, v <= UINTPTR_MAX, "pointer out of range")
ACLPY_CONV(size, size_t, "size", size_t, PyLong_AsSize_t, 1, "")
ACLPY_CONV(i32, int32_t, "argument", long, PyLong_AsLong,
	   v >= INT32_MIN && v <= INT32_MAX, "argument out of int32 range")
ACLPY_CONV(u32, uint32_t, "argument", unsigned long long,
	   PyLong_AsUnsignedLongLong, v <= UINT32_MAX,
	   "argument out of uint32 range")
ACLPY_CONV(u64, uint64_t, "argument", unsigned long long,
	   PyLong_AsUnsignedLongLong, 1, "")
ACLPY_CONV(i64, int64_t, "argument", long long, PyLong_AsLongLong, 1, "")
/* malloc_host_with_cfg's size: uint64_t, wider than size_t on 32-bit */
ACLPY_CONV(size64, uint64_t, "size", unsigned long long,
	   PyLong_AsUnsignedLongLong, 1, "")

#include "calls.h"

/* A hand-written py_name, whose args some leave unused. */
#define ACLPY_FN(name)							\
	static PyObject *py_##name(PyObject *Py_UNUSED(self),		\
				   PyObject *args __attribute__((unused)))

/* convert.c */
struct aclpy_struct;
int aclpy_seq(PyObject *list, union aclpy_val *slot, const char *what,
	      bool strict, int (*item)(PyObject *, void *),
	      const struct aclpy_struct *s, size_t size);
int aclpy_conv_pids(PyObject *o, union aclpy_val *slot);
void *aclpy_slot_alloc(union aclpy_val *slot, size_t n, size_t size);
int aclpy_key_buf(union aclpy_val *slot);
int aclpy_bytes(union aclpy_val *slot, size_t size, const char *name);

/*
 * A member of a struct read from a dict by aclpy_read_struct: an unsigned
 * integer of size bytes, or with size 0 a struct, the struct's sub.
 */
struct aclpy_field {
	const char *key;
	size_t off;
	size_t size;
	unsigned long long max;
	bool required;
};

#define ACLPY_FIELD(type, member, max, required)			\
	{ #member, offsetof(type, member), sizeof(((type *)0)->member),	\
	  max, required }
#define ACLPY_SUB(type, member, required)				\
	{ #member, offsetof(type, member), 0, 0, required }

struct aclpy_dialect {
	const char *not_dict;
	const char *missing;
	const char *not_int;
	const char *range;
};

extern const struct aclpy_dialect aclpy_named, aclpy_keyed, aclpy_plain;

/*
 * A struct read from a dict: name words a non-dict's TypeError, what the
 * struct in the other messages; read, when given, replaces the members'.
 */
struct aclpy_struct {
	const struct aclpy_dialect *dl;
	const char *name;
	const char *what;
	const struct aclpy_field *f;
	size_t n;
	const struct aclpy_struct *sub;
	int (*read)(PyObject *d, void *out);
};

#define ACLPY_STRUCT(var, dl, name, what, f, sub, read)		\
	static const struct aclpy_struct var = {			\
		&aclpy_##dl, name, what, f, sizeof(f) / sizeof(*(f)),	\
		sub, read						\
	}

int aclpy_read_field(PyObject *d, const struct aclpy_struct *s,
		     const struct aclpy_field *f, void *out);
int aclpy_read_struct(PyObject *d, const struct aclpy_struct *s, void *out);

/* obj converters (calls.h) conv_name: a list, or the struct desc reads. */
#define ACLPY_SEQ_CONV(name, what, strict, item, desc, type)		\
static int conv_##name(PyObject *o, union aclpy_val *slot)		\
{									\
	return aclpy_seq(o, slot, what, strict, item, desc, sizeof(type)); \
}

#define ACLPY_STRUCT_CONV(name, type, desc)				\
static int conv_##name(PyObject *o, union aclpy_val *slot)		\
{									\
	type *p = aclpy_slot_alloc(slot, 1, sizeof(*p));		\
									\
	return p && aclpy_read_struct(o, &(desc), p);			\
}

extern const struct aclpy_field aclpy_prop_fields[5];
extern const struct aclpy_field aclpy_location_fields[2];

/* Each file's table, added to acl, acl.rt and acl.util by aclmodule.c. */
extern PyMethodDef aclpy_system_methods[];
extern PyMethodDef aclpy_system_rt_methods[];
extern PyMethodDef aclpy_rt_runtime_methods[];
extern PyMethodDef aclpy_rt_memory_ext_methods[];
extern PyMethodDef aclpy_rt_memory_more_methods[];
extern PyMethodDef aclpy_rt_runtime_ext_methods[];
extern PyMethodDef aclpy_rt_vmm_methods[];
extern PyMethodDef aclpy_rt_ipcmem_methods[];
extern PyMethodDef aclpy_util_methods[];
extern PyMethodDef aclpy_prof_methods[];
extern PyMethodDef aclpy_mdl_methods[];
extern PyMethodDef aclpy_rt_label_methods[];
extern PyMethodDef aclpy_tdt_methods[];

/* runtime.c: the .after of the calls that leave Python callbacks unrun. */
void aclpy_rt_stream_gone(const union aclpy_val *args);
void aclpy_rt_device_reset(const union aclpy_val *args);
void aclpy_rt_finalized(const union aclpy_val *args);

#endif /* ACLPY_H */
