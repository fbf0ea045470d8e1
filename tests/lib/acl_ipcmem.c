// SPDX-License-Identifier: MIT
/*
 * Device memory shared between processes (aclrtIpcMem*): a key exported by
 * one process and imported by another (fork, key over a pipe) names the
 * same pages, usable with aclrtMemcpy on both sides; the pid list decides
 * who may import (ACL_ERROR_RT_NO_PERMISSION otherwise), and disabling
 * validation lets in any process of the user; imports outlive the
 * exporter's close, free and exit; an exporter's close or free makes the
 * key unknown (ACL_ERROR_RT_PARAM_INVALID), also when the free races the
 * export; freed exported memory is not handed to the next allocation;
 * malformed keys and other bad arguments get ACL_ERROR_INVALID_PARAM, a
 * thread without a context 107002.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"
#include "nmtest_sys.h"

#define N	(256 * 1024)
#define KEYLEN	65

static void *dev_alloc(size_t n, uint32_t seed)
{
	void *p = NULL;

	ck_assert_int_eq(aclrtMalloc(&p, n, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	acltest_fill(p, n, seed);
	return p;
}

/* aclrtMemcpy of n bytes of dev into a heap copy; checked against seed. */
static size_t copy_verify(const void *dev, size_t n, uint32_t seed)
{
	void *h = malloc(n);
	size_t bad;

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(aclrtMemcpy(h, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST),
			 0);
	bad = acltest_verify(h, n, seed);
	free(h);
	return bad;
}

/* ---- processes ---- */

struct child {
	pid_t pid;
	int to;		/* parent -> child */
	int from;	/* child -> parent */
};

static void xwrite(int fd, const void *p, size_t n)
{
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
}

