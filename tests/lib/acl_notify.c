// SPDX-License-Identifier: MIT
/*
 * Notifies: a record on one stream releases a wait on another, in stream
 * order, and the wait clears the flag; waits time out with
 * ACL_ERROR_RT_WAIT_TIMEOUT at synchronisation; between processes a key
 * exported by one is imported by another that the exporter allowed
 * (aclrtNotifySetImportPid), and records there release waits here; a
 * process not allowed gets ACL_ERROR_RT_NO_PERMISSION; bad keys, flags and
 * handles get their errors.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"

static void sleep_fn(void *arg)
{
	usleep((useconds_t)(long)arg);
}

START_TEST(record_releases_wait)
{
	aclrtStream a, b;
	aclrtNotify n;
	unsigned char *buf, host[64];
	uint32_t id;

	ck_assert_int_eq(aclrtCreateStream(&a), 0);
	ck_assert_int_eq(aclrtCreateStream(&b), 0);
	ck_assert_int_eq(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT), 0);
	ck_assert_int_eq(aclrtGetNotifyId(n, &id), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&buf, 64, 2), 0);
	ck_assert_int_eq(aclrtMemset(buf, 64, 0, 64), 0);
	/* b waits, then copies what a fills late and then records. */
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, b, 0), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(host, 64, buf, 64,
					  ACL_MEMCPY_DEVICE_TO_HOST, b), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(a, sleep_fn, (void *)200000L), 0);
	ck_assert_int_eq(aclrtMemsetAsync(buf, 64, 0x3c, 64, a), 0);
	ck_assert_int_eq(aclrtRecordNotify(n, a), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), 0);
	ck_assert_int_eq(host[0], 0x3c);
	ck_assert_int_eq(host[63], 0x3c);
	/* The wait cleared it: a second wait times out. */
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, b, 50), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), ACL_ERROR_RT_WAIT_TIMEOUT);
	/* Two records, one wait: set is a flag, not a count. */
	ck_assert_int_eq(aclrtRecordNotify(n, a), 0);
	ck_assert_int_eq(aclrtRecordNotify(n, a), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(a), 0);
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, b, 1000), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), 0);
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, b, 50), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(b), ACL_ERROR_RT_WAIT_TIMEOUT);
	/* A batch reset clears at once; a bad handle clears nothing. */
	{
		aclrtNotify both[2] = { n, NULL };
		int dummy;

		ck_assert_int_eq(aclrtRecordNotify(n, a), 0);
		ck_assert_int_eq(aclrtSynchronizeStream(a), 0);
		both[1] = &dummy;
		ck_assert_int_eq(aclrtNotifyBatchReset(both, 2),
				 ACL_ERROR_RT_PARAM_INVALID);
		ck_assert_int_eq(aclrtNotifyBatchReset(both, 1), 0);
		ck_assert_int_eq(aclrtNotifyBatchReset(NULL, 1),
				 ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(aclrtWaitAndResetNotify(n, b, 50), 0);
		ck_assert_int_eq(aclrtSynchronizeStream(b),
				 ACL_ERROR_RT_WAIT_TIMEOUT);
	}
	ck_assert_int_eq(aclrtDestroyNotify(n), 0);
	ck_assert_int_eq(aclrtDestroyNotify(n), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtRecordNotify(n, a), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(a), 0);
	ck_assert_int_eq(aclrtDestroyStream(b), 0);
	ck_assert_int_eq(aclrtFree(buf), 0);
}
END_TEST

