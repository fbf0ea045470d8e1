// SPDX-License-Identifier: MIT
/*
 * Batched copies (aclrtMemcpyBatch*), aclrtMemcpyAsyncWithCondition, the
 * cache operations in stream order (aclrtCmo*) and aclrtDeviceL2CacheFlush:
 * success paths, the documented argument rules with CANN's codes and
 * failIndex, and the stream-order behaviour (queued work, waits for
 * unpinned host memory, descriptors read when the task runs, barriers).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acltest.h"
#include "acltest_gate.h"
#include "acl/acl.h"

#define N 4096

static unsigned char *dev, *dev2, *pin;
static aclrtStream st;

static void setup(void)
{
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc((void **)&dev, N, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc((void **)&dev2, N, 2), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMallocHost((void **)&pin, N), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&st), ACL_SUCCESS);
}

static void teardown(void)
{
	aclrtDestroyStream(st);
	aclrtFree(dev);
	aclrtFree(dev2);
	aclrtFreeHost(pin);
	aclrtResetDevice(0);
}

static const aclrtMemLocation HOST = { 0, ACL_MEM_LOCATION_TYPE_HOST };
static const aclrtMemLocation DEV = { 0, ACL_MEM_LOCATION_TYPE_DEVICE };

static aclrtMemcpyBatchAttr attr(aclrtMemLocation src, aclrtMemLocation dst)
{
	aclrtMemcpyBatchAttr a;

	memset(&a, 0, sizeof(a));
	a.srcLoc = src;
	a.dstLoc = dst;
	return a;
}

/* Bytes ACL reserved for the buffer at p (CANN rounds sizes up). */
static size_t reserved(void *p)
{
	void *base;
	size_t size;

	ck_assert_int_eq(aclrtMemGetAddressRange(p, &base, &size), 0);
	ck_assert_ptr_eq(base, p);
	return size;
}

/* ---- holding the stream ---- */

static struct acltest_gate gate;

/* Earlier work a call has to wait for, to show that it waits. */
static void nap(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
}

/* ---- batches ---- */

START_TEST(batch_sync_copies)
{
	unsigned char *h = malloc(3 * 100), back[300];
	void *dsts[3] = { dev, dev + 1000, dev2 }, *srcs[3];
	size_t maxs[3] = { N, N - 1000, 50 }, sizes[3] = { 100, 100, 50 };
	aclrtMemcpyBatchAttr at[2] = { attr(HOST, DEV), attr(HOST, DEV) };
	size_t idx[2] = { 0, 2 }, fail = 7;
	void *bd[3], *bs[3];
	int i;

	ck_assert_ptr_nonnull(h);
	for (i = 0; i < 3; i++) {
		srcs[i] = h + 100 * i;
		memset(srcs[i], 0x11 * (i + 1), 100);
	}
	ck_assert_int_eq(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 3, at, idx,
					  2, &fail), ACL_SUCCESS);
	ck_assert_uint_eq(fail, SIZE_MAX);
	ck_assert_uint_eq(dev[0], 0x11);
	ck_assert_uint_eq(dev[99], 0x11);
	ck_assert_uint_eq(dev[100], 0);
	ck_assert_uint_eq(dev[1000], 0x22);
	ck_assert_uint_eq(dev2[49], 0x33);
	ck_assert_uint_eq(dev2[50], 0);

	/* Back, device to host, with V2 (no failIndex) and one attribute. */
	for (i = 0; i < 3; i++) {
		bd[i] = back + 100 * i;
		bs[i] = dsts[i];
		maxs[i] = 100;
	}
	memset(back, 0, sizeof(back));
	at[0] = attr(DEV, HOST);
	ck_assert_int_eq(aclrtMemcpyBatchV2(bd, maxs, bs, sizes, 3, at, idx, 1),
			 ACL_SUCCESS);
	ck_assert_uint_eq(back[0], 0x11);
	ck_assert_uint_eq(back[150], 0x22);
	ck_assert_uint_eq(back[249], 0x33);
	ck_assert_uint_eq(back[250], 0);
	/* A copy of 0 bytes does nothing, even with NULL pointers. */
	sizes[1] = 0;
	bd[1] = bs[1] = NULL;
	ck_assert_int_eq(aclrtMemcpyBatch(bd, maxs, bs, sizes, 3, at, idx, 1,
					  &fail), ACL_SUCCESS);
	free(h);
}
END_TEST

