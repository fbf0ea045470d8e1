// SPDX-License-Identifier: MIT
/*
 * ascendc_print: a kernel that prints (AscendC::printf), launched with
 * ACLRT_LAUNCH_KERNEL; the program takes what the blocks wrote to its
 * standard output while the stream ran, and checks that every block
 * printed its own line, once and whole, with the right sum.  Prints what
 * the kernel printed, then "PASS ascendc_print", and exits 0.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "acl/acl.h"
#include "aclrtlaunch_print_custom.h"

#define CHECK_ACL(expr)                                                     \
	do {                                                                \
		aclError _ret = (expr);                                     \
		if (_ret != ACL_SUCCESS) {                                  \
			std::fprintf(stderr, "%s:%d: %s: error %d\n", __FILE__, \
				     __LINE__, #expr, (int)_ret);           \
			return 1;                                           \
		}                                                           \
	} while (0)

int main()
{
	constexpr uint32_t blockDim = 6;
	constexpr uint32_t perBlock = 100;
	std::vector<int32_t> x(blockDim * perBlock);
	aclrtStream stream = nullptr;
	std::string out;
	char buf[4096];
	int bad = 0;
	void *xDev;

	for (size_t i = 0; i < x.size(); i++)
		x[i] = (int32_t)i;
	CHECK_ACL(aclInit(nullptr));
	CHECK_ACL(aclrtSetDevice(0));
	CHECK_ACL(aclrtCreateStream(&stream));
	CHECK_ACL(aclrtMalloc(&xDev, x.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST));
	CHECK_ACL(aclrtMemcpy(xDev, x.size() * 4, x.data(), x.size() * 4,
			      ACL_MEMCPY_HOST_TO_DEVICE));

	/* What the blocks print goes to a temporary file while they run. */
	FILE *tmp = std::tmpfile();
	int saved = dup(1);

	if (!tmp || saved < 0)
		return 1;
	std::fflush(stdout);
	dup2(fileno(tmp), 1);
	aclError launched = (aclError)ACLRT_LAUNCH_KERNEL(print_custom)(blockDim, stream,
									 xDev, perBlock);
	aclError synced = aclrtSynchronizeStream(stream);

	std::fflush(stdout);
	dup2(saved, 1);
	close(saved);
	CHECK_ACL(launched);
	CHECK_ACL(synced);
	std::rewind(tmp);
	for (size_t n; (n = std::fread(buf, 1, sizeof(buf), tmp)) > 0;)
		out.append(buf, n);
	std::fclose(tmp);
	std::printf("%s", out.c_str());

	for (uint32_t b = 0; b < blockDim; b++) {
		int32_t sum = 0;
		char line[128];
		size_t at, count = 0;

		for (uint32_t i = 0; i < perBlock; i++)
			sum += x[b * perBlock + i];
		std::snprintf(line, sizeof(line), "block %u of %u: sum %d\n", b,
			      blockDim, sum);
		for (at = out.find(line); at != std::string::npos;
		     at = out.find(line, at + 1))
			if (at == 0 || out[at - 1] == '\n')
				count++;
		if (count != 1) {
			std::printf("block %u: \"%.*s\" printed %zu times\n", b,
				    (int)std::strlen(line) - 1, line, count);
			bad++;
		}
	}
	if (std::count(out.begin(), out.end(), '\n') != blockDim) {
		std::printf("%zu lines, want %u\n",
			    (size_t)std::count(out.begin(), out.end(), '\n'), blockDim);
		bad++;
	}

	CHECK_ACL(aclrtFree(xDev));
	CHECK_ACL(aclrtDestroyStream(stream));
	CHECK_ACL(aclrtResetDevice(0));
	CHECK_ACL(aclFinalize());
	if (bad) {
		std::printf("FAIL ascendc_print\n");
		return 1;
	}
	std::printf("PASS ascendc_print\n");
	return 0;
}
