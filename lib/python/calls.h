/* SPDX-License-Identifier: MIT */
/*
 * Most of the module's functions parse a few ints, release the GIL around
 * one library call and return the call's outputs followed by ret.  Each
 * file lists those calls once, as an X-macro of entries
 *
 *   CALL(pyname, c_function, (kind, ...), (option, ...), doc)
 *   HAND(pyname, METH_..., doc)          a hand-written py_pyname
 *
 * ACLPY_DEFINE(list) makes each CALL entry a function py_c_function that
 * calls c_function directly, so that the compiler checks every argument
 * against the C prototype, and ACLPY_METHODS(list) gives the PyMethodDef
 * entries in the list's order.  The parse format ("O&O&:pyname") and the
 * result format ("(Ki)") are put together at compile time from the kinds,
 * one per C parameter in order:
 *
 *   p z i32 u32 u64 i64   an int through conv_ptr, conv_size, conv_i32,
 *                         conv_u32, conv_u64, conv_i64 (aclpy.h)
 *   s sn ui               PyArg_ParseTuple's "s", "z" and "I"
 *   opt                   no C parameter: the Python arguments after it
 *                         are optional ("|"), 0 when not given
 *   nul                   NULL for a reserved C parameter
 *   out_p out_i32 out_u32 out_z out_n out_u64 out_i64 out_f
 *                         an output: void *, int32_t or an enum, uint32_t,
 *                         size_t, size_t given as Py_ssize_t, uint64_t,
 *                         int64_t, float; 0 where the call failed
 *   out_init              an int output that starts at .init
 *   key                   an int len, and for the C call a buffer of len
 *                         bytes (at most 1024) and len: the key, a str
 *                         output ("" where the call failed)
 *   obj(conv) objn(conv)  a Python object that conv(o, slot) turns, once
 *                         PyArg_ParseTuple has parsed every argument, into
 *                         slot->a.p (PyMem, freed after the call), and for
 *                         objn also slot->a.n, the C parameter after it
 *
 * A call without Python arguments is METH_NOARGS; one without outputs
 * returns ret alone.  The options (designated initializers of struct
 * aclpy_opts) keep what the calls did before this table: .hold_gil for
 * quick calls made with the GIL held, .raw for outputs given as the
 * library left them when the call failed, .after for what runs after a
 * successful call.
 */
#ifndef ACLPY_CALLS_H
#define ACLPY_CALLS_H

#include <stdbool.h>
#include <string.h>

#include "acl/acl.h"

#define ACLPY_ARGS_MAX	8

/* One C argument or output of a call, by its kind. */
union aclpy_val {
	void *p;
	const char *s;
	size_t z;
	int32_t i32;
	uint32_t u32;
	unsigned int ui;
	uint64_t u64;
	int64_t i64;
	float f;
	struct {
		void *p;
		size_t n;
		PyObject *o;
	} a;
};

struct aclpy_opts {
	bool hold_gil;
	bool raw;
	int32_t init;
	/* With the GIL held, given the call's arguments. */
	void (*after)(const union aclpy_val *args);
};

