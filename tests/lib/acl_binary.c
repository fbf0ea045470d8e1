// SPDX-License-Identifier: MIT
/*
 * Kernel binaries: a shared object built by ascendc_library(SHARED)
 * (tests/lib/binary/) loaded with aclrtBinaryLoadFromFile and
 * aclrtBinaryLoadFromData, its kernels found by name, their arguments
 * packed with aclrtKernelArgs* or given as one block (aclrtLaunchKernel),
 * launched on a stream: the results equal plain C's, a trapping block
 * fails the stream with 507016 and its exception names the kernel's handle
 * and arguments, every bad argument gets its ACL code, and
 * an unload refuses the handles at once while a launch queued before it
 * still runs.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"

#ifndef ACL_BINARY_DIR
#error "build with -DACL_BINARY_DIR=..."
#endif

#define KERNELS ACL_BINARY_DIR "/libacl_binary_kernels.so"
#define NOT_OURS ACL_BINARY_DIR "/libnot_a_kernel_binary.so"
#define BLOCKS 4
#define N (BLOCKS * 64 * 3)
#define GATE_WAIT_S 60

static aclrtBinHandle load(void)
{
	aclrtBinHandle bin = NULL;

	ck_assert_int_eq(aclrtBinaryLoadFromFile(KERNELS, NULL, &bin), ACL_SUCCESS);
	ck_assert_ptr_nonnull(bin);
	return bin;
}

static aclrtFuncHandle function(aclrtBinHandle bin, const char *name)
{
	aclrtFuncHandle f = NULL;

	ck_assert_int_eq(aclrtBinaryGetFunction(bin, name, &f), ACL_SUCCESS);
	ck_assert_ptr_nonnull(f);
	return f;
}

/* Device buffers x, y, z of N floats, x and y filled. */
struct axpy {
	float *x, *y, *z;
	float alpha;
	uint32_t n;
};

static void axpy_setup(struct axpy *a)
{
	float h[N];
	int i;

	ck_assert_int_eq(aclrtMalloc((void **)&a->x, sizeof(h), ACL_MEM_MALLOC_HUGE_FIRST), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a->y, sizeof(h), ACL_MEM_MALLOC_HUGE_FIRST), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&a->z, sizeof(h), ACL_MEM_MALLOC_HUGE_FIRST), 0);
	for (i = 0; i < N; i++)
		h[i] = (float)(i % 97) - 40.0f;
	ck_assert_int_eq(aclrtMemcpy(a->x, sizeof(h), h, sizeof(h), ACL_MEMCPY_HOST_TO_DEVICE), 0);
	for (i = 0; i < N; i++)
		h[i] = (float)(i % 13) * 0.5f;
	ck_assert_int_eq(aclrtMemcpy(a->y, sizeof(h), h, sizeof(h), ACL_MEMCPY_HOST_TO_DEVICE), 0);
	ck_assert_int_eq(aclrtMemset(a->z, sizeof(h), 0, sizeof(h)), 0);
	a->alpha = 3.0f;
	a->n = N;
}

/* z equals plain C's alpha * x + y (every value exact in float). */
static void axpy_check(const struct axpy *a)
{
	float x[N], y[N], z[N];
	int i;

	ck_assert_int_eq(aclrtMemcpy(x, sizeof(x), a->x, sizeof(x), ACL_MEMCPY_DEVICE_TO_HOST), 0);
	ck_assert_int_eq(aclrtMemcpy(y, sizeof(y), a->y, sizeof(y), ACL_MEMCPY_DEVICE_TO_HOST), 0);
	ck_assert_int_eq(aclrtMemcpy(z, sizeof(z), a->z, sizeof(z), ACL_MEMCPY_DEVICE_TO_HOST), 0);
	for (i = 0; i < N; i++)
		ck_assert_msg(z[i] == a->alpha * x[i] + y[i], "z[%d] = %g, want %g",
			      i, (double)z[i], (double)(a->alpha * x[i] + y[i]));
}

