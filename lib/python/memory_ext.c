// SPDX-License-Identifier: MIT
/*
 * acl.rt: the memory calls beyond malloc/memcpy/memset, as lib/README.md
 * documents them.  The GIL is released around every library call: the
 * DevSync frees wait for every stream, and copies and fills may be large.
 */
#include <stdbool.h>
#include <string.h>

#include "acl/acl.h"
#include "aclpy.h"

ACLPY_CONV(rsv_byte, uint8_t, "rsv byte", unsigned long long,
	   PyLong_AsUnsignedLongLong, v <= UINT8_MAX, "rsv byte out of range")

static int parse_rsv(PyObject *item, aclrtMallocAttrValue *v)
{
	Py_ssize_t i, n;

	if (!PyList_Check(item) && !PyTuple_Check(item)) {
		PyErr_SetString(PyExc_TypeError,
				"aclrtMallocAttrValue[\"rsv\"] must be a list");
		return 0;
	}
	n = PySequence_Fast_GET_SIZE(item);
	if (n > (Py_ssize_t)sizeof(v->rsv)) {
		PyErr_SetString(PyExc_ValueError,
				"aclrtMallocAttrValue[\"rsv\"] has at most 8 bytes");
		return 0;
	}
	for (i = 0; i < n; i++)
		if (!conv_rsv_byte(PySequence_Fast_GET_ITEM(item, i),
				   &v->rsv[i]))
			return 0;
	return 1;
}

static int read_value(PyObject *d, void *out);

static const struct aclpy_field value_fields[] = {
	ACLPY_FIELD(aclrtMallocAttrValue, moduleId, UINT16_MAX, true),
	ACLPY_FIELD(aclrtMallocAttrValue, deviceId, UINT32_MAX, true),
	ACLPY_FIELD(aclrtMallocAttrValue, vaFlag, UINT32_MAX, true),
};

ACLPY_STRUCT(value_desc, named, "aclrtMallocAttrValue",
	     "aclrtMallocAttrValue", value_fields, NULL, read_value);

/* A union: the dict names the one member it sets. */
static int read_value(PyObject *d, void *out)
{
	static const char *const keys[] = { "moduleId", "deviceId", "vaFlag",
					    "rsv" };
	PyObject *key, *item;
	Py_ssize_t pos = 0;
	int k, found = -1, n = (int)(sizeof(keys) / sizeof(*keys));

	while (PyDict_Next(d, &pos, &key, &item)) {
		const char *s = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) :
						       NULL;

		for (k = 0; s && k < n; k++)
			if (!strcmp(s, keys[k]))
				break;
		if (!s || k == n) {
			PyErr_Clear();
			PyErr_Format(PyExc_KeyError,
				     "aclrtMallocAttrValue has no member %R",
				     key);
			return 0;
		}
		if (found >= 0) {
			PyErr_SetString(PyExc_ValueError,
					"aclrtMallocAttrValue is a union: give one member");
			return 0;
		}
		found = k;
	}
	if (found == n - 1)
		return parse_rsv(item, out);
	if (found >= 0)
		return aclpy_read_field(d, &value_desc, &value_fields[found],
					out);
	PyErr_SetString(PyExc_KeyError,
			"aclrtMallocAttrValue needs one of \"moduleId\", \"deviceId\", \"vaFlag\", \"rsv\"");
	return 0;
}

static const struct aclpy_field attr_fields[] = {
	ACLPY_FIELD(aclrtMallocAttribute, attr, INT32_MAX, true),
	ACLPY_SUB(aclrtMallocAttribute, value, true),
};

ACLPY_STRUCT(attr_desc, named, "aclrtMallocAttribute",
	     "aclrtMallocAttribute", attr_fields, &value_desc, NULL);

/* A dict whose one int is numAttrs, read alone into an unsigned long long. */
static const struct aclpy_field num_attrs[] = {
	{ "numAttrs", 0, sizeof(unsigned long long), SIZE_MAX, true },
};
ACLPY_STRUCT(cfg_desc, named, "cfg", "aclrtMallocConfig", num_attrs, NULL,
	     NULL);

/*
 * obj converter (calls.h): aclrtMallocConfig, its attributes in the same
 * block.  None or {} is no configuration (pyACL: "pass an empty dict");
 * "numAttrs", when given, must be the length of "attrs".
 */
static int conv_malloc_cfg(PyObject *cfg, union aclpy_val *slot)
{
	aclrtMallocConfig *out;
	unsigned long long x;
	PyObject *list;
	Py_ssize_t n, i;

	if (cfg == Py_None)
		return 1;
	if (!PyDict_Check(cfg))	/* the reader's TypeError */
		return aclpy_read_struct(cfg, &cfg_desc, NULL);
	if (PyDict_Size(cfg) == 0)
		return 1;
	list = PyDict_GetItemString(cfg, "attrs");
	if (!list) {
		PyErr_SetString(PyExc_KeyError, "aclrtMallocConfig needs \"attrs\"");
		return 0;
	}
	if (!PyList_Check(list) && !PyTuple_Check(list)) {
		PyErr_Format(PyExc_TypeError,
			     "aclrtMallocConfig[\"attrs\"] must be a list, not %.200s",
			     Py_TYPE(list)->tp_name);
		return 0;
	}
	n = PySequence_Fast_GET_SIZE(list);
	if (PyDict_GetItemString(cfg, "numAttrs")) {
		if (!aclpy_read_struct(cfg, &cfg_desc, &x))
			return 0;
		if (x != (unsigned long long)n) {
			PyErr_SetString(PyExc_ValueError,
					"aclrtMallocConfig[\"numAttrs\"] is not the length of \"attrs\"");
			return 0;
		}
	}
	out = aclpy_slot_alloc(slot, 1, sizeof(*out) +
			       (size_t)n * sizeof(*out->attrs));
	if (!out)
		return 0;
	out->numAttrs = (size_t)n;
	out->attrs = n ? (aclrtMallocAttribute *)(out + 1) : NULL;
	for (i = 0; i < n; i++)
		if (!aclpy_read_struct(PySequence_Fast_GET_ITEM(list, i),
				       &attr_desc, &out->attrs[i]))
			return 0;
	return 1;
}

