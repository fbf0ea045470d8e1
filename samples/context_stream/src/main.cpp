// SPDX-License-Identifier: MIT
/*
 * context_stream: an explicit context, and a stream created in it, the way
 * CANN's documentation lays out a single-threaded program:
 *
 *   aclInit -> aclrtSetDevice -> aclrtCreateContext -> aclrtCreateStream
 *   -> memory and copies on the stream
 *   -> aclrtDestroyStream -> aclrtDestroyContext -> aclrtResetDevice
 *   -> aclFinalize
 *
 * aclrtCreateContext makes the new context the calling thread's current
 * one; aclrtGetCurrentContext must then return it, also after an explicit
 * aclrtSetCurrentContext.  Prints "PASS context_stream" and exits 0 when
 * every step succeeded and the data came back right.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>

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

const int32_t kDeviceId = 0;
const size_t kSize = 1u << 20;

struct Resources {
	bool aclInited = false;
	bool deviceSet = false;
	aclrtContext context = nullptr;
	aclrtStream stream = nullptr;
	void *host = nullptr;
	void *dev = nullptr;
};

bool Init(Resources &r)
{
	CHECK_ACL(aclInit(nullptr));
	r.aclInited = true;
	CHECK_ACL(aclrtSetDevice(kDeviceId));
	r.deviceSet = true;
	CHECK_ACL(aclrtCreateContext(&r.context, kDeviceId));
	INFO_LOG("context %p created on device %d", r.context, kDeviceId);

	aclrtContext current = nullptr;
	CHECK_ACL(aclrtGetCurrentContext(&current));
	if (current != r.context) {
		ERROR_LOG("current context %p is not the new one %p", current,
			  r.context);
		return false;
	}
	// What a program does when it is not sure which context is current.
	CHECK_ACL(aclrtSetCurrentContext(r.context));
	CHECK_ACL(aclrtGetCurrentContext(&current));
	if (current != r.context) {
		ERROR_LOG("aclrtSetCurrentContext did not take: %p", current);
		return false;
	}

	CHECK_ACL(aclrtCreateStream(&r.stream));
	CHECK_ACL(aclrtMallocHost(&r.host, kSize));
	CHECK_ACL(aclrtMalloc(&r.dev, kSize, ACL_MEM_MALLOC_NORMAL_ONLY));
	return true;
}

bool Run(Resources &r)
{
	uint8_t *h = static_cast<uint8_t *>(r.host);
	for (size_t i = 0; i < kSize; i++)
		h[i] = static_cast<uint8_t>(i * 7 + 1);
	CHECK_ACL(aclrtMemcpyAsync(r.dev, kSize, r.host, kSize,
				   ACL_MEMCPY_HOST_TO_DEVICE, r.stream));
	CHECK_ACL(aclrtSynchronizeStream(r.stream));
	memset(r.host, 0, kSize);
	CHECK_ACL(aclrtMemcpyAsync(r.host, kSize, r.dev, kSize,
				   ACL_MEMCPY_DEVICE_TO_HOST, r.stream));
	CHECK_ACL(aclrtSynchronizeStream(r.stream));
	for (size_t i = 0; i < kSize; i++) {
		if (h[i] != static_cast<uint8_t>(i * 7 + 1)) {
			ERROR_LOG("byte %zu is 0x%02x", i, h[i]);
			return false;
		}
	}
	INFO_LOG("%zu bytes through the context's stream and back", kSize);
	return true;
}

// CANN's order: memory, stream, context, device, aclFinalize.
bool Release(Resources &r)
{
	bool ok = true;
	if (r.dev && aclrtFree(r.dev) != ACL_SUCCESS)
		ok = false;
	if (r.host && aclrtFreeHost(r.host) != ACL_SUCCESS)
		ok = false;
	if (r.stream && aclrtDestroyStream(r.stream) != ACL_SUCCESS)
		ok = false;
	if (r.context && aclrtDestroyContext(r.context) != ACL_SUCCESS)
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
	printf("%s context_stream\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
