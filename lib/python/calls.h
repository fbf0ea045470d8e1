/* SPDX-License-Identifier: MIT */
/*
 * Most of the module's functions parse a few ints, release the GIL around
 * one library call and return the call's outputs followed by ret.  Each
 * file lists those calls once, as an X-macro of entries
 *
 *   AUTO(c_function, option, ...)
 *   DOC(c_function, doc, option, ...)
 *   CALL(pyname, c_function, (kind, ...), (option, ...), doc)
 *   VAL(pyname, c_function, (kind, ...), rv, doc)
 *   HAND(pyname, METH_..., doc)          a hand-written py_pyname
 *
 * AUTO and DOC take the pyname and kinds, AUTO the doc too, that
 * python/calls.py made from the C prototype (acl_calls.h).  ACLPY_TABLE
 * makes each entry a function py_c_function that calls c_function
 * directly, so that the compiler checks every argument against the
 * prototype, and the list's PyMethodDef table.  The kinds and options
 * are in doc/contributing.md, "Python binding: adding a call".
 */
#ifndef ACLPY_CALLS_H
#define ACLPY_CALLS_H

#include <stdbool.h>
#include <string.h>

#include "acl/acl.h"
#include "acl_calls.h"

#define ACLPY_ARGS_MAX	10

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
		Py_buffer b;
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
#define ACLPY_K_size64	(conv, "O&", "", conv_size64, u64, )
#define ACLPY_K_s	(fmt, "s", "", , s, )
#define ACLPY_K_sn	(fmt, "z", "", , s, )
#define ACLPY_K_ui	(fmt, "I", "", , ui, )
#define ACLPY_K_opt	(opt, "|", "", , , )
#define ACLPY_K_sl	(sl, "s#", "", , , )
#define ACLPY_K_nul	(nul, "", "", , , )
#define ACLPY_K_out_p	(out, "", "K", , p, (unsigned long long)(uintptr_t))
#define ACLPY_K_out_i32	(out, "", "i", , i32, (int))
#define ACLPY_K_out_init (init, "", "i", , i32, (int))
#define ACLPY_K_out_u32	(out, "", "I", , u32, (unsigned int))
#define ACLPY_K_out_z	(out, "", "K", , z, (unsigned long long))
#define ACLPY_K_out_z_init (init, "", "K", , z, (unsigned long long))
#define ACLPY_K_out_n	(out, "", "n", , z, (Py_ssize_t))
#define ACLPY_K_out_u64	(out, "", "K", , u64, (unsigned long long))
#define ACLPY_K_out_i64	(out, "", "L", , i64, (long long))
#define ACLPY_K_out_f	(out, "", "d", , f, (double))
#define ACLPY_K_outs(t, b) (outs, "", "N", b, t, )
#define ACLPY_K_outsv(t, b) (outsv, "", "N", b, t, )
#define ACLPY_K_key	(key, "O&", "s", conv_size, a, )
#define ACLPY_K_obj(c)	(post, "O", "", c, a, )
#define ACLPY_K_objn(c)	(postn, "O", "", c, a, )
#define ACLPY_K_objv(c)	(postv, "O", "", c, a, )
#define ACLPY_K_n(j)	(cnt, "", "", , j, )
#define ACLPY_K_bytes(t, name) (bytes, "y*", "", name, t, )

/*
 * What each class makes of argument v[i] in each role: parse, init
 * (before parsing), call, value (Py_BuildValue's), post (once every
 * argument is parsed: && a test) and free (after the call, or where
 * parsing failed).  A file may add kinds and classes of its own.
 */
#define ACLPY_C_conv(i, c, m, x) (, c, &v[i].m), (), (, v[i].m), (), (), ()
#define ACLPY_C_fmt(i, c, m, x)		(, &v[i].m), (), (, v[i].m), (), (), ()
#define ACLPY_C_opt(i, c, m, x)		(), (), (), (), (), ()
#define ACLPY_C_sl(i, c, m, x)						\
	(, &v[i].s, &v[i].a.n), (), (, v[i].s, v[i].a.n), (), (), ()
#define ACLPY_C_nul(i, c, m, x)		(), (), (, NULL), (), (), ()
#define ACLPY_C_out(i, c, m, x)						\
	(), (), (, (void *)&v[i]), (, x(ret && !o.raw ? 0 : v[i].m)), (), ()
#define ACLPY_C_init(i, c, m, x)					\
	(), (v[i].m = o.init;), (, (void *)&v[i]),			\
	(, x(ret && !o.raw ? 0 : v[i].m)), (), ()
