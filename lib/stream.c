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
#include "allocator.h"
#include "callback.h"
#include "context.h"
#include "copy.h"
#include "log.h"
#include "stream.h"

/* CANN's priority range: 0 is the highest, 7 the lowest. */
#define STREAM_PRIO_GREATEST	0
#define STREAM_PRIO_LEAST	7
#define STREAM_FLAGS_KNOWN	(ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | \
				 ACL_STREAM_PERSISTENT | ACL_STREAM_HUGE | \
				 ACL_STREAM_CPU_SCHEDULE | \
				 ACL_STREAM_DEVICE_USE_ONLY)

enum stop_mode { RUN, DRAIN, DISCARD };

struct aclmem_stream {
	struct aclmem_stream *next;	/* registry, under streams_lock */
	struct aclmem_ctx *ctx;
	bool is_default;
	int32_t id;
	uint32_t priority;
	uint32_t flags;
	uint64_t failure_mode;
	pthread_mutex_t lock;
	pthread_cond_t work;		/* worker: a task or a stop arrived */
	pthread_cond_t idle;		/* waiters: the queue ran dry */
	struct aclmem_task *head, *tail;
	bool busy;			/* the worker is running a task */
	bool failed;			/* stop-on-failure tripped */
	enum stop_mode stop;
	_Atomic bool cancel;		/* waiting tasks give up */
	int error;			/* first error since the last sync */
	unsigned int refs;
	pthread_t thread;
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclmem_stream *streams;
static _Atomic int32_t next_stream_id;

static void release_all(struct aclmem_task *t)
{
	while (t) {
		struct aclmem_task *next = t->next;

		t->release(t, false);
		t = next;
	}
}

static void *worker(void *arg)
{
	struct aclmem_stream *s = arg;
	struct aclmem_task *t, *dropped;
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
		pthread_mutex_unlock(&s->lock);
		ret = t->run(t, s);
		t->release(t, true);
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

/* Stop the worker (draining or discarding), wait for it, drop a reference. */
static void stream_stop(struct aclmem_stream *s, enum stop_mode mode)
{
	pthread_mutex_lock(&s->lock);
	s->stop = mode;
	if (mode == DISCARD)
		atomic_store(&s->cancel, true);
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	aclmem_callbacks_stream_gone(s);
	aclmem_allocator_forget_stream(s);
	aclmem_stream_put(s);
}

static bool stream_idle(struct aclmem_stream *s)
{
	return !s->head && !s->busy;
}

/* Wait until idle; timeout_ms < 0 waits for ever.  ACL code. */
static int stream_wait(struct aclmem_stream *s, int32_t timeout_ms)
{
	struct timespec dl;
	int ret = ACL_SUCCESS;

	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&s->lock);
	while (!stream_idle(s)) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&s->idle, &s->lock);
		} else if (pthread_cond_timedwait(&s->idle, &s->lock, &dl) ==
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
			ret = stream_new(ctx, STREAM_PRIO_GREATEST, 0, &s);
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
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(NULL, &s);
	if (ret)
		return ret;
	*stream = s;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

int32_t aclmem_stream_id(struct aclmem_stream *s)
{
	return s->id;
}

bool aclmem_stream_cancelled(struct aclmem_stream *s)
{
	return atomic_load(&s->cancel);
}

int aclmem_stream_submit(aclrtStream handle, struct aclmem_task *t)
{
	struct aclmem_stream *s;
	int ret;

	ret = aclmem_stream_get(handle, &s);
	if (ret) {
		t->release(t, false);
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	if (s->stop != RUN || atomic_load(&s->cancel)) {
		/* Destroyed or aborted while we looked it up. */
		ret = s->stop != RUN ? ACL_ERROR_RT_PARAM_INVALID :
				       ACL_ERROR_RT_STREAM_ABORT;
		pthread_mutex_unlock(&s->lock);
		t->release(t, false);
	} else {
		t->next = NULL;
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

static aclError create(aclrtStream *stream, uint32_t priority, uint32_t flags)
{
	struct aclmem_stream *s;
	int ret;

	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	if (flags & ~STREAM_FLAGS_KNOWN)
		return ACL_ERROR_INVALID_PARAM;
	/* CANN clamps a priority past the least one rather than failing. */
	if (priority > STREAM_PRIO_LEAST)
		priority = STREAM_PRIO_LEAST;
	ret = stream_new(aclmem_ctx_current(), priority, flags, &s);
	if (ret)
		return ret;
	pthread_mutex_lock(&streams_lock);
	registry_add(s);
	pthread_mutex_unlock(&streams_lock);
	*stream = s;
	return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	return create(stream, STREAM_PRIO_GREATEST, 0);
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
				     uint32_t flag)
{
	return create(stream, priority, flag);
}

aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority,
					   int32_t *greatestPriority)
{
	if (!leastPriority || !greatestPriority)
		return ACL_ERROR_INVALID_PARAM;
	*leastPriority = STREAM_PRIO_LEAST;
	*greatestPriority = STREAM_PRIO_GREATEST;
	return ACL_SUCCESS;
}

static aclError destroy(aclrtStream handle, enum stop_mode mode)
{
	struct aclmem_stream **ps, *s = NULL;
	struct aclmem_ctx *ctx;
	int ret;

	if (!handle)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
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
			break;
		}
	}
	pthread_mutex_unlock(&streams_lock);
	if (!s)
		return ret ? ret : ACL_ERROR_RT_PARAM_INVALID;
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

static aclError sync_stream(aclrtStream stream, int32_t timeout)
{
	struct aclmem_stream *s;
	int ret;

	if (timeout < -1)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
	ret = stream_wait(s, timeout);
	aclmem_stream_put(s);
	return ret;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	return sync_stream(stream, -1);
}

/* CANN: timeout in ms, -1 waits for ever; 0 is also "for ever" there. */
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
					   int32_t timeout)
{
	return sync_stream(stream, timeout == 0 ? -1 : timeout);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
	struct aclmem_stream *s;
	int ret;

	if (!status)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
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
		return ACL_ERROR_INVALID_PARAM;
	if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
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
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
	*streamId = s->id;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)
{
	struct aclmem_stream *s;
	int ret;

	if (!priority)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
	*priority = s->priority;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)
{
	struct aclmem_stream *s;
	int ret;

	if (!flags)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
	*flags = s->flags;
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

/*
 * Discard the work not yet started and make waiting tasks give up; the
 * stream stays usable once the task that was running (if any) returns.
 */
aclError aclrtStreamAbort(aclrtStream stream)
{
	struct aclmem_stream *s;
	struct aclmem_task *dropped;
	int ret;

	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return ret;
	pthread_mutex_lock(&s->lock);
	atomic_store(&s->cancel, true);
	dropped = s->head;
	s->head = s->tail = NULL;
	while (s->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	atomic_store(&s->cancel, false);
	s->error = 0;
	s->failed = false;
	pthread_mutex_unlock(&s->lock);
	release_all(dropped);
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

/* ---- copies and fills as tasks ---- */

struct copy_task {
	struct aclmem_task task;
	bool fill;
	void *dst;
	const void *src;
	size_t max;
	size_t count;
	int kind;
	int32_t value;
};

static int copy_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	struct copy_task *c = (struct copy_task *)t;
	int ret;

	(void)s;
	if (!c->fill) {
		ret = aclmem_copy_recheck(c->dst, c->max, c->src, c->count,
					  c->kind);
		if (!ret)
			aclmem_copy_run(c->dst, c->src, c->count);
	} else {
		ret = aclmem_set_recheck(c->dst, c->max, c->count);
		if (!ret)
			aclmem_set_run(c->dst, c->value, c->count);
	}
	if (ret)
		aclmem_info("queued %s of %zu bytes at %p failed: %d",
			    c->fill ? "fill" : "copy", c->count, c->dst, ret);
	return ret;
}

static void task_free(struct aclmem_task *t, bool ran)
{
	(void)ran;
	free(t);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
			  size_t count, aclrtMemcpyKind kind,
			  aclrtStream stream)
{
	struct copy_task *c;
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_copy_check(dst, destMax, src, count, (int)kind);
	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	c->task.run = copy_run;
	c->task.release = task_free;
	c->dst = dst;
	c->src = src;
	c->max = destMax;
	c->count = count;
	c->kind = (int)kind;
	return aclmem_stream_submit(stream, &c->task);
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
			  size_t count, aclrtStream stream)
{
	struct copy_task *c;
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_set_check(devPtr, maxCount, count);
	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	c->task.run = copy_run;
	c->task.release = task_free;
	c->fill = true;
	c->dst = devPtr;
	c->max = maxCount;
	c->count = count;
	c->value = value;
	return aclmem_stream_submit(stream, &c->task);
}

/* ---- every stream ---- */

int aclmem_streams_sync_all(void)
{
	struct aclmem_stream **snap, *s;
	size_t n = 0, i;
	int ret = ACL_SUCCESS, err;

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
		err = stream_wait(snap[i], -1);
		if (err && !ret)
			ret = err;
		aclmem_stream_put(snap[i]);
	}
	free(snap);
	return ret;
}

void aclmem_streams_destroy_ctx(struct aclmem_ctx *ctx, bool force)
{
	struct aclmem_stream *list = NULL, **ps, *s;

	pthread_mutex_lock(&streams_lock);
	for (ps = &streams; (s = *ps);) {
		if (!ctx || s->ctx == ctx) {
			*ps = s->next;
			s->next = list;
			list = s;
		} else {
			ps = &s->next;
		}
	}
	pthread_mutex_unlock(&streams_lock);
	while ((s = list)) {
		list = s->next;
		stream_stop(s, force ? DISCARD : DRAIN);
	}
}

void aclmem_streams_atfork_prepare(void)
{
	pthread_mutex_lock(&streams_lock);
}

void aclmem_streams_atfork_parent(void)
{
	pthread_mutex_unlock(&streams_lock);
}

void aclmem_streams_atfork_child(void)
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
}
