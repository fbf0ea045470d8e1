/* SPDX-License-Identifier: MIT */
/*
 * Cast between half, float and int32_t, count form.  The round mode picks
 * among the two representable neighbours of a value that does not fit
 * exactly: CAST_RINT to nearest, ties to even; CAST_FLOOR down; CAST_CEIL
 * up; CAST_TRUNC toward zero; CAST_ROUND to nearest, ties away from zero;
 * CAST_ODD the one whose last bit is odd (floating results only); CAST_NONE
 * is CAST_RINT.  To floating point, a value beyond the largest finite one
 * rounds as IEEE 754 says (to infinity unless the mode points back); to
 * int32_t, out-of-range values saturate and NaN gives 0.  Any other pair
 * of types fails to compile, naming Cast.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_CAST_H
#define ACLMEM_ASCENDC_KERNEL_CAST_H

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernel_tensor.h"

namespace AscendC {
namespace aclmem {

/* Neighbouring halves, by bits: up toward +inf, down toward -inf. */
inline uint16_t HalfUp(uint16_t h)
{
	if (h == 0x8000)
		return 0x0001;
	return (h & 0x8000) ? h - 1 : h + 1;
}

inline uint16_t HalfDown(uint16_t h)
{
	return HalfUp(h ^ 0x8000) ^ 0x8000;
}

/* Choose between neighbours lo < v < hi (odd: lo's last bit is odd). */
inline bool PickHi(double v, double lo, double hi, bool lo_even, RoundMode m)
{
	double dl = v - lo, dh = hi - v;

	switch (m) {
	case RoundMode::CAST_FLOOR:
		return false;
	case RoundMode::CAST_CEIL:
		return true;
	case RoundMode::CAST_TRUNC:
		return v < 0;
	case RoundMode::CAST_ROUND:
		return dh < dl || (dh == dl && v > 0);
	case RoundMode::CAST_ODD:
		return lo_even;
	default:
		return dh < dl || (dh == dl && !lo_even);
	}
}

inline half ToHalf(double v, RoundMode m)
{
	uint16_t h, lo, hi;
	float f;

	if (std::isnan(v))
		return half(std::numeric_limits<float>::quiet_NaN());
	/* Nearest first (float holds every half, and rounds no further). */
	h = half::FromFloat((float)v);
	if (std::isinf(v) && std::isinf(half::ToFloat(h)))
		return half::FromBits(h);
	f = half::ToFloat(h);
	if ((double)f == v)
		return half::FromBits(h);
	/* Beyond the largest finite half: IEEE 754's overflow. */
	if (std::fabs(v) > 65504.0) {
		bool up = v > 0, inf;

		switch (m) {
		case RoundMode::CAST_FLOOR:
			inf = !up;
			break;
		case RoundMode::CAST_CEIL:
			inf = up;
			break;
		case RoundMode::CAST_TRUNC:
		case RoundMode::CAST_ODD:
			inf = false;
			break;
		default:
			return half::FromBits(h);	/* nearest, done */
		}
		return half::FromBits(up ? (inf ? 0x7C00 : 0x7BFF) :
					   (inf ? 0xFC00 : 0xFBFF));
	}
	if (f < v) {
		lo = h;
		hi = HalfUp(h);
	} else {
		hi = h;
		lo = HalfDown(h);
	}
	return half::FromBits(PickHi(v, half::ToFloat(lo), half::ToFloat(hi),
				     !(lo & 1), m) ? hi : lo);
}

inline float ToFloat(double v, RoundMode m)
{
	float n = (float)v, lo, hi;
	uint32_t bits;

	if (std::isnan(v) || (double)n == v)
		return n;
	if (n < v) {
		lo = n;
		hi = std::nextafter(n, std::numeric_limits<float>::infinity());
	} else {
		hi = n;
		lo = std::nextafter(n, -std::numeric_limits<float>::infinity());
	}
	std::memcpy(&bits, &lo, sizeof(bits));
	return PickHi(v, lo, hi, !(bits & 1), m) ? hi : lo;
}

inline int32_t ToInt32(double v, RoundMode m)
{
	double r;

	if (std::isnan(v))
		return 0;
	switch (m) {
	case RoundMode::CAST_FLOOR:
		r = std::floor(v);
		break;
	case RoundMode::CAST_CEIL:
		r = std::ceil(v);
		break;
	case RoundMode::CAST_TRUNC:
		r = std::trunc(v);
		break;
	case RoundMode::CAST_ROUND:
		r = std::round(v);
		break;
	case RoundMode::CAST_ODD:
		Trap("Cast: CAST_ODD to an integer type");
	default:
		r = std::nearbyint(v);	/* ties to even in the default mode */
		break;
	}
	if (r >= 2147483647.0)
		return INT32_MAX;
	if (r <= -2147483648.0)
		return INT32_MIN;
	return (int32_t)r;
}

template <typename D>
inline D Convert(double v, RoundMode m)
{
	if constexpr (std::is_same_v<D, half>)
		return ToHalf(v, m);
	else if constexpr (std::is_same_v<D, float>)
		return ToFloat(v, m);
	else
		return ToInt32(v, m);
}

} /* namespace aclmem */

template <typename D, typename S>
inline void Cast(const LocalTensor<D> &dst, const LocalTensor<S> &src,
		 const RoundMode &round_mode, const uint32_t calCount)
{
	static_assert(aclmem::Numeric<D> && aclmem::Numeric<S> &&
			      !std::is_same_v<D, S>,
		      "AscendC::Cast: pair of types outside libaclmem's AscendC subset");
	dst.Check(0, calCount, "Cast");
	src.Check(0, calCount, "Cast");
	/*
	 * Through double, which holds every value of all three exactly, so
	 * that rounding happens once.  Elementwise: the tensors may overlap
	 * only if they start at the same address and have the same size.
	 */
	D *d = dst.GetPhyAddr();
	const S *s = src.GetPhyAddr();

	for (uint32_t i = 0; i < calCount; i++) {
		double v;

		if constexpr (std::is_same_v<S, half>)
			v = (double)(float)s[i];
		else
			v = (double)s[i];
		d[i] = aclmem::Convert<D>(v, round_mode);
	}
}

} /* namespace AscendC */

#endif /* ACLMEM_ASCENDC_KERNEL_CAST_H */