static void axpy_free(struct axpy *a)
{
	ck_assert_int_eq(aclrtFree(a->x), 0);
	ck_assert_int_eq(aclrtFree(a->y), 0);
	ck_assert_int_eq(aclrtFree(a->z), 0);
}

/* The argument list of axpy, finalized. */
static aclrtArgsHandle axpy_args(aclrtFuncHandle f, struct axpy *a)
{
	aclrtArgsHandle args = NULL;
	aclrtParamHandle p;

	ck_assert_int_eq(aclrtKernelArgsInit(f, &args), ACL_SUCCESS);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a->x, sizeof(a->x), &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a->y, sizeof(a->y), &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a->z, sizeof(a->z), &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a->alpha, sizeof(a->alpha), &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a->n, sizeof(a->n), &p), 0);
	ck_assert_int_eq(aclrtKernelArgsFinalize(args), ACL_SUCCESS);
	return args;
}

START_TEST(launch_with_config_computes_as_c)
{
	aclrtLaunchKernelAttr attr = { .id = ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE };
	aclrtLaunchKernelCfg cfg = { &attr, 1 };
	aclrtBinHandle bin = load();
	aclrtFuncHandle f = function(bin, "axpy");
	struct axpy a;
	aclrtArgsHandle args;
	aclrtStream s;

	axpy_setup(&a);
	args = axpy_args(f, &a);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, BLOCKS, s, &cfg, args, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	axpy_check(&a);
	/* The same function again, found once more, on the default stream. */
	ck_assert_ptr_eq(function(bin, "axpy"), f);
	ck_assert_int_eq(aclrtMemset(a.z, N * sizeof(float), 0, N * sizeof(float)), 0);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, args, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	axpy_check(&a);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
	axpy_free(&a);
}
END_TEST

