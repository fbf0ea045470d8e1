// SPDX-License-Identifier: MIT
/*
 * Profiling (acl/acl_prof.h): CANN's call-order codes (Start, Stop,
 * Finalize and SetConfig before aclprofInit 100043, Init twice 100002,
 * Start twice 100042, a device that does not exist 200002, Stop with
 * other data types 100010), every bad argument's code, and a profiled
 * run whose trace.json parses as JSON and holds exactly the stream's
 * tasks and marks in stream order, the program's marks with their text
 * intact (quotes, backslashes, control characters), push/pop and ranges
 * that nest, and timestamps that never go back.  A fork()ed child has no
 * collection (the parent's stays the parent's to write) but keeps
 * aclprofInit's path.
 */
#include <json-c/json.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acltest_device.h"
#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "aclmem/kernel.h"

static char dir[64];
static uint32_t dev0[1] = { 0 };

static void setup(void)
{
	acltest_set_device();
	strcpy(dir, "/tmp/acl_prof.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	aclprofFinalize();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	acltest_reset_device();
}

static const struct nm_fixture fx = { .setup = setup, .teardown = teardown };

static aclprofConfig *config(uint64_t types)
{
	aclprofConfig *c = aclprofCreateConfig(dev0, 1, ACL_AICORE_NONE, NULL,
					       types);

	ck_assert_ptr_nonnull(c);
	return c;
}

START_TEST(call_order)
{
	aclprofConfig *c = config(ACL_PROF_TASK_TIME);

	ck_assert_int_eq(aclprofStart(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofStart(c), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofStop(c), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 5),
			 ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
	ck_assert_int_eq(aclprofInit(dir, strlen(dir)),
			 ACL_ERROR_REPEAT_INITIALIZE);
	ck_assert_int_eq(aclprofStop(c), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofStart(c), ACL_SUCCESS);
	ck_assert_int_eq(aclprofStart(c), ACL_ERROR_PROF_ALREADY_RUN);
	ck_assert_int_eq(aclprofStop(c), ACL_SUCCESS);
	ck_assert_int_eq(aclprofStop(c), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofFinalize(), ACL_SUCCESS);
	ck_assert_int_eq(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
	/* Init again after Finalize: a new result path is allowed. */
	ck_assert_int_eq(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
	ck_assert_int_eq(aclprofFinalize(), ACL_SUCCESS);
	ck_assert_int_eq(aclprofDestroyConfig(c), ACL_SUCCESS);
}
END_TEST

START_TEST(bad_arguments)
{
	uint32_t five[1] = { 5 }, many[65] = { 0 };
	aclprofConfig *c = config(ACL_PROF_TASK_TIME), *bad, *other;
	char longpath[4100], file[96];
	FILE *f;

	ck_assert_int_eq(aclprofInit(NULL, 4), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofInit(dir, 0), ACL_ERROR_INVALID_PARAM);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	ck_assert_int_eq(aclprofInit(longpath, 4097), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofInit("", 1), ACL_ERROR_INVALID_PARAM);

	ck_assert_ptr_null(aclprofCreateConfig(NULL, 1, ACL_AICORE_NONE, NULL,
					       ACL_PROF_TASK_TIME));
	ck_assert_ptr_null(aclprofCreateConfig(dev0, 0, ACL_AICORE_NONE, NULL,
					       ACL_PROF_TASK_TIME));
	ck_assert_ptr_null(aclprofCreateConfig(many, 65, ACL_AICORE_NONE, NULL,
					       ACL_PROF_TASK_TIME));
	ck_assert_ptr_null(aclprofCreateConfig(dev0, 1, (aclprofAicoreMetrics)9,
					       NULL, ACL_PROF_TASK_TIME));
	ck_assert_ptr_null(aclprofCreateConfig(dev0, 1, ACL_AICORE_NONE,
					       (const aclprofAicoreEvents *)dev0,
					       ACL_PROF_TASK_TIME));
	ck_assert_int_eq(aclprofDestroyConfig(NULL), ACL_ERROR_INVALID_PARAM);

	ck_assert_int_eq(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_ARGS_MIN, "1", 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetConfig((aclprofConfigType)2, "1", 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_ARGS_MAX, "1", 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "1", 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, longpath, 257),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 5),
			 ACL_SUCCESS);

	/* A device that does not exist: CANN's "device not online". */
	bad = aclprofCreateConfig(five, 1, ACL_AICORE_NONE, NULL,
				  ACL_PROF_TASK_TIME);
	ck_assert_ptr_nonnull(bad);
	ck_assert_int_eq(aclprofStart(bad), ACL_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(aclprofStart(c), ACL_SUCCESS);
	/* Another device list: not started; other data types: 100010. */
	ck_assert_int_eq(aclprofStop(bad), ACL_ERROR_PROF_NOT_RUN);
	other = config(ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
	ck_assert_int_eq(aclprofStop(other), ACL_ERROR_INVALID_PROFILING_CONFIG);
	ck_assert_int_eq(aclprofStop(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofStop(c), ACL_SUCCESS);
	ck_assert_int_eq(aclprofFinalize(), ACL_SUCCESS);

	/* A result path under a file: Start cannot make its directory. */
	snprintf(file, sizeof(file), "%s/file", dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	strcat(file, "/sub");
	ck_assert_int_eq(aclprofInit(file, strlen(file)), ACL_SUCCESS);
	ck_assert_int_eq(aclprofStart(c), ACL_ERROR_INVALID_FILE);
	ck_assert_int_eq(aclprofFinalize(), ACL_SUCCESS);

	aclprofDestroyConfig(bad);
	aclprofDestroyConfig(other);
	aclprofDestroyConfig(c);
}
END_TEST

START_TEST(msproftx_rules)
{
	aclprofConfig *tasks = config(ACL_PROF_TASK_TIME);
	aclprofConfig *tx = config(ACL_PROF_MSPROFTX);
	aclprofStepInfo *step = aclprofCreateStepInfo();
	void *stamp = aclprofCreateStamp();
	char big[200];
	uint32_t id;

	ck_assert_ptr_nonnull(stamp);
	ck_assert_ptr_nonnull(step);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(aclprofSetStampTraceMessage(NULL, "m", 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetStampTraceMessage(stamp, NULL, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetStampTraceMessage(stamp, "m", 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetStampTraceMessage(stamp, big, 128),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetStampTraceMessage(stamp, "m", 2),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofSetStampTraceMessage(stamp, big, 127),
			 ACL_SUCCESS);

	/* Nothing recording msproftx: 100043, arguments checked first. */
	ck_assert_int_eq(aclprofMark(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofMark(stamp), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofPush(stamp), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofPop(), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofRangeStart(stamp, &id), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofRangeStop(1), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofMarkEx("m", 1, NULL), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofGetStepTimestamp(step, ACL_STEP_START, NULL),
			 ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
	ck_assert_int_eq(aclprofStart(tasks), ACL_SUCCESS);
	ck_assert_int_eq(aclprofMark(stamp), ACL_ERROR_PROF_NOT_RUN);
	ck_assert_int_eq(aclprofStop(tasks), ACL_SUCCESS);

	ck_assert_int_eq(aclprofStart(tx), ACL_SUCCESS);
	ck_assert_int_eq(aclprofMark(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofPush(NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofPop(), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofRangeStart(NULL, &id), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofRangeStart(stamp, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofRangeStop(12345), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofMarkEx(NULL, 1, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofMarkEx("m", 0, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofMarkEx("m", 2, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofMarkEx(big, 128, NULL), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofGetStepTimestamp(NULL, ACL_STEP_START, NULL),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofGetStepTimestamp(step, (aclprofStepTag)2, NULL),
			 ACL_ERROR_INVALID_PARAM);
	/* A range ends once; a pop matches one push. */
	ck_assert_int_eq(aclprofRangeStart(stamp, &id), ACL_SUCCESS);
	ck_assert_int_eq(aclprofRangeStop(id), ACL_SUCCESS);
	ck_assert_int_eq(aclprofRangeStop(id), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofPush(stamp), ACL_SUCCESS);
	ck_assert_int_eq(aclprofPop(), ACL_SUCCESS);
	ck_assert_int_eq(aclprofPop(), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclprofStop(tx), ACL_SUCCESS);

	aclprofDestroyStamp(stamp);
	aclprofDestroyStepInfo(step);
	aclprofDestroyConfig(tasks);
	aclprofDestroyConfig(tx);
}
END_TEST

/* ---- a profiled run and its trace ---- */

static const char user_text[] = "quote \" back \\ nl \n tab \t bell \a end";

static int block(void *launch, uint32_t idx)
{
	(void)launch;
	(void)idx;
	return 0;
}

static void release(void *launch)
{
	(void)launch;
}

static void host_fn(void *arg)
{
	*(int *)arg = 1;
}

/* The one PROF_* directory's trace.json, parsed. */
static json_object *read_trace(void)
{
	char path[512] = "";
	struct dirent *d;
	json_object *o;
	int n = 0;
	DIR *dp = opendir(dir);

	ck_assert_ptr_nonnull(dp);
	while ((d = readdir(dp))) {
		if (strncmp(d->d_name, "PROF_", 5))
			continue;
		/* PROF_<6 digits>_<17 digits>_<10 capitals> */
		ck_assert_uint_eq(strlen(d->d_name), 5 + 6 + 1 + 17 + 1 + 10);
		snprintf(path, sizeof(path), "%s/%s/trace.json", dir, d->d_name);
		n++;
	}
	closedir(dp);
	ck_assert_int_eq(n, 1);
	o = json_object_from_file(path);
	ck_assert_msg(o, "%s does not parse: %s", path,
		      json_util_get_last_err());
	return o;
}

static const char *str(json_object *e, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(e, key, &v), "no %s", key);
	return json_object_get_string(v);
}

static int64_t num(json_object *e, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(e, key, &v), "no %s", key);
	return json_object_get_int64(v);
}

static int fork_child(int rfd, void *arg)
{
	aclprofConfig *c = arg;
	void *stamp = aclprofCreateStamp();

	(void)rfd;
	if (!stamp)
		return 10;
	if (aclprofStop(c) != ACL_ERROR_PROF_NOT_RUN)
		return 11;
	if (aclprofMark(stamp) != ACL_ERROR_PROF_NOT_RUN)
		return 12;
	aclprofDestroyStamp(stamp);
	/* aclprofInit's state came along, as aclInit's does. */
	if (aclprofInit(dir, strlen(dir)) != ACL_ERROR_REPEAT_INITIALIZE)
		return 13;
	if (aclprofFinalize() != ACL_SUCCESS)
		return 14;
	return 0;
}

static void mark(const char *msg)
{
	void *stamp = aclprofCreateStamp();

	ck_assert_ptr_nonnull(stamp);
	ck_assert_int_eq(aclprofSetStampTraceMessage(stamp, msg, strlen(msg)), 0);
	ck_assert_int_eq(aclprofMark(stamp), 0);
	aclprofDestroyStamp(stamp);
}

START_TEST(fork_child_has_no_collection)
{
	aclprofConfig *c = config(ACL_PROF_MSPROFTX);
	json_object *o;
	const char *text;

	ck_assert_int_eq(aclprofInit(dir, strlen(dir)), ACL_SUCCESS);
	ck_assert_int_eq(aclprofStart(c), ACL_SUCCESS);
	mark("before the fork");
	ck_assert_int_eq(acltest_reap(acltest_spawn(fork_child, c, NULL)), 0);
	mark("after the fork");
	ck_assert_int_eq(aclprofStop(c), ACL_SUCCESS);
	o = read_trace();
	text = json_object_to_json_string(o);
	ck_assert_ptr_nonnull(strstr(text, "before the fork"));
	ck_assert_ptr_nonnull(strstr(text, "after the fork"));
	json_object_put(o);
	ck_assert_int_eq(aclprofDestroyConfig(c), ACL_SUCCESS);
}
END_TEST

START_TEST(trace_of_a_run)
{
	static const char *const want[][2] = {
		{ "X", "memcpy H2D" }, { "X", "memset" },
		{ "i", "step 0 start" }, { "X", "host function" },
		{ "i", "on the stream" }, { "X", "prof_kernel" },
		{ "i", "step 0 end" }, { "X", "memcpy D2H" },
	};
	aclprofConfig *c = config(ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
	aclprofStepInfo *step = aclprofCreateStepInfo();
	void *outer = aclprofCreateStamp(), *inner = aclprofCreateStamp();
	void *mark = aclprofCreateStamp(), *range = aclprofCreateStamp();
	char host[4096], *devp;
	const char *stack[8];
	size_t i, n, k = 0, depth = 0, marks = 0, ranges = 0;
	json_object *trace, *arr;
	aclrtStream s;
	int32_t sid;
	double last = -1;
	uint32_t rid;
	int ran = 0;

	ck_assert_int_eq(aclrtCreateStream(&s), 0);
	ck_assert_int_eq(aclrtStreamGetId(s, &sid), 0);
	ck_assert_int_eq(aclrtMalloc((void **)&devp, sizeof(host), 0), 0);
	memset(host, 7, sizeof(host));
	ck_assert_int_eq(aclprofSetStampTraceMessage(outer, "outer", 5), 0);
	ck_assert_int_eq(aclprofSetStampTraceMessage(inner, "inner", 5), 0);
	ck_assert_int_eq(aclprofSetStampTraceMessage(mark, user_text,
						     strlen(user_text)), 0);
	ck_assert_int_eq(aclprofSetStampTraceMessage(range, "range", 5), 0);

	ck_assert_int_eq(aclprofInit(dir, strlen(dir)), 0);
	ck_assert_int_eq(aclprofStart(c), 0);
	ck_assert_int_eq(aclprofRangeStart(range, &rid), 0);
	ck_assert_int_eq(aclprofPush(outer), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(devp, sizeof(host), host, sizeof(host),
					  ACL_MEMCPY_HOST_TO_DEVICE, s), 0);
	ck_assert_int_eq(aclrtMemsetAsync(devp, sizeof(host), 1, 64, s), 0);
	ck_assert_int_eq(aclprofGetStepTimestamp(step, ACL_STEP_START, s), 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, host_fn, &ran), 0);
	ck_assert_int_eq(aclprofPush(inner), 0);
	ck_assert_int_eq(aclprofMark(mark), 0);
	ck_assert_int_eq(aclprofPop(), 0);
	ck_assert_int_eq(aclprofMarkEx("on the stream", 13, s), 0);
	ck_assert_int_eq(aclmem_kernel_launch("prof_kernel", 2, s, block,
					      release, NULL), 0);
	ck_assert_int_eq(aclprofGetStepTimestamp(step, ACL_STEP_END, s), 0);
	ck_assert_int_eq(aclrtMemcpyAsync(host, sizeof(host), devp, sizeof(host),
					  ACL_MEMCPY_DEVICE_TO_HOST, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclprofPop(), 0);
	ck_assert_int_eq(aclprofRangeStop(rid), 0);
	ck_assert_int_eq(aclprofStop(c), 0);
	ck_assert_int_eq(aclprofFinalize(), 0);
	ck_assert_int_eq(ran, 1);
	ck_assert_int_eq(host[0], 1);

	trace = read_trace();
	ck_assert(json_object_object_get_ex(trace, "traceEvents", &arr));
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *ph = str(e, "ph"), *name = str(e, "name");
		json_object *ts;

		if (!strcmp(ph, "M"))
			continue;
		ck_assert(json_object_object_get_ex(e, "ts", &ts));
		ck_assert_msg(json_object_get_double(ts) >= last,
			      "%s goes back in time", name);
		last = json_object_get_double(ts);
		if (num(e, "tid") == sid && num(e, "pid") != getpid()) {
			ck_assert_msg(k < sizeof(want) / sizeof(want[0]),
				      "extra event %s on the stream", name);
			ck_assert_str_eq(ph, want[k][0]);
			ck_assert_str_eq(name, want[k][1]);
			k++;
			continue;
		}
		ck_assert_int_eq(num(e, "pid"), getpid());
		if (!strcmp(ph, "B")) {
			ck_assert_uint_lt(depth, 8);
			stack[depth++] = name;
		} else if (!strcmp(ph, "E")) {
			ck_assert_uint_gt(depth, 0);
			depth--;
		} else if (!strcmp(ph, "i")) {
			ck_assert_str_eq(name, user_text);
			/* Marked between inner's push and its pop. */
			ck_assert_uint_eq(depth, 2);
			ck_assert_str_eq(stack[0], "outer");
			ck_assert_str_eq(stack[1], "inner");
			marks++;
		} else if (!strcmp(ph, "b") || !strcmp(ph, "e")) {
			ck_assert_str_eq(name, "range");
			ck_assert_int_eq(num(e, "id"), rid);
			/* The range holds the pushes: opened first, shut last. */
			ck_assert_uint_eq(depth, 0);
			ranges++;
		} else {
			ck_abort_msg("unexpected %s event %s on the host", ph,
				     name);
		}
	}
	ck_assert_uint_eq(k, sizeof(want) / sizeof(want[0]));
	ck_assert_uint_eq(depth, 0);
	ck_assert_uint_eq(marks, 1);
	ck_assert_uint_eq(ranges, 2);
	json_object_put(trace);

	aclrtFree(devp);
	aclrtDestroyStream(s);
	aclprofDestroyStamp(outer);
	aclprofDestroyStamp(inner);
	aclprofDestroyStamp(mark);
	aclprofDestroyStamp(range);
	aclprofDestroyStepInfo(step);
	aclprofDestroyConfig(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_prof");

	acltest_require_device();
	nm_add_fx(s, call_order, 60, &fx);
	nm_add_fx(s, bad_arguments, 60, &fx);
	nm_add_fx(s, msproftx_rules, 60, &fx);
	nm_add_fx(s, trace_of_a_run, 60, &fx);
	nm_add_fx(s, fork_child_has_no_collection, 60, &fx);
	return acltest_run(s);
}
