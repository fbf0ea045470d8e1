// SPDX-License-Identifier: MIT
/*
 * Streams.  Each stream is a FIFO of tasks run in order by its own worker
 * thread, off the calling thread, as on a device.  aclrtSynchronizeStream
 * returns once every task queued before it has run, with the first error a
 * task met since the last synchronisation (a copy re-checks its ranges when
 * it runs: a buffer freed in between is an error then, not a crash).
 *
 * A stream belongs to the context current when it was made; a context's
 * default stream (aclrtStream NULL, or the handle
 * aclrtCtxGetCurrentDefaultStream gives) is made on its first use.  Using a
 * stream from a thread whose current context is another one is refused
 * with ACL_ERROR_RT_STREAM_CONTEXT, as CANN does.  Destroying a context
 * (or resetting the device, for its default context) destroys its streams.
 *
 * Failure mode: with ACL_STOP_ON_FAILURE, a task that fails makes the
 * stream discard the tasks queued after it, and those queued later, until
 * the error has been collected by a synchronisation; with the default
 * ACL_CONTINUE_ON_FAILURE later tasks run.
 *
 * While a model run instance records a stream's work (lib/model.c), the
 * stream hands each submitted task to the model's sink instead of its
 * queue, and refuses to be synchronised (ACL_ERROR_RT_STREAM_CAPTURED): its
 * work runs only when the model is executed.
 *
 * Streams are reference counted: the registry holds one reference, and a
 * caller holds one while it queues or waits, so a stream destroyed by one
 * thread while another synchronises it is freed only after both are done.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_rt.h"
#include "args.h"
#include "context.h"
#include "deadline.h"
#include "errors.h"
#include "hooks.h"
#include "log.h"
#include "stream.h"

/* CANN's priority range: 0 is the highest, 7 the lowest. */
#define STREAM_PRIO_GREATEST	0
#define STREAM_PRIO_LEAST	7
#define STREAM_FLAGS_KNOWN	(ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | \
				 ACL_STREAM_PERSISTENT | ACL_STREAM_HUGE | \
				 ACL_STREAM_CPU_SCHEDULE | \
				 ACL_STREAM_DEVICE_USE_ONLY)

/* Live streams per process: aclrtGetStreamAvailableNum counts down. */
#define STREAM_MAX		2048U

enum stop_mode { RUN, DRAIN, DISCARD };