struct nothread_arg {
	void **d, **s;
	size_t *m, *z, *idx;
	aclrtMemcpyBatchAttr *a;
	size_t fail;
	int ret;
};

static void *batch_nocontext(void *p)
{
	struct nothread_arg *a = p;

	a->ret = aclrtMemcpyBatch(a->d, a->m, a->s, a->z, 1, a->a, a->idx, 1,
				  &a->fail);
	return NULL;
}

START_TEST(batch_argument_rules)
{
	unsigned char h[64];
	void *d[3] = { dev, dev + 64, dev + 128 }, *s[3] = { h, h, h };
	size_t m[3] = { 64, 64, 64 }, z[3] = { 64, 64, 64 };
	aclrtMemcpyBatchAttr a[3] = { attr(HOST, DEV), attr(HOST, DEV),
				      attr(HOST, DEV) };
	size_t idx[3] = { 0, 1, 2 }, fail;
	struct nothread_arg na = { d, s, m, z, idx, a, 0, 0 };
	pthread_t t;

	memset(h, 0x5a, sizeof(h));
#define BATCH(dd, mm, ss, zz, n, aa, ii, na_)				\
	(fail = 7, aclrtMemcpyBatch(dd, mm, ss, zz, n, aa, ii, na_, &fail))
	/* Not one copy's error: failIndex SIZE_MAX. */
	ck_assert_int_eq(BATCH(NULL, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, SIZE_MAX);
	ck_assert_int_eq(BATCH(d, NULL, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, NULL, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, s, NULL, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, s, z, 3, NULL, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, NULL, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, SIZE_MAX);
	ck_assert_int_eq(aclrtMemcpyBatch(d, m, s, z, 3, a, idx, 3, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, s, z, 0, a, idx, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(BATCH(d, m, s, z, 2, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, SIZE_MAX);
	/* attrsIndexes: starts at 0, rises, stays below numBatches. */
	idx[0] = 1;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, SIZE_MAX);
	idx[0] = 0;
	idx[1] = 0;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 2),
			 ACL_ERROR_INVALID_PARAM);
	idx[1] = 3;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, SIZE_MAX);
	idx[1] = 1;
	ck_assert_uint_eq(dev[0], 0);		/* nothing was copied */

	/* Attributes and memory: the failing copy's index. */
	a[1] = attr(DEV, DEV);
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 1);
	a[1] = attr(HOST, HOST);
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 1);
	a[1] = attr(HOST, DEV);
	a[1].dstLoc.id = acltest_device_count();	/* no such device */
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 1);
	a[1] = attr(HOST, DEV);
	a[1].rsv[15] = 1;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 1);
	a[1] = attr(HOST, DEV);
	a[1].srcLoc.type = ACL_MEM_LOCATION_TYPE_MANAGED;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 1);
	/* One direction per batch: copy 2 goes the other way. */
	a[1] = attr(HOST, DEV);
	a[2] = attr(DEV, HOST);
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 2);
	a[2] = attr(HOST, DEV);
	/* The memory must be what the locations say. */
	d[2] = h;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_uint_eq(fail, 2);
	d[2] = dev + 128;
	s[1] = dev2;				/* "host" side is device memory */
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_uint_eq(fail, 1);
	s[1] = h;
	d[2] = dev + reserved(dev) - 32;	/* runs past the buffer */
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_uint_eq(fail, 2);
	d[2] = dev + 128;
	z[0] = 65;				/* above destMaxs[0] */
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_uint_eq(fail, 0);
	z[0] = 64;
	d[1] = NULL;
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 1);
	d[1] = dev + 64;
	ck_assert_uint_eq(dev[0], 0);		/* still nothing copied */
	ck_assert_int_eq(BATCH(d, m, s, z, 3, a, idx, 3), ACL_SUCCESS);
	ck_assert_uint_eq(fail, SIZE_MAX);
	ck_assert_uint_eq(dev[191], 0x5a);
	/* The V2 calls check the same. */
	a[0] = attr(DEV, DEV);
	ck_assert_int_eq(aclrtMemcpyBatchV2(d, m, s, z, 3, a, idx, 3),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpyBatchAsyncV2(d, m, s, z, 3, a, idx, 3, st),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpyBatchAsync(d, m, s, z, 3, a, idx, 3, NULL,
					       st), ACL_ERROR_INVALID_PARAM);
	fail = 7;
	ck_assert_int_eq(aclrtMemcpyBatchAsync(d, m, s, z, 3, a, idx, 3, &fail,
					       st), ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 0);
	a[0] = attr(HOST, DEV);
	/* No current context: 107002, not one copy's. */
	ck_assert_int_eq(pthread_create(&t, NULL, batch_nocontext, &na), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(na.ret, ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_uint_eq(na.fail, SIZE_MAX);
#undef BATCH
}
END_TEST

START_TEST(batch_async_stream_order)
{
	void *d[2] = { dev, dev + 100 }, *s[2] = { pin, pin + 100 };
	size_t m[2] = { 100, 100 }, z[2] = { 100, 100 }, idx[1] = { 0 };
	aclrtMemcpyBatchAttr a[1] = { attr(HOST, DEV) };
	unsigned char *heap = malloc(200);
	void *hs[2];
	size_t fail = 7;

	ck_assert_ptr_nonnull(heap);
	memset(pin, 0x42, 200);
	/* Pinned host memory: queued, done when the stream gets there. */
	acltest_gate_hold(&gate, st);
	ck_assert_int_eq(aclrtMemcpyBatchAsync(d, m, s, z, 2, a, idx, 1, &fail,
					       st), ACL_SUCCESS);
	ck_assert_uint_eq(fail, SIZE_MAX);
	usleep(50 * 1000);
	ck_assert_uint_eq(dev[0], 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	ck_assert_uint_eq(dev[0], 0x42);
	ck_assert_uint_eq(dev[199], 0x42);

	/* Unpinned host memory: the call returns once the copies are made. */
	memset(heap, 0x37, 200);
	hs[0] = heap;
	hs[1] = heap + 100;
	ck_assert_int_eq(aclrtLaunchHostFunc(st, nap, NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpyBatchAsyncV2(d, m, hs, z, 2, a, idx, 1,
						 st), ACL_SUCCESS);
	ck_assert_uint_eq(dev[0], 0x37);
	ck_assert_uint_eq(dev[199], 0x37);
	memset(heap, 0, 200);			/* the caller may reuse it */
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	ck_assert_uint_eq(dev[150], 0x37);

	/* Checked again when run: a buffer freed meanwhile fails the sync. */
	acltest_gate_hold(&gate, st);
	d[0] = dev2;
	ck_assert_int_eq(aclrtMemcpyBatchAsync(d, m, s, z, 2, a, idx, 1, &fail,
					       st), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(dev2), ACL_SUCCESS);
	dev2 = NULL;
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(st),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Nothing of that batch was copied: copy 1 would have put 0x42. */
	ck_assert_uint_eq(dev[100], 0x37);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	free(heap);
}
END_TEST

START_TEST(memcpy_async_with_condition)
{
	unsigned char heap[128];

	memset(pin, 0x61, 128);
	acltest_gate_hold(&gate, st);
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(dev, N, pin, 128,
						       ACL_MEMCPY_HOST_TO_DEVICE,
						       st), ACL_SUCCESS);
	usleep(20 * 1000);
	ck_assert_uint_eq(dev[0], 0);		/* queued */
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	ck_assert_uint_eq(dev[127], 0x61);
	/* Unpinned host memory: finished when the call returns. */
	ck_assert_int_eq(aclrtLaunchHostFunc(st, nap, NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(heap, sizeof(heap), dev,
						       128,
						       ACL_MEMCPY_DEVICE_TO_HOST,
						       st), ACL_SUCCESS);
	ck_assert_uint_eq(heap[0], 0x61);
	ck_assert_uint_eq(heap[127], 0x61);
	/* aclrtMemcpyAsync's rules. */
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(dev, N, pin, 0,
						       ACL_MEMCPY_HOST_TO_DEVICE,
						       st), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(NULL, N, pin, 8,
						       ACL_MEMCPY_HOST_TO_DEVICE,
						       st), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(heap, 8, pin, 8,
						       ACL_MEMCPY_HOST_TO_HOST,
						       st),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(dev, 8, pin, 9,
						       ACL_MEMCPY_HOST_TO_DEVICE,
						       st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpyAsyncWithCondition(heap, 8, pin, 8,
						       ACL_MEMCPY_HOST_TO_DEVICE,
						       st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
}
END_TEST

/* ---- cache operations ---- */

START_TEST(cmo_async)
{
	unsigned char heap[64];
	int type;

	memset(dev, 0x3c, 256);
	for (type = ACL_RT_CMO_TYPE_PREFETCH; type <= ACL_RT_CMO_TYPE_FLUSH;
	     type++)
		ck_assert_int_eq(aclrtCmoAsync(dev + 64, 128,
					       (aclrtCmoType)type, st),
				 ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoAsync(dev, N, ACL_RT_CMO_TYPE_FLUSH, NULL),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
	ck_assert_uint_eq(dev[255], 0x3c);	/* the data is left alone */

	ck_assert_int_eq(aclrtCmoAsync(NULL, 64, ACL_RT_CMO_TYPE_FLUSH, st),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsync(dev, 0, ACL_RT_CMO_TYPE_FLUSH, st),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsync(dev, 64, (aclrtCmoType)4, st),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsync(dev, 64, (aclrtCmoType)-1, st),
			 ACL_ERROR_INVALID_PARAM);
	/* Device memory only: not host memory, pinned or not. */
	ck_assert_int_eq(aclrtCmoAsync(heap, 64, ACL_RT_CMO_TYPE_FLUSH, st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCmoAsync(pin, 64, ACL_RT_CMO_TYPE_INVALID, st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCmoAsync(dev + reserved(dev) - 8, 16,
				       ACL_RT_CMO_TYPE_WRITEBACK, st),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCmoAsync(dev, 64, ACL_RT_CMO_TYPE_FLUSH,
				       (aclrtStream)heap),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclGetRecentErrMsg() != NULL, 1);

	/* Looked up again when run. */
	acltest_gate_hold(&gate, st);
	ck_assert_int_eq(aclrtCmoAsync(dev2, 64, ACL_RT_CMO_TYPE_INVALID, st),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(dev2), ACL_SUCCESS);
	dev2 = NULL;
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(st),
			 ACL_ERROR_RT_PARAM_INVALID);
}
END_TEST

static atomic_int b_done;

static void mark(void *arg)
{
	(void)arg;
	atomic_store(&b_done, 1);
}

START_TEST(cmo_barrier)
{
	aclrtBarrierTaskInfo ti;
	aclrtStream other;

	memset(&ti, 0, sizeof(ti));
	ck_assert_int_eq(aclrtCmoAsyncWithBarrier(dev, 64,
						  ACL_RT_CMO_TYPE_FLUSH, 1,
						  st), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsyncWithBarrier(dev, 64,
						  ACL_RT_CMO_TYPE_FLUSH, 0,
						  st), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoAsyncWithBarrier(NULL, 64,
						  ACL_RT_CMO_TYPE_INVALID, 1,
						  st), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoWaitBarrier(NULL, st, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, st, 0),
			 ACL_ERROR_INVALID_PARAM);	/* barrierNum 0 */
	ti.barrierNum = ACL_RT_CMO_MAX_BARRIER_NUM + 1;
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, st, 0),
			 ACL_ERROR_INVALID_PARAM);
	ti.barrierNum = 1;
	ti.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_INVALID;
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, st, 0),
			 ACL_ERROR_INVALID_PARAM);	/* barrierId 0 */
	ti.cmoInfo[0].barrierId = 5;
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, st, 1),
			 ACL_ERROR_INVALID_PARAM);
	ti.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_FLUSH;
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, st, 0),
			 ACL_ERROR_INVALID_PARAM);
	ti.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_INVALID;
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);

	/* A wait on another stream waits for barrier 5's operation. */
	ck_assert_int_eq(aclrtCreateStream(&other), ACL_SUCCESS);
	atomic_store(&b_done, 0);
	acltest_gate_hold(&gate, st);
	ck_assert_int_eq(aclrtCmoAsyncWithBarrier(dev, 64,
						  ACL_RT_CMO_TYPE_INVALID, 5,
						  st), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, other, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtLaunchHostFunc(other, mark, NULL), ACL_SUCCESS);
	usleep(100 * 1000);
	ck_assert_int_eq(atomic_load(&b_done), 0);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(other), ACL_SUCCESS);
	ck_assert_int_eq(atomic_load(&b_done), 1);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	/* Nothing pending: a wait passes at once. */
	ck_assert_int_eq(aclrtCmoWaitBarrier(&ti, other, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(other), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(other), ACL_SUCCESS);
}
END_TEST