#define ACLPY_C_key(i, c, m, x)						\
	(, c, &v[i].a.n), (), (, v[i].a.p, v[i].a.n),			\
	(, ret ? "" : (const char *)v[i].a.p),				\
	(&& aclpy_key_buf(&v[i])), (PyMem_Free(v[i].a.p);)
#define ACLPY_C_post(i, c, m, x)					\
	(, &v[i].a.o), (), (, v[i].a.p), (), (&& c(v[i].a.o, &v[i])),	\
	(PyMem_Free(v[i].a.p);)
#define ACLPY_C_postn(i, c, m, x)					\
	(, &v[i].a.o), (), (, v[i].a.p, v[i].a.n), (),			\
	(&& c(v[i].a.o, &v[i])), (PyMem_Free(v[i].a.p);)
#define ACLPY_C_postv(i, c, m, x)					\
	(, &v[i].a.o), (), (, v[i].a.p), (), (&& c(v[i].a.o, &v[i], v)), \
	(PyMem_Free(v[i].a.p);)
#define ACLPY_C_outs(i, c, m, x)					\
	(), (), (, v[i].a.p), (, c(v[i].a.p)),				\
	(&& aclpy_slot_alloc(&v[i], 1, sizeof(m))), (PyMem_Free(v[i].a.p);)
#define ACLPY_C_outsv(i, c, m, x)					\
	(), (), (, v[i].a.p), (, c(v[i].a.p, v, ret)),			\
	(&& aclpy_slot_alloc(&v[i], 1, sizeof(m))), (PyMem_Free(v[i].a.p);)
#define ACLPY_C_cnt(i, c, m, x)		(), (), (, v[m].a.n), (), (), ()
#define ACLPY_C_bytes(i, c, m, x)					\
	(, &v[i].a.b), (), (, *(m *)v[i].a.p), (),			\
	(&& aclpy_bytes(&v[i], sizeof(m), c)),				\
	(PyBuffer_Release(&v[i].a.b); PyMem_Free(v[i].a.p);)

#define ACLPY_R_FMT(k, i, f, b, c, m, x)	f
#define ACLPY_R_BUILD(k, i, f, b, c, m, x)	b
#define ACLPY_R_PARSE(k, i, f, b, c, m, x)	ACLPY_PICK(1, k, i, c, m, x)
#define ACLPY_R_INIT(k, i, f, b, c, m, x)	ACLPY_PICK(2, k, i, c, m, x)
#define ACLPY_R_CALL(k, i, f, b, c, m, x)	ACLPY_PICK(3, k, i, c, m, x)
#define ACLPY_R_VAL(k, i, f, b, c, m, x)	ACLPY_PICK(4, k, i, c, m, x)
#define ACLPY_R_POST(k, i, f, b, c, m, x)	ACLPY_PICK(5, k, i, c, m, x)
#define ACLPY_R_FREE(k, i, f, b, c, m, x)	ACLPY_PICK(6, k, i, c, m, x)
#define ACLPY_PICK(n, k, ...)	ACLPY_PICK_(n, ACLPY_C_##k(__VA_ARGS__))
#define ACLPY_PICK_(n, ...)	ACLPY_UNPAREN1(ACLPY_PICK##n(__VA_ARGS__))
#define ACLPY_UNPAREN1(t)	ACLPY_UNPAREN t
#define ACLPY_PICK1(a, ...)			a
#define ACLPY_PICK2(a, b, ...)			b
#define ACLPY_PICK3(a, b, c, ...)		c
#define ACLPY_PICK4(a, b, c, d, ...)		d
#define ACLPY_PICK5(a, b, c, d, e, ...)		e
#define ACLPY_PICK6(a, b, c, d, e, f)		f

/*
 * r applied to each kind of args, (k1, k2, ...), with its index: padded
 * to ACLPY_ARGS_MAX kinds with the empty kind, which makes nothing.
 */
#define ACLPY_EACH(r, args)		ACLPY_EACH_(r, ACLPY_UNPAREN args)
#define ACLPY_EACH_(r, ...)						\
	ACLPY_EACH10(r, __VA_ARGS__, , , , , , , , , , )
#define ACLPY_EACH10(r, a, b, c, d, e, f, g, h, i, j, ...)		\
	ACLPY_ROLE(r, 0, a) ACLPY_ROLE(r, 1, b) ACLPY_ROLE(r, 2, c)	\
	ACLPY_ROLE(r, 3, d) ACLPY_ROLE(r, 4, e) ACLPY_ROLE(r, 5, f)	\
	ACLPY_ROLE(r, 6, g) ACLPY_ROLE(r, 7, h) ACLPY_ROLE(r, 8, i)	\
	ACLPY_ROLE(r, 9, j)
