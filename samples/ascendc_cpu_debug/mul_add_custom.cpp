// SPDX-License-Identifier: MIT
/*
 * z = x * y + x over float vectors: each block takes its own slice, tile by
 * tile, through VECIN/VECOUT queues of two buffers and a TBuf for the
 * product.  The same source builds for CANN's CPU debug mode and through
 * ascendc_library().
 */
#include "kernel_operator.h"

constexpr int32_t TOTAL_LENGTH = 8 * 1024;	/* the host's */
constexpr int32_t TILE_NUM = 4;
constexpr int32_t BUFFER_NUM = 2;

class KernelMulAdd {
public:
	__aicore__ inline KernelMulAdd() {}

	__aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
	{
		blockLength = TOTAL_LENGTH / AscendC::GetBlockNum();
		tileLength = blockLength / TILE_NUM / BUFFER_NUM;
		uint64_t start = blockLength * AscendC::GetBlockIdx();

		xGm.SetGlobalBuffer((__gm__ float *)x + start, blockLength);
		yGm.SetGlobalBuffer((__gm__ float *)y + start, blockLength);
		zGm.SetGlobalBuffer((__gm__ float *)z + start, blockLength);
		pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
		pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(float));
		pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(float));
		pipe.InitBuffer(tmp, tileLength * sizeof(float));
	}

	__aicore__ inline void Process()
	{
		for (int32_t i = 0; i < TILE_NUM * BUFFER_NUM; i++) {
			CopyIn(i);
			Compute();
			CopyOut(i);
		}
	}

private:
	__aicore__ inline void CopyIn(int32_t progress)
	{
		AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
		AscendC::LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();

		AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);
		AscendC::DataCopy(yLocal, yGm[progress * tileLength], tileLength);
		inQueueX.EnQue(xLocal);
		inQueueY.EnQue(yLocal);
	}

	__aicore__ inline void Compute()
	{
		AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
		AscendC::LocalTensor<float> yLocal = inQueueY.DeQue<float>();
		AscendC::LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
		AscendC::LocalTensor<float> prod = tmp.Get<float>();

		AscendC::Mul(prod, xLocal, yLocal, tileLength);
		AscendC::Add(zLocal, prod, xLocal, tileLength);
		outQueueZ.EnQue<float>(zLocal);
		inQueueX.FreeTensor(xLocal);
		inQueueY.FreeTensor(yLocal);
	}

	__aicore__ inline void CopyOut(int32_t progress)
	{
		AscendC::LocalTensor<float> zLocal = outQueueZ.DeQue<float>();

		AscendC::DataCopy(zGm[progress * tileLength], zLocal, tileLength);
		outQueueZ.FreeTensor(zLocal);
	}

	AscendC::TPipe pipe;
	AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
	AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
	AscendC::TBuf<AscendC::QuePosition::VECCALC> tmp;
	AscendC::GlobalTensor<float> xGm, yGm, zGm;
	uint32_t blockLength = 0, tileLength = 0;
};

extern "C" __global__ __aicore__ void mul_add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
	KernelMulAdd op;

	op.Init(x, y, z);
	op.Process();
}
