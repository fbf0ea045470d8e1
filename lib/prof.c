// SPDX-License-Identifier: MIT
/*
 * Profiling (acl/acl_prof.h): a trace a person can open, in Chrome's trace
 * event format (Perfetto, chrome://tracing).
 *
 * aclprofInit names the result directory; aclprofStart makes
 * <path>/PROF_<nnnnnn>_<YYYYmmddHHMMSSmmm>_<10 letters>/ (CANN's naming of a
 * collection) and starts recording into memory; aclprofStop, or
 * aclprofFinalize while recording, writes trace.json there.  One
 * collection at a time (there is one device).
 *
 * What is recorded, by the config's dataTypeConfig:
 * - ACL_PROF_TASK_TIME: every stream task's run ("X" events on the
 *   device's process, one thread per stream, named by the task's kind or
 *   label: stream.h), through the stream's task watch, which only this
 *   file sets: the streams never call the profiler by name;
 * - ACL_PROF_MSPROFTX: the program's marks ("i"), push/pop ("B"/"E" on
 *   the calling thread) and ranges ("b"/"e", which may cross threads), on
 *   the host process; aclprofMarkEx's and aclprofGetStepTimestamp's marks
 *   are stream tasks of their own and land on their stream's thread in
 *   stream order (these two are recorded whatever the data types).
 * Other bits are accepted and record nothing (ACL API timing included).
 *
 * Timestamps are CLOCK_MONOTONIC, in microseconds from aclprofStart; the
 * file lists events by time.  Strings go through json-c, so user text in
 * marks is escaped by the library that also reads aclInit's JSON.
 *
 * Lock: prof_lock guards everything here; it is taken on stream workers
 * (the task watch) and never held while calling into a stream.
 *
 * fork(): the child has no collection (the parent's, its directory and
 * its events stay the parent's, who writes them) and may start its own;
 * it keeps aclprofInit's path, as aclInit's state is inherited.  prof_lock
 * is held across the fork, so what the child drops is whole.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl_prof.h"
#include "args.h"
#include "context.h"
#include "log.h"
#include "stream.h"

#define PROF_PATH_MAX		4096	/* aclprofInit's length, CANN's limit */
#define PROF_SET_CONFIG_MAX	256	/* aclprofSetConfig's configLength */
#define PROF_MSG_MAX		127	/* a stamp's or MarkEx's message */
#define PROF_DEVICES_MAX	64	/* CANN's device list */
#define PROF_DEVICE_PID_BASE	1000000000	/* pid of device 0's streams */

struct aclprofConfig {
	uint32_t devs[PROF_DEVICES_MAX];
	uint32_t n;
	aclprofAicoreMetrics metrics;
	uint64_t types;
};

struct aclprofStepInfo {
	uint64_t step;
};

struct prof_stamp {
	char msg[PROF_MSG_MAX + 1];
};

struct prof_event {
	char ph;
	bool device;		/* pid: the device's streams, else the host */
	int64_t tid;
	uint64_t ts, dur;	/* ns, CLOCK_MONOTONIC */
	uint32_t id;		/* "b"/"e" ranges */
	uint64_t seq;		/* order of recording: ties keep it */
	const char *cat;
	char *name;
	int ret;		/* a task's code */
};

struct prof_range {
	struct prof_range *next;
	uint32_t id;
	char *name;
};

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static bool inited;
static char root[PROF_PATH_MAX + 1];
static bool running;
static struct aclprofConfig started;
static char run_dir[PROF_PATH_MAX + 128];
static unsigned int run_index;
static uint64_t run_t0;
static uint64_t generation;		/* one per collection */
static struct prof_event *events;
static size_t nr_events, cap_events;
static struct prof_range *ranges;
static uint32_t next_range_id;
/* Read without the lock on the hot paths; under it when they change. */
static _Atomic bool tx_on;

/* This thread's open aclprofPush()es, counted within one collection. */
static __thread uint64_t push_generation;
static __thread unsigned int push_depth;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Under prof_lock, while running: false when out of memory. */
static bool record(char ph, bool device, int64_t tid, uint64_t ts,
		   uint64_t dur, const char *cat, const char *name, int ret,
		   uint32_t id)
{
	struct prof_event *e;

	if (nr_events == cap_events) {
		size_t cap = cap_events ? cap_events * 2 : 256;
		struct prof_event *p = realloc(events, cap * sizeof(*p));

		if (!p)
			return false;
		events = p;
		cap_events = cap;
	}
	e = &events[nr_events];
	e->name = strdup(name);
	if (!e->name)
		return false;
	e->ph = ph;
	e->device = device;
	e->tid = tid;
	e->ts = ts;
	e->dur = dur;
	e->cat = cat;
	e->ret = ret;
	e->id = id;
	e->seq = nr_events++;
	return true;
}