struct aclmem_stream {
	struct aclmem_stream *next;	/* registry, under streams_lock */
	struct aclmem_ctx *ctx;
	bool is_default;
	int32_t id;
	uint32_t priority;
	uint32_t flags;
	uint64_t failure_mode;
	/* Attributes kept for the program; nothing here acts on them. */
	uint32_t overflow_switch;
	uint32_t user_tag;
	uint32_t cache_op_info;
	uint32_t next_task_id;		/* for exception reports */
	pthread_mutex_t lock;
	pthread_cond_t work;		/* worker: a task or a stop arrived */
	pthread_cond_t idle;		/* waiters: the queue ran dry */
	struct aclmem_task *head, *tail;
	bool busy;			/* the worker is running a task */
	struct aclmem_task *running;	/* that task, until run() returned */
	bool failed;			/* stop-on-failure tripped */
	enum stop_mode stop;
	_Atomic bool cancel;		/* waiting tasks give up */
	int error;			/* first error since the last sync */
	struct aclmem_stream_sink *sink;	/* a model records the work */
	unsigned int refs;
	pthread_t thread;
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclmem_stream *streams;
static unsigned int nr_streams;		/* under streams_lock */
static struct aclmem_hooks state_hooks = ACLMEM_HOOKS_INIT;
static struct aclmem_hooks abort_hooks = ACLMEM_HOOKS_INIT;
static _Atomic int32_t next_stream_id;
static _Atomic(aclmem_task_watch_fn) task_watch;

void aclmem_stream_watch_tasks(aclmem_task_watch_fn fn)
{
	atomic_store_explicit(&task_watch, fn, memory_order_release);
}

const char *aclmem_task_name(const struct aclmem_task *t)
{
	const char *label = t->ops->label ? t->ops->label(t) : NULL;

	return label ? label : t->ops->name ? t->ops->name : "task";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int run_watched(aclmem_task_watch_fn fn, struct aclmem_task *t,
		       struct aclmem_stream *s)
{
	uint64_t start = now_ns();
	int ret = t->ops->run(t, s);

	fn(s, t, start, now_ns(), ret);
	return ret;
}

static void release_all(struct aclmem_task *t)
{
	while (t) {
		struct aclmem_task *next = t->next;

		t->ops->release(t, false);
		t = next;
	}
}

static void *worker(void *arg)
{
	struct aclmem_stream *s = arg;
	struct aclmem_task *t, *dropped;
	aclmem_task_watch_fn watch;
	int ret;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && s->stop == RUN)
			pthread_cond_wait(&s->work, &s->lock);
		if (s->stop == DISCARD || s->failed) {
			dropped = s->head;
			s->head = s->tail = NULL;
			pthread_mutex_unlock(&s->lock);
			release_all(dropped);
			pthread_mutex_lock(&s->lock);
			if (!s->head)
				pthread_cond_broadcast(&s->idle);
			if (s->stop != RUN && !s->head)
				break;
			continue;
		}
		t = s->head;
		if (!t)
			break;
		s->head = t->next;
		if (!s->head)
			s->tail = NULL;
		s->busy = true;
		s->running = t;
		pthread_mutex_unlock(&s->lock);
		watch = atomic_load_explicit(&task_watch, memory_order_acquire);
		if (__builtin_expect(watch != NULL, 0))
			ret = run_watched(watch, t, s);
		else
			ret = t->ops->run(t, s);
		pthread_mutex_lock(&s->lock);
		s->running = NULL;
		pthread_mutex_unlock(&s->lock);
		/*
		 * A failed task is an exception CANN reports to the
		 * program's exception callbacks; work given up because the
		 * program aborted the stream is not.
		 */
		if (ret && ret != ACL_ERROR_RT_STREAM_ABORT)
			aclmem_exception_report((uint32_t)s->id, t->id,
						aclmem_ctx_device(s->ctx),
						(uint32_t)ret,
						t->ops->kernel ?
						t->ops->kernel(t) : NULL);
		t->ops->release(t, true);
		pthread_mutex_lock(&s->lock);
		s->busy = false;
		if (ret && !s->error)
			s->error = ret;
		if (ret && s->failure_mode == ACL_STOP_ON_FAILURE)
			s->failed = true;
		if (!s->head)
			pthread_cond_broadcast(&s->idle);
	}
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void aclmem_stream_put(struct aclmem_stream *s)
{
	bool last;

	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->idle);
	free(s);
}

static int stream_new(struct aclmem_ctx *ctx, uint32_t priority,
		      uint32_t flags, struct aclmem_stream **out)
{
	struct aclmem_stream *s;
	sigset_t all, old;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->idle, NULL);
	s->refs = 1;
	s->ctx = ctx;
	s->priority = priority;
	s->flags = flags;
	s->failure_mode = ACL_CONTINUE_ON_FAILURE;
	s->id = atomic_fetch_add(&next_stream_id, 1);
	/* Signals meant for the program must not land on a worker. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, NULL, worker, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		aclmem_err("stream worker: %s", strerror(err));
		aclmem_stream_put(s);
		return ACL_ERROR_RT_NO_STREAM_RESOURCE;
	}
	*out = s;
	return ACL_SUCCESS;
}

/* Make waiting tasks give up, the one running first.  Under s->lock. */
static void stream_cancel_locked(struct aclmem_stream *s)
{
	atomic_store(&s->cancel, true);
	if (s->running && s->running->ops->cancel)
		s->running->ops->cancel(s->running);
}

/* Stop the worker (draining or discarding), wait for it, drop a reference. */
static void stream_stop(struct aclmem_stream *s, enum stop_mode mode)
{
	pthread_mutex_lock(&s->lock);
	s->stop = mode;
	if (mode == DISCARD)
		stream_cancel_locked(s);
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	aclmem_parts_stream_gone(s);
	aclmem_stream_put(s);
}

static bool stream_idle(struct aclmem_stream *s)
{
	return !s->head && !s->busy;
}

