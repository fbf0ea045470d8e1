// SPDX-License-Identifier: MIT
/*
 * Kernels of tests/lib/acl_binary, loaded as a binary: axpy (pointers and
 * scalars among the parameters), fill (its settings behind a pointer: a
 * placeholder's buffer) and a kernel that traps in one block.
 */
#include "kernel_operator.h"

constexpr int32_t TILE = 64;	/* floats: 256 bytes, a whole number of 32-byte blocks */

/* z = alpha * x + y over n floats, n a multiple of TILE * blocks. */
extern "C" __global__ __aicore__ void axpy(GM_ADDR x, GM_ADDR y, GM_ADDR z,
					   float alpha, uint32_t n)
{
	uint32_t per = n / AscendC::GetBlockNum();
	uint32_t start = per * AscendC::GetBlockIdx();
	AscendC::GlobalTensor<float> xg, yg, zg;
	AscendC::TPipe pipe;
	AscendC::TBuf<AscendC::QuePosition::VECCALC> bx, by;

	xg.SetGlobalBuffer((__gm__ float *)x + start, per);
	yg.SetGlobalBuffer((__gm__ float *)y + start, per);
	zg.SetGlobalBuffer((__gm__ float *)z + start, per);
	pipe.InitBuffer(bx, TILE * sizeof(float));
	pipe.InitBuffer(by, TILE * sizeof(float));
	AscendC::LocalTensor<float> lx = bx.Get<float>();
	AscendC::LocalTensor<float> ly = by.Get<float>();
	for (uint32_t i = 0; i < per; i += TILE) {
		AscendC::DataCopy(lx, xg[i], TILE);
		AscendC::DataCopy(ly, yg[i], TILE);
		AscendC::Muls(lx, lx, alpha, TILE);
		AscendC::Add(lx, lx, ly, TILE);
		AscendC::DataCopy(zg[i], lx, TILE);
	}
}

/* out[block * count + i] = value + block, with { value, count } at settings. */
extern "C" __global__ __aicore__ void fill(GM_ADDR out, GM_ADDR settings)
{
	AscendC::GlobalTensor<int32_t> s, o;

	s.SetGlobalBuffer((__gm__ int32_t *)settings, 2);
	int32_t value = s.GetValue(0), count = s.GetValue(1);
	uint32_t b = AscendC::GetBlockIdx();

	o.SetGlobalBuffer((__gm__ int32_t *)out + b * count, count);
	for (int32_t i = 0; i < count; i++)
		o.SetValue(i, value + (int32_t)b);
}

/* Block bad traps; the others write their index. */
extern "C" __global__ __aicore__ void trap_in(GM_ADDR out, uint32_t bad)
{
	AscendC::GlobalTensor<int32_t> o;
	uint32_t b = AscendC::GetBlockIdx();

	o.SetGlobalBuffer((__gm__ int32_t *)out, AscendC::GetBlockNum());
	if (b == bad)
		trap();
	o.SetValue(b, (int32_t)b);
}
