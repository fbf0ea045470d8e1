// SPDX-License-Identifier: MIT
/*
 * event_timing: timing asynchronous copies with events, as CANN's
 * documentation shows it: record an event on the stream before and after
 * the work, wait for the end event with aclrtSynchronizeEvent (not the
 * whole stream), then read aclrtEventElapsedTime in milliseconds.
 *
 * Three events bracket two batches of copies (host -> device, then device
 * -> host), so both intervals and their sum can be checked against each
 * other.  Prints the bandwidth of each batch, then "PASS event_timing" and
 * exits 0 when every call succeeded, the times are consistent and the data
 * came back intact.
 */
#include <cmath>
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
const size_t kSize = 8u << 20;
const int kCopies = 4;

struct Resources {
	bool aclInited = false;
	bool deviceSet = false;
	aclrtContext context = nullptr;
	aclrtStream stream = nullptr;
	aclrtEvent events[3] = { nullptr, nullptr, nullptr };
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
	CHECK_ACL(aclrtCreateStream(&r.stream));
	for (aclrtEvent &e : r.events)
		CHECK_ACL(aclrtCreateEvent(&e));
	CHECK_ACL(aclrtMallocHost(&r.host, kSize));
	CHECK_ACL(aclrtMalloc(&r.dev, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	return true;
}

double MiBps(float ms)
{
	double bytes = static_cast<double>(kSize) * kCopies;
	return ms > 0 ? bytes / (1 << 20) / (ms / 1000.0) : 0.0;
}

bool Run(Resources &r)
{
	uint8_t *h = static_cast<uint8_t *>(r.host);
	for (size_t i = 0; i < kSize; i++)
		h[i] = static_cast<uint8_t>(i ^ (i >> 8));

	CHECK_ACL(aclrtRecordEvent(r.events[0], r.stream));
	for (int i = 0; i < kCopies; i++)
		CHECK_ACL(aclrtMemcpyAsync(r.dev, kSize, r.host, kSize,
					   ACL_MEMCPY_HOST_TO_DEVICE, r.stream));
	CHECK_ACL(aclrtRecordEvent(r.events[1], r.stream));
	for (int i = 0; i < kCopies; i++)
		CHECK_ACL(aclrtMemcpyAsync(r.host, kSize, r.dev, kSize,
					   ACL_MEMCPY_DEVICE_TO_HOST, r.stream));
	CHECK_ACL(aclrtRecordEvent(r.events[2], r.stream));

	// The end event completes after everything recorded before it.
	CHECK_ACL(aclrtSynchronizeEvent(r.events[2]));

	float h2d = -1, d2h = -1, total = -1;
	CHECK_ACL(aclrtEventElapsedTime(&h2d, r.events[0], r.events[1]));
	CHECK_ACL(aclrtEventElapsedTime(&d2h, r.events[1], r.events[2]));
	CHECK_ACL(aclrtEventElapsedTime(&total, r.events[0], r.events[2]));
	INFO_LOG("%d x %zu MiB host -> device: %.3f ms (%.0f MiB/s)", kCopies,
		 kSize >> 20, h2d, MiBps(h2d));
	INFO_LOG("%d x %zu MiB device -> host: %.3f ms (%.0f MiB/s)", kCopies,
		 kSize >> 20, d2h, MiBps(d2h));
	INFO_LOG("total: %.3f ms", total);
	if (h2d < 0 || d2h < 0 || std::fabs(h2d + d2h - total) > 0.01f + total / 1000) {
		ERROR_LOG("inconsistent times: %.3f + %.3f != %.3f", h2d, d2h, total);
		return false;
	}

	for (size_t i = 0; i < kSize; i++) {
		if (h[i] != static_cast<uint8_t>(i ^ (i >> 8))) {
			ERROR_LOG("byte %zu is 0x%02x", i, h[i]);
			return false;
		}
	}
	return true;
}

bool Release(Resources &r)
{
	bool ok = true;
	if (r.dev && aclrtFree(r.dev) != ACL_SUCCESS)
		ok = false;
	if (r.host && aclrtFreeHost(r.host) != ACL_SUCCESS)
		ok = false;
	for (aclrtEvent e : r.events)
		if (e && aclrtDestroyEvent(e) != ACL_SUCCESS)
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
	printf("%s event_timing\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