/*
 * A process has a handful of components; a larger input_num only asks for
 * "all of them", so the array is capped rather than allocated at any size
 * a caller names.
 */
#define MEM_USAGE_MAX	256

static PyObject *usage_dict(const aclrtMemUsageInfo *u)
{
	const size_t *r = u->reserved;

	/* size_t is an unsigned long ("k") wherever Linux runs. */
	_Static_assert(sizeof(u->reserved) == 8 * sizeof(*r), "reserved[8]");
	return Py_BuildValue("{s:s#,s:K,s:K,s:[kkkkkkkk]}", "name", u->name,
			     (Py_ssize_t)strnlen(u->name, sizeof(u->name)),
			     "curMemSize", (unsigned long long)u->curMemSize,
			     "memPeakSize", (unsigned long long)u->memPeakSize,
			     "reserved", r[0], r[1], r[2], r[3], r[4], r[5],
			     r[6], r[7]);
}

/* objn (calls.h): input_num, the room the C call is given. */
static int conv_usage(PyObject *o, union aclpy_val *slot)
{
	size_t want;

	if (!conv_size(o, &want))
		return 0;
	slot->a.n = want < MEM_USAGE_MAX ? want : MEM_USAGE_MAX;
	/* At least one entry: input_num 0 is the library's to judge. */
	return aclpy_slot_alloc(slot, slot->a.n ? slot->a.n : 1,
				sizeof(aclrtMemUsageInfo)) != NULL;
}

/* outsv (calls.h): the entries the call filled of args[1]'s, a list. */
static PyObject *usage_list(const void *out, const union aclpy_val *args,
			    aclError ret)
{
	const aclrtMemUsageInfo *info = args[1].a.p;
	size_t i, n = *(const size_t *)out;
	PyObject *list;

	if (ret || n > args[1].a.n)
		n = 0;
	list = PyList_New((Py_ssize_t)n);
	for (i = 0; list && i < n; i++) {
		PyObject *d = usage_dict(&info[i]);

		if (!d)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, d);
	}
	return list;
}

/* objn converter (calls.h): check_mem_type's list of addresses. */
static int conv_addrs(PyObject *seq, union aclpy_val *slot)
{
	if ((PyList_Check(seq) || PyTuple_Check(seq)) &&
	    (unsigned long long)PySequence_Fast_GET_SIZE(seq) > UINT32_MAX) {
		PyErr_SetString(PyExc_OverflowError, "addr_list too long");
		return 0;
	}
	return aclpy_seq(seq, slot, "addr_list must be a list of ints", true,
			 conv_ptr, NULL, sizeof(void *));
}

/* obj converter (calls.h): pyACL's prop, "location" required. */
ACLPY_STRUCT(location_desc, named, "aclrtPhysicalMemProp[\"location\"]",
	     "aclrtMemLocation", aclpy_location_fields, NULL, NULL);
ACLPY_STRUCT(prop_desc, named, "prop", "aclrtPhysicalMemProp",
	     aclpy_prop_fields, &location_desc, NULL);
ACLPY_STRUCT_CONV(phys_prop, aclrtPhysicalMemProp, prop_desc)

#define MEMORY_EXT_CALLS(CALL, HAND, AUTO, DOC, VAL)			\
	AUTO(aclrtMemcpy2d)						\
	AUTO(aclrtMemcpy2dAsync)					\
	DOC(aclrtMemsetD32,						\
	    "ret = memset_d32(dev_ptr, mem_size, value, count)")	\
	DOC(aclrtMemsetD32Async,					\
	    "ret = memset_d32_async(dev_ptr, mem_size, value, count, stream)") \
	CALL(malloc_with_cfg, aclrtMallocWithCfg,			\
	     (out_p, z, i32, obj(conv_malloc_cfg)), (),			\
	     "dev_ptr, ret = malloc_with_cfg(size, policy, cfg)")	\
	CALL(malloc_host_with_cfg, aclrtMallocHostWithCfg,		\
	     (out_p, size64, obj(conv_malloc_cfg)), (),			\
	     "host_ptr, ret = malloc_host_with_cfg(size, cfg)")		\
	AUTO(aclrtFreeWithDevSync)					\
	AUTO(aclrtFreeHostWithDevSync)					\
	DOC(aclrtMemGetAddressRange,					\
	    "base, size, ret = mem_get_address_range(ptr)")		\
	CALL(get_mem_usage_info, aclrtGetMemUsageInfo,			\
	     (i32, objn(conv_usage), outsv(size_t, usage_list)), (),	\
	     "infos, ret = get_mem_usage_info(device_id, input_num)")	\
	CALL(check_mem_type, aclrtCheckMemType,				\
	     (objn(conv_addrs), u32, out_u32, opt, u32), (),		\
	     "result, ret = check_mem_type(addr_list, mem_type[, reserve])") \
	CALL(mem_get_allocation_granularity,				\
	     aclrtMemGetAllocationGranularity,				\
	     (obj(conv_phys_prop), i32, out_z), (),			\
	     "granularity, ret = mem_get_allocation_granularity(prop, option)")

ACLPY_TABLE(aclpy_rt_memory_ext_methods, MEMORY_EXT_CALLS)
