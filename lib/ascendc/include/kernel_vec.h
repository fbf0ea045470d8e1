/* SPDX-License-Identifier: MIT */
/*
 * The vector operations, count form (calCount elements from offset 0 of
 * each tensor): elementwise, so a destination may be one of its sources.
 * half is computed in float and rounded to nearest even once per element;
 * int32_t wraps around on overflow, as two's complement hardware does.
 * A type outside an operation's list fails to compile, naming it.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_VEC_H
#define ACLMEM_ASCENDC_KERNEL_VEC_H

#include <cmath>
#include <cstdint>

#include "kernel_tensor.h"

namespace AscendC {
namespace aclmem {

inline void VecCount(int32_t count, const char *fn)
{
	if (count < 0)
		Trap("%s: a count of %d", fn, count);
}

/* In the type of the element's arithmetic: float for half. */
template <typename T>
using Calc = std::conditional_t<std::is_same_v<T, half>, float, T>;

template <typename T, typename F>
inline void Unary(const LocalTensor<T> &dst, const LocalTensor<T> &src,
		  int32_t count, const char *fn, F f)
{
	VecCount(count, fn);
	dst.Check(0, (uint32_t)count, fn);
	src.Check(0, (uint32_t)count, fn);
	T *d = dst.GetPhyAddr();
	const T *s = src.GetPhyAddr();

	for (int32_t i = 0; i < count; i++)
		d[i] = T(f(Calc<T>(s[i])));
}

template <typename T, typename F>
inline void Binary(const LocalTensor<T> &dst, const LocalTensor<T> &src0,
		   const LocalTensor<T> &src1, int32_t count, const char *fn, F f)
{
	VecCount(count, fn);
	dst.Check(0, (uint32_t)count, fn);
	src0.Check(0, (uint32_t)count, fn);
	src1.Check(0, (uint32_t)count, fn);
	T *d = dst.GetPhyAddr();
	const T *a = src0.GetPhyAddr(), *b = src1.GetPhyAddr();

	for (int32_t i = 0; i < count; i++)
		d[i] = T(f(Calc<T>(a[i]), Calc<T>(b[i])));
}

/* Wrapping int32 arithmetic, without the undefined behaviour. */
inline int32_t Wrap(uint32_t v) { return (int32_t)v; }

} /* namespace aclmem */

#define ACLMEM_ASCENDC_BINARY(name, types, expr)                                 \
	template <typename T>                                                  \
	inline void name(const LocalTensor<T> &dst, const LocalTensor<T> &src0, \
			 const LocalTensor<T> &src1, const int32_t &calCount)  \
	{                                                                      \
		static_assert(types, "AscendC::" #name ": type outside "      \
				     "libaclmem's AscendC subset");           \
		aclmem::Binary(dst, src0, src1, calCount, #name,               \
			       [](aclmem::Calc<T> a, aclmem::Calc<T> b) { return expr; }); \
	}

ACLMEM_ASCENDC_BINARY(Add, aclmem::Numeric<T>,
	(std::is_same_v<T, int32_t> ? aclmem::Calc<T>(aclmem::Wrap((uint32_t)a + (uint32_t)b)) : a + b))
ACLMEM_ASCENDC_BINARY(Sub, aclmem::Numeric<T>,
	(std::is_same_v<T, int32_t> ? aclmem::Calc<T>(aclmem::Wrap((uint32_t)a - (uint32_t)b)) : a - b))
ACLMEM_ASCENDC_BINARY(Mul, aclmem::Numeric<T>,
	(std::is_same_v<T, int32_t> ? aclmem::Calc<T>(aclmem::Wrap((uint32_t)a * (uint32_t)b)) : a * b))
ACLMEM_ASCENDC_BINARY(Div, aclmem::Floating<T>, a / b)
ACLMEM_ASCENDC_BINARY(Max, aclmem::Numeric<T>, (a > b || a != a) ? a : b)
ACLMEM_ASCENDC_BINARY(Min, aclmem::Numeric<T>, (a < b || a != a) ? a : b)

#undef ACLMEM_ASCENDC_BINARY

template <typename T>
inline void Abs(const LocalTensor<T> &dst, const LocalTensor<T> &src,
		const int32_t &calCount)
{
	static_assert(aclmem::Floating<T>,
		      "AscendC::Abs: type outside libaclmem's AscendC subset");
	aclmem::Unary(dst, src, calCount, "Abs", [](float a) { return std::fabs(a); });
}

template <typename T>
inline void Exp(const LocalTensor<T> &dst, const LocalTensor<T> &src,
		const int32_t &calCount)
{
	static_assert(aclmem::Floating<T>,
		      "AscendC::Exp: type outside libaclmem's AscendC subset");
	aclmem::Unary(dst, src, calCount, "Exp", [](float a) { return std::exp(a); });
}

/* Adds and Muls: the tensor and a scalar, elementwise. */
#define ACLMEM_ASCENDC_SCALAR(name, op)                                           \
	template <typename T>                                                   \
	inline void name(const LocalTensor<T> &dst, const LocalTensor<T> &src,  \
			 const typename aclmem::Same<T>::type &scalarValue,     \
			 const int32_t &calCount)                               \
	{                                                                       \
		static_assert(aclmem::Numeric<T>, "AscendC::" #name ": type "  \
				  "outside libaclmem's AscendC subset");       \
		aclmem::Calc<T> s = scalarValue;                                \
		aclmem::Unary(dst, src, calCount, #name, [s](aclmem::Calc<T> a) { \
			if constexpr (std::is_same_v<T, int32_t>)               \
				return aclmem::Wrap((uint32_t)a op (uint32_t)s); \
			else                                                    \
				return a op s;                                  \
		});                                                             \
	}

ACLMEM_ASCENDC_SCALAR(Adds, +)
ACLMEM_ASCENDC_SCALAR(Muls, *)

#undef ACLMEM_ASCENDC_SCALAR

template <typename T>
inline void Duplicate(const LocalTensor<T> &dst,
		      const typename aclmem::Same<T>::type &scalarValue,
		      const int32_t &calCount)
{
	static_assert(aclmem::Numeric<T>,
		      "AscendC::Duplicate: type outside libaclmem's AscendC subset");
	aclmem::VecCount(calCount, "Duplicate");
	dst.Check(0, (uint32_t)calCount, "Duplicate");
	T *d = dst.GetPhyAddr();

	for (int32_t i = 0; i < calCount; i++)
		d[i] = scalarValue;
}

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_VEC_H */
