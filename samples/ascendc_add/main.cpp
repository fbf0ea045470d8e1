// SPDX-License-Identifier: MIT
/*
 * ascendc_add: the host side of an AscendC kernel launch, as CANN's
 * kernel-launch samples write it: device buffers, the kernel queued with
 * ACLRT_LAUNCH_KERNEL on a stream, the stream synchronised, the result
 * checked on the host; then again through the older samples' wrapper of
 * add_custom<<<blockDim, l2ctrl, stream>>>.  Prints "PASS ascendc_add" and exits 0 when every
 * element is right.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"

/* In add_custom.cpp: add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z). */
extern void add_custom_do(uint32_t blockDim, void *l2ctrl, void *stream,
			  uint8_t *x, uint8_t *y, uint8_t *z);

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
	constexpr size_t length = 8 * 2048;
	constexpr size_t bytes = length * sizeof(aclFloat16);
	std::vector<aclFloat16> x(length), y(length), z(length);
	void *xDev, *yDev, *zDev;
	aclrtStream stream = nullptr;
	size_t bad = 0;

	/* Integers below 1100: every sum is exact in half precision. */
	for (size_t i = 0; i < length; i++) {
		x[i] = aclFloatToFloat16((float)(i % 1024));
		y[i] = aclFloatToFloat16((float)(i % 7));
	}

	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(0));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&zDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL(aclrtMemcpy(yDev, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

	for (int launch = 0; launch < 2; launch++) {
		CHECK_ACL(aclrtMemset(zDev, bytes, 0, bytes));
		if (launch == 0)
			CHECK_ACL((aclError)ACLRT_LAUNCH_KERNEL(add_custom)(
				blockDim, stream, xDev, yDev, zDev));
		else
			add_custom_do(blockDim, nullptr, stream, (uint8_t *)xDev,
				      (uint8_t *)yDev, (uint8_t *)zDev);
		CHECK_ACL(aclrtSynchronizeStream(stream));

		CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDev, bytes,
				      ACL_MEMCPY_DEVICE_TO_HOST));
		for (size_t i = 0; i < length; i++) {
			float want = (float)(i % 1024) + (float)(i % 7);

			if (aclFloat16ToFloat(z[i]) != want && bad++ < 5)
				std::printf("launch %d: z[%zu] = %g, want %g\n",
					    launch, i, (double)aclFloat16ToFloat(z[i]),
					    (double)want);
		}
	}

	CHECK_ACL(aclrtFree(xDev));
	CHECK_ACL(aclrtFree(yDev));
	CHECK_ACL(aclrtFree(zDev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(0));
	CHECK_ACL(aclFinalize());
	if (bad) {
		std::printf("FAIL ascendc_add: %zu elements wrong\n", bad);
		return 1;
	}
	std::printf("PASS ascendc_add\n");
	return 0;
}