static int xread(int fd, void *p, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, (char *)p + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static struct child spawn(int (*fn)(int in, int out))
{
	int a[2], b[2];
	struct child c;

	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	c.pid = fork();
	ck_assert_int_ge(c.pid, 0);
	if (!c.pid) {
		close(a[1]);
		close(b[0]);
		_exit(fn(a[0], b[1]));
	}
	close(a[0]);
	close(b[1]);
	c.to = a[1];
	c.from = b[0];
	return c;
}

static int reap(struct child *c)
{
	close(c->to);
	close(c->from);
	return acltest_reap(c->pid);
}

/*
 * The importing child: reads a key, imports it (a refusal's code is its
 * exit status: 1 for NO_PERMISSION, 2 for PARAM_INVALID), checks the
 * pattern (seed 1) with aclrtMemcpy, writes seed 2 over it, says so with
 * one byte, waits for one byte, checks the pattern again (seed 2 still:
 * the memory lives on whatever the parent did meanwhile), closes.
 */
static int importer(int in, int out)
{
	char key[KEYLEN] = { 0 }, b = 0;
	unsigned char *h;
	void *p = NULL;
	int ret;

	if (xread(in, key, KEYLEN) || aclrtSetDevice(0))
		return 90;
	ret = aclrtIpcMemImportByKey(&p, key, 0);
	if (ret == ACL_ERROR_RT_NO_PERMISSION)
		return 1;
	if (ret == ACL_ERROR_RT_PARAM_INVALID)
		return 2;
	if (ret)
		return 91;
	h = malloc(N);
	if (!h || aclrtMemcpy(h, N, p, N, ACL_MEMCPY_DEVICE_TO_HOST))
		return 92;
	if (acltest_verify(h, N, 1) != SIZE_MAX)
		return 93;
	acltest_fill(h, N, 2);
	if (aclrtMemcpy(p, N, h, N, ACL_MEMCPY_HOST_TO_DEVICE))
		return 94;
	if (aclrtFree(p) != ACL_ERROR_RT_PARAM_INVALID)
		return 95;	/* imported memory is not aclrtFree's */
	if (write(out, &b, 1) != 1 || xread(in, &b, 1))
		return 96;
	if (acltest_verify(p, N, 2) != SIZE_MAX)
		return 97;
	free(h);
	if (aclrtIpcMemClose(key))
		return 98;
	aclrtResetDevice(0);
	return 0;
}

static void send_key(struct child *c, const char *key)
{
	char buf[KEYLEN] = { 0 };

	strcpy(buf, key);
	xwrite(c->to, buf, KEYLEN);
}

static void step(struct child *c)
{
	char b = 0;

	ck_assert_int_eq(xread(c->from, &b, 1), 0);
}

static void go_on(struct child *c)
{
	char b = 0;

	xwrite(c->to, &b, 1);
}

/* ---- tests ---- */

struct no_ctx {
	void *dev;
	int export_ret, import_ret;
};

static void *no_ctx_thread(void *arg)
{
	struct no_ctx *a = arg;
	char key[KEYLEN];
	void *p = NULL;

	a->export_ret = aclrtIpcMemGetExportKey(a->dev, 64, key, sizeof(key),
						0);
	a->import_ret = aclrtIpcMemImportByKey(&p,
		"aclmem:mem:0123456789abcdef0123456789abcdef:000000000000", 0);
	return NULL;
}

START_TEST(bad_arguments)
{
	static const char *malformed[] = {
		"",
		"nonsense",
		"aclmem:mem:0123456789abcdef0123456789abcdef:00000000000",
		"aclmem:mem:0123456789abcdef0123456789abcdef:0000000000000",
		"aclmem:mem:0123456789ABCDEF0123456789abcdef:000000000000",
		"aclmem:mem:0123456789abcdef0123456789abcdef-000000000000",
		"aclmem:MEM:0123456789abcdef0123456789abcdef:000000000000",
		"aclmem:mem:0123456789abcdef0123456789abcdeg:000000000000",
	};
	const char *unknown =
		"aclmem:mem:0123456789abcdef0123456789abcdef:000000000000";
	char key[KEYLEN], stack[64];
	int32_t pid = getpid();
	void *dev, *host, *p;
	struct no_ctx nc = { 0 };
	pthread_t t;
	size_t i;

	dev = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtMallocHost(&host, 4096), 0);

	/* NULLs, size 0, short buffers, unknown flags: 100000. */
	ck_assert_int_eq(aclrtIpcMemGetExportKey(NULL, N, key, KEYLEN, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, NULL, KEYLEN, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, 0, key, KEYLEN, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, 56, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, KEYLEN, 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemImportByKey(NULL, unknown, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemImportByKey(&p, NULL, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemImportByKey(&p, unknown, 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemSetImportPid(NULL, &pid, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemSetImportPid(unknown, NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemSetImportPid(unknown, &pid, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemClose(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemSetAttr(NULL,
			 ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0),
			 ACL_ERROR_INVALID_PARAM);

	/* Malformed keys: 100000 from every call that takes one. */
	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		ck_assert_int_eq(aclrtIpcMemImportByKey(&p, malformed[i], 0),
				 ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(aclrtIpcMemSetImportPid(malformed[i], &pid, 1),
				 ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(aclrtIpcMemClose(malformed[i]),
				 ACL_ERROR_INVALID_PARAM);
		ck_assert_int_eq(aclrtIpcMemSetAttr(malformed[i],
				 ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0),
				 ACL_ERROR_INVALID_PARAM);
	}

	/* Well formed but never issued: 107000, a code of its own. */
	ck_assert_int_eq(aclrtIpcMemImportByKey(&p, unknown, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemSetImportPid(unknown, &pid, 1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemClose(unknown), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemSetAttr(unknown,
			 ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0),
			 ACL_ERROR_RT_PARAM_INVALID);

	/* Not device memory of this process, or past its end: 107000. */
	ck_assert_int_eq(aclrtIpcMemGetExportKey(stack, 64, key, KEYLEN, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(host, 64, key, KEYLEN, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemGetExportKey((char *)dev + 64, N, key,
			 KEYLEN, 0), ACL_ERROR_RT_PARAM_INVALID);

	/* A key: the fixed form, 56 characters. */
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, 57, 0), 0);
	ck_assert_uint_eq(strlen(key), 56);
	ck_assert_int_eq(strncmp(key, "aclmem:mem:", 11), 0);
	/* Set attribute: the four links, nothing else. */
	for (i = 0; i <= ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH; i++)
		ck_assert_int_eq(aclrtIpcMemSetAttr(key,
				 ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, i), 0);
	ck_assert_int_eq(aclrtIpcMemSetAttr(key,
			 ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 4),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtIpcMemSetAttr(key, (aclrtIpcMemAttrType)1, 0),
			 ACL_ERROR_INVALID_PARAM);
	/* Pid lists: too long, a pid naming no process. */
	{
		int32_t *many = calloc(1025, sizeof(*many)), none = 0x3ffffff0;

		ck_assert_ptr_nonnull(many);
		for (i = 0; i < 1025; i++)
			many[i] = pid;
		ck_assert_int_eq(aclrtIpcMemSetImportPid(key, many, 1025),
				 ACL_ERROR_RT_OVER_LIMIT);
		free(many);
		ck_assert_int_eq(aclrtIpcMemSetImportPid(key, &none, 1),
				 ACL_ERROR_RT_PARAM_INVALID);
	}

	/* A thread without a context: 107002 once the arguments are good. */
	nc.dev = dev;
	ck_assert_int_eq(pthread_create(&t, NULL, no_ctx_thread, &nc), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(nc.export_ret, ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(nc.import_ret, ACL_ERROR_RT_CONTEXT_NULL);

	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtIpcMemClose(key), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFree(dev), 0);
	ck_assert_int_eq(aclrtFreeHost(host), 0);
}
END_TEST

/*
 * In one process: the exporter is on its own key's list, so it may import
 * it; the import is a second mapping of the same pages, at the offset the
 * key was made for; a second import is the same pointer and needs a second
 * close; aclrtFree refuses imported memory.
 */
START_TEST(same_process)
{
	unsigned char *dev, *imp = NULL, *imp2 = NULL;
	char key[KEYLEN], key2[KEYLEN];

	dev = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev + 4096, N - 4096, key,
						 KEYLEN, 0), 0);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key2, KEYLEN, 0), 0);
	ck_assert_str_ne(key, key2);
	ck_assert_int_eq(aclrtIpcMemImportByKey((void **)&imp, key, 0), 0);
	ck_assert_ptr_nonnull(imp);
	ck_assert_ptr_ne(imp, dev + 4096);
	ck_assert_int_eq(memcmp(imp, dev + 4096, N - 4096), 0);
	ck_assert_int_eq(aclrtIpcMemImportByKey((void **)&imp2, key,
			 ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS), 0);
	ck_assert_ptr_eq(imp2, imp);

	/* One set of pages: a write through either is seen by the other. */
	ck_assert_int_eq(aclrtMemset(imp, 16, 0xa5, 16), 0);
	ck_assert_int_eq(dev[4096], 0xa5);
	ck_assert_int_eq(aclrtMemcpy(imp + 16, 16, dev, 16,
				     ACL_MEMCPY_DEVICE_TO_DEVICE), 0);
	ck_assert_int_eq(memcmp(dev + 4096 + 16, dev, 16), 0);
	/* The start of an imported buffer is still not aclrtFree's. */
	ck_assert_int_eq(aclrtIpcMemImportByKey((void **)&imp2, key2, 0), 0);
	ck_assert_int_eq(aclrtFree(imp2), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtFreeWithDevSync(imp2),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemClose(key2), 0);
	ck_assert_int_eq(aclrtMemset(imp, 16, 0x5a, 16), 0);

	/* Two imports, two closes; then the exporter's close revokes. */
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtMemset(imp, 16, 0x5a, 16), 0);
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtMemset(imp, 16, 0x5a, 16),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtIpcMemImportByKey((void **)&imp, key, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemClose(key), ACL_ERROR_RT_PARAM_INVALID);

	/* aclrtFree without a close revokes the buffer's other key. */
	ck_assert_int_eq(aclrtFree(dev), 0);
	ck_assert_int_eq(aclrtIpcMemImportByKey((void **)&imp, key2, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtIpcMemClose(key2), ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

/*
 * Another process on the list imports, reads the exporter's data and
 * writes its own with aclrtMemcpy, which the exporter sees; a process not
 * on the list is refused; with validation disabled, any process of the
 * user may import.
 */
START_TEST(between_processes)
{
	char key[KEYLEN], key2[KEYLEN];
	struct child c;
	int32_t pid;
	void *dev;

	dev = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, KEYLEN, 0), 0);

	/* Validation on and no pid set yet: no one else may import. */
	c = spawn(importer);
	send_key(&c, key);
	ck_assert_int_eq(reap(&c), 1);

	/* On the list. */
	c = spawn(importer);
	pid = c.pid;
	ck_assert_int_eq(aclrtIpcMemSetImportPid(key, &pid, 1), 0);
	send_key(&c, key);
	step(&c);
	ck_assert_uint_eq(copy_verify(dev, N, 2), SIZE_MAX);
	acltest_fill(dev, N, 2);
	go_on(&c);
	ck_assert_int_eq(reap(&c), 0);

	/* Not on the list: refused with a code of its own. */
	acltest_fill(dev, N, 1);
	c = spawn(importer);
	send_key(&c, key);
	ck_assert_int_eq(reap(&c), 1);
	ck_assert_uint_eq(copy_verify(dev, N, 1), SIZE_MAX);

	/* Validation disabled: no list needed. */
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key2, KEYLEN,
			 ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION), 0);
	c = spawn(importer);
	send_key(&c, key2);
	step(&c);
	ck_assert_uint_eq(copy_verify(dev, N, 2), SIZE_MAX);
	go_on(&c);
	ck_assert_int_eq(reap(&c), 0);

	/* Closed: unknown to a later importer, even a listed one. */
	acltest_fill(dev, N, 1);
	ck_assert_int_eq(aclrtIpcMemClose(key2), 0);
	c = spawn(importer);
	pid = c.pid;
	ck_assert_int_eq(aclrtIpcMemSetImportPid(key, &pid, 1), 0);
	send_key(&c, key2);
	ck_assert_int_eq(reap(&c), 2);
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtFree(dev), 0);
}
END_TEST

/*
 * The exporter closes its key and frees the memory while the importer
 * still maps it: the importer's pages keep its data, and the next
 * allocation of the same size here does not get those pages back from the
 * pool (it would overwrite what the importer sees).
 */
START_TEST(exporter_closes_first)
{
	char key[KEYLEN];
	struct child c;
	int32_t pid;
	void *dev, *again;

	dev = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, KEYLEN, 0), 0);
	c = spawn(importer);
	pid = c.pid;
	ck_assert_int_eq(aclrtIpcMemSetImportPid(key, &pid, 1), 0);
	send_key(&c, key);
	step(&c);		/* imported, seed 2 written */
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtFree(dev), 0);
	again = dev_alloc(N, 3);
	go_on(&c);		/* the child checks seed 2 is still there */
	ck_assert_int_eq(reap(&c), 0);
	ck_assert_uint_eq(copy_verify(again, N, 3), SIZE_MAX);
	ck_assert_int_eq(aclrtFree(again), 0);
}
END_TEST

/*
 * The exporting process exits while this one holds an import: the memory
 * stays, with the exporter's data; the key is gone for new imports.
 */
static int exporter(int in, int out)
{
	char key[KEYLEN] = { 0 }, b;
	int32_t pid = getppid();
	void *dev = NULL;

	if (aclrtSetDevice(0) ||
	    aclrtMalloc(&dev, N, ACL_MEM_MALLOC_NORMAL_ONLY))
		return 90;
	acltest_fill(dev, N, 5);
	if (aclrtIpcMemGetExportKey(dev, N, key, KEYLEN, 0) ||
	    aclrtIpcMemSetImportPid(key, &pid, 1))
		return 91;
	if (write(out, key, KEYLEN) != KEYLEN || xread(in, &b, 1))
		return 92;
	return 0;	/* exits with the key open and the memory held */
}

START_TEST(exporter_exits_first)
{
	char key[KEYLEN];
	void *imp = NULL, *again = NULL;
	struct child c;

	c = spawn(exporter);
	ck_assert_int_eq(xread(c.from, key, KEYLEN), 0);
	ck_assert_int_eq(aclrtIpcMemImportByKey(&imp, key, 0), 0);
	go_on(&c);
	ck_assert_int_eq(reap(&c), 0);
	ck_assert_uint_eq(copy_verify(imp, N, 5), SIZE_MAX);
	ck_assert_int_eq(aclrtMemset(imp, N, 0, N), 0);
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtIpcMemImportByKey(&again, key, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

/* aclFinalize releases imports and forgets keys; a fork child has none. */
static int child_has_no_keys(int in, int out)
{
	char key[KEYLEN];

	(void)out;
	if (xread(in, key, KEYLEN) || aclrtSetDevice(0))
		return 90;
	/* The parent's key is not this process's to close. */
	return aclrtIpcMemClose(key) == ACL_ERROR_RT_PARAM_INVALID ? 0 : 91;
}

START_TEST(fork_and_finalize)
{
	char key[KEYLEN];
	struct child c;
	void *dev, *imp = NULL;

	dev = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, KEYLEN,
			 ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION), 0);
	ck_assert_int_eq(aclrtIpcMemImportByKey(&imp, key, 0), 0);
	c = spawn(child_has_no_keys);
	send_key(&c, key);
	ck_assert_int_eq(reap(&c), 0);

	ck_assert_int_eq(aclInit(NULL), 0);
	ck_assert_int_eq(aclFinalize(), 0);
	ck_assert_int_eq(aclrtSetDevice(0), 0);
	ck_assert_int_eq(aclrtIpcMemClose(key), ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemset(imp, 16, 0, 16), ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

/*
 * An export the driver refuses (the file's NPU_MEM_IPC_MAX_KEYS keys are
 * all live, on another buffer) leaves the buffer as it was: freed, it goes
 * to the pool like one never exported (no FREE reaches the driver), and
 * the next allocation of its size gets it back without a driver call.
 */
START_TEST(failed_export_keeps_pooling)
{
	struct acltest_counters c0, c;
	char key[KEYLEN];
	void *dev, *keyed, *again = NULL;
	unsigned int i;
	int ret = 0;

	keyed = dev_alloc(4096, 1);
	for (i = 0; i <= NPU_MEM_IPC_MAX_KEYS; i++) {
		ret = aclrtIpcMemGetExportKey(keyed, 64, key, KEYLEN,
			ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION);
		if (ret)
			break;
	}
	ck_assert_int_eq(ret, ACL_ERROR_RT_OVER_LIMIT);
	dev = dev_alloc(N, 2);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(dev, N, key, KEYLEN, 0),
			 ACL_ERROR_RT_OVER_LIMIT);

	acltest_counters(&c0);
	ck_assert_int_eq(aclrtFree(dev), 0);
	acltest_counters(&c);
	ck_assert_msg(c.buffers == c0.buffers, "the buffer of a failed export "
		      "went back to the driver (%llu buffers, want %llu), not "
		      "to the pool", (unsigned long long)c.buffers,
		      (unsigned long long)c0.buffers);
	ck_assert_int_eq(aclrtMalloc(&again, N, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_ptr_eq(again, dev);
	acltest_counters(&c);
	ck_assert_uint_eq(c.buffers, c0.buffers);
	ck_assert_int_eq(aclrtFree(again), 0);
	/* Its free revokes the other buffer's keys. */
	ck_assert_int_eq(aclrtFree(keyed), 0);
}
END_TEST

/*
 * aclrtFree racing aclrtIpcMemGetExportKey on the same buffer, over and
 * over, the free landing at a different point of the export each time:
 * the export fails with 107000 (the buffer was gone first) or gives a key
 * that the free then revoked.  Either way no key stays known here: the
 * key is unknown to aclrtIpcMemSetAttr and aclrtIpcMemClose (107000, "not
 * a key this process exported") and names nothing to import.  A key
 * recorded after the free had forgotten the buffer's keys would stay
 * known, and its close would fail on the driver's revoke instead.
 */
#define RACE_SZ		(64 * 1024)

struct race {
	pthread_barrier_t start, done;
	aclrtContext ctx;
	void *dev;
	uint64_t flags;
	char key[KEYLEN];
	int ret;
	bool stop;
};

static void *race_exporter(void *arg)
{
	struct race *r = arg;
	int ctx_ret = aclrtSetCurrentContext(r->ctx);

	for (;;) {
		pthread_barrier_wait(&r->start);
		if (r->stop)
			break;
		r->ret = ctx_ret ? ctx_ret :
			 aclrtIpcMemGetExportKey(r->dev, RACE_SZ, r->key,
						 KEYLEN, r->flags);
		pthread_barrier_wait(&r->done);
	}
	return NULL;
}

static void spin(unsigned int n)
{
	volatile unsigned int i;

	for (i = 0; i < n; i++)
		;
}

/* The key of an export that won the race, after the free: unknown. */
static void check_forgotten(const char *key, unsigned int i)
{
	const char *m;
	void *p = NULL;

	ck_assert_msg(aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,
					 0) == ACL_ERROR_RT_PARAM_INVALID,
		      "round %u: the key of a freed buffer is still recorded",
		      i);
	aclGetRecentErrMsg();
	ck_assert_int_eq(aclrtIpcMemClose(key), ACL_ERROR_RT_PARAM_INVALID);
	m = aclGetRecentErrMsg();
	ck_assert_msg(m && strstr(m, "not a key this process exported"),
		      "round %u: close: %s", i, m ? m : "(no message)");
	ck_assert_int_eq(aclrtIpcMemImportByKey(&p, key, 0),
			 ACL_ERROR_RT_PARAM_INVALID);
}

/* Rounds of the race below: it stops after RACE_ROUNDS, or after 2 s once
 * it made RACE_MIN_ROUNDS (however long a slow guest takes for those, up
 * to the common ceiling). */
#define RACE_ROUNDS	4000
#define RACE_MIN_ROUNDS	100

START_TEST(free_races_export)
{
	unsigned int i, exported = 0, refused = 0;
	struct nm_span span;
	struct race r;
	pthread_t t;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(aclrtGetCurrentContext(&r.ctx), 0);
	ck_assert_int_eq(pthread_barrier_init(&r.start, NULL, 2), 0);
	ck_assert_int_eq(pthread_barrier_init(&r.done, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, race_exporter, &r), 0);
	nm_span_start(&span, 2);
	for (i = 0; i < RACE_ROUNDS && nm_span_more(&span, i >= RACE_MIN_ROUNDS);
	     i++) {
		ck_assert_int_eq(aclrtMalloc(&r.dev, RACE_SZ,
					     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
		/* DEFAULT's export is two ioctls, the other's one. */
		r.flags = i & 1 ?
			  ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION :
			  ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT;
		pthread_barrier_wait(&r.start);
		spin(i % 61 * 97);
		ck_assert_int_eq(aclrtFree(r.dev), 0);
		pthread_barrier_wait(&r.done);
		if (r.ret == ACL_ERROR_RT_PARAM_INVALID) {
			refused++;
			continue;
		}
		ck_assert_msg(r.ret == ACL_SUCCESS, "round %u: export = %d",
			      i, r.ret);
		exported++;
		check_forgotten(r.key, i);
	}
	r.stop = true;
	pthread_barrier_wait(&r.start);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	pthread_barrier_destroy(&r.start);
	pthread_barrier_destroy(&r.done);
	printf("free_races_export: %u rounds in %.1f s: %u exports before the "
	       "free, %u refused\n", i, nm_span_secs(&span), exported, refused);
	ck_assert_msg(i >= RACE_MIN_ROUNDS, "only %u rounds in %.0f s, the "
		      "ceiling", i, nm_span_secs(&span));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_ipcmem");
	const TTest *tests[] = {
		bad_arguments, same_process, between_processes,
		exporter_closes_first, exporter_exits_first, fork_and_finalize,
		failed_export_keeps_pooling, free_races_export,
	};
	size_t i;

	acltest_require_device();
	/* The pool stays on: exported memory must not go into it. */
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		nm_add_fx(s, tests[i], tests[i] == free_races_export ?
			  nm_span_ceiling(2) + 60 : 60, &acltest_device);
	return acltest_run(s);
}