/* aclrtLaunchKernel: the arguments as the C struct of the parameters. */
START_TEST(launch_kernel_with_a_block)
{
	struct {
		void *x, *y, *z;
		float alpha;
		uint32_t n;
	} blk;
	aclrtBinHandle bin = load();
	aclrtFuncHandle f = function(bin, "axpy");
	struct axpy a;

	axpy_setup(&a);
	a.alpha = -2.0f;
	blk.x = a.x;
	blk.y = a.y;
	blk.z = a.z;
	blk.alpha = a.alpha;
	blk.n = a.n;
	ck_assert_int_eq(aclrtLaunchKernel(f, BLOCKS, &blk, sizeof(blk), NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	axpy_check(&a);
	/* A block of another size is not the kernel's parameters. */
	ck_assert_int_eq(aclrtLaunchKernel(f, BLOCKS, &blk, sizeof(blk) - 4, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernel(f, BLOCKS, &blk, sizeof(blk) + 8, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
	axpy_free(&a);
}
END_TEST

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	buf = malloc((size_t)n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

START_TEST(load_from_data)
{
	aclrtBinaryLoadOption opt[2] = {
		{ ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD, { .isLazyLoad = 1 } },
		{ ACL_RT_BINARY_LOAD_OPT_MAGIC, { .magic = ACL_RT_BINARY_MAGIC_ELF_AICORE } },
	};
	aclrtBinaryLoadOptions opts = { opt, 2 };
	aclrtBinHandle bin = NULL;
	struct axpy a;
	size_t len;
	void *data = read_file(KERNELS, &len);
	aclrtArgsHandle args;
	aclrtFuncHandle f;

	ck_assert_int_eq(aclrtBinaryLoadFromData(data, len, &opts, &bin), ACL_SUCCESS);
	free(data);
	f = function(bin, "axpy");
	axpy_setup(&a);
	args = axpy_args(f, &a);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 2, NULL, NULL, args, NULL), 0);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	axpy_check(&a);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
	axpy_free(&a);
	data = read_file(NOT_OURS, &len);
	ck_assert_int_eq(aclrtBinaryLoadFromData(data, len, NULL, &bin), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(aclrtBinaryLoadFromData(data, 16, NULL, &bin), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(aclrtBinaryLoadFromData(NULL, len, NULL, &bin), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryLoadFromData(data, 0, NULL, &bin), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryLoadFromData(data, len, NULL, NULL), ACL_ERROR_INVALID_PARAM);
	free(data);
}
END_TEST

/* A placeholder: a pointer slot filled at launch with a copy of its buffer. */
START_TEST(placeholder_buffer_reaches_the_kernel)
{
	aclrtBinHandle bin = load();
	aclrtFuncHandle f = function(bin, "fill");
	aclrtParamHandle pout, pset, other;
	aclrtArgsHandle args;
	int32_t *out, host[BLOCKS * 8], *set;
	int32_t two[2] = { 100, 8 };
	int i;

	ck_assert_int_eq(aclrtMalloc((void **)&out, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST), 0);
	ck_assert_int_eq(aclrtKernelArgsInit(f, &args), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &out, sizeof(out), &pout), 0);
	ck_assert_int_eq(aclrtKernelArgsAppendPlaceHolder(args, &pset), 0);
	ck_assert_int_eq(aclrtKernelArgsFinalize(args), 0);
	ck_assert_int_eq(aclrtKernelArgsGetPlaceHolderBuffer(args, pset, sizeof(two),
							     (void **)&set), 0);
	memcpy(set, two, sizeof(two));
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, BLOCKS, NULL, NULL, args, NULL), 0);
	/* What the launch took is a copy: changing the buffer now changes nothing. */
	set[0] = -1;
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(host, sizeof(host), out, sizeof(host),
				     ACL_MEMCPY_DEVICE_TO_HOST), 0);
	for (i = 0; i < BLOCKS * 8; i++)
		ck_assert_int_eq(host[i], 100 + i / 8);
	/* A parameter that is not a placeholder, or not one of this list. */
	ck_assert_int_eq(aclrtKernelArgsGetPlaceHolderBuffer(args, pout, 8, (void **)&set),
			 ACL_ERROR_INVALID_PARAM);
	other = &i;
	ck_assert_int_eq(aclrtKernelArgsGetPlaceHolderBuffer(args, other, 8, (void **)&set),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsGetPlaceHolderBuffer(args, pset, 0, (void **)&set),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsGetPlaceHolderBuffer(args, pset, 8, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsAppendPlaceHolder(args, NULL), ACL_ERROR_INVALID_PARAM);
	/* ParaUpdate: the same size, not a placeholder. */
	ck_assert_int_eq(aclrtKernelArgsParaUpdate(args, pset, &out, sizeof(out)),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsParaUpdate(args, pout, &out, 4), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsParaUpdate(args, pout, &out, sizeof(out)), 0);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(out), 0);
}
END_TEST

/* What the exception callback saw, for the test's thread to check. */
static struct {
	int calls;
	aclError func_ret, args_ret;
	aclrtFuncHandle func;
	void *args;
	uint32_t len;
	unsigned char bytes[64];
} trap_seen;

static void trap_cb(aclrtExceptionInfo *info)
{
	trap_seen.calls++;
	trap_seen.func_ret = aclrtGetFuncHandleFromExceptionInfo(info, &trap_seen.func);
	trap_seen.args_ret = aclrtGetArgsFromExceptionInfo(info, &trap_seen.args,
							   &trap_seen.len);
	/* The arguments are valid during the callback only. */
	if (!trap_seen.args_ret && trap_seen.len <= sizeof(trap_seen.bytes))
		memcpy(trap_seen.bytes, trap_seen.args, trap_seen.len);
}

START_TEST(trapping_block_fails_the_stream)
{
	aclrtBinHandle bin = load();
	aclrtFuncHandle f = function(bin, "trap_in");
	struct {
		int32_t *out;
		uint32_t bad;
	} blk;
	aclrtStream s;

	memset(&blk, 0, sizeof(blk));	/* the padding too: it is compared */
	ck_assert_int_eq(aclrtMalloc((void **)&blk.out, 64, ACL_MEM_MALLOC_HUGE_FIRST), 0);
	blk.bad = 2;
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(trap_cb), 0);
	ck_assert_int_eq(aclrtLaunchKernel(f, BLOCKS, &blk, sizeof(blk), s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_TRAP_EXCEPTION);
	ck_assert_int_eq(aclrtSetExceptionInfoCallback(NULL), 0);
	/* The exception names the kernel's handle and its arguments. */
	ck_assert_int_eq(trap_seen.calls, 1);
	ck_assert_int_eq(trap_seen.func_ret, ACL_SUCCESS);
	ck_assert_ptr_eq(trap_seen.func, f);
	ck_assert_int_eq(trap_seen.args_ret, ACL_SUCCESS);
	ck_assert_uint_eq(trap_seen.len, sizeof(blk));
	ck_assert_mem_eq(trap_seen.bytes, &blk, sizeof(blk));
	/* The process goes on: the same kernel without a trap. */
	blk.bad = BLOCKS;
	ck_assert_int_eq(aclrtLaunchKernel(f, BLOCKS, &blk, sizeof(blk), s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(blk.out), 0);
}
END_TEST

START_TEST(load_errors)
{
	aclrtBinaryLoadOption opt = { ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE,
				      { .cpuKernelMode = 1 } };
	aclrtBinaryLoadOptions opts = { &opt, 1 }, none = { NULL, 1 };
	aclrtBinHandle bin = NULL;

	ck_assert_int_eq(aclrtBinaryLoadFromFile(NULL, NULL, &bin), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryLoadFromFile(KERNELS, NULL, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryLoadFromFile(ACL_BINARY_DIR "/none.so", NULL, &bin),
			 ACL_ERROR_INVALID_FILE);
	/* Not ours: a file that is not a shared object, one without the mark. */
	ck_assert_int_eq(aclrtBinaryLoadFromFile(ACL_BINARY_DIR "/CMakeCache.txt", NULL, &bin),
			 ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(aclrtBinaryLoadFromFile(NOT_OURS, NULL, &bin), ACL_ERROR_PARSE_FILE);
	ck_assert_int_eq(aclrtBinaryLoadFromFile(KERNELS, &opts, &bin),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclrtBinaryLoadFromFile(KERNELS, &none, &bin), ACL_ERROR_INVALID_PARAM);
	opt.type = 99;
	ck_assert_int_eq(aclrtBinaryLoadFromFile(KERNELS, &opts, &bin), ACL_ERROR_INVALID_PARAM);
	opt.type = ACL_RT_BINARY_LOAD_OPT_MAGIC;
	opt.value.magic = 1;
	ck_assert_int_eq(aclrtBinaryLoadFromFile(KERNELS, &opts, &bin), ACL_ERROR_INVALID_PARAM);
	ck_assert_ptr_null(bin);
	ck_assert_int_eq(aclrtBinaryUnLoad(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryUnLoad(&bin), ACL_ERROR_RT_INVALID_HANDLE);
}
END_TEST

START_TEST(function_and_args_errors)
{
	aclrtBinHandle bin = load();
	aclrtFuncHandle f = function(bin, "axpy"), g = function(bin, "fill"), h = NULL;
	aclrtLaunchKernelAttr attr = { .id = 42 };
	aclrtLaunchKernelCfg cfg = { &attr, 1 }, nocfg = { NULL, 1 };
	aclrtArgsHandle args = NULL, gargs = NULL;
	aclrtParamHandle p;
	struct axpy a = { 0 };
	uint64_t zero[4] = { 0 };
	int x = 0;

	ck_assert_int_eq(aclrtBinaryGetFunction(NULL, "axpy", &h), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryGetFunction(bin, NULL, &h), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryGetFunction(bin, "axpy", NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtBinaryGetFunction(bin, "no_such_kernel", &h),
			 ACL_ERROR_RT_KERNEL_LOOKUP);
	ck_assert_int_eq(aclrtBinaryGetFunction(&x, "axpy", &h), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_ptr_null(h);

	ck_assert_int_eq(aclrtKernelArgsInit(NULL, &args), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsInit(f, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsInit(&x, &args), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtKernelArgsInit(f, &args), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(NULL, &x, 4, &p), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, NULL, 4, &p), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &x, 0, &p), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &x, 4, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsAppend(&x, &x, 4, &p), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtKernelArgsFinalize(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsFinalize(&x), ACL_ERROR_RT_INVALID_HANDLE);

	/* One parameter short: not finalized, then not the kernel's size. */
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a.x, 8, &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a.y, 8, &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a.z, 8, &p), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a.alpha, 4, &p), 0);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, args, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtKernelArgsFinalize(args), 0);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a.n, 4, &p), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, args, NULL),
			 ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclrtKernelArgsInit(g, &gargs), 0);
	ck_assert_int_eq(aclrtKernelArgsFinalize(gargs), 0);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(NULL, 1, NULL, NULL, args, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 0, NULL, NULL, args, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, args, &x),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, &cfg, args, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, &nocfg, args, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(&x, 1, NULL, NULL, args, NULL),
			 ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, &x, NULL),
			 ACL_ERROR_RT_INVALID_HANDLE);
	/* An argument list made for another kernel. */
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, 1, NULL, NULL, gargs, NULL),
			 ACL_ERROR_INVALID_PARAM);
	/* Too many blocks, with arguments of the right size. */
	ck_assert_int_eq(aclrtLaunchKernel(f, 65536, zero, sizeof(zero), NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernel(NULL, 1, &a, 8, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernel(f, 1, NULL, 8, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtLaunchKernel(&x, 1, &a, 8, NULL), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtLaunchKernel(f, 0, &a, 8, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtSynchronizeDevice(), ACL_SUCCESS);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
}
END_TEST

static atomic_int gate;

/* Holds the stream until the test opens the gate. */
static void wait_gate(void *arg)
{
	time_t end = time(NULL) + GATE_WAIT_S;

	(void)arg;
	while (!atomic_load(&gate) && time(NULL) < end)
		usleep(1000);
}

START_TEST(unload_with_a_launch_queued)
{
	aclrtBinHandle bin = load();
	aclrtFuncHandle f = function(bin, "axpy"), h;
	aclrtArgsHandle args;
	aclrtParamHandle p;
	struct axpy a;
	aclrtStream s;

	axpy_setup(&a);
	args = axpy_args(f, &a);
	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	atomic_store(&gate, 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, wait_gate, NULL), 0);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, BLOCKS, s, NULL, args, NULL), 0);
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_SUCCESS);
	/* Every handle of the binary is refused at once... */
	ck_assert_int_eq(aclrtBinaryUnLoad(bin), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtBinaryGetFunction(bin, "axpy", &h), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtKernelArgsInit(f, &args), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtKernelArgsAppend(args, &a.n, 4, &p), ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtLaunchKernelWithConfig(f, BLOCKS, s, NULL, args, NULL),
			 ACL_ERROR_RT_INVALID_HANDLE);
	ck_assert_int_eq(aclrtLaunchKernel(f, BLOCKS, &a, 32, s), ACL_ERROR_RT_INVALID_HANDLE);
	/* ...and the launch queued before the unload still runs. */
	atomic_store(&gate, 1);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	axpy_check(&a);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	axpy_free(&a);
}
END_TEST

int main(void)
{
	Suite *s;

	if (access(KERNELS, R_OK)) {
		printf("SKIP: no %s (not built for this target)\n", KERNELS);
		return 77;
	}
	acltest_require_device();
	/* Made only now: a skip must not leave it behind for valgrind. */
	s = suite_create("acl_binary");
	nm_add_fx(s, launch_with_config_computes_as_c, 60, &acltest_device);
	nm_add_fx(s, launch_kernel_with_a_block, 60, &acltest_device);
	nm_add_fx(s, load_from_data, 60, &acltest_device);
	nm_add_fx(s, placeholder_buffer_reaches_the_kernel, 60, &acltest_device);
	nm_add_fx(s, trapping_block_fails_the_stream, 60, &acltest_device);
	nm_add_fx(s, load_errors, 60, &acltest_device);
	nm_add_fx(s, function_and_args_errors, 60, &acltest_device);
	nm_add_fx(s, unload_with_a_launch_queued, GATE_WAIT_S + 60, &acltest_device);
	return acltest_run(s);
}
