// SPDX-License-Identifier: MIT
/*
 * capture_replay: CANN's single-stream capture, written only against
 * CANN's documented API, so that it builds and runs unchanged on CANN or
 * on libaclmem.
 *
 *   aclmdlRICaptureBegin on a stream; copies host -> device, a fill,
 *   device -> device, device -> host, and an event's record queued there
 *   are kept, not run; aclmdlRICaptureGetInfo while capturing;
 *   aclmdlRICaptureEnd gives the model run instance
 *   aclmdlRIExecuteAsync, once per round, with new host input each time,
 *   on another stream; aclrtSynchronizeStream; the output checked
 *   aclmdlRIDestroy, then everything freed in CANN's order
 *
 * Device memory is never touched by the CPU here (on a real NPU it is not
 * CPU-accessible): the host side is pinned memory from aclrtMallocHost.
 * Prints "PASS capture_replay" and exits 0 when every round came back
 * right.
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
const size_t kSize = 1u << 20;
const size_t kHead = 4096; // filled with kFill by the model, not copied
const uint8_t kFill = 0xa5;
const int kRounds = 8;

struct Resources {
	bool aclInited = false;
	bool deviceSet = false;
	aclrtStream captureStream = nullptr;
	aclrtStream execStream = nullptr;
	aclrtEvent done = nullptr;
	aclmdlRI model = nullptr;
	void *hostIn = nullptr;
	void *hostOut = nullptr;
	void *devA = nullptr;
	void *devB = nullptr;
};

uint8_t Pattern(size_t i, int round)
{
	return static_cast<uint8_t>(i * 7u + static_cast<unsigned>(round) * 13u);
}

bool Capture(Resources &r)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	aclmdlRI current = nullptr;

	CHECK_ACL(aclmdlRICaptureBegin(r.captureStream,
				       ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
	CHECK_ACL(aclrtMemcpyAsync(r.devA, kSize, r.hostIn, kSize,
				   ACL_MEMCPY_HOST_TO_DEVICE, r.captureStream));
	CHECK_ACL(aclrtMemsetAsync(r.devA, kHead, kFill, kHead,
				   r.captureStream));
	CHECK_ACL(aclrtMemcpyAsync(r.devB, kSize, r.devA, kSize,
				   ACL_MEMCPY_DEVICE_TO_DEVICE,
				   r.captureStream));
	CHECK_ACL(aclrtMemcpyAsync(r.hostOut, kSize, r.devB, kSize,
				   ACL_MEMCPY_DEVICE_TO_HOST, r.captureStream));
	CHECK_ACL(aclrtRecordEvent(r.done, r.captureStream));
	CHECK_ACL(aclmdlRICaptureGetInfo(r.captureStream, &status, &current));
	if (status != ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE || !current) {
		ERROR_LOG("capture status %d, model %p", static_cast<int>(status),
			  current);
		return false;
	}
	CHECK_ACL(aclmdlRICaptureEnd(r.captureStream, &r.model));
	INFO_LOG("captured 5 tasks into model %p", r.model);
	return true;
}

bool Check(const Resources &r, int round)
{
	const uint8_t *out = static_cast<const uint8_t *>(r.hostOut);

	for (size_t i = 0; i < kSize; i++) {
		uint8_t want = i < kHead ? kFill : Pattern(i, round);

		if (out[i] != want) {
			ERROR_LOG("round %d: byte %zu is 0x%02x, expected 0x%02x",
				  round, i, out[i], want);
			return false;
		}
	}
	return true;
}

bool Run(Resources &r)
{
	uint8_t *in;

	CHECK_ACL(aclInit(nullptr));
	r.aclInited = true;
	CHECK_ACL(aclrtSetDevice(kDeviceId));
	r.deviceSet = true;
	CHECK_ACL(aclrtCreateStream(&r.captureStream));
	CHECK_ACL(aclrtCreateStream(&r.execStream));
	CHECK_ACL(aclrtCreateEvent(&r.done));
	CHECK_ACL(aclrtMallocHost(&r.hostIn, kSize));
	CHECK_ACL(aclrtMallocHost(&r.hostOut, kSize));
	CHECK_ACL(aclrtMalloc(&r.devA, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMalloc(&r.devB, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	in = static_cast<uint8_t *>(r.hostIn);
	memset(r.hostOut, 0, kSize);

	if (!Capture(r))
		return false;
	// Captured work has not run: the output is still zero.
	CHECK_ACL(aclrtSynchronizeStream(r.captureStream));
	if (static_cast<const uint8_t *>(r.hostOut)[kSize - 1] != 0) {
		ERROR_LOG("captured work ran before the model was executed");
		return false;
	}

	for (int round = 0; round < kRounds; round++) {
		aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;

		for (size_t i = 0; i < kSize; i++)
			in[i] = Pattern(i, round);
		CHECK_ACL(aclmdlRIExecuteAsync(r.model, r.execStream));
		CHECK_ACL(aclrtSynchronizeStream(r.execStream));
		CHECK_ACL(aclrtQueryEventStatus(r.done, &st));
		if (st != ACL_EVENT_RECORDED_STATUS_COMPLETE) {
			ERROR_LOG("round %d: the model's event is not complete",
				  round);
			return false;
		}
		if (!Check(r, round))
			return false;
	}
	INFO_LOG("%d executions, each with its own input, checked", kRounds);
	return true;
}

void Release(Resources &r)
{
	if (r.model)
		(void)aclmdlRIDestroy(r.model);
	if (r.devA)
		(void)aclrtFree(r.devA);
	if (r.devB)
		(void)aclrtFree(r.devB);
	if (r.hostIn)
		(void)aclrtFreeHost(r.hostIn);
	if (r.hostOut)
		(void)aclrtFreeHost(r.hostOut);
	if (r.done)
		(void)aclrtDestroyEvent(r.done);
	if (r.execStream)
		(void)aclrtDestroyStream(r.execStream);
	if (r.captureStream)
		(void)aclrtDestroyStream(r.captureStream);
	if (r.deviceSet)
		(void)aclrtResetDevice(kDeviceId);
	if (r.aclInited)
		(void)aclFinalize();
}

} // namespace

int main()
{
	Resources r;
	bool ok = Run(r);

	Release(r);
	if (!ok) {
		ERROR_LOG("capture_replay failed");
		return 1;
	}
	printf("PASS capture_replay\n");
	return 0;
}
