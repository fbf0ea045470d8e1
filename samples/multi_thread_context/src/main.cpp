// SPDX-License-Identifier: MIT
/*
 * multi_thread_context: one context shared by several threads, the pattern
 * CANN's documentation recommends for multi-threaded programs.  The main
 * thread creates the context; each worker makes it current with
 * aclrtSetCurrentContext (a new thread has no current context of its own),
 * creates its own stream in it, and moves its own data through device
 * memory on that stream.  The context is destroyed only after every worker
 * has destroyed its stream and ended.
 *
 * Prints "PASS multi_thread_context" and exits 0 when every worker saw the
 * shared context as current and got its data back intact.
 */
#include <pthread.h>

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
const int kThreads = 4;
const int kRounds = 8;
const size_t kSize = 256u << 10;

struct Worker {
	int index = 0;
	aclrtContext context = nullptr;
	pthread_t tid;
	bool ok = false;
};

bool WorkerRun(Worker &w, aclrtStream stream, void *host, void *dev)
{
	uint8_t *h = static_cast<uint8_t *>(host);
	for (int round = 0; round < kRounds; round++) {
		uint8_t seed = static_cast<uint8_t>(w.index * 16 + round);
		for (size_t i = 0; i < kSize; i++)
			h[i] = static_cast<uint8_t>(i + seed);
		CHECK_ACL(aclrtMemcpyAsync(dev, kSize, host, kSize,
					   ACL_MEMCPY_HOST_TO_DEVICE, stream));
		CHECK_ACL(aclrtSynchronizeStream(stream));
		memset(host, 0, kSize);
		CHECK_ACL(aclrtMemcpyAsync(host, kSize, dev, kSize,
					   ACL_MEMCPY_DEVICE_TO_HOST, stream));
		CHECK_ACL(aclrtSynchronizeStream(stream));
		for (size_t i = 0; i < kSize; i++) {
			if (h[i] != static_cast<uint8_t>(i + seed)) {
				ERROR_LOG("thread %d round %d: byte %zu is 0x%02x",
					  w.index, round, i, h[i]);
				return false;
			}
		}
	}
	return true;
}

bool WorkerMain(Worker &w)
{
	CHECK_ACL(aclrtSetCurrentContext(w.context));
	aclrtContext current = nullptr;
	CHECK_ACL(aclrtGetCurrentContext(&current));
	if (current != w.context) {
		ERROR_LOG("thread %d: current context %p, expected %p", w.index,
			  current, w.context);
		return false;
	}

	aclrtStream stream = nullptr;
	void *host = nullptr, *dev = nullptr;
	CHECK_ACL(aclrtCreateStream(&stream));
	bool ok = aclrtMallocHost(&host, kSize) == ACL_SUCCESS &&
		  aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_FIRST) ==
			  ACL_SUCCESS &&
		  WorkerRun(w, stream, host, dev);
	if (dev && aclrtFree(dev) != ACL_SUCCESS)
		ok = false;
	if (host && aclrtFreeHost(host) != ACL_SUCCESS)
		ok = false;
	if (aclrtDestroyStream(stream) != ACL_SUCCESS)
		ok = false;
	if (ok)
		INFO_LOG("thread %d: %d round trips of %zu bytes on its own stream",
			 w.index, kRounds, kSize);
	else
		ERROR_LOG("thread %d failed", w.index);
	return ok;
}

void *ThreadFunc(void *arg)
{
	Worker *w = static_cast<Worker *>(arg);
	w->ok = WorkerMain(*w);
	return nullptr;
}

} // namespace

int main()
{
	bool ok = false, deviceSet = false, inited = false;
	aclrtContext context = nullptr;
	Worker workers[kThreads];
	int started = 0;

	if (aclInit(nullptr) != ACL_SUCCESS) {
		ERROR_LOG("aclInit failed");
		goto out;
	}
	inited = true;
	if (aclrtSetDevice(kDeviceId) != ACL_SUCCESS) {
		ERROR_LOG("aclrtSetDevice failed");
		goto out;
	}
	deviceSet = true;
	if (aclrtCreateContext(&context, kDeviceId) != ACL_SUCCESS) {
		ERROR_LOG("aclrtCreateContext failed");
		goto out;
	}

	for (; started < kThreads; started++) {
		workers[started].index = started;
		workers[started].context = context;
		if (pthread_create(&workers[started].tid, nullptr, ThreadFunc,
				   &workers[started]) != 0) {
			ERROR_LOG("pthread_create failed");
			break;
		}
	}
	ok = started == kThreads;
	for (int i = 0; i < started; i++) {
		pthread_join(workers[i].tid, nullptr);
		ok = ok && workers[i].ok;
	}

out:
	if (context && aclrtDestroyContext(context) != ACL_SUCCESS)
		ok = false;
	if (deviceSet && aclrtResetDevice(kDeviceId) != ACL_SUCCESS)
		ok = false;
	if (inited && aclFinalize() != ACL_SUCCESS)
		ok = false;
	printf("%s multi_thread_context\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