START_TEST(cmo_desc)
{
	unsigned char heap[64];
	size_t size = 0;
	void *desc = dev + 1024;

	ck_assert_int_eq(aclrtCmoGetDescSize(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoGetDescSize(&size), ACL_SUCCESS);
	ck_assert_uint_gt(size, 0);
	ck_assert_int_eq(aclrtCmoSetDesc(NULL, dev, 64),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoSetDesc(desc, NULL, 64),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoSetDesc(desc, dev, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoSetDesc(desc, heap, 64),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCmoSetDesc(heap, dev, 64),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCmoSetDesc(dev + reserved(dev) - size + 1,
					 dev, 64),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Not a descriptor yet (zeroed device memory). */
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH,
					       st, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtCmoSetDesc(desc, dev, 512), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH,
					       st, NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_FLUSH,
					       st, NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(NULL, ACL_RT_CMO_TYPE_PREFETCH,
					       st, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH,
					       st, heap),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, (aclrtCmoType)9, st,
					       NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(heap, ACL_RT_CMO_TYPE_PREFETCH,
					       st, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);

	/* The descriptor is read when the task runs, as the device would. */
	acltest_gate_hold(&gate, st);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_INVALID,
					       st, NULL), ACL_SUCCESS);
	memset(desc, 0, size);
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(st),
			 ACL_ERROR_RT_PARAM_INVALID);
	acltest_gate_hold(&gate, st);
	ck_assert_int_eq(aclrtCmoSetDesc(desc, dev2, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_INVALID,
					       st, NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCmoSetDesc(desc, dev, 64), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(dev2), ACL_SUCCESS);
	dev2 = NULL;
	acltest_gate_open(&gate);
	ck_assert_int_eq(aclrtSynchronizeStream(st), ACL_SUCCESS);
}
END_TEST

static int l2_ret;

static void *l2_nocontext(void *p)
{
	(void)p;
	l2_ret = aclrtDeviceL2CacheFlush(NULL);
	return NULL;
}

START_TEST(device_l2_cache_flush)
{
	int x;
	pthread_t t;

	ck_assert_int_eq(aclrtDeviceL2CacheFlush(NULL), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDeviceL2CacheFlush(&x), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(pthread_create(&t, NULL, l2_nocontext, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(l2_ret, ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

static const struct nm_fixture fixture = {
	.setup = setup, .teardown = teardown,
};

int main(void)
{
	Suite *s = suite_create("acl_mem_more");
	const TTest *tests[] = {
		batch_sync_copies, batch_argument_rules,
		batch_async_stream_order, memcpy_async_with_condition,
		cmo_async, cmo_barrier, cmo_desc, device_l2_cache_flush,
	};
	size_t i;

	acltest_require_device();
	setenv("NPU_MEM_POOL_MAX", "0", 1);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		nm_add_fx(s, tests[i], 60, &fixture);
	return acltest_run(s);
}