static void drop_events(void)
{
	struct prof_range *r;
	size_t i;

	for (i = 0; i < nr_events; i++)
		free(events[i].name);
	free(events);
	events = NULL;
	nr_events = cap_events = 0;
	while ((r = ranges)) {
		ranges = r->next;
		free(r->name);
		free(r);
	}
}

static int64_t host_tid(void)
{
	return (int64_t)syscall(SYS_gettid);
}

/* ---- the stream tasks' times ---- */

struct mark_task {
	struct aclmem_task task;
	char msg[64 + PROF_MSG_MAX];
};

static void task_watched(struct aclmem_stream *s, const struct aclmem_task *t,
			 uint64_t start, uint64_t end, int ret);

static int mark_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct mark_task *t = (struct mark_task *)task;

	pthread_mutex_lock(&prof_lock);
	if (running)
		record('i', true, aclmem_stream_id(s), now_ns(), 0, "mark",
		       t->msg, 0, 0);
	pthread_mutex_unlock(&prof_lock);
	return ACL_SUCCESS;
}

static const struct aclmem_task_ops mark_ops = {
	.run = mark_run,
	.release = aclmem_task_free,
	.name = "mark",
};

static void task_watched(struct aclmem_stream *s, const struct aclmem_task *t,
			 uint64_t start, uint64_t end, int ret)
{
	/* A mark records itself, whatever the data types. */
	if (t->ops == &mark_ops)
		return;
	pthread_mutex_lock(&prof_lock);
	if (running && (started.types & ACL_PROF_TASK_TIME))
		record('X', true, aclmem_stream_id(s), start, end - start,
		       t->ops->name ? t->ops->name : "task",
		       aclmem_task_name(t), ret, 0);
	pthread_mutex_unlock(&prof_lock);
}

/* ---- the trace file ---- */

static int event_cmp(const void *a, const void *b)
{
	const struct prof_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int64_t event_pid(bool device)
{
	return device ? PROF_DEVICE_PID_BASE + (int64_t)started.devs[0] :
			(int64_t)getpid();
}

static json_object *meta(const char *what, int64_t pid, int64_t tid,
			 const char *name)
{
	json_object *o = json_object_new_object(), *args;

	json_object_object_add(o, "name", json_object_new_string(what));
	json_object_object_add(o, "ph", json_object_new_string("M"));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "tid", json_object_new_int64(tid));
	args = json_object_new_object();
	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(o, "args", args);
	return o;
}

static json_object *event_json(const struct prof_event *e)
{
	json_object *o = json_object_new_object();
	char ph[2] = { e->ph, '\0' };

	json_object_object_add(o, "name", json_object_new_string(e->name));
	json_object_object_add(o, "cat", json_object_new_string(e->cat));
	json_object_object_add(o, "ph", json_object_new_string(ph));
	json_object_object_add(o, "ts",
		json_object_new_double((double)(e->ts - run_t0) / 1000.0));
	json_object_object_add(o, "pid", json_object_new_int64(event_pid(e->device)));
	json_object_object_add(o, "tid", json_object_new_int64(e->tid));
	if (e->ph == 'X') {
		json_object *args = json_object_new_object();

		json_object_object_add(o, "dur",
			json_object_new_double((double)e->dur / 1000.0));
		json_object_object_add(args, "ret", json_object_new_int(e->ret));
		json_object_object_add(o, "args", args);
	} else if (e->ph == 'i') {
		json_object_object_add(o, "s", json_object_new_string("t"));
	} else if (e->ph == 'b' || e->ph == 'e') {
		json_object_object_add(o, "id", json_object_new_int64(e->id));
	}
	return o;
}

