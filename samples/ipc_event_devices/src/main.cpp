// SPDX-License-Identifier: MIT
/*
 * ipc_event_devices: IPC memory and an IPC event between two processes on
 * two devices, written only against CANN's documented API.
 *
 * Process A (no arguments, device 0) allocates device memory and an
 * ACL_EVENT_IPC event, starts process B (this program again,
 * "ipc_event_devices import <in> <out>") with two pipes, allows B's pid to
 * import the memory, sends the memory's key and the event's handle, then
 * queues a copy of a pattern into the memory and records the event after
 * it, and tells B.  B (device 1) imports the memory with
 * ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS (it is device 0's), opens
 * the event, makes its stream wait for A's record and copies the memory
 * into its own, device to device; it checks every byte and exits 0.  A
 * prints "PASS ipc_event_devices" when B did; with fewer than two devices
 * it prints why and exits 77 (skipped).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
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
			return 1;                                            \
		}                                                            \
	} while (0)

namespace {

const int32_t kDevA = 0;
const int32_t kDevB = 1;
const size_t kSize = 1u << 20;
const size_t kKeyLen = 65;

// What A sends B: the memory's key and the event's handle.
struct Message {
	char key[kKeyLen];
	aclrtIpcEventHandle event;
};

uint8_t Pattern(size_t i)
{
	return static_cast<uint8_t>((i * 29u + 11u) ^ (i >> 9));
}

bool ReadAll(int fd, void *p, size_t n)
{
	char *c = static_cast<char *>(p);
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r <= 0)
			return false;
		c += r;
		n -= static_cast<size_t>(r);
	}
	return true;
}

int ProcessB(int in, int out)
{
	Message m;
	char go = 0;
	void *theirs = nullptr, *mine = nullptr;
	aclrtEvent event = nullptr;
	aclrtStream stream = nullptr;

	if (!ReadAll(in, &m, sizeof(m))) {
		ERROR_LOG("process B: no key");
		return 1;
	}
	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(kDevB));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&mine, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	// A's memory is device 0's: the flag enables peer access to it.
	CHECK_ACL(aclrtIpcMemImportByKey(&theirs, m.key,
					 ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS));
	CHECK_ACL(aclrtIpcOpenEventHandle(m.event, &event));
	INFO_LOG("process B: device %d, imported %s and the event", kDevB,
		 m.key);
	if (write(out, &go, 1) != 1 || !ReadAll(in, &go, 1)) {
		ERROR_LOG("process B: A went away");
		return 1;
	}
	// A's record was queued before it said so: wait for it, then copy.
	CHECK_ACL(aclrtStreamWaitEvent(stream, event));
	CHECK_ACL(aclrtMemcpyAsync(mine, kSize, theirs, kSize,
				   ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
	CHECK_ACL(aclrtSynchronizeStream(stream));
	std::vector<uint8_t> host(kSize);
	CHECK_ACL(aclrtMemcpy(host.data(), kSize, mine, kSize,
			      ACL_MEMCPY_DEVICE_TO_HOST));
	for (size_t i = 0; i < kSize; i++) {
		if (host[i] != Pattern(i)) {
			ERROR_LOG("process B: byte %zu is 0x%02x, expected 0x%02x",
				  i, host[i], Pattern(i));
			return 1;
		}
	}
	INFO_LOG("process B: %zu bytes of device %d's memory correct on device %d",
		 kSize, kDevA, kDevB);
	CHECK_ACL(aclrtDestroyEvent(event));
	CHECK_ACL(aclrtIpcMemClose(m.key));
	CHECK_ACL(aclrtFree(mine));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(kDevB));
	CHECK_ACL(aclFinalize());
	return 0;
}

int ProcessA(const char *self)
{
	Message m;
	uint32_t count = 0;
	void *dev = nullptr;
	aclrtEvent event = nullptr;
	aclrtStream stream = nullptr;
	int toB[2], fromB[2], status = 0;
	char go = 0;

	memset(&m, 0, sizeof(m));
	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtGetDeviceCount(&count));
	if (count < 2) {
		INFO_LOG("%u device(s): ipc_event_devices needs two", count);
		CHECK_ACL(aclFinalize());
		printf("SKIP ipc_event_devices\n");
		return 77;
	}
	CHECK_ACL(aclrtSetDevice(kDevA));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
	CHECK_ACL(aclrtIpcGetEventHandle(event, &m.event));

	if (pipe(toB) || pipe(fromB)) {
		perror("pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(toB[1]);
		close(fromB[0]);
		std::string in = std::to_string(toB[0]);
		std::string out = std::to_string(fromB[1]);
		execl(self, self, "import", in.c_str(), out.c_str(),
		      (char *)nullptr);
		perror("exec");
		_exit(127);
	}
	close(toB[0]);
	close(fromB[1]);

	CHECK_ACL(aclrtIpcMemGetExportKey(dev, kSize, m.key, sizeof(m.key), 0));
	int32_t pids[1] = { static_cast<int32_t>(pid) };
	CHECK_ACL(aclrtIpcMemSetImportPid(m.key, pids, 1));
	INFO_LOG("process A: device %d, exported %s to pid %d", kDevA, m.key,
		 (int)pid);
	if (write(toB[1], &m, sizeof(m)) != (ssize_t)sizeof(m) ||
	    !ReadAll(fromB[0], &go, 1)) {
		ERROR_LOG("process A: B went away");
		return 1;
	}

	std::vector<uint8_t> host(kSize);
	for (size_t i = 0; i < kSize; i++)
		host[i] = Pattern(i);
	CHECK_ACL(aclrtMemcpyAsync(dev, kSize, host.data(), kSize,
				   ACL_MEMCPY_HOST_TO_DEVICE, stream));
	CHECK_ACL(aclrtRecordEvent(event, stream));
	if (write(toB[1], &go, 1) != 1) {
		perror("write");
		return 1;
	}
	CHECK_ACL(aclrtSynchronizeStream(stream));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		ERROR_LOG("process B failed (status %#x)", status);
		return 1;
	}
	close(toB[1]);
	close(fromB[0]);
	CHECK_ACL(aclrtIpcMemClose(m.key));
	CHECK_ACL(aclrtDestroyEvent(event));
	CHECK_ACL(aclrtFree(dev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(kDevA));
	CHECK_ACL(aclFinalize());
	printf("PASS ipc_event_devices\n");
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "import"))
		return ProcessB(atoi(argv[2]), atoi(argv[3]));
	return ProcessA("/proc/self/exe");
}
