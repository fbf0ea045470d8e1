// SPDX-License-Identifier: MIT
/*
 * ascendc_cpu_debug: one kernel, run the two ways CANN's kernel-launch
 * samples run theirs.  Built with ASCENDC_CPU_DEBUG (RUN_MODE cpu), it
 * calls the kernel directly with ICPU_RUN_KF on GmAlloc memory; otherwise
 * it queues the kernel on a stream with ACLRT_LAUNCH_KERNEL on device
 * memory.  Either way it checks every element against a plain loop and
 * prints "PASS ascendc_cpu_debug".
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#include "aclrtlaunch_mul_add_custom.h"
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void mul_add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);
#endif

constexpr uint32_t blockDim = 8;
constexpr size_t length = 8 * 1024;
constexpr size_t bytes = length * sizeof(float);

#ifndef ASCENDC_CPU_DEBUG
#define CHECK_ACL(expr)                                                     \
	do {                                                                \
		aclError _ret = (expr);                                     \
		if (_ret != ACL_SUCCESS) {                                  \
			std::fprintf(stderr, "%s:%d: %s: error %d\n", __FILE__, \
				     __LINE__, #expr, (int)_ret);           \
			return 1;                                           \
		}                                                           \
	} while (0)

static int run(const std::vector<float> &x, const std::vector<float> &y,
	       std::vector<float> &z)
{
	void *xDev, *yDev, *zDev;
	aclrtStream stream = nullptr;

	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(0));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&zDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL(aclrtMemcpy(yDev, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL((aclError)ACLRT_LAUNCH_KERNEL(mul_add_custom)(blockDim, stream,
								 xDev, yDev, zDev));
	CHECK_ACL(aclrtSynchronizeStream(stream));
	CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
	CHECK_ACL(aclrtFree(xDev));
	CHECK_ACL(aclrtFree(yDev));
	CHECK_ACL(aclrtFree(zDev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(0));
	CHECK_ACL(aclFinalize());
	return 0;
}
#else
static int run(const std::vector<float> &x, const std::vector<float> &y,
	       std::vector<float> &z)
{
	uint8_t *xGm = (uint8_t *)AscendC::GmAlloc(bytes);
	uint8_t *yGm = (uint8_t *)AscendC::GmAlloc(bytes);
	uint8_t *zGm = (uint8_t *)AscendC::GmAlloc(bytes);

	std::memcpy(xGm, x.data(), bytes);
	std::memcpy(yGm, y.data(), bytes);
	AscendC::SetKernelMode(KernelMode::AIV_MODE);
	ICPU_RUN_KF(mul_add_custom, blockDim, xGm, yGm, zGm);
	std::memcpy(z.data(), zGm, bytes);
	AscendC::GmFree((void *)xGm);
	AscendC::GmFree((void *)yGm);
	AscendC::GmFree((void *)zGm);
	return 0;
}
#endif

int main()
{
	std::vector<float> x(length), y(length), z(length, -1.0f);
	size_t bad = 0;

	/* Small integers: every product and sum is exact in float. */
	for (size_t i = 0; i < length; i++) {
		x[i] = (float)(i % 512);
		y[i] = (float)(i % 13) - 6.0f;
	}
	if (run(x, y, z))
		return 1;
	for (size_t i = 0; i < length; i++) {
		float want = x[i] * y[i] + x[i];

		if (z[i] != want && bad++ < 5)
			std::printf("z[%zu] = %g, want %g\n", i, (double)z[i],
				    (double)want);
	}
	if (bad) {
		std::printf("FAIL ascendc_cpu_debug: %zu elements wrong\n", bad);
		return 1;
	}
	std::printf("PASS ascendc_cpu_debug\n");
	return 0;
}
