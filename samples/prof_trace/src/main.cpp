// SPDX-License-Identifier: MIT
/*
 * prof_trace: profiling a stream's work with acl/acl_prof.h, in the order
 * CANN documents: aclInit, aclprofInit(result path), aclprofCreateConfig,
 * aclprofStart, the work, aclprofStop, aclprofFinalize, aclFinalize.
 *
 * The work is a host-to-device copy, a memset and a device-to-host copy on
 * one stream; msproftx marks the program's own steps (a push/pop range
 * around the work, a mark, and aclprofMarkEx on the stream between the
 * copies).  The program then looks for the trace the profiler wrote under
 * the result path and checks that it names each piece of work, prints its
 * path and "PASS prof_trace", and exits 0.
 */
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "acl/acl_prof.h"

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

const size_t kSize = 1u << 20;
uint32_t deviceIdList[1] = { 0 };

bool Profile(const std::string &path)
{
	aclrtStream stream = nullptr;
	void *host = nullptr, *dev = nullptr;

	CHECK_ACL(aclrtSetDevice(static_cast<int32_t>(deviceIdList[0])));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMallocHost(&host, kSize));
	CHECK_ACL(aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	memset(host, 0x5a, kSize);

	CHECK_ACL(aclprofInit(path.c_str(), path.size()));
	aclprofConfig *config = aclprofCreateConfig(
		deviceIdList, 1, ACL_AICORE_NONE, nullptr,
		ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
	if (config == nullptr) {
		ERROR_LOG("aclprofCreateConfig failed");
		return false;
	}
	CHECK_ACL(aclprofStart(config));

	void *step = aclprofCreateStamp();
	const char msg[] = "copy and fill";
	CHECK_ACL(aclprofSetStampTraceMessage(step, msg, strlen(msg)));
	CHECK_ACL(aclprofPush(step));
	CHECK_ACL(aclrtMemcpyAsync(dev, kSize, host, kSize,
				   ACL_MEMCPY_HOST_TO_DEVICE, stream));
	CHECK_ACL(aclprofMarkEx("copied in", strlen("copied in"), stream));
	CHECK_ACL(aclrtMemsetAsync(dev, kSize, 0, kSize / 2, stream));
	CHECK_ACL(aclrtMemcpyAsync(host, kSize, dev, kSize,
				   ACL_MEMCPY_DEVICE_TO_HOST, stream));
	CHECK_ACL(aclprofMark(step));
	CHECK_ACL(aclrtSynchronizeStream(stream));
	CHECK_ACL(aclprofPop());

	CHECK_ACL(aclprofStop(config));
	CHECK_ACL(aclprofDestroyConfig(config));
	aclprofDestroyStamp(step);
	CHECK_ACL(aclprofFinalize());

	const unsigned char *h = static_cast<const unsigned char *>(host);
	if (h[0] != 0 || h[kSize - 1] != 0x5a) {
		ERROR_LOG("the copies and the fill did not come back");
		return false;
	}
	CHECK_ACL(aclrtFree(dev));
	CHECK_ACL(aclrtFreeHost(host));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(static_cast<int32_t>(deviceIdList[0])));
	return true;
}

/* The trace of the one collection: <path>/PROF_.../trace.json. */
bool CheckTrace(const std::string &path)
{
	std::string file;
	DIR *d = opendir(path.c_str());

	if (d == nullptr) {
		ERROR_LOG("no result directory %s", path.c_str());
		return false;
	}
	for (struct dirent *e = readdir(d); e != nullptr; e = readdir(d)) {
		if (strncmp(e->d_name, "PROF_", 5) == 0)
			file = path + "/" + e->d_name + "/trace.json";
	}
	closedir(d);
	FILE *f = file.empty() ? nullptr : fopen(file.c_str(), "r");
	if (f == nullptr) {
		ERROR_LOG("no PROF_*/trace.json under %s", path.c_str());
		return false;
	}
	std::string text;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		text.append(buf, n);
	fclose(f);
	const char *const want[] = {
		"\"traceEvents\"", "\"memcpy H2D\"", "\"memset\"",
		"\"memcpy D2H\"", "\"copied in\"", "\"copy and fill\"",
	};
	for (const char *w : want) {
		if (text.find(w) == std::string::npos) {
			ERROR_LOG("%s has no %s", file.c_str(), w);
			return false;
		}
	}
	INFO_LOG("trace: %s (%zu bytes; open it in ui.perfetto.dev)",
		 file.c_str(), text.size());
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	std::string path;

	if (argc > 1) {
		path = argv[1];
	} else {
		char tmpl[] = "/tmp/prof_trace.XXXXXX";
		if (mkdtemp(tmpl) == nullptr) {
			ERROR_LOG("mkdtemp failed");
			return 1;
		}
		path = tmpl;
	}
	if (aclInit(nullptr) != ACL_SUCCESS) {
		ERROR_LOG("aclInit failed");
		return 1;
	}
	bool ok = Profile(path) && CheckTrace(path);
	aclFinalize();
	if (!ok)
		return 1;
	printf("PASS prof_trace\n");
	return 0;
}