/* kind: (class, parse format, result format, converter, member, cast) */
#define ACLPY_K_	(opt, "", "", , , )
#define ACLPY_K_p	(conv, "O&", "", conv_ptr, p, )
#define ACLPY_K_z	(conv, "O&", "", conv_size, z, )
#define ACLPY_K_i32	(conv, "O&", "", conv_i32, i32, )
#define ACLPY_K_u32	(conv, "O&", "", conv_u32, u32, )
#define ACLPY_K_u64	(conv, "O&", "", conv_u64, u64, )
#define ACLPY_K_i64	(conv, "O&", "", conv_i64, i64, )
#define ACLPY_K_s	(fmt, "s", "", , s, )
#define ACLPY_K_sn	(fmt, "z", "", , s, )
#define ACLPY_K_ui	(fmt, "I", "", , ui, )
#define ACLPY_K_opt	(opt, "|", "", , , )
#define ACLPY_K_nul	(nul, "", "", , , )
#define ACLPY_K_out_p	(out, "", "K", , p, (unsigned long long)(uintptr_t))
#define ACLPY_K_out_i32	(out, "", "i", , i32, (int))
#define ACLPY_K_out_init (init, "", "i", , i32, (int))
#define ACLPY_K_out_u32	(out, "", "I", , u32, (unsigned int))
#define ACLPY_K_out_z	(out, "", "K", , z, (unsigned long long))
#define ACLPY_K_out_n	(out, "", "n", , z, (Py_ssize_t))
#define ACLPY_K_out_u64	(out, "", "K", , u64, (unsigned long long))
#define ACLPY_K_out_i64	(out, "", "L", , i64, (long long))
#define ACLPY_K_out_f	(out, "", "d", , f, (double))
#define ACLPY_K_key	(key, "O&", "s", conv_size, a, )
#define ACLPY_K_obj(c)	(post, "O", "", c, a, )
#define ACLPY_K_objn(c)	(postn, "O", "", c, a, )

/* What each role makes of argument v[i], by its kind's class. */
#define ACLPY_R_FMT(k, i, f, b, c, m, x)	f
#define ACLPY_R_BUILD(k, i, f, b, c, m, x)	b
#define ACLPY_R_PARSE(k, i, f, b, c, m, x)	ACLPY_PARSE_##k(i, c, m)
#define ACLPY_R_INIT(k, i, f, b, c, m, x)	ACLPY_INIT_##k(i, m)
#define ACLPY_R_CALL(k, i, f, b, c, m, x)	ACLPY_CALL_##k(i, m)
#define ACLPY_R_VAL(k, i, f, b, c, m, x)	ACLPY_VAL_##k(i, m, x)
#define ACLPY_R_POST(k, i, f, b, c, m, x)	ACLPY_POST_##k(i, c)
#define ACLPY_R_FREE(k, i, f, b, c, m, x)	ACLPY_FREE_##k(i)

#define ACLPY_PARSE_conv(i, c, m)	, c, &v[i].m
#define ACLPY_PARSE_fmt(i, c, m)	, &v[i].m
#define ACLPY_PARSE_opt(i, c, m)
#define ACLPY_PARSE_nul(i, c, m)
#define ACLPY_PARSE_out(i, c, m)
#define ACLPY_PARSE_init(i, c, m)
#define ACLPY_PARSE_key(i, c, m)	, c, &v[i].a.n
#define ACLPY_PARSE_post(i, c, m)	, &v[i].a.o
#define ACLPY_PARSE_postn(i, c, m)	, &v[i].a.o
#define ACLPY_INIT_conv(i, m)
#define ACLPY_INIT_fmt(i, m)
#define ACLPY_INIT_opt(i, m)
#define ACLPY_INIT_nul(i, m)
#define ACLPY_INIT_out(i, m)
#define ACLPY_INIT_init(i, m)		v[i].m = o.init;
#define ACLPY_INIT_key(i, m)
#define ACLPY_INIT_post(i, m)
#define ACLPY_INIT_postn(i, m)
#define ACLPY_CALL_conv(i, m)		, v[i].m
#define ACLPY_CALL_fmt(i, m)		, v[i].m
#define ACLPY_CALL_opt(i, m)
#define ACLPY_CALL_nul(i, m)		, NULL
#define ACLPY_CALL_out(i, m)		, (void *)&v[i]
#define ACLPY_CALL_init(i, m)		, (void *)&v[i]
#define ACLPY_CALL_key(i, m)		, v[i].a.p, v[i].a.n
#define ACLPY_CALL_post(i, m)		, v[i].a.p
#define ACLPY_CALL_postn(i, m)		, v[i].a.p, v[i].a.n
#define ACLPY_VAL_conv(i, m, x)
#define ACLPY_VAL_fmt(i, m, x)
#define ACLPY_VAL_opt(i, m, x)
#define ACLPY_VAL_nul(i, m, x)
#define ACLPY_VAL_out(i, m, x)		, x(ret && !o.raw ? 0 : v[i].m)
#define ACLPY_VAL_init(i, m, x)		, x(ret && !o.raw ? 0 : v[i].m)
#define ACLPY_VAL_key(i, m, x)		, ret ? "" : (const char *)v[i].a.p
#define ACLPY_VAL_post(i, m, x)
#define ACLPY_VAL_postn(i, m, x)
#define ACLPY_POST_conv(i, c)
#define ACLPY_FREE_conv(i)
#define ACLPY_POST_fmt(i, c)
#define ACLPY_FREE_fmt(i)
#define ACLPY_POST_opt(i, c)
#define ACLPY_FREE_opt(i)
#define ACLPY_POST_nul(i, c)
#define ACLPY_FREE_nul(i)
#define ACLPY_POST_out(i, c)
#define ACLPY_FREE_out(i)
#define ACLPY_POST_init(i, c)
#define ACLPY_FREE_init(i)
#define ACLPY_POST_key(i, c)		&& aclpy_key_buf(&v[i])
#define ACLPY_FREE_key(i)		PyMem_Free(v[i].a.p);
#define ACLPY_POST_post(i, c)		&& c(v[i].a.o, &v[i])
#define ACLPY_POST_postn(i, c)		&& c(v[i].a.o, &v[i])
#define ACLPY_FREE_post(i)		PyMem_Free(v[i].a.p);
#define ACLPY_FREE_postn(i)		PyMem_Free(v[i].a.p);

