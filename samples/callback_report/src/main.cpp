// SPDX-License-Identifier: MIT
/*
 * callback_report: host callbacks in stream order, the way CANN documents
 * them.  A report thread of the program's own runs aclrtProcessReport with
 * a timeout in a loop; aclrtSubscribeReport ties the stream to that thread;
 * aclrtLaunchCallback puts a host function on the stream, which the report
 * thread runs when the stream reaches it.  With ACL_CALLBACK_BLOCK the
 * stream's later tasks wait until the callback has returned.
 *
 * The proof of order and blocking: the callback fills the host buffer that
 * the next task on the stream copies to the device, so the device must end
 * up with the callback's data, not the data the buffer held when the copy
 * was queued.  The callback must also run on the report thread, once per
 * launch, with its userData.  Then aclrtUnSubscribeReport, and the report
 * thread is told to stop.
 *
 * Prints "PASS callback_report" and exits 0 when all of that held.
 */
#include <pthread.h>

#include <atomic>
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
const int32_t kReportTimeoutMs = 100;
const int kCallbacks = 3;

std::atomic<bool> g_exitReport(false);

struct Resources {
	bool aclInited = false;
	bool deviceSet = false;
	aclrtContext context = nullptr;
	aclrtStream stream = nullptr;
	void *host = nullptr;
	void *dev = nullptr;
	pthread_t reportTid;
	bool reportStarted = false;
	bool subscribed = false;
};

struct CallbackData {
	int index;
	void *host;
	pthread_t reportTid;
	std::atomic<int> calls;
	std::atomic<bool> onReportThread;
};

// The report thread: it must have the context current, then processes
// reports until told to stop.  A timeout only means that nothing was due.
void *ReportThread(void *arg)
{
	aclrtContext context = *static_cast<aclrtContext *>(arg);
	if (aclrtSetCurrentContext(context) != ACL_SUCCESS) {
		ERROR_LOG("report thread: aclrtSetCurrentContext failed");
		return nullptr;
	}
	while (!g_exitReport.load())
		(void)aclrtProcessReport(kReportTimeoutMs);
	return nullptr;
}

void FillPattern(void *buf, int index)
{
	uint8_t *p = static_cast<uint8_t *>(buf);
	for (size_t i = 0; i < kSize; i++)
		p[i] = static_cast<uint8_t>(i * 3 + index * 41 + 1);
}

void Callback(void *userData)
{
	CallbackData *d = static_cast<CallbackData *>(userData);
	if (!pthread_equal(pthread_self(), d->reportTid))
		d->onReportThread.store(false);
	// The copy queued right after this callback must see these bytes.
	FillPattern(d->host, d->index);
	d->calls.fetch_add(1);
}

bool Init(Resources &r)
{
	CHECK_ACL(aclInit(nullptr));
	r.aclInited = true;
	CHECK_ACL(aclrtSetDevice(kDeviceId));
	r.deviceSet = true;
	CHECK_ACL(aclrtCreateContext(&r.context, kDeviceId));
	CHECK_ACL(aclrtCreateStream(&r.stream));
	CHECK_ACL(aclrtMallocHost(&r.host, kSize));
	CHECK_ACL(aclrtMalloc(&r.dev, kSize, ACL_MEM_MALLOC_HUGE_FIRST));

	if (pthread_create(&r.reportTid, nullptr, ReportThread, &r.context) != 0) {
		ERROR_LOG("pthread_create failed");
		return false;
	}
	r.reportStarted = true;
	CHECK_ACL(aclrtSubscribeReport(static_cast<uint64_t>(r.reportTid),
				       r.stream));
	r.subscribed = true;
	return true;
}

bool Run(Resources &r)
{
	CallbackData data[kCallbacks];
	uint8_t *check = new uint8_t[kSize];
	bool ok = true;

	for (int i = 0; i < kCallbacks && ok; i++) {
		data[i].index = i;
		data[i].host = r.host;
		data[i].reportTid = r.reportTid;
		data[i].calls.store(0);
		data[i].onReportThread.store(true);
		memset(r.host, 0xee, kSize);
		ok = aclrtLaunchCallback(Callback, &data[i], ACL_CALLBACK_BLOCK,
					 r.stream) == ACL_SUCCESS &&
		     aclrtMemcpyAsync(r.dev, kSize, r.host, kSize,
				      ACL_MEMCPY_HOST_TO_DEVICE,
				      r.stream) == ACL_SUCCESS &&
		     aclrtSynchronizeStream(r.stream) == ACL_SUCCESS &&
		     aclrtMemcpy(check, kSize, r.dev, kSize,
				 ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS;
		if (!ok) {
			ERROR_LOG("callback %d: an ACL call failed", i);
			break;
		}
		FillPattern(r.host, i);
		if (data[i].calls.load() != 1 || !data[i].onReportThread.load() ||
		    memcmp(check, r.host, kSize) != 0) {
			ERROR_LOG("callback %d: ran %d times, %s the report thread, "
				  "device data %s", i, data[i].calls.load(),
				  data[i].onReportThread.load() ? "on" : "not on",
				  memcmp(check, r.host, kSize) ? "wrong" : "right");
			ok = false;
		}
	}
	delete[] check;
	if (ok)
		INFO_LOG("%d blocking callbacks ran on the report thread, in "
			 "stream order", kCallbacks);
	return ok;
}

bool Release(Resources &r)
{
	bool ok = true;
	if (r.subscribed &&
	    aclrtUnSubscribeReport(static_cast<uint64_t>(r.reportTid),
				   r.stream) != ACL_SUCCESS)
		ok = false;
	if (r.reportStarted) {
		g_exitReport.store(true);
		pthread_join(r.reportTid, nullptr);
	}
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
	printf("%s callback_report\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
