// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaclmem, loaded at run time so that a half-built library only costs
 * its rows (the allocation section's children, the copy section): the ACL
 * calls the benchmark makes, looked up once per process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "bench.h"

#ifndef BENCH_ACL_LIB
#define BENCH_ACL_LIB "libaclmem.so.1"
#endif

struct acl_calls acl;

#define SYM(field, name)	(acl.field = dlsym(acl.dl, name))

/* Load, aclInit, aclrtSetDevice(0): 0, or -errno and why. */
int acl_load(char *why, size_t len)
{
	const char *path = getenv("NPU_MEM_BENCH_ACL_LIB");

	acl.dl = dlopen(path ? path : BENCH_ACL_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!acl.dl)
		acl.dl = dlopen("libaclmem.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!acl.dl) {
		snprintf(why, len, "libaclmem not loadable");
		return -ENOENT;
	}
	if (!SYM(init, "aclInit") || !SYM(finalize, "aclFinalize") ||
	    !SYM(set_device, "aclrtSetDevice") ||
	    !SYM(reset_device, "aclrtResetDevice") ||
	    !SYM(malloc, "aclrtMalloc") ||
	    !SYM(malloc_cached, "aclrtMallocCached") ||
	    !SYM(malloc_host, "aclrtMallocHost") || !SYM(free, "aclrtFree") ||
	    !SYM(free_host, "aclrtFreeHost") || !SYM(memcpy, "aclrtMemcpy") ||
	    !SYM(memcpy_async, "aclrtMemcpyAsync") ||
	    !SYM(memset, "aclrtMemset") ||
	    !SYM(memset_async, "aclrtMemsetAsync") ||
	    !SYM(create_stream, "aclrtCreateStream") ||
	    !SYM(destroy_stream, "aclrtDestroyStream") ||
	    !SYM(sync, "aclrtSynchronizeStream")) {
		snprintf(why, len, "libaclmem lacks the ACL calls");
		return -EOPNOTSUPP;
	}
	if (acl.init(NULL) != ACL_SUCCESS || acl.set_device(0) != ACL_SUCCESS) {
		snprintf(why, len, "aclInit/aclrtSetDevice failed");
		return -EIO;
	}
	return 0;
}

void acl_unload(void)
{
	if (!acl.dl)
		return;
	acl.reset_device(0);
	acl.finalize();
}
