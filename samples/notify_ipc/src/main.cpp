// SPDX-License-Identifier: MIT
/*
 * notify_ipc: task synchronisation between two processes with a notify.
 *
 * Process A (no arguments) creates a notify and a stream, starts process B
 * (this program again, "notify_ipc import <fd>") with a pipe, allows B's
 * pid to import the notify, exports the notify's key and sends it down the
 * pipe, then queues aclrtWaitAndResetNotify on its stream and a copy after
 * it.  B imports the key, sleeps, then records the notify on its stream.
 * A's copy can only run after B's record: A checks that its
 * synchronisation waited at least B's delay and that the copy ran, then
 * prints "PASS notify_ipc".
 */
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

#define CHECK_ACL(call)                                                      \
	do {                                                                 \
		aclError ret_ = (call);                                      \
		if (ret_ != ACL_SUCCESS) {                                   \
			ERROR_LOG("%s failed, error code %d (line %d)", #call, \
				  static_cast<int>(ret_), __LINE__);         \
			return 1;                                            \
		}                                                            \
	} while (0)

namespace {

const int32_t kDeviceId = 0;
const int kDelayMs = 300;
const uint32_t kWaitTimeoutMs = 20000;

int ProcessB(int fd)
{
	char key[128] = { 0 };
	aclrtNotify notify = nullptr;
	aclrtStream stream = nullptr;
	ssize_t n = read(fd, key, sizeof(key) - 1);

	close(fd);
	if (n <= 0) {
		ERROR_LOG("process B: no key");
		return 1;
	}
	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(kDeviceId));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtNotifyImportByKey(&notify, key, 0));
	INFO_LOG("process B: imported notify %s", key);
	usleep(kDelayMs * 1000);
	CHECK_ACL(aclrtRecordNotify(notify, stream));
	CHECK_ACL(aclrtSynchronizeStream(stream));
	INFO_LOG("process B: recorded the notify");
	CHECK_ACL(aclrtDestroyNotify(notify));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(kDeviceId));
	CHECK_ACL(aclFinalize());
	return 0;
}

int ProcessA(const char *self)
{
	aclrtNotify notify = nullptr;
	aclrtStream stream = nullptr;
	void *dev = nullptr;
	char host[64] = { 0 };
	char key[128] = { 0 };
	int p[2], status = 0;

	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(kDeviceId));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&dev, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMemset(dev, sizeof(host), 0x5a, sizeof(host)));
	CHECK_ACL(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));

	if (pipe(p)) {
		perror("pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(p[1]);
		std::string fd = std::to_string(p[0]);
		execl(self, self, "import", fd.c_str(), (char *)nullptr);
		perror("exec");
		_exit(127);
	}
	close(p[0]);

	int32_t pids[1] = { static_cast<int32_t>(pid) };
	CHECK_ACL(aclrtNotifySetImportPid(notify, pids, 1));
	CHECK_ACL(aclrtNotifyGetExportKey(notify, key, sizeof(key), 0));
	INFO_LOG("process A: exported notify %s to pid %d", key, (int)pid);

	auto start = std::chrono::steady_clock::now();
	CHECK_ACL(aclrtWaitAndResetNotify(notify, stream, kWaitTimeoutMs));
	CHECK_ACL(aclrtMemcpyAsync(host, sizeof(host), dev, sizeof(host),
				   ACL_MEMCPY_DEVICE_TO_HOST, stream));
	if (write(p[1], key, strlen(key)) != (ssize_t)strlen(key)) {
		perror("write");
		return 1;
	}
	close(p[1]);
	CHECK_ACL(aclrtSynchronizeStream(stream));
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
			  std::chrono::steady_clock::now() - start).count();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		ERROR_LOG("process B failed (status %#x)", status);
		return 1;
	}
	INFO_LOG("process A: the stream waited %lld ms for B's record",
		 (long long)ms);
	if (ms < kDelayMs || host[0] != 0x5a || host[63] != 0x5a) {
		ERROR_LOG("the wait did not hold the stream (%lld ms)",
			  (long long)ms);
		return 1;
	}
	CHECK_ACL(aclrtDestroyNotify(notify));
	CHECK_ACL(aclrtFree(dev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(kDeviceId));
	CHECK_ACL(aclFinalize());
	printf("PASS notify_ipc\n");
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "import"))
		return ProcessB(atoi(argv[2]));
	return ProcessA("/proc/self/exe");
}