/* r applied to each kind of args, (k1, k2, ...), with its index. */
#define ACLPY_EACH(r, args)		ACLPY_EACH_(r, ACLPY_UNPAREN args)
#define ACLPY_EACH_(r, ...)						\
	ACLPY_CAT(ACLPY_EACH, ACLPY_NARGS(__VA_ARGS__))(r, __VA_ARGS__)
#define ACLPY_NARGS(...)						\
	ACLPY_NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1)
#define ACLPY_NARGS_(a, b, c, d, e, f, g, h, n, ...)	n
#define ACLPY_EACH1(r, a)	ACLPY_ROLE(r, 0, a)
#define ACLPY_EACH2(r, a, b)	ACLPY_EACH1(r, a) ACLPY_ROLE(r, 1, b)
#define ACLPY_EACH3(r, a, b, c)	ACLPY_EACH2(r, a, b) ACLPY_ROLE(r, 2, c)
#define ACLPY_EACH4(r, a, b, c, d)					\
	ACLPY_EACH3(r, a, b, c) ACLPY_ROLE(r, 3, d)
#define ACLPY_EACH5(r, a, b, c, d, e)					\
	ACLPY_EACH4(r, a, b, c, d) ACLPY_ROLE(r, 4, e)
#define ACLPY_EACH6(r, a, b, c, d, e, f)				\
	ACLPY_EACH5(r, a, b, c, d, e) ACLPY_ROLE(r, 5, f)
#define ACLPY_EACH7(r, a, b, c, d, e, f, g)				\
	ACLPY_EACH6(r, a, b, c, d, e, f) ACLPY_ROLE(r, 6, g)
#define ACLPY_EACH8(r, a, b, c, d, e, f, g, h)				\
	ACLPY_EACH7(r, a, b, c, d, e, f, g) ACLPY_ROLE(r, 7, h)