START_TEST(bad_arguments)
{
	aclrtNotify n, m;
	char key[128];
	int32_t pid = getpid();

	ck_assert_int_eq(aclrtCreateNotify(NULL, 0), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateNotify(&n, 5), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDestroyNotify(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT), 0);
	ck_assert_int_eq(aclrtNotifyGetExportKey(n, key, 8, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtNotifyGetExportKey(n, NULL, sizeof(key), 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtNotifyGetExportKey(n, key, sizeof(key), 0x8),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtNotifySetImportPid(n, NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtNotifySetImportPid(n, &pid, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtNotifyImportByKey(&m, "nonsense", 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtNotifyImportByKey(&m,
		"aclmem:1:3:00000000000000000000000000000000", 0),
		ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtNotifyImportByKey(NULL, "x", 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtNotifyGetExportKey(n, key, sizeof(key), 0), 0);
	ck_assert_int_eq(aclrtNotifyImportByKey(&m, key, 0x10),
			 ACL_ERROR_INVALID_PARAM);
	/* The exporter itself may import its own key. */
	ck_assert_int_eq(aclrtNotifyImportByKey(&m, key, 0), 0);
	/* An imported notify is not exported again. */
	ck_assert_int_eq(aclrtNotifyGetExportKey(m, key, sizeof(key), 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyNotify(m), 0);
	ck_assert_int_eq(aclrtDestroyNotify(n), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	ck_assert_int_eq(aclrtCreateNotify(&n, 0), ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
}
END_TEST

/*
 * The child imports the parent's notify by key (read from a pipe) and
 * records it after a delay; it reports the import's code through its exit
 * status.
 */
static int child_import_and_record(int rfd, void *unused)
{
	char key[128] = { 0 };
	aclrtNotify n;
	aclrtStream s;
	ssize_t got;
	int ret;

	(void)unused;
	got = read(rfd, key, sizeof(key) - 1);
	if (got <= 0)
		return 90;
	if (aclrtSetDevice(0) || aclrtCreateStream(&s))
		return 91;
	ret = aclrtNotifyImportByKey(&n, key, 0);
	if (ret == ACL_ERROR_RT_NO_PERMISSION)
		return 92;
	if (ret)
		return 93;
	usleep(200000);
	if (aclrtRecordNotify(n, s) || aclrtSynchronizeStream(s))
		return 94;
	aclrtDestroyNotify(n);
	aclrtDestroyStream(s);
	aclrtResetDevice(0);
	return 0;
}

START_TEST(between_processes)
{
	aclrtNotify n;
	aclrtStream s;
	char key[128];
	int32_t pid;
	int wfd;
	pid_t child;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtCreateNotify(&n, ACL_NOTIFY_DEFAULT), 0);
	ck_assert_int_eq(aclrtNotifyGetExportKey(n, key, sizeof(key), 0), 0);
	ck_assert_uint_le(strlen(key) + 1, 65);

	/* Allowed: the child's record releases our wait. */
	child = acltest_spawn(child_import_and_record, NULL, &wfd);
	pid = child;
	ck_assert_int_eq(aclrtNotifySetImportPid(n, &pid, 1), 0);
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, s, 20000), 0);
	ck_assert_int_eq(write(wfd, key, strlen(key)), (ssize_t)strlen(key));
	close(wfd);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(acltest_reap(child), 0);

	/* Not allowed: refused, and nothing is recorded. */
	child = acltest_spawn(child_import_and_record, NULL, &wfd);
	ck_assert_int_eq(write(wfd, key, strlen(key)), (ssize_t)strlen(key));
	close(wfd);
	ck_assert_int_eq(acltest_reap(child), 92);

	/* Validation disabled on export: anyone the kernel lets in. */
	ck_assert_int_eq(aclrtNotifyGetExportKey(n, key, sizeof(key),
			ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION), 0);
	child = acltest_spawn(child_import_and_record, NULL, &wfd);
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, s, 20000), 0);
	ck_assert_int_eq(write(wfd, key, strlen(key)), (ssize_t)strlen(key));
	close(wfd);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(acltest_reap(child), 0);

	ck_assert_int_eq(aclrtDestroyNotify(n), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
}
END_TEST

/* A wait on a force-destroyed stream gives up instead of hanging. */
START_TEST(destroy_force_with_waiter)
{
	aclrtStream s;
	aclrtNotify n;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtCreateNotify(&n, 0), 0);
	ck_assert_int_eq(aclrtWaitAndResetNotify(n, s, 0), 0);
	usleep(50000);
	ck_assert_int_eq(aclrtDestroyStreamForce(s), 0);
	ck_assert_int_eq(aclrtDestroyNotify(n), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_notify");

	acltest_require_device();
	nm_add_fx(s, record_releases_wait, 30, &acltest_device);
	nm_add_fx(s, bad_arguments, 30, &acltest_device);
	nm_add_fx(s, between_processes, 60, &acltest_device);
	nm_add_fx(s, destroy_force_with_waiter, 30, &acltest_device);
	return acltest_run(s);
}