/* Wait until idle or dl passes (NULL: for ever).  ACL code. */
static int stream_wait(struct aclmem_stream *s, const struct timespec *dl)
{
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&s->lock);
	while (!stream_idle(s)) {
		if (aclmem_cond_wait_until(&s->idle, &s->lock, dl) ==
		    ETIMEDOUT && !stream_idle(s)) {
			ret = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
			break;
		}
	}
	if (!ret) {
		ret = s->error;
		s->error = 0;
		s->failed = false;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static void stream_ref(struct aclmem_stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->refs++;
	pthread_mutex_unlock(&s->lock);
}

static void registry_add(struct aclmem_stream *s)
{
	s->next = streams;
	streams = s;
	nr_streams++;
}

struct state_change {
	struct aclmem_stream *stream;
	aclrtStreamState state;
};

static void call_state(void *fn, void *args, void *ctx)
{
	struct state_change *c = ctx;

	((aclrtStreamStateCallback)fn)(c->stream, c->state, args);
}

/*
 * Tell the registered callbacks: after an aclrtCreateStream* made s, or
 * before an aclrtDestroyStream* (or its context's end) takes it down.
 * Default streams are the runtime's, not the program's: not reported.
 */
static void state_changed(struct aclmem_stream *s, aclrtStreamState state)
{
	struct state_change c = { s, state };

	if (!s->is_default)
		aclmem_hooks_call(&state_hooks, call_state, &c);
}

aclError aclrtRegStreamStateCallback(const char *regName,
				     aclrtStreamStateCallback callback,
				     void *args)
{
	int ret = aclmem_hooks_set(&state_hooks, regName, (void *)callback,
				   args);

	return ret ? aclmem_fail(ret, "aclrtRegStreamStateCallback: name "
				 "NULL, empty or longer than %d",
				 ACLMEM_HOOK_NAME_MAX) : ACL_SUCCESS;
}

int aclmem_stream_get(aclrtStream handle, struct aclmem_stream **out)
{
	struct aclmem_ctx *ctx;
	struct aclmem_stream *s;
	int ret;

	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	ctx = aclmem_ctx_current();
	pthread_mutex_lock(&streams_lock);
	if (!handle) {
		for (s = streams; s; s = s->next)
			if (s->ctx == ctx && s->is_default)
				break;
		if (!s) {
			ret = nr_streams >= STREAM_MAX ?
				ACL_ERROR_RT_NO_STREAM_RESOURCE :
				stream_new(ctx, STREAM_PRIO_GREATEST, 0, &s);
			if (ret)
				goto out;
			s->is_default = true;
			registry_add(s);
		}
	} else {
		for (s = streams; s && s != handle; s = s->next)
			;
		if (!s) {
			ret = ACL_ERROR_RT_PARAM_INVALID;
			goto out;
		}
		if (s->ctx != ctx) {
			ret = ACL_ERROR_RT_STREAM_CONTEXT;
			goto out;
		}
	}
	stream_ref(s);
	*out = s;
out:
	pthread_mutex_unlock(&streams_lock);
	return ret;
}

aclrtStream aclmem_stream_handle(struct aclmem_stream *s)
{
	return s;
}

/*
 * The default stream has a handle of its own too, so programs that ask
 * for it can pass it where CANN accepts a stream; NULL names it as well.
 */
aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)
{
	struct aclmem_stream *s;
	int ret;

	if (!stream)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCtxGetCurrentDefaultStream: stream is NULL");
	ret = aclmem_stream_get(NULL, &s);
	if (ret)
		return aclmem_api_ret("aclrtCtxGetCurrentDefaultStream", ret);
	*stream = s;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

int32_t aclmem_stream_id(struct aclmem_stream *s)
{
	return s->id;
}

int32_t aclmem_stream_device(struct aclmem_stream *s)
{
	return aclmem_ctx_device(s->ctx);
}

bool aclmem_stream_cancelled(struct aclmem_stream *s)
{
	return atomic_load(&s->cancel);
}

/*
 * The number of the last task this thread queued on a stream the program
 * created (aclrtGetThreadLastTaskId): CANN counts those, not the default
 * stream's; 0 until there is one.
 */
static __thread uint32_t thread_last_task_id;

int aclmem_stream_submit(aclrtStream handle, struct aclmem_task *t)
{
	struct aclmem_stream *s;
	int ret;

	ret = aclmem_stream_get(handle, &s);
	if (ret) {
		t->ops->release(t, false);
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	if (s->stop != RUN || atomic_load(&s->cancel)) {
		/* Destroyed or aborted while we looked it up. */
		ret = s->stop != RUN ? ACL_ERROR_RT_PARAM_INVALID :
				       ACL_ERROR_RT_STREAM_ABORT;
		pthread_mutex_unlock(&s->lock);
		t->ops->release(t, false);
	} else if (s->sink) {
		ret = s->sink->keep(s->sink, t);
		pthread_mutex_unlock(&s->lock);
	} else {
		t->next = NULL;
		t->id = s->next_task_id++;
		if (!s->is_default)
			thread_last_task_id = t->id;
		if (s->tail)
			s->tail->next = t;
		else
			s->head = t;
		s->tail = t;
		pthread_cond_signal(&s->work);
		pthread_mutex_unlock(&s->lock);
	}
	aclmem_stream_put(s);
	return ret;
}

void *aclmem_task_new(const char *fn, size_t size,
		      const struct aclmem_task_ops *ops)
{
	struct aclmem_task *t = calloc(1, size);

	if (!t) {
		aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
			    "%s: out of memory for the task", fn);
		return NULL;
	}
	t->ops = ops;
	t->size = size;
	return t;
}

void aclmem_task_free(struct aclmem_task *t, bool ran)
{
	(void)ran;
	free(t);
}

struct aclmem_task *aclmem_task_dup(const struct aclmem_task *t)
{
	struct aclmem_task *n;

	if (!t->size)
		return NULL;
	n = malloc(t->size);
	if (n) {
		memcpy(n, t, t->size);
		n->next = NULL;
	}
	return n;
}

int aclmem_stream_set_sink(struct aclmem_stream *s,
			   struct aclmem_stream_sink *sink)
{
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&s->lock);
	if (sink && s->sink)
		ret = ACL_ERROR_RT_STREAM_CAPTURED;
	else
		s->sink = sink;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

struct aclmem_stream_sink *aclmem_stream_get_sink(struct aclmem_stream *s)
{
	struct aclmem_stream_sink *sink;

	pthread_mutex_lock(&s->lock);
	sink = s->sink;
	pthread_mutex_unlock(&s->lock);
	return sink;
}

bool aclmem_stream_is_default(struct aclmem_stream *s)
{
	return s->is_default;
}

uint32_t aclmem_stream_flags(struct aclmem_stream *s)
{
	return s->flags;
}

int aclmem_task_queue(const char *fn, aclrtStream stream,
		      struct aclmem_task *t)
{
	return aclmem_api_ret(fn, aclmem_stream_submit(stream, t));
}

static aclError create(const char *fn, aclrtStream *stream, uint32_t priority,
		       uint32_t flags)
{
	struct aclmem_stream *s;
	int ret;

	if (!stream)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL",
				   fn);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (flags & ~STREAM_FLAGS_KNOWN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: unknown flags 0x%x", fn,
				   flags & ~STREAM_FLAGS_KNOWN);
	/* CANN clamps a priority past the least one rather than failing. */
	if (priority > STREAM_PRIO_LEAST)
		priority = STREAM_PRIO_LEAST;
	pthread_mutex_lock(&streams_lock);
	ret = nr_streams >= STREAM_MAX ? ACL_ERROR_RT_NO_STREAM_RESOURCE :
		stream_new(aclmem_ctx_current(), priority, flags, &s);
	if (!ret)
		registry_add(s);
	pthread_mutex_unlock(&streams_lock);
	if (ret)
		return aclmem_api_ret(fn, ret);
	*stream = s;
	state_changed(s, ACL_RT_STREAM_STATE_CREATE_POST);
	return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	return create("aclrtCreateStream", stream, STREAM_PRIO_GREATEST, 0);
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
				     uint32_t flag)
{
	return create("aclrtCreateStreamWithConfig", stream, priority, flag);
}

aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority,
					   int32_t *greatestPriority)
{
	if (!leastPriority || !greatestPriority)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDeviceGetStreamPriorityRange: %s is NULL",
				   !leastPriority ? "leastPriority" :
				   "greatestPriority");
	*leastPriority = STREAM_PRIO_LEAST;
	*greatestPriority = STREAM_PRIO_GREATEST;
	return ACL_SUCCESS;
}

static aclError destroy(aclrtStream handle, enum stop_mode mode)
{
	const char *fn = mode == DRAIN ? "aclrtDestroyStream" :
					 "aclrtDestroyStreamForce";
	struct aclmem_stream **ps, *s = NULL;
	struct aclmem_ctx *ctx;
	int ret;

	if (!handle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: stream is NULL (the default stream is "
				   "not destroyed)", fn);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	ctx = aclmem_ctx_current();
	pthread_mutex_lock(&streams_lock);
	for (ps = &streams; *ps; ps = &(*ps)->next) {
		if (*ps == handle && !(*ps)->is_default) {
			if ((*ps)->ctx != ctx) {
				ret = ACL_ERROR_RT_STREAM_CONTEXT;
				break;
			}
			s = *ps;
			*ps = s->next;
			nr_streams--;
			break;
		}
	}
	pthread_mutex_unlock(&streams_lock);
	if (!s)
		return aclmem_fail(ret ? ret : ACL_ERROR_RT_PARAM_INVALID,
				   "%s(%p): %s", fn, handle,
				   ret ? "a stream of another context" :
				   "not a live stream of this process");
	state_changed(s, ACL_RT_STREAM_STATE_DESTROY_PRE);
	stream_stop(s, mode);
	return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	return destroy(stream, DRAIN);
}

aclError aclrtDestroyStreamForce(aclrtStream stream)
{
	return destroy(stream, DISCARD);
}

static aclError sync_stream(const char *fn, aclrtStream stream,
			     int32_t timeout)
{
	struct aclmem_stream *s;
	struct timespec dl;
	int ret;

	if (timeout < -1)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: timeout %d (-1 waits for ever)", fn,
				   (int)timeout);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	/* Its work is a model's, which runs only when executed. */
	if (aclmem_stream_get_sink(s)) {
		aclmem_stream_put(s);
		return aclmem_fail(ACL_ERROR_RT_STREAM_CAPTURED,
				   "%s(%p): the stream is capturing", fn,
				   stream);
	}
	ret = stream_wait(s, aclmem_deadline_ms(&dl, timeout));
	aclmem_stream_put(s);
	if (ret == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
		return aclmem_fail(ret, "%s(%p): not done in %d ms", fn, stream,
				   (int)timeout);
	if (ret)
		return aclmem_fail(ret, "%s(%p): a queued task failed (%d)", fn,
				   stream, ret);
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	return sync_stream("aclrtSynchronizeStream", stream, -1);
}

/* CANN: timeout in ms; -1 waits for ever, 0 only checks. */
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
					   int32_t timeout)
{
	return sync_stream("aclrtSynchronizeStreamWithTimeout", stream,
			   timeout);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
	struct aclmem_stream *s;
	int ret;

	if (!status)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtStreamQuery: status is NULL");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtStreamQuery", ret);
	pthread_mutex_lock(&s->lock);
	*status = stream_idle(s) ? ACL_STREAM_STATUS_COMPLETE :
				   ACL_STREAM_STATUS_NOT_READY;
	pthread_mutex_unlock(&s->lock);
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)
{
	struct aclmem_stream *s;
	int ret;

	/* CANN documents the default stream as not settable. */
	if (!stream)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetStreamFailureMode: the default stream "
				   "(NULL) cannot be set");
	if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetStreamFailureMode: unknown mode %llu",
				   (unsigned long long)mode);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtSetStreamFailureMode", ret);
	pthread_mutex_lock(&s->lock);
	s->failure_mode = mode;
	pthread_mutex_unlock(&s->lock);
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
	struct aclmem_stream *s;
	int ret;

	if (!streamId)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtStreamGetId: streamId is NULL");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtStreamGetId", ret);
	*streamId = s->id;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtGetThreadLastTaskId(uint32_t *taskId)
{
	if (!taskId)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetThreadLastTaskId: taskId is NULL");
	*taskId = thread_last_task_id;
	return ACL_SUCCESS;
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)
{
	struct aclmem_stream *s;
	int ret;

	if (!priority)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtStreamGetPriority: priority is NULL");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtStreamGetPriority", ret);
	*priority = s->priority;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)
{
	struct aclmem_stream *s;
	int ret;

	if (!flags)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtStreamGetFlags: flags is NULL");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtStreamGetFlags", ret);
	*flags = s->flags;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

