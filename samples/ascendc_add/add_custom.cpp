// SPDX-License-Identifier: MIT
/*
 * z = x + y over half-precision vectors: each block adds its own slice,
 * tile by tile, through VECIN and VECOUT queues of two buffers each, so
 * that on an AI Core the copy of one tile overlaps the sum of the other.
 * Launched by aclrtlaunch_add_custom (ACLRT_LAUNCH_KERNEL) or, as older
 * samples do, by add_custom_do with the kernel-launch operator.
 */
#include "kernel_operator.h"

#ifndef TILE_NUM
#define TILE_NUM 8
#endif

constexpr int32_t TOTAL_LENGTH = 8 * 2048;	/* the host's, for 8 blocks */
constexpr int32_t BUFFER_NUM = 2;		/* double buffering */

class KernelAdd {
public:
	__aicore__ inline KernelAdd() {}

	__aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
	{
		blockLength = TOTAL_LENGTH / AscendC::GetBlockNum();
		tileLength = blockLength / TILE_NUM / BUFFER_NUM;
		uint64_t start = blockLength * AscendC::GetBlockIdx();

		xGm.SetGlobalBuffer((__gm__ half *)x + start, blockLength);
		yGm.SetGlobalBuffer((__gm__ half *)y + start, blockLength);
		zGm.SetGlobalBuffer((__gm__ half *)z + start, blockLength);
		pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
		pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
		pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
	}

	__aicore__ inline void Process()
	{
		int32_t loops = TILE_NUM * BUFFER_NUM;

		for (int32_t i = 0; i < loops; i++) {
			CopyIn(i);
			Compute();
			CopyOut(i);
		}
	}

private:
	__aicore__ inline void CopyIn(int32_t progress)
	{
		AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
		AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();

		AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);
		AscendC::DataCopy(yLocal, yGm[progress * tileLength], tileLength);
		inQueueX.EnQue(xLocal);
		inQueueY.EnQue(yLocal);
	}

	__aicore__ inline void Compute()
	{
		AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
		AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
		AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();

		AscendC::Add(zLocal, xLocal, yLocal, tileLength);
		outQueueZ.EnQue<half>(zLocal);
		inQueueX.FreeTensor(xLocal);
		inQueueY.FreeTensor(yLocal);
	}

	__aicore__ inline void CopyOut(int32_t progress)
	{
		AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();

		AscendC::DataCopy(zGm[progress * tileLength], zLocal, tileLength);
		outQueueZ.FreeTensor(zLocal);
	}

	AscendC::TPipe pipe;
	AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
	AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
	AscendC::GlobalTensor<half> xGm, yGm, zGm;
	uint32_t blockLength = 0, tileLength = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
	KernelAdd op;

	op.Init(x, y, z);
	op.Process();
}

/* The older samples' launch: the kernel-launch operator, from host code. */
void add_custom_do(uint32_t blockDim, void *l2ctrl, void *stream, uint8_t *x,
		   uint8_t *y, uint8_t *z)
{
	add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z);
}