/* Under prof_lock: the names of the processes and of each thread seen. */
static void add_metadata(json_object *arr)
{
	char name[64];
	size_t i, j;

	snprintf(name, sizeof(name), "host (pid %d)", (int)getpid());
	json_object_array_add(arr, meta("process_name", event_pid(false), 0,
					name));
	snprintf(name, sizeof(name), "device %u", started.devs[0]);
	json_object_array_add(arr, meta("process_name", event_pid(true), 0,
					name));
	for (i = 0; i < nr_events; i++) {
		for (j = 0; j < i; j++)
			if (events[j].device == events[i].device &&
			    events[j].tid == events[i].tid)
				break;
		if (j < i)
			continue;
		snprintf(name, sizeof(name), "%s %lld",
			 events[i].device ? "stream" : "thread",
			 (long long)events[i].tid);
		json_object_array_add(arr, meta("thread_name",
						event_pid(events[i].device),
						events[i].tid, name));
	}
}

/* Under prof_lock: write the collection's trace, then forget it. */
static int write_trace(void)
{
	char path[sizeof(run_dir) + 16];
	json_object *top, *arr;
	size_t i;
	int ret = ACL_SUCCESS;

	qsort(events, nr_events, sizeof(*events), event_cmp);
	top = json_object_new_object();
	arr = json_object_new_array();
	add_metadata(arr);
	for (i = 0; i < nr_events; i++)
		json_object_array_add(arr, event_json(&events[i]));
	json_object_object_add(top, "traceEvents", arr);
	json_object_object_add(top, "displayTimeUnit",
			       json_object_new_string("ns"));
	snprintf(path, sizeof(path), "%s/trace.json", run_dir);
	if (json_object_to_file_ext(path, top, JSON_C_TO_STRING_PLAIN) < 0)
		ret = aclmem_fail(ACL_ERROR_WRITE_FILE,
				  "aclprof: cannot write %s: %s", path,
				  strerror(errno));
	json_object_put(top);
	drop_events();
	return ret;
}

/* Under prof_lock: stop recording and write the file. */
static int stop_locked(void)
{
	aclmem_stream_watch_tasks(NULL);
	atomic_store(&tx_on, false);
	running = false;
	return write_trace();
}

static void prof_fork_prepare(void)
{
	pthread_mutex_lock(&prof_lock);
}

static void prof_fork_parent(void)
{
	pthread_mutex_unlock(&prof_lock);
}

static void prof_fork_child(void)
{
	if (running) {
		aclmem_stream_watch_tasks(NULL);
		atomic_store(&tx_on, false);
		running = false;
	}
	drop_events();
	/* The forking thread's open pushes were the parent's. */
	generation++;
	pthread_mutex_unlock(&prof_lock);
}

ACLMEM_PART(.rank = ACLMEM_RANK_PROF,
	    .fork_prepare = prof_fork_prepare,
	    .fork_parent = prof_fork_parent,
	    .fork_child = prof_fork_child)

/* A zeroed object for a Create call, or NULL recorded as fn's failure. */
static void *create(const char *fn, size_t size)
{
	void *p = calloc(1, size);

	if (!p)
		aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	return p;
}

/* ---- init, configs, start and stop ---- */

aclError aclprofInit(const char *profilerResultPath, size_t length)
{
	static const char fn[] = "aclprofInit";
	size_t len;

	if (!profilerResultPath)
		return aclmem_arg_null(fn, "profilerResultPath");
	if (!length || length > PROF_PATH_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: length %zu not in 1..%d", fn, length,
				   PROF_PATH_MAX);
	len = strnlen(profilerResultPath, length);
	if (!len)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: empty path",
				   fn);
	pthread_mutex_lock(&prof_lock);
	if (inited) {
		pthread_mutex_unlock(&prof_lock);
		return aclmem_fail(ACL_ERROR_REPEAT_INITIALIZE,
				   "%s: already initialised", fn);
	}
	memcpy(root, profilerResultPath, len);
	root[len] = '\0';
	inited = true;
	pthread_mutex_unlock(&prof_lock);
	return ACL_SUCCESS;
}

aclError aclprofFinalize(void)
{
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&prof_lock);
	if (!inited) {
		pthread_mutex_unlock(&prof_lock);
		return aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				   "aclprofFinalize: aclprofInit was not called");
	}
	if (running)
		ret = stop_locked();
	inited = false;
	pthread_mutex_unlock(&prof_lock);
	return ret;
}

static bool metrics_valid(aclprofAicoreMetrics m)
{
	return ((int)m >= ACL_AICORE_ARITHMETIC_UTILIZATION &&
		m <= ACL_AICORE_MEMORY_ACCESS) || m == ACL_AICORE_NONE;
}

aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
				   aclprofAicoreMetrics aicoreMetrics,
				   const aclprofAicoreEvents *aicoreEvents,
				   uint64_t dataTypeConfig)
{
	static const char fn[] = "aclprofCreateConfig";
	aclprofConfig *c;

	if (!deviceIdList) {
		aclmem_arg_null(fn, "deviceIdList");
		return NULL;
	}
	if (!deviceNums || deviceNums > PROF_DEVICES_MAX) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: deviceNums %u not in 1..%d",
			    fn, deviceNums, PROF_DEVICES_MAX);
		return NULL;
	}
	if (!metrics_valid(aicoreMetrics)) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown aicoreMetrics %d",
			    fn, (int)aicoreMetrics);
		return NULL;
	}
	if (aicoreEvents) {
		aclmem_fail(ACL_ERROR_INVALID_PARAM,
			    "%s: aicoreEvents must be NULL", fn);
		return NULL;
	}
	c = create(fn, sizeof(*c));
	if (!c)
		return NULL;
	memcpy(c->devs, deviceIdList, deviceNums * sizeof(*deviceIdList));
	c->n = deviceNums;
	c->metrics = aicoreMetrics;
	c->types = dataTypeConfig;
	return c;
}

aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig)
{
	if (!profilerConfig)
		return aclmem_arg_null("aclprofDestroyConfig", "profilerConfig");
	free((void *)profilerConfig);
	return ACL_SUCCESS;
}

aclError aclprofSetConfig(aclprofConfigType configType, const char *config,
			  size_t configLength)
{
	static const char fn[] = "aclprofSetConfig";

	if ((int)configType <= ACL_PROF_ARGS_MIN ||
	    configType >= ACL_PROF_ARGS_MAX || configType == 2)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: unknown configType %d", fn,
				   (int)configType);
	if (!config)
		return aclmem_arg_null(fn, "config");
	if (!configLength || configLength > PROF_SET_CONFIG_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: configLength %zu not in 1..%d", fn,
				   configLength, PROF_SET_CONFIG_MAX);
	pthread_mutex_lock(&prof_lock);
	if (!inited) {
		pthread_mutex_unlock(&prof_lock);
		return aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				   "%s: aclprofInit was not called", fn);
	}
	pthread_mutex_unlock(&prof_lock);
	/* Sampling settings of hardware this device does not have. */
	return ACL_SUCCESS;
}

static bool mkdir_ok(const char *path)
{
	return !mkdir(path, 0750) || errno == EEXIST;
}

/* Under prof_lock: the collection's directory, its parents as needed. */
static int make_run_dir(const char *fn)
{
	char stamp[16], tag[11], path[sizeof(root)];
	struct timespec ts;
	struct tm tm;
	uint64_t seed;
	char *p;
	int i;

	snprintf(path, sizeof(path), "%s", root);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (!mkdir_ok(path))
			goto fail;
		*p = '/';
	}
	if (!mkdir_ok(path))
		goto fail;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	if (!strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm))
		stamp[0] = '\0';
	seed = now_ns() ^ ((uint64_t)getpid() << 32);
	for (i = 0; i < 10; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		tag[i] = (char)('A' + (seed >> 33) % 26);
	}
	tag[10] = '\0';
	snprintf(run_dir, sizeof(run_dir), "%s/PROF_%06u_%.14s%03d_%.10s",
		 root, (run_index + 1) % 1000000, stamp,
		 (int)(ts.tv_nsec / 1000000), tag);
	if (mkdir(run_dir, 0750))
		return aclmem_fail(ACL_ERROR_INVALID_FILE,
				   "%s: cannot make %s: %s", fn, run_dir,
				   strerror(errno));
	run_index++;
	return ACL_SUCCESS;
fail:
	return aclmem_fail(ACL_ERROR_INVALID_FILE, "%s: cannot make %s: %s", fn,
			   path, strerror(errno));
}

