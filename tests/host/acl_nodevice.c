// SPDX-License-Identifier: MIT
/*
 * libaclmem without a device, on the host: argument errors come first
 * (ACL_ERROR_INVALID_PARAM, as in CANN), then "no current device"
 * (ACL_ERROR_RT_CONTEXT_NULL); a missing node is ACL_ERROR_RT_NO_DEVICE and
 * an unreadable one ACL_ERROR_RT_NO_PERMISSION, with a message on stderr
 * only when NPU_MEM_LOG asks; aclInit/aclFinalize codes.  The device path is
 * pointed at files of the test's choosing with NPU_MEM_DEVICE, so this runs
 * the same whether or not /dev/npu-mem exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"

#define MISSING "/nonexistent/npu-mem"

START_TEST(missing_device)
{
	uint32_t n = 99;

	setenv("NPU_MEM_DEVICE", MISSING, 1);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_ERROR_RT_NO_DEVICE);
	ck_assert_int_eq(aclrtGetDeviceCount(&n), ACL_ERROR_RT_NO_DEVICE);
	ck_assert_uint_eq(n, 0);
	/* The failed SetDevice left no current device behind. */
	ck_assert_int_eq(aclrtGetDevice((int32_t *)&n), ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

START_TEST(bad_device_ids)
{
	setenv("NPU_MEM_DEVICE", MISSING, 1);
	ck_assert_int_eq(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtSetDevice(INT32_MAX), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDeviceForce(-3), ACL_ERROR_RT_INVALID_DEVICEID);
	/* Resetting a device nobody set is harmless. */
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

/* Open fails with EACCES: a mode 000 file, opened by an unprivileged uid. */
START_TEST(no_permission)
{
	char path[] = "/tmp/acl_nodev.XXXXXX";
	int fd = mkstemp(path), st;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(chmod(path, 0), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		uint32_t n = 0;

		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(10);
		setenv("NPU_MEM_DEVICE", path, 1);
		if (aclrtSetDevice(0) != ACL_ERROR_RT_NO_PERMISSION)
			_exit(11);
		/* The node exists: one device, not usable by us. */
		if (aclrtGetDeviceCount(&n) != ACL_SUCCESS || n != 1)
			_exit(12);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	unlink(path);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child status %#x", st);
}
END_TEST

START_TEST(no_context_memory_calls)
{
	aclrtPtrAttributes attr;
	void *p = (void *)0x1000;
	char host[64];
	size_t f, t;

	setenv("NPU_MEM_DEVICE", MISSING, 1);
	/* Argument errors first... */
	ck_assert_int_eq(aclrtMalloc(NULL, 100, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMalloc(&p, 0, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocCached(&p, SIZE_MAX, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocAlign32(&p, SIZE_MAX - 10, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocHost(NULL, 10), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemFlush(NULL, 10), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemFlush(host, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemInvalidate(NULL, 10), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemInvalidate(host, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy(NULL, 8, host, 8, ACL_MEMCPY_HOST_TO_HOST),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy(host, 8, NULL, 8, ACL_MEMCPY_HOST_TO_HOST),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy(host, 8, host, 8, (aclrtMemcpyKind)8),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpy(host, 8, host, 8, (aclrtMemcpyKind)-1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemset(NULL, 8, 0, 8), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, NULL, &t),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, &f, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtPointerGetAttributes(NULL, &attr),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtPointerGetAttributes(host, NULL),
			 ACL_ERROR_INVALID_PARAM);
	/* ...nothing to do succeeds whatever the pointers (CANN)... */
	ck_assert_int_eq(aclrtMemcpy(NULL, 0, NULL, 0, (aclrtMemcpyKind)99),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemset(NULL, 0, 0, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpyAsync(NULL, 0, NULL, 0, ACL_MEMCPY_DEFAULT,
					  NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemsetAsync(NULL, 0, 0, 0, NULL), ACL_SUCCESS);
	/* ...then no current device. */
	p = NULL;
	ck_assert_int_eq(aclrtMalloc(&p, 100, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(aclrtMallocCached(&p, 100, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMallocAlign32(&p, 100, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMallocHost(&p, 100), ACL_ERROR_RT_CONTEXT_NULL);
	/* Freeing needs no context (CANN frees through the driver): a
	 * pointer that is no buffer is refused for what it is. */
	ck_assert_int_eq(aclrtFree(host), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeHost(host), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemFlush(host, 8), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMemInvalidate(host, 8), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMemcpy(host, 64, host + 8, 8, ACL_MEMCPY_HOST_TO_HOST),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtMemset(host, 64, 0, 8), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtGetMemInfo(ACL_DDR_MEM, &f, &t),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtGetDevice((int32_t *)&f), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtCreateStream((aclrtStream *)&p),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
	/* Attributes need no device: memory ACL did not allocate. */
	ck_assert_int_eq(aclrtPointerGetAttributes(host, &attr), ACL_SUCCESS);
	ck_assert_int_eq(attr.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
}
END_TEST

START_TEST(run_mode)
{
	aclrtRunMode m = ACL_DEVICE;

	ck_assert_int_eq(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetRunMode(&m), ACL_SUCCESS);
	ck_assert_int_eq(m, ACL_HOST);
}
END_TEST

START_TEST(init_finalize)
{
	char path[] = "/tmp/acl_cfg.XXXXXX";
	int fd = mkstemp(path);
	aclError r;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "{}\n", 3), 3);
	close(fd);
	/* Whatever state earlier tests left (CK_FORK=no): end up finalized. */
	r = aclFinalize();
	ck_assert(r == ACL_SUCCESS || r == ACL_ERROR_REPEAT_FINALIZE);
	ck_assert_int_eq(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
	ck_assert_int_eq(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
	ck_assert_int_eq(aclInit(NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
	ck_assert_int_eq(aclInit(path), ACL_ERROR_REPEAT_INITIALIZE);
	ck_assert_int_eq(aclFinalize(), ACL_SUCCESS);
	ck_assert_int_eq(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
	ck_assert_int_eq(aclInit(path), ACL_SUCCESS);
	ck_assert_int_eq(aclFinalize(), ACL_SUCCESS);
	ck_assert_int_eq(aclInit(""), ACL_SUCCESS);
	ck_assert_int_eq(aclFinalize(), ACL_SUCCESS);
	unlink(path);
}
END_TEST

/*
 * Run this program again as "--set-device" with the given NPU_MEM_LOG and
 * return what it wrote to stderr.  A fresh process, because the log level
 * is read once per process.
 */
static char *stderr_of_child(const char *log)
{
	static char buf[4096];
	int pfd[2], st;
	ssize_t n, len = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		setenv("NPU_MEM_DEVICE", MISSING, 1);
		if (log)
			setenv("NPU_MEM_LOG", log, 1);
		else
			unsetenv("NPU_MEM_LOG");
		execl("/proc/self/exe", "acl_nodevice", "--set-device", NULL);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(pfd[0]);
	buf[len] = '\0';
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child status %#x, stderr: %s", st, buf);
	return buf;
}

START_TEST(quiet_by_default)
{
	ck_assert_str_eq(stderr_of_child(NULL), "");
	ck_assert_str_eq(stderr_of_child("none"), "");
}
END_TEST

START_TEST(log_explains_missing_module)
{
	const char *out = stderr_of_child("error");

	ck_assert_msg(strstr(out, "libaclmem: error:") &&
		      strstr(out, MISSING) &&
		      strstr(out, "npu_mem module"),
		      "stderr was: %s", out);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s;

	if (argc > 1 && !strcmp(argv[1], "--set-device"))
		return aclrtSetDevice(0) == ACL_ERROR_RT_NO_DEVICE ? 0 : 1;

	s = suite_create("acl_nodevice");
	nm_add(s, missing_device, 10);
	nm_add(s, bad_device_ids, 10);
	nm_add(s, no_permission, 10);
	nm_add(s, no_context_memory_calls, 10);
	nm_add(s, run_mode, 10);
	nm_add(s, init_finalize, 10);
	nm_add(s, quiet_by_default, 10);
	nm_add(s, log_explains_missing_module, 10);
	return acltest_run(s);
}
