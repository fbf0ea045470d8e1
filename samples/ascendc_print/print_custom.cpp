// SPDX-License-Identifier: MIT
/*
 * Each block sums its slice of x and prints the sum with AscendC::printf,
 * as kernels print on the NPU for debugging.
 */
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void print_custom(GM_ADDR x, uint32_t perBlock)
{
	AscendC::GlobalTensor<int32_t> xGm;
	uint32_t b = AscendC::GetBlockIdx();
	int32_t sum = 0;

	xGm.SetGlobalBuffer((__gm__ int32_t *)x + b * perBlock, perBlock);
	for (uint32_t i = 0; i < perBlock; i++)
		sum += xGm.GetValue(i);
	AscendC::printf("block %u of %u: sum %d\n", b, AscendC::GetBlockNum(), sum);
}