/*
 * Discard the work not yet started and make waiting tasks give up; the
 * stream stays usable once the task that was running (if any) returns.
 */
static void stream_abort(struct aclmem_stream *s)
{
	struct aclmem_task *dropped;

	pthread_mutex_lock(&s->lock);
	stream_cancel_locked(s);
	dropped = s->head;
	s->head = s->tail = NULL;
	while (s->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	atomic_store(&s->cancel, false);
	s->error = 0;
	s->failed = false;
	pthread_mutex_unlock(&s->lock);
	release_all(dropped);
}

aclError aclrtStreamAbort(aclrtStream stream)
{
	struct aclmem_stream *s;
	int ret;

	if (!stream)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtStreamAbort: stream is NULL");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret("aclrtStreamAbort", ret);
	stream_abort(s);
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

/*
 * CANN's stop: like aclrtStreamAbort here (work not started is dropped,
 * waits give up), and the stream stays usable.
 */
aclError aclrtStreamStop(aclrtStream stream)
{
	int ret;

	if (!stream)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtStreamStop: stream is NULL");
	ret = aclrtStreamAbort(stream);
	return ret ? aclmem_api_ret("aclrtStreamStop", ret) : ACL_SUCCESS;
}

/* ---- configuration handles and attributes ---- */

aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)
{
	aclrtStreamConfigHandle *h = calloc(1, sizeof(*h));

	if (!h)
		aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
			    "aclrtCreateStreamConfigHandle: out of memory");
	return h;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)
{
	if (!handle)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDestroyStreamConfigHandle: NULL handle");
	free(handle);
	return ACL_SUCCESS;
}

aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle,
				 aclrtStreamConfigAttr attr,
				 const void *attrValue, size_t valueSize)
{
	static const size_t size[] = {
		[ACL_RT_STREAM_WORK_ADDR_PTR] = sizeof(handle->workptr),
		[ACL_RT_STREAM_WORK_SIZE] = sizeof(handle->workSize),
		[ACL_RT_STREAM_FLAG] = sizeof(handle->flag),
		[ACL_RT_STREAM_PRIORITY] = sizeof(handle->priority),
	};

	if (!handle || !attrValue)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetStreamConfigOpt: NULL %s",
				   handle ? "value" : "handle");
	if ((unsigned int)attr > ACL_RT_STREAM_PRIORITY ||
	    valueSize != size[attr])
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetStreamConfigOpt: attribute %d with "
				   "%zu bytes", (int)attr, valueSize);
	switch (attr) {
	case ACL_RT_STREAM_WORK_ADDR_PTR:
		memcpy(&handle->workptr, attrValue, valueSize);
		break;
	case ACL_RT_STREAM_WORK_SIZE:
		memcpy(&handle->workSize, attrValue, valueSize);
		break;
	case ACL_RT_STREAM_FLAG:
		memcpy(&handle->flag, attrValue, valueSize);
		break;
	case ACL_RT_STREAM_PRIORITY:
		memcpy(&handle->priority, attrValue, valueSize);
		break;
	}
	return ACL_SUCCESS;
}

/*
 * The work memory a configuration may name is for a model's tasks, which
 * never run here: it is accepted and not used.
 */
aclError aclrtCreateStreamV2(aclrtStream *stream,
			     const aclrtStreamConfigHandle *handle)
{
	if (handle && handle->flag > UINT32_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCreateStreamV2: flags %#zx",
				   handle->flag);
	return create("aclrtCreateStreamV2", stream,
		      handle ? handle->priority : STREAM_PRIO_GREATEST,
		      handle ? (uint32_t)handle->flag : 0);
}

static aclError attribute(const char *fn, aclrtStream stream,
			  aclrtStreamAttr type, aclrtStreamAttrValue *value,
			  bool set)
{
	struct aclmem_stream *s;
	int ret = ACL_SUCCESS;

	if (!value)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: value is NULL",
				   fn);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	pthread_mutex_lock(&s->lock);
	switch (type) {
	case ACL_STREAM_ATTR_FAILURE_MODE:
		if (!set)
			value->failureMode = s->failure_mode;
		else if (s->is_default ||
			 (value->failureMode != ACL_CONTINUE_ON_FAILURE &&
			  value->failureMode != ACL_STOP_ON_FAILURE))
			ret = ACL_ERROR_INVALID_PARAM;
		else
			s->failure_mode = value->failureMode;
		break;
	case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
		if (set)
			s->overflow_switch = value->overflowSwitch;
		else
			value->overflowSwitch = s->overflow_switch;
		break;
	case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
		if (set)
			s->user_tag = value->userCustomTag;
		else
			value->userCustomTag = s->user_tag;
		break;
	case ACL_STREAM_ATTR_CACHE_OP_INFO:
		if (set)
			s->cache_op_info = value->cacheOpInfoSwitch;
		else
			value->cacheOpInfoSwitch = s->cache_op_info;
		break;
	case ACL_STREAM_ATTR_PRIORITY:
		if (!set)
			value->streamPriority = s->priority;
		else if (value->streamPriority > STREAM_PRIO_LEAST)
			ret = ACL_ERROR_INVALID_PARAM;
		else
			s->priority = value->streamPriority;
		break;
	default:
		ret = ACL_ERROR_INVALID_PARAM;
	}
	pthread_mutex_unlock(&s->lock);
	aclmem_stream_put(s);
	return ret ? aclmem_fail(ret, "%s(%p, %d): no such attribute or value",
				 fn, stream, (int)type) : ACL_SUCCESS;
}

aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
				 aclrtStreamAttrValue *value)
{
	return attribute("aclrtSetStreamAttribute", stream, stmAttrType, value,
			 true);
}

aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
				 aclrtStreamAttrValue *value)
{
	return attribute("aclrtGetStreamAttribute", stream, stmAttrType, value,
			 false);
}

aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)
{
	aclrtStreamAttrValue v = { .overflowSwitch = flag };

	return attribute("aclrtSetStreamOverflowSwitch", stream,
			 ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v, true);
}

aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)
{
	aclrtStreamAttrValue v = { 0 };
	int ret;

	if (!flag)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetStreamOverflowSwitch: flag is NULL");
	ret = attribute("aclrtGetStreamOverflowSwitch", stream,
			ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v, false);
	if (!ret)
		*flag = v.overflowSwitch;
	return ret;
}

aclError aclrtGetStreamAvailableNum(uint32_t *streamCount)
{
	if (!streamCount)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetStreamAvailableNum: NULL count");
	pthread_mutex_lock(&streams_lock);
	*streamCount = STREAM_MAX - nr_streams;
	pthread_mutex_unlock(&streams_lock);
	return ACL_SUCCESS;
}

/* ---- every stream ---- */

int aclmem_streams_sync_all(int32_t timeout_ms)
{
	struct aclmem_stream **snap, *s;
	const struct timespec *dl;
	struct timespec dl_at;
	size_t n = 0, i;
	int ret = ACL_SUCCESS, err;

	/* One deadline for all: each stream gets what is left. */
	dl = aclmem_deadline_ms(&dl_at, timeout_ms);
	pthread_mutex_lock(&streams_lock);
	for (s = streams; s; s = s->next)
		n++;
	snap = calloc(n ? n : 1, sizeof(*snap));
	if (!snap) {
		pthread_mutex_unlock(&streams_lock);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	for (s = streams, i = 0; s; s = s->next, i++) {
		stream_ref(s);
		snap[i] = s;
	}
	pthread_mutex_unlock(&streams_lock);
	for (i = 0; i < n; i++) {
		err = stream_wait(snap[i], dl);
		if (err && (!ret || err == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT))
			ret = err;
		aclmem_stream_put(snap[i]);
	}
	free(snap);
	return ret;
}

/* aclrtStreamAbort on every stream of every context. */
static void streams_abort_all(void)
{
	struct aclmem_stream **snap, *s;
	size_t n = 0, i;

	pthread_mutex_lock(&streams_lock);
	for (s = streams; s; s = s->next)
		n++;
	snap = calloc(n ? n : 1, sizeof(*snap));
	for (s = streams, i = 0; snap && s; s = s->next, i++) {
		stream_ref(s);
		snap[i] = s;
	}
	pthread_mutex_unlock(&streams_lock);
	for (i = 0; snap && i < n; i++) {
		stream_abort(snap[i]);
		aclmem_stream_put(snap[i]);
	}
	free(snap);
}

/*
 * Destroy every stream of a context (NULL: of every context): force
 * discards work not yet started, otherwise it is waited for.
 */
static void streams_destroy_ctx(struct aclmem_ctx *ctx, bool force)
{
	struct aclmem_stream *list = NULL, **ps, *s;

	pthread_mutex_lock(&streams_lock);
	for (ps = &streams; (s = *ps);) {
		if (!ctx || s->ctx == ctx) {
			*ps = s->next;
			s->next = list;
			list = s;
			nr_streams--;
		} else {
			ps = &s->next;
		}
	}
	pthread_mutex_unlock(&streams_lock);
	while ((s = list)) {
		list = s->next;
		state_changed(s, ACL_RT_STREAM_STATE_DESTROY_PRE);
		stream_stop(s, force ? DISCARD : DRAIN);
	}
}

static void streams_fork_prepare(void)
{
	pthread_mutex_lock(&streams_lock);
}

static void streams_fork_parent(void)
{
	pthread_mutex_unlock(&streams_lock);
}

static void streams_fork_child(void)
{
	struct aclmem_stream *s;

	/*
	 * The workers did not come along.  A worker may have been changing
	 * its queue or held its lock at the fork: free the streams without
	 * touching either (queued tasks are left behind, a few bytes).
	 */
	pthread_mutex_init(&streams_lock, NULL);
	while ((s = streams)) {
		streams = s->next;
		free(s);
	}
	nr_streams = 0;
	aclmem_hooks_atfork_child(&state_hooks);
	aclmem_hooks_atfork_child(&abort_hooks);
}

/* At aclFinalize, the streams of contexts already gone go too. */
static void streams_idle(bool finalize)
{
	if (finalize)
		streams_destroy_ctx(NULL, true);
}

ACLMEM_PART(.rank = ACLMEM_RANK_STREAMS,
	    .ctx_destroy = streams_destroy_ctx,
	    .idle = streams_idle,
	    .fork_prepare = streams_fork_prepare,
	    .fork_parent = streams_fork_parent,
	    .fork_child = streams_fork_child)

/* ---- the device's streams as a whole ---- */

static aclError sync_device(const char *fn, int32_t timeout)
{
	int ret;

	if (timeout < -1)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: timeout %d (-1 waits for ever)", fn,
				   (int)timeout);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	ret = aclmem_streams_sync_all(timeout);
	if (ret == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
		return aclmem_fail(ret, "%s: not done in %d ms", fn,
				   (int)timeout);
	if (ret)
		return aclmem_fail(ret, "%s: a queued task failed (%d)", fn,
				   ret);
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void)
{
	return sync_device("aclrtSynchronizeDevice", -1);
}

/* CANN: timeout in ms; -1 waits for ever, 0 only checks. */
aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
	return sync_device("aclrtSynchronizeDeviceWithTimeout", timeout);
}

