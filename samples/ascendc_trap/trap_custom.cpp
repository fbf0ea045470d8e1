// SPDX-License-Identifier: MIT
/*
 * Each block checks its slice of x and writes it doubled to y; a value
 * outside the range the kernel is written for makes the block trap
 * (assert), as a kernel's checks stop an AI Core.
 */
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void trap_custom(GM_ADDR x, GM_ADDR y, uint32_t perBlock)
{
	AscendC::GlobalTensor<int32_t> xGm, yGm;
	uint32_t b = AscendC::GetBlockIdx();

	xGm.SetGlobalBuffer((__gm__ int32_t *)x + b * perBlock, perBlock);
	yGm.SetGlobalBuffer((__gm__ int32_t *)y + b * perBlock, perBlock);
	for (uint32_t i = 0; i < perBlock; i++) {
		int32_t v = xGm.GetValue(i);

		assert(v >= 0 && v < 1000000);
		yGm.SetValue(i, 2 * v);
	}
}
