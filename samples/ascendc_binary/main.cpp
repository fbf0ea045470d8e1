// SPDX-License-Identifier: MIT
/*
 * ascendc_binary: the host side of a kernel launched from a binary, as
 * CANN's kernel-binary samples write it: the binary loaded from its file
 * (aclrtBinaryLoadFromFile), the kernel found by name
 * (aclrtBinaryGetFunction), its arguments appended in order
 * (aclrtKernelArgsInit, aclrtKernelArgsAppend, aclrtKernelArgsFinalize),
 * the launch queued (aclrtLaunchKernelWithConfig) and the stream
 * synchronised, the result checked on the host; then the binary unloaded,
 * after which its function is refused.  Prints "PASS ascendc_binary" and
 * exits 0 when every element is right.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"

#ifndef KERNEL_BINARY
#define KERNEL_BINARY "libscale_kernels.so"
#endif

#define CHECK_ACL(expr)                                                     \
	do {                                                                \
		aclError _ret = (expr);                                     \
		if (_ret != ACL_SUCCESS) {                                  \
			std::fprintf(stderr, "%s:%d: %s: error %d\n", __FILE__, \
				     __LINE__, #expr, (int)_ret);           \
			return 1;                                           \
		}                                                           \
	} while (0)

int main()
{
	constexpr uint32_t blockDim = 8;
	constexpr uint32_t length = blockDim * 4096;
	constexpr size_t bytes = length * sizeof(float);
	std::vector<float> x(length), y(length), z(length);
	void *xDev, *yDev, *zDev;
	float alpha = 1.5f;
	uint32_t total = length;
	aclrtStream stream = nullptr;
	aclrtBinHandle bin = nullptr;
	aclrtFuncHandle func = nullptr;
	aclrtArgsHandle args = nullptr;
	aclrtParamHandle param;
	size_t bad = 0;

	/* Small integers and halves: every result is exact in float. */
	for (uint32_t i = 0; i < length; i++) {
		x[i] = (float)(i % 1000);
		y[i] = (float)(i % 17) - 8.0f;
	}

	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(0));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&zDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL(aclrtMemcpy(yDev, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

	CHECK_ACL(aclrtBinaryLoadFromFile(KERNEL_BINARY, nullptr, &bin));
	CHECK_ACL(aclrtBinaryGetFunction(bin, "scale_add", &func));
	CHECK_ACL(aclrtKernelArgsInit(func, &args));
	CHECK_ACL(aclrtKernelArgsAppend(args, &xDev, sizeof(xDev), &param));
	CHECK_ACL(aclrtKernelArgsAppend(args, &yDev, sizeof(yDev), &param));
	CHECK_ACL(aclrtKernelArgsAppend(args, &zDev, sizeof(zDev), &param));
	CHECK_ACL(aclrtKernelArgsAppend(args, &alpha, sizeof(alpha), &param));
	CHECK_ACL(aclrtKernelArgsAppend(args, &total, sizeof(total), &param));
	CHECK_ACL(aclrtKernelArgsFinalize(args));
	CHECK_ACL(aclrtLaunchKernelWithConfig(func, blockDim, stream, nullptr, args, nullptr));
	CHECK_ACL(aclrtSynchronizeStream(stream));

	CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
	for (uint32_t i = 0; i < length; i++) {
		float want = alpha * x[i] + y[i];

		if (z[i] != want && bad++ < 5)
			std::printf("z[%u] = %g, want %g\n", i, (double)z[i], (double)want);
	}

	CHECK_ACL(aclrtBinaryUnLoad(bin));
	if (aclrtLaunchKernelWithConfig(func, blockDim, stream, nullptr, args,
					nullptr) == ACL_SUCCESS) {
		std::printf("FAIL ascendc_binary: a launch after the unload was taken\n");
		return 1;
	}
	CHECK_ACL(aclrtFree(xDev));
	CHECK_ACL(aclrtFree(yDev));
	CHECK_ACL(aclrtFree(zDev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(0));
	CHECK_ACL(aclFinalize());
	if (bad) {
		std::printf("FAIL ascendc_binary: %zu elements wrong\n", bad);
		return 1;
	}
	std::printf("PASS ascendc_binary\n");
	return 0;
}