/* ---- task abort: every stream of the device ---- */

struct abort_stage {
	int32_t dev;
	aclrtDeviceTaskAbortStage stage;
	uint32_t timeout;
	int32_t refused;
};

static void call_abort(void *fn, void *args, void *ctx)
{
	struct abort_stage *a = ctx;
	int32_t r = ((aclrtDeviceTaskAbortCallback)fn)(a->dev, a->stage,
						       a->timeout, args);

	if (r && !a->refused)
		a->refused = r;
}

aclError aclrtSetDeviceTaskAbortCallback(const char *regName,
					 aclrtDeviceTaskAbortCallback callback,
					 void *args)
{
	int ret = aclmem_hooks_set(&abort_hooks, regName, (void *)callback,
				   args);

	return ret ? aclmem_fail(ret, "aclrtSetDeviceTaskAbortCallback: name "
				 "NULL, empty or longer than %d",
				 ACLMEM_HOOK_NAME_MAX) : ACL_SUCCESS;
}

/*
 * Every stream of every context drops the work it has not started and its
 * waiting tasks give up, as aclrtStreamAbort; the registered callbacks are
 * told before (a non-zero answer stops the abort:
 * ACL_ERROR_RT_TASK_ABORT_STOP) and after.  The work already running on a
 * stream's worker is a CPU copy that ends on its own, so the timeout is
 * passed on to the callbacks but never reached here.
 */
aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)
{
	struct abort_stage a = { deviceId, ACL_RT_DEVICE_TASK_ABORT_PRE,
				 timeout, 0 };

	if (!aclmem_device_valid(deviceId))
		return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
				   "aclrtDeviceTaskAbort(%d): no such device",
				   (int)deviceId);
	if (!aclmem_ctx_device_in_use(deviceId))
		return aclmem_fail(ACL_ERROR_RT_CONTEXT_NULL,
				   "aclrtDeviceTaskAbort(%d): the device is not "
				   "set", (int)deviceId);
	aclmem_hooks_call(&abort_hooks, call_abort, &a);
	if (a.refused)
		return aclmem_fail(ACL_ERROR_RT_TASK_ABORT_STOP,
				   "aclrtDeviceTaskAbort: a callback refused "
				   "(%d)", (int)a.refused);
	streams_abort_all();
	a.stage = ACL_RT_DEVICE_TASK_ABORT_POST;
	aclmem_hooks_call(&abort_hooks, call_abort, &a);
	return ACL_SUCCESS;
}
