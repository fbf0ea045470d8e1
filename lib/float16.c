// SPDX-License-Identifier: MIT
/*
 * aclFloat16 <-> float, bfloat16 <-> float (float16.h) and aclDataTypeSize:
 * pure functions.
 *
 * The conversions are CANN's, which its headers document as a saturation
 * mode fixed on every product: float -> half rounds finite values to
 * nearest, ties to even (subnormal halves included), and whatever would
 * not be a finite half (overflow, +-Inf, NaN) becomes +-65504; half ->
 * float is exact for finite halves and reads the all-ones exponent as an
 * ordinary one, so Inf/NaN halves become finite floats.  Programs that
 * round-trip values through these calls get CANN's numbers bit for bit.
 */
#include <math.h>
#include <string.h>

#include "acl/acl_base.h"
#include "float16.h"

#define HALF_MAX_BITS	0x7BFFU		/* 65504 */

float aclFloat16ToFloat(aclFloat16 value)
{
	uint32_t sign = (uint32_t)(value & 0x8000U) << 16;
	uint32_t exp = (value >> 10) & 0x1FU;
	uint32_t man = value & 0x3FFU;
	uint32_t bits;
	float f;

	if (exp == 0 && man == 0) {
		bits = sign;
	} else if (exp == 0) {
		/* Subnormal: man * 2^-24; normalise into the float's exponent. */
		int32_t e = -14;

		while (!(man & 0x400U)) {
			man <<= 1;
			e--;
		}
		bits = sign | (uint32_t)(e + 127) << 23 | (man & 0x3FFU) << 13;
	} else {
		/* Exponent 31 included: CANN has no Inf/NaN here. */
		bits = sign | (exp - 15 + 127) << 23 | man << 13;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* x >> shift rounded to nearest, ties to even. */
static uint32_t shift_rne(uint32_t x, unsigned int shift)
{
	uint32_t r = x >> shift;
	uint32_t rem = x & ((1U << shift) - 1);
	uint32_t half = 1U << (shift - 1);

	if (rem > half || (rem == half && (r & 1)))
		r++;
	return r;
}

aclFloat16 aclFloatToFloat16(float value)
{
	uint32_t bits, exp, man;
	uint16_t sign;
	int32_t he;
	uint32_t r;

	memcpy(&bits, &value, sizeof(bits));
	sign = (uint16_t)((bits >> 16) & 0x8000U);
	exp = (bits >> 23) & 0xFFU;
	man = bits & 0x7FFFFFU;
	if (exp == 0xFF)			/* Inf, NaN: saturate */
		return sign | HALF_MAX_BITS;
	he = (int32_t)exp - 127 + 15;
	if (he >= 31)
		return sign | HALF_MAX_BITS;
	if (he <= 0) {
		/*
		 * A subnormal half, in units of 2^-24: (1.man) * 2^(exp-126).
		 * Below 2^-25 (or a float subnormal) it rounds to zero; a carry
		 * into bit 10 is the smallest normal half, correctly encoded.
		 */
		unsigned int shift = 126 - exp;

		if (exp == 0 || shift > 25)
			return sign;
		return sign | (uint16_t)shift_rne(man | 0x800000U, shift);
	}
	/* Normal: a carry out of the mantissa bumps the exponent, as it must. */
	r = shift_rne((uint32_t)he << 23 | man, 13);
	if (r >= 0x7C00U)
		return sign | HALF_MAX_BITS;
	return sign | (uint16_t)r;
}

float aclmem_bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t aclmem_float_to_bf16(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	if (isnan(f))
		return (uint16_t)((bits >> 16) | 0x40);
	bits += 0x7fff + ((bits >> 16) & 1);
	return (uint16_t)(bits >> 16);
}

size_t aclDataTypeSize(aclDataType dataType)
{
	switch (dataType) {
	case ACL_BOOL:
	case ACL_INT8:
	case ACL_UINT8:
	case ACL_HIFLOAT8:
	case ACL_FLOAT8_E5M2:
	case ACL_FLOAT8_E4M3FN:
	case ACL_FLOAT8_E8M0:
		return 1;
	/*
	 * Packed types narrower than a byte: CANN gives no byte count; one
	 * byte, the least an element can be addressed with, never
	 * undersizes a buffer of one element.
	 */
	case ACL_INT4:
	case ACL_UINT1:
	case ACL_FLOAT6_E3M2:
	case ACL_FLOAT6_E2M3:
	case ACL_FLOAT4_E2M1:
	case ACL_FLOAT4_E1M2:
	case ACL_HIFLOAT4:
	case ACL_HIFLOAT4_SCALE:
		return 1;
	case ACL_FLOAT16:
	case ACL_BF16:
	case ACL_INT16:
	case ACL_UINT16:
		return 2;
	case ACL_FLOAT:
	case ACL_INT32:
	case ACL_UINT32:
	case ACL_COMPLEX32:
		return 4;
	case ACL_INT64:
	case ACL_UINT64:
	case ACL_DOUBLE:
	case ACL_COMPLEX64:
		return 8;
	case ACL_COMPLEX128:
		return 16;
	case ACL_STRING:
	case ACL_DT_UNDEFINED:
	default:
		return 0;
	}
}