#define ACLPY_ROLE(r, i, k)		ACLPY_ROLE1(r, i, ACLPY_K_##k)
#define ACLPY_ROLE1(r, i, tuple)	ACLPY_ROLE2(r, i, ACLPY_UNPAREN tuple)
#define ACLPY_ROLE2(r, i, ...)		ACLPY_ROLE3(r, i, __VA_ARGS__)
#define ACLPY_ROLE3(r, i, k, ...)	r(k, i, __VA_ARGS__)
#define ACLPY_UNPAREN(...)		__VA_ARGS__
#define ACLPY_CAT(a, b)			ACLPY_CAT_(a, b)
#define ACLPY_CAT_(a, b)		a##b
#define ACLPY_TAIL(...)			ACLPY_TAIL_(__VA_ARGS__)
#define ACLPY_TAIL_(first, ...)		__VA_ARGS__

#define ACLPY_FMT(args)		ACLPY_EACH(ACLPY_R_FMT, args)
#define ACLPY_CALL_ARGS(args)	ACLPY_TAIL(0 ACLPY_EACH(ACLPY_R_CALL, args))
#define ACLPY_BUILD(args)	ACLPY_EACH(ACLPY_R_BUILD, args)
#define ACLPY_METH(args)						\
	(sizeof(ACLPY_FMT(args)) > 1 ? METH_VARARGS : METH_NOARGS)
/* The function's name in argument errors; memory_more.c's calls have none. */
#ifndef ACLPY_FNAME
#define ACLPY_FNAME(pyname)	":" #pyname
#endif

/* The parse, call and result of one CALL entry, as py_c_function. */
#define ACLPY_STUB(pyname, cfn, args, opts, doc)			\
static PyObject *py_##cfn(PyObject *self, PyObject *pyargs)		\
{									\
	static const struct aclpy_opts o = { ACLPY_UNPAREN opts };	\
	union aclpy_val v[ACLPY_ARGS_MAX];				\
	PyObject *res;							\
	aclError ret;							\
									\
	(void)self;							\
	memset(v, 0, sizeof(v));					\
	ACLPY_EACH(ACLPY_R_INIT, args)					\
	if (ACLPY_METH(args) == METH_VARARGS &&				\
	    !PyArg_ParseTuple(pyargs,					\
			      ACLPY_FMT(args) ACLPY_FNAME(pyname)	\
			      ACLPY_EACH(ACLPY_R_PARSE, args)))		\
		return NULL;						\
	if (!(1 ACLPY_EACH(ACLPY_R_POST, args))) {			\
		ACLPY_EACH(ACLPY_R_FREE, args)				\
		return NULL;						\
	}								\
	if (o.hold_gil) {						\
		ret = cfn(ACLPY_CALL_ARGS(args));			\
	} else {							\
		Py_BEGIN_ALLOW_THREADS					\
		ret = cfn(ACLPY_CALL_ARGS(args));			\
		Py_END_ALLOW_THREADS					\
	}								\
	if (ret == ACL_SUCCESS && o.after)				\
		o.after(v);						\
	if (sizeof(ACLPY_BUILD(args)) == 1)				\
		res = PyLong_FromLong(ret);				\
	else								\
		res = Py_BuildValue("(" ACLPY_BUILD(args) "i)"		\
				    ACLPY_EACH(ACLPY_R_VAL, args), (int)ret); \
	ACLPY_EACH(ACLPY_R_FREE, args)					\
	return res;							\
}

#define ACLPY_NO_HAND(pyname, flags, doc)
#define ACLPY_CALL_DEF(pyname, cfn, args, opts, doc)			\
	{ #pyname, py_##cfn, ACLPY_METH(args), doc },
#define ACLPY_HAND_DEF(pyname, flags, doc)				\
	{ #pyname, py_##pyname, flags, doc },

/* The functions of a list's CALL entries, and its PyMethodDef entries. */
#define ACLPY_DEFINE(list)	list(ACLPY_STUB, ACLPY_NO_HAND)
#define ACLPY_METHODS(list)						\
	list(ACLPY_CALL_DEF, ACLPY_HAND_DEF) { NULL, NULL, 0, NULL }

#endif /* ACLPY_CALLS_H */
