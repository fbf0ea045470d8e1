/* SPDX-License-Identifier: MIT */
/*
 * bfloat16 <-> float for the files that compute on device data (reduce.c,
 * random.c); the half conversions are the public aclFloat16ToFloat and
 * aclFloatToFloat16.
 */
#ifndef ACLMEM_FLOAT16_H
#define ACLMEM_FLOAT16_H

#include <stdint.h>

/* Exact: bfloat16 is the top half of a float. */
float aclmem_bf16_to_float(uint16_t h);

/* Round to nearest, ties to even; a NaN stays a quiet NaN. */
uint16_t aclmem_float_to_bf16(float f);

#endif /* ACLMEM_FLOAT16_H */
