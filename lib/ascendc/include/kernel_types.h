/* SPDX-License-Identifier: MIT */
/*
 * The qualifiers, types and enumerations of AscendC kernel code.  The
 * address-space qualifiers mean nothing on a CPU: every block sees one
 * address space, the program's.
 */
#ifndef ACLMEM_ASCENDC_KERNEL_TYPES_H
#define ACLMEM_ASCENDC_KERNEL_TYPES_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define GM_ADDR __gm__ uint8_t *

/*
 * IEEE 754 binary16, the AI Core's half: stored as its bits, read and
 * written through float (exact one way, rounded to nearest even the other),
 * so arithmetic on halves is arithmetic on floats.
 */
class half {
public:
	half() = default;
	half(float f) : bits_(FromFloat(f)) {}
	half(double d) : half(static_cast<float>(d)) {}
	half(int i) : half(static_cast<float>(i)) {}
	operator float() const { return ToFloat(bits_); }

	static half FromBits(uint16_t b)
	{
		half h;

		h.bits_ = b;
		return h;
	}
	uint16_t Bits() const { return bits_; }

	static float ToFloat(uint16_t h)
	{
		uint32_t sign = (uint32_t)(h & 0x8000) << 16;
		uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, f;
		float out;

		if (exp == 0x1F) {
			f = sign | 0x7F800000 | (man << 13);
		} else if (exp) {
			f = sign | ((exp + 112) << 23) | (man << 13);
		} else if (man) {
			/* subnormal: exact in float, scaled by 2^-24 */
			out = (float)man * 5.9604644775390625e-8f;
			return sign ? -out : out;
		} else {
			f = sign;
		}
		std::memcpy(&out, &f, sizeof(out));
		return out;
	}

	static uint16_t FromFloat(float v)
	{
		uint32_t f, man, rest, half_ulp;
		uint16_t sign;
		int exp;

		std::memcpy(&f, &v, sizeof(f));
		sign = (uint16_t)((f >> 16) & 0x8000);
		exp = (int)((f >> 23) & 0xFF) - 127;
		man = f & 0x7FFFFF;
		if (exp == 128)	/* inf, or a NaN kept quiet */
			return sign | 0x7C00 | (man ? 0x200 | (man >> 13) : 0);
		if (exp > 15)
			return sign | 0x7C00;
		if (exp >= -14) {
			uint32_t h = ((uint32_t)(exp + 15) << 10) | (man >> 13);

			rest = man & 0x1FFF;
			if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
				h++;	/* may carry into inf: correct */
			return sign | (uint16_t)h;
		}
		if (exp < -25)
			return sign;
		/* subnormal half: the implicit bit shifted in */
		man |= 0x800000;
		{
			int shift = -exp - 14 + 13;
			uint32_t h = man >> shift;

			rest = man & ((1u << shift) - 1);
			half_ulp = 1u << (shift - 1);
			if (rest > half_ulp || (rest == half_ulp && (h & 1)))
				h++;
			return sign | (uint16_t)h;
		}
	}

private:
	uint16_t bits_;
};

namespace AscendC {

enum class QuePosition { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC };
using TPosition = QuePosition;

/* CANN's RoundMode for Cast (kernel_cast.h says what each does here). */
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

namespace aclmem {

template <typename T, typename... U>
inline constexpr bool OneOf = (std::is_same_v<T, U> || ...);

/* The element types of the vector operations. */
template <typename T>
inline constexpr bool Numeric = OneOf<T, half, float, int32_t>;
template <typename T>
inline constexpr bool Floating = OneOf<T, half, float>;

/* A scalar argument that does not take part in deducing T. */
template <typename T>
struct Same {
	using type = T;
};

} /* namespace aclmem */
} /* namespace AscendC */

/* The pipes a barrier names: on a CPU every operation completes in order. */
enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };

#endif /* ACLMEM_ASCENDC_KERNEL_TYPES_H */
