// SPDX-License-Identifier: GPL-2.0-only
/*
 * acl-probe: the ACL calls an application makes first, as the user the
 * access test runs it as: aclrtSetDevice(0), aclrtMalloc, aclrtFree.
 * Prints "aclrtSetDevice=CODE" and, when that succeeded, "aclrtMalloc=CODE";
 * exits 0 when every call returned ACL_SUCCESS, 1 otherwise.  Diagnostics on
 * stderr are the library's own (NPU_MEM_LOG).
 */
#include <stdio.h>

#include <acl/acl.h>

int main(void)
{
	void *p = NULL;
	aclError ret;

	ret = aclrtSetDevice(0);
	printf("aclrtSetDevice=%d\n", ret);
	if (ret != ACL_SUCCESS)
		return 1;
	ret = aclrtMalloc(&p, 65536, ACL_MEM_MALLOC_NORMAL_ONLY);
	printf("aclrtMalloc=%d\n", ret);
	if (ret == ACL_SUCCESS)
		ret = aclrtFree(p);
	aclrtResetDevice(0);
	return ret == ACL_SUCCESS ? 0 : 1;
}
