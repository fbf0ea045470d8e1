// SPDX-License-Identifier: MIT
/*
 * ascendc_trap: a kernel whose block traps, and how a CANN program learns
 * of it: the exception callback (aclrtSetExceptionInfoCallback) reports
 * the error code, the stream set to stop on failure
 * (aclrtSetStreamFailureMode) drops the work queued after the failed
 * launch, its synchronisation returns ACL_ERROR_RT_AICORE_TRAP_EXCEPTION
 * (507016), and aclrtGetLastError gives the same code once.  The stream
 * then runs the kernel again on good data.  Prints "PASS ascendc_trap"
 * and exits 0 when all of that held.
 */
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_trap_custom.h"

#define CHECK_ACL(expr)                                                     \
	do {                                                                \
		aclError _ret = (expr);                                     \
		if (_ret != ACL_SUCCESS) {                                  \
			std::fprintf(stderr, "%s:%d: %s: error %d\n", __FILE__, \
				     __LINE__, #expr, (int)_ret);           \
			return 1;                                           \
		}                                                           \
	} while (0)

#define EXPECT(cond)                                                        \
	do {                                                                \
		if (!(cond)) {                                              \
			std::printf("FAIL ascendc_trap: %s\n", #cond);      \
			return 1;                                           \
		}                                                           \
	} while (0)

static constexpr aclError TRAP = 507016;	/* ACL_ERROR_RT_AICORE_TRAP_EXCEPTION */
static std::atomic<uint32_t> reported{0}, reports{0};

static void on_exception(aclrtExceptionInfo *info)
{
	reported = aclrtGetErrorCodeFromExceptionInfo(info);
	reports++;
}

int main()
{
	constexpr uint32_t blockDim = 4;
	constexpr uint32_t perBlock = 64;
	constexpr size_t bytes = blockDim * perBlock * sizeof(int32_t);
	std::vector<int32_t> x(blockDim * perBlock), y(x.size());
	aclrtStream stream = nullptr;
	void *xDev, *yDev;

	for (size_t i = 0; i < x.size(); i++)
		x[i] = (int32_t)i;
	x[2 * perBlock + 5] = -1;	/* block 2 traps */

	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(0));
	CHECK_ACL(aclrtSetExceptionInfoCallback(on_exception));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
	CHECK_ACL(aclrtMalloc(&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL(aclrtMemset(yDev, bytes, 0, bytes));

	CHECK_ACL((aclError)ACLRT_LAUNCH_KERNEL(trap_custom)(blockDim, stream, xDev,
							     yDev, perBlock));
	/* Dropped: the stream stops at the failed launch. */
	CHECK_ACL(aclrtMemsetAsync(yDev, bytes, 0x7F, bytes, stream));
	EXPECT(aclrtSynchronizeStream(stream) == TRAP);
	EXPECT(reports == 1 && reported == (uint32_t)TRAP);
	EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == TRAP);
	EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);
	CHECK_ACL(aclrtMemcpy(y.data(), bytes, yDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
	for (size_t i = 0; i < y.size(); i++)
		EXPECT(y[i] != 0x7F7F7F7F);

	/* Good data: the stream runs again. */
	x[2 * perBlock + 5] = 5;
	CHECK_ACL(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL((aclError)ACLRT_LAUNCH_KERNEL(trap_custom)(blockDim, stream, xDev,
							     yDev, perBlock));
	CHECK_ACL(aclrtSynchronizeStream(stream));
	CHECK_ACL(aclrtMemcpy(y.data(), bytes, yDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
	for (size_t i = 0; i < y.size(); i++)
		EXPECT(y[i] == 2 * x[i]);
	EXPECT(reports == 1);

	CHECK_ACL(aclrtFree(xDev));
	CHECK_ACL(aclrtFree(yDev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(0));
	CHECK_ACL(aclFinalize());
	std::printf("PASS ascendc_trap\n");
	return 0;
}