aclError aclprofStart(const aclprofConfig *profilerConfig)
{
	static const char fn[] = "aclprofStart";
	uint32_t i;
	int ret;

	if (!profilerConfig)
		return aclmem_arg_null(fn, "profilerConfig");
	pthread_mutex_lock(&prof_lock);
	if (!inited) {
		ret = aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				  "%s: aclprofInit was not called", fn);
		goto out;
	}
	if (running) {
		ret = aclmem_fail(ACL_ERROR_PROF_ALREADY_RUN,
				  "%s: a collection is running", fn);
		goto out;
	}
	for (i = 0; i < profilerConfig->n; i++) {
		if (!aclmem_device_valid(profilerConfig->devs[i])) {
			ret = aclmem_fail(ACL_ERROR_INVALID_DEVICE,
					  "%s: no device %u", fn,
					  profilerConfig->devs[i]);
			goto out;
		}
	}
	ret = make_run_dir(fn);
	if (ret)
		goto out;
	started = *profilerConfig;
	generation++;
	next_range_id = 0;
	run_t0 = now_ns();
	running = true;
	atomic_store(&tx_on, (started.types & ACL_PROF_MSPROFTX) != 0);
	/* Marks record whatever the data types: watch in every case. */
	aclmem_stream_watch_tasks(task_watched);
out:
	pthread_mutex_unlock(&prof_lock);
	return ret;
}

static bool same_devices(const aclprofConfig *a, const aclprofConfig *b)
{
	return a->n == b->n &&
	       !memcmp(a->devs, b->devs, a->n * sizeof(a->devs[0]));
}

aclError aclprofStop(const aclprofConfig *profilerConfig)
{
	static const char fn[] = "aclprofStop";
	int ret;

	if (!profilerConfig)
		return aclmem_arg_null(fn, "profilerConfig");
	pthread_mutex_lock(&prof_lock);
	if (!inited)
		ret = aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				  "%s: aclprofInit was not called", fn);
	else if (!running || !same_devices(profilerConfig, &started))
		ret = aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				  "%s: no collection on these devices", fn);
	else if (profilerConfig->types != started.types)
		ret = aclmem_fail(ACL_ERROR_INVALID_PROFILING_CONFIG,
				  "%s: dataTypeConfig 0x%llx, started with 0x%llx",
				  fn, (unsigned long long)profilerConfig->types,
				  (unsigned long long)started.types);
	else
		ret = stop_locked();
	pthread_mutex_unlock(&prof_lock);
	return ret;
}

/* ---- msproftx ---- */

void *aclprofCreateStamp(void)
{
	return create("aclprofCreateStamp", sizeof(struct prof_stamp));
}

void aclprofDestroyStamp(void *stamp)
{
	free(stamp);
}

/* msg[0..len) without a NUL in it, and not too long. */
static int msg_check(const char *fn, const char *msg, size_t len)
{
	if (!msg)
		return aclmem_arg_null(fn, "msg");
	if (!len || len > PROF_MSG_MAX || strnlen(msg, len) != len)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: message length %zu not in 1..%d or not the string's",
				   fn, len, PROF_MSG_MAX);
	return ACL_SUCCESS;
}

aclError aclprofSetStampTraceMessage(void *stamp, const char *msg,
				     uint32_t msgLen)
{
	static const char fn[] = "aclprofSetStampTraceMessage";
	struct prof_stamp *s = stamp;
	int ret;

	if (!s)
		return aclmem_arg_null(fn, "stamp");
	ret = msg_check(fn, msg, msgLen);
	if (ret)
		return ret;
	memcpy(s->msg, msg, msgLen);
	s->msg[msgLen] = '\0';
	return ACL_SUCCESS;
}

/*
 * The checks every host-side msproftx call makes; on success, returns
 * with prof_lock held and msproftx being recorded.
 */
static int tx_begin(const char *fn, const void *stamp, bool need_stamp)
{
	if (need_stamp && !stamp)
		return aclmem_arg_null(fn, "stamp");
	pthread_mutex_lock(&prof_lock);
	if (!running || !atomic_load(&tx_on)) {
		pthread_mutex_unlock(&prof_lock);
		return aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				   "%s: no collection with ACL_PROF_MSPROFTX", fn);
	}
	return ACL_SUCCESS;
}

static int tx_end(const char *fn, bool ok)
{
	pthread_mutex_unlock(&prof_lock);
	if (!ok)
		return aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	return ACL_SUCCESS;
}

aclError aclprofMark(void *stamp)
{
	const struct prof_stamp *s = stamp;
	int ret = tx_begin("aclprofMark", stamp, true);

	if (ret)
		return ret;
	return tx_end("aclprofMark", record('i', false, host_tid(), now_ns(), 0,
					    "msproftx", s->msg, 0, 0));
}

