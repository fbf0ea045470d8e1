// SPDX-License-Identifier: MIT
/*
 * memcpy_basic: the first steps of every ACL program, written only against
 * CANN's documented API, so that it builds and runs unchanged on CANN or on
 * libaclmem.
 *
 *   aclInit, aclrtSetDevice, aclrtCreateStream
 *   aclrtMallocHost (pinned host memory), aclrtMalloc and aclrtMallocCached
 *   aclrtMemcpy host -> device, device -> host (synchronous)
 *   aclrtMemcpyAsync device -> device -> host, aclrtSynchronizeStream
 *   aclrtMemset, then free everything, aclrtDestroyStream,
 *   aclrtResetDevice, aclFinalize
 *
 * Device memory is never touched by the CPU here: on a real NPU (run mode
 * ACL_HOST) it is not CPU-accessible, so all data goes through the copies.
 * Prints "PASS memcpy_basic" and exits 0 when every byte came back right.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

// Every call is checked; the first failure ends the run (after cleanup).
#define CHECK_ACL(call)                                                      \
	do {                                                                 \
		aclError ret_ = (call);                                      \
		if (ret_ != ACL_SUCCESS) {                                   \
			ERROR_LOG("%s failed, error code %d (line %d)", #call, \
				  static_cast<int>(ret_), __LINE__);         \
			return false;                                        \
		}                                                            \
	} while (0)

namespace {

const int32_t kDeviceId = 0;
const size_t kSize = 4u << 20; // 4 MiB: larger than a huge page's half

struct Resources {
	bool aclInited = false;
	bool deviceSet = false;
	aclrtStream stream = nullptr;
	void *hostIn = nullptr;
	void *hostOut = nullptr;
	void *devA = nullptr; // aclrtMalloc
	void *devB = nullptr; // aclrtMallocCached
};

uint8_t Pattern(size_t i, unsigned seed)
{
	return static_cast<uint8_t>((i * 131u + seed) ^ (i >> 12));
}

bool Compare(const void *buf, unsigned seed, const char *what)
{
	const uint8_t *p = static_cast<const uint8_t *>(buf);
	for (size_t i = 0; i < kSize; i++) {
		if (p[i] != Pattern(i, seed)) {
			ERROR_LOG("%s: byte %zu is 0x%02x, expected 0x%02x", what,
				  i, p[i], Pattern(i, seed));
			return false;
		}
	}
	INFO_LOG("%s: %zu bytes correct", what, kSize);
	return true;
}

bool Init(Resources &r)
{
	CHECK_ACL(aclInit(nullptr));
	r.aclInited = true;
	CHECK_ACL(aclrtSetDevice(kDeviceId));
	r.deviceSet = true;
	CHECK_ACL(aclrtCreateStream(&r.stream));

	aclrtRunMode runMode;
	CHECK_ACL(aclrtGetRunMode(&runMode));
	INFO_LOG("device %d, run mode %s", kDeviceId,
		 runMode == ACL_HOST ? "ACL_HOST" : "ACL_DEVICE");

	CHECK_ACL(aclrtMallocHost(&r.hostIn, kSize));
	CHECK_ACL(aclrtMallocHost(&r.hostOut, kSize));
	CHECK_ACL(aclrtMalloc(&r.devA, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMallocCached(&r.devB, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	return true;
}

bool Run(Resources &r)
{
	uint8_t *in = static_cast<uint8_t *>(r.hostIn);
	for (size_t i = 0; i < kSize; i++)
		in[i] = Pattern(i, 1);

	// Synchronous: host -> device -> host.
	CHECK_ACL(aclrtMemcpy(r.devA, kSize, r.hostIn, kSize,
			      ACL_MEMCPY_HOST_TO_DEVICE));
	memset(r.hostOut, 0, kSize);
	CHECK_ACL(aclrtMemcpy(r.hostOut, kSize, r.devA, kSize,
			      ACL_MEMCPY_DEVICE_TO_HOST));
	if (!Compare(r.hostOut, 1, "aclrtMemcpy H2D + D2H"))
		return false;

	// Asynchronous on the stream, in order: device -> device -> host.
	memset(r.hostOut, 0, kSize);
	CHECK_ACL(aclrtMemcpyAsync(r.devB, kSize, r.devA, kSize,
				   ACL_MEMCPY_DEVICE_TO_DEVICE, r.stream));
	CHECK_ACL(aclrtMemcpyAsync(r.hostOut, kSize, r.devB, kSize,
				   ACL_MEMCPY_DEVICE_TO_HOST, r.stream));
	CHECK_ACL(aclrtSynchronizeStream(r.stream));
	if (!Compare(r.hostOut, 1, "aclrtMemcpyAsync D2D + D2H"))
		return false;

	// aclrtMemset, seen through a copy back.
	CHECK_ACL(aclrtMemset(r.devB, kSize, 0x5a, kSize));
	CHECK_ACL(aclrtMemcpy(r.hostOut, kSize, r.devB, kSize,
			      ACL_MEMCPY_DEVICE_TO_HOST));
	const uint8_t *out = static_cast<const uint8_t *>(r.hostOut);
	for (size_t i = 0; i < kSize; i++) {
		if (out[i] != 0x5a) {
			ERROR_LOG("aclrtMemset: byte %zu is 0x%02x", i, out[i]);
			return false;
		}
	}
	INFO_LOG("aclrtMemset: %zu bytes correct", kSize);
	return true;
}

// In CANN's order: memory, stream, device, then aclFinalize.
bool Release(Resources &r)
{
	bool ok = true;
	if (r.devA && aclrtFree(r.devA) != ACL_SUCCESS)
		ok = false;
	if (r.devB && aclrtFree(r.devB) != ACL_SUCCESS)
		ok = false;
	if (r.hostIn && aclrtFreeHost(r.hostIn) != ACL_SUCCESS)
		ok = false;
	if (r.hostOut && aclrtFreeHost(r.hostOut) != ACL_SUCCESS)
		ok = false;
	if (r.stream && aclrtDestroyStream(r.stream) != ACL_SUCCESS)
		ok = false;
	if (r.deviceSet && aclrtResetDevice(kDeviceId) != ACL_SUCCESS)
		ok = false;
	if (r.aclInited && aclFinalize() != ACL_SUCCESS)
		ok = false;
	if (!ok)
		ERROR_LOG("releasing the resources failed");
	return ok;
}

} // namespace

int main()
{
	Resources r;
	bool ok = Init(r) && Run(r);
	ok = Release(r) && ok;
	printf("%s memcpy_basic\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