#define ACLPY_ROLE(r, i, k)		ACLPY_ROLE1(r, i, ACLPY_K_##k)
#define ACLPY_ROLE1(r, i, tuple)	ACLPY_ROLE2(r, i, ACLPY_UNPAREN tuple)
#define ACLPY_ROLE2(r, i, ...)		ACLPY_ROLE3(r, i, __VA_ARGS__)
#define ACLPY_ROLE3(r, i, k, ...)	r(k, i, __VA_ARGS__)
#define ACLPY_UNPAREN(...)		__VA_ARGS__
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

#define ACLPY_PARSE(pyname, args)					\
	union aclpy_val v[ACLPY_ARGS_MAX];				\
	PyObject *res;							\
	aclError ret = ACL_ERROR_FAILURE;				\
									\
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
	}

#define ACLPY_STUB(pyname, cfn, args, opts, doc)			\
static PyObject *py_##cfn(PyObject *Py_UNUSED(self), PyObject *pyargs) \
{									\
	static const struct aclpy_opts o = { ACLPY_UNPAREN opts };	\
	ACLPY_PARSE(pyname, args)					\
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

/* VAL: a C call returning a value, not an aclError, with the GIL held. */
#define ACLPY_RV_ptr(x)		PyLong_FromUnsignedLongLong((uintptr_t)(x))
#define ACLPY_RV_size(x)	PyLong_FromSize_t(x)
#define ACLPY_RV_int(x)		PyLong_FromLong(x)
#define ACLPY_RV_none(x)	((x), aclpy_str(NULL, NULL))
#define ACLPY_RV_str(x)		aclpy_str(x, NULL)
/* the last error's message, whatever bytes it holds */
#define ACLPY_RV_msg(x)		aclpy_str(x, "replace")

/* A string the library keeps, decoded with errors (NULL: strict). */
static inline PyObject *aclpy_str(const char *s, const char *errors)
{
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), errors);
}

#define ACLPY_VSTUB(pyname, cfn, args, rv, doc)				\
static PyObject *py_##cfn(PyObject *Py_UNUSED(self), PyObject *pyargs) \
{									\
	ACLPY_PARSE(pyname, args)					\
	(void)ret;							\
	res = ACLPY_RV_##rv(cfn(ACLPY_CALL_ARGS(args)));		\
	ACLPY_EACH(ACLPY_R_FREE, args)					\
	return res;							\
}

#define ACLPY_NO_HAND(pyname, flags, doc)
#define ACLPY_CALL_DEF(pyname, cfn, args, opts, doc)			\
	{ #pyname, py_##cfn, ACLPY_METH(args), doc },
#define ACLPY_HAND_DEF(pyname, flags, doc)				\
	{ #pyname, py_##pyname, flags, doc },

#define ACLPY_APPLY(r, ...)		r(__VA_ARGS__)
#define ACLPY_AUTO(r, cfn, ...)						\
	ACLPY_APPLY(r, ACLPY_SIG_##cfn, (__VA_ARGS__), ACLPY_DOC_##cfn)
#define ACLPY_DOC(r, cfn, doc, ...)					\
	ACLPY_APPLY(r, ACLPY_SIG_##cfn, (__VA_ARGS__), doc)
#define ACLPY_AUTO_STUB(...)		ACLPY_AUTO(ACLPY_STUB, __VA_ARGS__)
#define ACLPY_AUTO_DEF(...)		ACLPY_AUTO(ACLPY_CALL_DEF, __VA_ARGS__)
#define ACLPY_DOC_STUB(...)		ACLPY_DOC(ACLPY_STUB, __VA_ARGS__)
#define ACLPY_DOC_DEF(...)		ACLPY_DOC(ACLPY_CALL_DEF, __VA_ARGS__)

/* The module is one .so whose symbols are hidden: tables need no static. */
#define ACLPY_TABLE(name, list)						\
	list(ACLPY_STUB, ACLPY_NO_HAND, ACLPY_AUTO_STUB, ACLPY_DOC_STUB, \
	     ACLPY_VSTUB)						\
	PyMethodDef name[] = {						\
		list(ACLPY_CALL_DEF, ACLPY_HAND_DEF, ACLPY_AUTO_DEF,	\
		     ACLPY_DOC_DEF, ACLPY_CALL_DEF)			\
		{ NULL, NULL, 0, NULL }					\
	};

#endif /* ACLPY_CALLS_H */
