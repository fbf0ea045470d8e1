// SPDX-License-Identifier: MIT
/*
 * peer_copy: a copy between the memory of two devices, written only against
 * CANN's documented API (its "data transfer between two devices" steps), so
 * that it builds and runs unchanged on CANN or on libaclmem.
 *
 *   aclInit, aclrtGetDeviceCount (two devices needed)
 *   aclrtDeviceCanAccessPeer(0, 1), then on each device
 *   aclrtDeviceEnablePeerAccess(the other one); the thread moves between
 *   the devices by making their default contexts current
 *   aclrtMalloc on device 0 and on device 1, a pattern host -> device 0
 *   aclrtMemcpy device 0 -> device 1 (DEVICE_TO_DEVICE), checked on the host
 *   aclrtMemcpyAsync device 1 -> device 0 on a stream of device 1, checked
 *   aclrtDeviceDisablePeerAccess on each device, free, reset, aclFinalize
 *
 * Prints "PASS peer_copy" and exits 0 when every byte came back right; with
 * fewer than two devices prints why and exits 77 (skipped).
 */
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <vector>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

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

const int32_t kDev0 = 0;
const int32_t kDev1 = 1;
const size_t kSize = 4u << 20;

struct Resources {
	bool aclInited = false;
	bool set0 = false, set1 = false;
	bool peer01 = false, peer10 = false;
	aclrtContext ctx0 = nullptr, ctx1 = nullptr;	// default contexts
	aclrtStream stream1 = nullptr;	// a stream of device 1
	void *dev0 = nullptr;		// device 0's memory
	void *dev1 = nullptr;		// device 1's memory
	std::vector<uint8_t> host;
};

uint8_t Pattern(size_t i)
{
	return static_cast<uint8_t>((i * 167u + 3u) ^ (i >> 11));
}

bool Compare(const char *what, const std::vector<uint8_t> &h)
{
	for (size_t i = 0; i < kSize; i++) {
		if (h[i] != Pattern(i)) {
			ERROR_LOG("%s: byte %zu is 0x%02x, expected 0x%02x", what,
				  i, h[i], Pattern(i));
			return false;
		}
	}
	INFO_LOG("%s: %zu bytes correct", what, kSize);
	return true;
}

// false with *skip set: fewer than two devices.
bool Init(Resources &r, bool *skip)
{
	uint32_t count = 0;
	int32_t canAccess = 0;

	CHECK_ACL(aclInit(nullptr));
	r.aclInited = true;
	CHECK_ACL(aclrtGetDeviceCount(&count));
	INFO_LOG("%u device(s)", count);
	if (count < 2) {
		INFO_LOG("peer_copy needs two devices");
		*skip = true;
		return false;
	}
	CHECK_ACL(aclrtDeviceCanAccessPeer(&canAccess, kDev0, kDev1));
	if (!canAccess) {
		INFO_LOG("device %d cannot access device %d", kDev0, kDev1);
		*skip = true;
		return false;
	}
	// Peer access is enabled from the current device to the other one.
	CHECK_ACL(aclrtSetDevice(kDev0));
	r.set0 = true;
	CHECK_ACL(aclrtGetCurrentContext(&r.ctx0));
	CHECK_ACL(aclrtDeviceEnablePeerAccess(kDev1, 0));
	r.peer01 = true;
	CHECK_ACL(aclrtMalloc(&r.dev0, kSize, ACL_MEM_MALLOC_HUGE_FIRST));

	CHECK_ACL(aclrtSetDevice(kDev1));
	r.set1 = true;
	CHECK_ACL(aclrtGetCurrentContext(&r.ctx1));
	CHECK_ACL(aclrtDeviceEnablePeerAccess(kDev0, 0));
	r.peer10 = true;
	CHECK_ACL(aclrtMalloc(&r.dev1, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtCreateStream(&r.stream1));
	r.host.resize(kSize);
	return true;
}

bool Run(Resources &r)
{
	for (size_t i = 0; i < kSize; i++)
		r.host[i] = Pattern(i);
	CHECK_ACL(aclrtSetCurrentContext(r.ctx0));
	CHECK_ACL(aclrtMemcpy(r.dev0, kSize, r.host.data(), kSize,
			      ACL_MEMCPY_HOST_TO_DEVICE));
	CHECK_ACL(aclrtSetCurrentContext(r.ctx1));

	// Device 0 -> device 1, from device 1.
	CHECK_ACL(aclrtMemcpy(r.dev1, kSize, r.dev0, kSize,
			      ACL_MEMCPY_DEVICE_TO_DEVICE));
	std::fill(r.host.begin(), r.host.end(), 0);
	CHECK_ACL(aclrtMemcpy(r.host.data(), kSize, r.dev1, kSize,
			      ACL_MEMCPY_DEVICE_TO_HOST));
	if (!Compare("aclrtMemcpy device 0 -> device 1", r.host))
		return false;

	// And back, in stream order on device 1, over a cleared buffer.
	CHECK_ACL(aclrtSetCurrentContext(r.ctx0));
	CHECK_ACL(aclrtMemset(r.dev0, kSize, 0, kSize));
	CHECK_ACL(aclrtSetCurrentContext(r.ctx1));
	CHECK_ACL(aclrtMemcpyAsync(r.dev0, kSize, r.dev1, kSize,
				   ACL_MEMCPY_DEVICE_TO_DEVICE, r.stream1));
	CHECK_ACL(aclrtSynchronizeStream(r.stream1));
	std::fill(r.host.begin(), r.host.end(), 0);
	CHECK_ACL(aclrtMemcpy(r.host.data(), kSize, r.dev0, kSize,
			      ACL_MEMCPY_DEVICE_TO_HOST));
	return Compare("aclrtMemcpyAsync device 1 -> device 0", r.host);
}

// Streams and memory first, then peer access and the devices.
bool Release(Resources &r)
{
	bool ok = true;

	if (r.ctx1 && aclrtSetCurrentContext(r.ctx1) != ACL_SUCCESS)
		ok = false;
	if (r.stream1 && aclrtDestroyStream(r.stream1) != ACL_SUCCESS)
		ok = false;
	if (r.dev1 && aclrtFree(r.dev1) != ACL_SUCCESS)
		ok = false;
	if (r.dev0 && aclrtFree(r.dev0) != ACL_SUCCESS)
		ok = false;
	if (r.peer10 && aclrtDeviceDisablePeerAccess(kDev0) != ACL_SUCCESS)
		ok = false;
	if (r.set1 && aclrtResetDevice(kDev1) != ACL_SUCCESS)
		ok = false;
	if (r.ctx0 && aclrtSetCurrentContext(r.ctx0) != ACL_SUCCESS)
		ok = false;
	if (r.peer01 && aclrtDeviceDisablePeerAccess(kDev1) != ACL_SUCCESS)
		ok = false;
	if (r.set0 && aclrtResetDevice(kDev0) != ACL_SUCCESS)
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
	bool skip = false;
	bool ok = Init(r, &skip) && Run(r);

	ok = Release(r) && ok;
	if (skip) {
		printf("SKIP peer_copy\n");
		return 77;
	}
	printf("%s peer_copy\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