aclError aclprofPush(void *stamp)
{
	const struct prof_stamp *s = stamp;
	int ret = tx_begin("aclprofPush", stamp, true);
	bool ok;

	if (ret)
		return ret;
	ok = record('B', false, host_tid(), now_ns(), 0, "msproftx", s->msg,
		    0, 0);
	if (ok) {
		if (push_generation != generation) {
			push_generation = generation;
			push_depth = 0;
		}
		push_depth++;
	}
	return tx_end("aclprofPush", ok);
}

aclError aclprofPop(void)
{
	static const char fn[] = "aclprofPop";
	int ret = tx_begin(fn, NULL, false);
	bool ok;

	if (ret)
		return ret;
	if (push_generation != generation || !push_depth) {
		pthread_mutex_unlock(&prof_lock);
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: no aclprofPush open on this thread", fn);
	}
	ok = record('E', false, host_tid(), now_ns(), 0, "msproftx", "", 0, 0);
	if (ok)
		push_depth--;
	return tx_end(fn, ok);
}

aclError aclprofRangeStart(void *stamp, uint32_t *rangeId)
{
	static const char fn[] = "aclprofRangeStart";
	const struct prof_stamp *s = stamp;
	struct prof_range *r;
	int ret;

	if (!rangeId)
		return aclmem_arg_null(fn, "rangeId");
	ret = tx_begin(fn, stamp, true);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (r)
		r->name = strdup(s->msg);
	if (!r || !r->name) {
		free(r);
		return tx_end(fn, false);
	}
	r->id = ++next_range_id;
	if (!record('b', false, host_tid(), now_ns(), 0, "msproftx", s->msg, 0,
		    r->id)) {
		free(r->name);
		free(r);
		return tx_end(fn, false);
	}
	r->next = ranges;
	ranges = r;
	*rangeId = r->id;
	return tx_end(fn, true);
}

aclError aclprofRangeStop(uint32_t rangeId)
{
	static const char fn[] = "aclprofRangeStop";
	struct prof_range **pp, *r;
	int ret = tx_begin(fn, NULL, false);
	bool ok;

	if (ret)
		return ret;
	for (pp = &ranges; (r = *pp); pp = &r->next)
		if (r->id == rangeId)
			break;
	if (!r) {
		pthread_mutex_unlock(&prof_lock);
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: no open range %u", fn, rangeId);
	}
	ok = record('e', false, host_tid(), now_ns(), 0, "msproftx", r->name,
		    0, r->id);
	if (ok) {
		*pp = r->next;
		free(r->name);
		free(r);
	}
	return tx_end(fn, ok);
}

/* Queue a mark named msg on stream, recorded when the stream reaches it. */
static int mark_queue(const char *fn, const char *msg, aclrtStream stream)
{
	struct mark_task *t;
	bool on;

	pthread_mutex_lock(&prof_lock);
	on = running;
	pthread_mutex_unlock(&prof_lock);
	if (!on)
		return aclmem_fail(ACL_ERROR_PROF_NOT_RUN,
				   "%s: no collection running", fn);
	t = aclmem_task_new(fn, sizeof(*t), &mark_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	snprintf(t->msg, sizeof(t->msg), "%s", msg);
	return aclmem_task_queue(fn, stream, &t->task);
}

aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)
{
	int ret = msg_check("aclprofMarkEx", msg, msgLen);

	return ret ? ret : mark_queue("aclprofMarkEx", msg, stream);
}

/* ---- steps ---- */

aclprofStepInfo *aclprofCreateStepInfo(void)
{
	return create("aclprofCreateStepInfo", sizeof(aclprofStepInfo));
}

void aclprofDestroyStepInfo(aclprofStepInfo *stepinfo)
{
	free(stepinfo);
}

aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag,
				 aclrtStream stream)
{
	static const char fn[] = "aclprofGetStepTimestamp";
	char msg[64];
	int ret;

	if (!stepInfo)
		return aclmem_arg_null(fn, "stepInfo");
	if (tag != ACL_STEP_START && tag != ACL_STEP_END)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown tag %d",
				   fn, (int)tag);
	snprintf(msg, sizeof(msg), "step %llu %s",
		 (unsigned long long)stepInfo->step,
		 tag == ACL_STEP_START ? "start" : "end");
	ret = mark_queue(fn, msg, stream);
	if (!ret && tag == ACL_STEP_END)
		stepInfo->step++;
	return ret;
}
