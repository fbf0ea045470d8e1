// SPDX-License-Identifier: MIT
/*
 * z = alpha * x + y over float vectors: each block its own slice, tile by
 * tile through VECIN and VECOUT queues.  Built as a binary of its own and
 * launched by handle (main.cpp), so its parameters, two scalars among
 * them, reach it as one packed argument block.
 */
#include "kernel_operator.h"

constexpr int32_t TILE = 256;		/* floats: 1 KiB */
constexpr int32_t BUFFER_NUM = 2;

class KernelScaleAdd {
public:
	__aicore__ inline KernelScaleAdd() {}

	__aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, float a,
				    uint32_t totalLength)
	{
		length = totalLength / AscendC::GetBlockNum();
		alpha = a;
		uint64_t start = (uint64_t)length * AscendC::GetBlockIdx();

		xGm.SetGlobalBuffer((__gm__ float *)x + start, length);
		yGm.SetGlobalBuffer((__gm__ float *)y + start, length);
		zGm.SetGlobalBuffer((__gm__ float *)z + start, length);
		pipe.InitBuffer(inX, BUFFER_NUM, TILE * sizeof(float));
		pipe.InitBuffer(inY, BUFFER_NUM, TILE * sizeof(float));
		pipe.InitBuffer(outZ, BUFFER_NUM, TILE * sizeof(float));
	}

	__aicore__ inline void Process()
	{
		for (uint32_t off = 0; off < length; off += TILE) {
			AscendC::LocalTensor<float> x = inX.AllocTensor<float>();
			AscendC::LocalTensor<float> y = inY.AllocTensor<float>();

			AscendC::DataCopy(x, xGm[off], TILE);
			AscendC::DataCopy(y, yGm[off], TILE);
			inX.EnQue(x);
			inY.EnQue(y);
			x = inX.DeQue<float>();
			y = inY.DeQue<float>();
			AscendC::LocalTensor<float> z = outZ.AllocTensor<float>();

			AscendC::Muls(z, x, alpha, TILE);
			AscendC::Add(z, z, y, TILE);
			outZ.EnQue<float>(z);
			inX.FreeTensor(x);
			inY.FreeTensor(y);
			z = outZ.DeQue<float>();
			AscendC::DataCopy(zGm[off], z, TILE);
			outZ.FreeTensor(z);
		}
	}

private:
	AscendC::TPipe pipe;
	AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inX, inY;
	AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outZ;
	AscendC::GlobalTensor<float> xGm, yGm, zGm;
	uint32_t length = 0;
	float alpha = 0;
};

extern "C" __global__ __aicore__ void scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z,
						float alpha, uint32_t totalLength)
{
	KernelScaleAdd op;

	op.Init(x, y, z, alpha, totalLength);
	op.Process();
}
