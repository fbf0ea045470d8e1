// SPDX-License-Identifier: MIT
/*
 * Streams.  Each stream is a FIFO of tasks run in order by its own worker
 * thread, off the calling thread, as on a device.  aclrtSynchronizeStream
 * returns once every task queued before it has run, with the first error a
 * task met since the last synchronisation (a task re-checks its ranges when
 * it runs: a buffer freed in between is an error then, not a crash).
 *
 * Streams are reference counted: the registry holds one reference, and a
 * caller holds one while it queues or waits, so a stream destroyed by one
 * thread while another synchronises it is freed only after both are done.
 *
 * The default stream (aclrtStream NULL) is made on first use and destroyed
 * with the device's last reference, like every other stream.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "copy.h"
#include "log.h"
#include "stream.h"

enum task_op { TASK_COPY, TASK_SET };

struct task {
	struct task *next;
	enum task_op op;
	void *dst;
	const void *src;
	size_t max;
	size_t count;
	int kind;
	int32_t value;
};

enum stop_mode { RUN, DRAIN, DISCARD };

struct aclmem_stream {
	struct aclmem_stream *next;	/* registry, under streams_lock */
	pthread_mutex_t lock;
	pthread_cond_t work;		/* worker: a task or a stop arrived */
	pthread_cond_t idle;		/* waiters: the queue ran dry */
	struct task *head, *tail;
	bool busy;			/* the worker is running a task */
	enum stop_mode stop;
	int error;			/* first error since the last sync */
	unsigned int refs;
	pthread_t thread;
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclmem_stream *streams;
static struct aclmem_stream *default_stream;

static int task_run(const struct task *t)
{
	int ret;

	if (t->op == TASK_COPY) {
		ret = aclmem_copy_recheck(t->dst, t->max, t->src, t->count,
					  t->kind);
		if (!ret)
			aclmem_copy_run(t->dst, t->src, t->count);
	} else {
		ret = aclmem_set_recheck(t->dst, t->max, t->count);
		if (!ret)
			aclmem_set_run(t->dst, t->value, t->count);
	}
	if (ret)
		aclmem_info("queued %s of %zu bytes at %p failed: %d",
			    t->op == TASK_COPY ? "copy" : "fill", t->count,
			    t->dst, ret);
	return ret;
}

static void discard_queue(struct aclmem_stream *s)
{
	while (s->head) {
		struct task *t = s->head;

		s->head = t->next;
		free(t);
	}
	s->tail = NULL;
}

static void *worker(void *arg)
{
	struct aclmem_stream *s = arg;
	struct task *t;
	int ret;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && s->stop == RUN)
			pthread_cond_wait(&s->work, &s->lock);
		if (s->stop == DISCARD)
			discard_queue(s);
		t = s->head;
		if (!t)
			break;
		s->head = t->next;
		if (!s->head)
			s->tail = NULL;
		s->busy = true;
		pthread_mutex_unlock(&s->lock);
		ret = task_run(t);
		free(t);
		pthread_mutex_lock(&s->lock);
		s->busy = false;
		if (ret && !s->error)
			s->error = ret;
		if (!s->head)
			pthread_cond_broadcast(&s->idle);
	}
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void stream_put(struct aclmem_stream *s)
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

static int stream_new(struct aclmem_stream **out)
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
	/* Signals meant for the program must not land on a worker. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, NULL, worker, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		aclmem_err("stream worker: %s", strerror(err));
		stream_put(s);
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
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	stream_put(s);
}

static int stream_wait(struct aclmem_stream *s)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	while (s->head || s->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	ret = s->error;
	s->error = 0;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/*
 * The stream for a handle, with a reference: NULL is the current device's
 * default stream, made on first use; anything else must be registered.
 */
static int stream_get(aclrtStream handle, struct aclmem_stream **out)
{
	struct aclmem_stream *s;
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&streams_lock);
	if (!handle) {
		if (!default_stream) {
			ret = stream_new(&default_stream);
			if (ret)
				goto out;
			default_stream->next = streams;
			streams = default_stream;
		}
		s = default_stream;
	} else {
		for (s = streams; s && s != handle; s = s->next)
			;
		if (!s || s == default_stream) {
			ret = ACL_ERROR_RT_PARAM_INVALID;
			goto out;
		}
	}
	pthread_mutex_lock(&s->lock);
	s->refs++;
	pthread_mutex_unlock(&s->lock);
	*out = s;
out:
	pthread_mutex_unlock(&streams_lock);
	return ret;
}

static int stream_queue(aclrtStream handle, struct task *t)
{
	struct aclmem_stream *s;
	int ret;

	ret = stream_get(handle, &s);
	if (ret) {
		free(t);
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	if (s->stop != RUN) {
		/* Destroyed while we looked it up. */
		ret = ACL_ERROR_RT_PARAM_INVALID;
		free(t);
	} else {
		t->next = NULL;
		if (s->tail)
			s->tail->next = t;
		else
			s->head = t;
		s->tail = t;
		pthread_cond_signal(&s->work);
	}
	pthread_mutex_unlock(&s->lock);
	stream_put(s);
	return ret;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	struct aclmem_stream *s;
	int ret;

	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	ret = stream_new(&s);
	if (ret)
		return ret;
	pthread_mutex_lock(&streams_lock);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&streams_lock);
	*stream = s;
	return ACL_SUCCESS;
}

static aclError destroy(aclrtStream handle, enum stop_mode mode)
{
	struct aclmem_stream **ps, *s = NULL;
	int ret;

	if (!handle)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	pthread_mutex_lock(&streams_lock);
	for (ps = &streams; *ps; ps = &(*ps)->next) {
		if (*ps == handle && *ps != default_stream) {
			s = *ps;
			*ps = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&streams_lock);
	if (!s)
		return ACL_ERROR_RT_PARAM_INVALID;
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

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	struct aclmem_stream *s;
	int ret;

	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	ret = stream_get(stream, &s);
	if (ret)
		return ret;
	ret = stream_wait(s);
	stream_put(s);
	return ret;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
			  size_t count, aclrtMemcpyKind kind,
			  aclrtStream stream)
{
	struct task *t;
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_copy_check(dst, destMax, src, count, (int)kind);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->op = TASK_COPY;
	t->dst = dst;
	t->src = src;
	t->max = destMax;
	t->count = count;
	t->kind = (int)kind;
	return stream_queue(stream, t);
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
			  size_t count, aclrtStream stream)
{
	struct task *t;
	int ret;

	if (!count)
		return ACL_SUCCESS;
	ret = aclmem_set_check(devPtr, maxCount, count);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->op = TASK_SET;
	t->dst = devPtr;
	t->max = maxCount;
	t->count = count;
	t->value = value;
	return stream_queue(stream, t);
}

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
		pthread_mutex_lock(&s->lock);
		s->refs++;
		pthread_mutex_unlock(&s->lock);
		snap[i] = s;
	}
	pthread_mutex_unlock(&streams_lock);
	for (i = 0; i < n; i++) {
		err = stream_wait(snap[i]);
		if (err && !ret)
			ret = err;
		stream_put(snap[i]);
	}
	free(snap);
	return ret;
}

void aclmem_streams_destroy_all(int force)
{
	struct aclmem_stream *list, *s;

	pthread_mutex_lock(&streams_lock);
	list = streams;
	streams = NULL;
	default_stream = NULL;
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
	default_stream = NULL;
}
