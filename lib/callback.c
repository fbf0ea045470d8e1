// SPDX-License-Identifier: MIT
/*
 * Host callbacks in stream order.
 *
 * CANN's report model: a thread the program made is subscribed to a stream
 * (aclrtSubscribeReport(threadId, stream)); aclrtLaunchCallback queues a
 * callback on the stream; when the stream reaches it, the callback is
 * handed to the subscribed thread, which runs it inside its next
 * aclrtProcessReport(timeout).  With ACL_CALLBACK_BLOCK the stream waits
 * until the callback has run; with ACL_CALLBACK_NO_BLOCK it goes on.  A
 * thread id is what pthread_self() gave the program (as CANN's samples
 * pass it), or the thread's kernel tid.  The host-function set
 * (aclrtSubscribeHostFunc, aclrtProcessHostFunc) works the same way for
 * aclrtLaunchHostFunc; without a subscription a host function runs on the
 * stream's own worker, in order, and the stream waits for it.
 *
 * Where CANN is silent: one thread may serve many streams, a stream has at
 * most one thread of each kind (a second subscription is
 * ACL_ERROR_RT_STREAM_SUBSCRIBE); callbacks still waiting for a thread that
 * unsubscribes are run by the unsubscribing call, so none is lost and no
 * stream waits for ever; a callback reached after its stream lost its
 * subscription runs on the stream's worker.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "deadline.h"
#include "log.h"
#include "stream.h"

enum cb_kind { CB_REPORT, CB_HOSTFUNC };

/* One callback on its way from a stream to a thread. */
struct cb_item {
	struct cb_item *next;		/* the thread's queue */
	const struct aclmem_stream *stream;
	void (*fn)(void *);
	void *data;
	bool done;
	unsigned int refs;		/* queue + the task, while blocking */
};

struct sub {
	struct sub *next;
	enum cb_kind kind;
	uint64_t tid;
	const struct aclmem_stream *stream;
};

/* Callbacks waiting for one subscribed thread. */
struct reporter {
	struct reporter *next;
	enum cb_kind kind;
	uint64_t tid;
	struct cb_item *head, *tail;
};

static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_posted = PTHREAD_COND_INITIALIZER;	/* to threads */
static pthread_cond_t cb_done = PTHREAD_COND_INITIALIZER;	/* to streams */
static struct sub *subs;
static struct reporter *reporters;

static struct sub *sub_find_locked(enum cb_kind kind,
				   const struct aclmem_stream *s)
{
	struct sub *p;

	for (p = subs; p; p = p->next)
		if (p->kind == kind && p->stream == s)
			return p;
	return NULL;
}

static struct reporter *reporter_get_locked(enum cb_kind kind, uint64_t tid,
					    bool create)
{
	struct reporter *r;

	for (r = reporters; r; r = r->next)
		if (r->kind == kind && r->tid == tid)
			return r;
	if (!create)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->kind = kind;
	r->tid = tid;
	r->next = reporters;
	reporters = r;
	return r;
}

static void item_put_locked(struct cb_item *it)
{
	if (--it->refs == 0)
		free(it);
}

static aclError subscribe(enum cb_kind kind, uint64_t tid, aclrtStream stream)
{
	const char *fn = kind == CB_REPORT ? "aclrtSubscribeReport" :
					     "aclrtSubscribeHostFunc";
	struct aclmem_stream *s;
	struct sub *p;
	int ret;

	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	pthread_mutex_lock(&cb_lock);
	if (sub_find_locked(kind, s)) {
		ret = aclmem_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
				  "%s: stream %p already has a %s thread", fn,
				  (void *)s,
				  kind == CB_REPORT ? "report" : "host function");
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !reporter_get_locked(kind, tid, true)) {
		free(p);
		ret = aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				  "%s: out of memory", fn);
		goto out;
	}
	p->kind = kind;
	p->tid = tid;
	p->stream = s;
	p->next = subs;
	subs = p;
out:
	pthread_mutex_unlock(&cb_lock);
	aclmem_stream_put(s);
	return ret;
}

/*
 * Run an item taken off its reporter's queue, with no lock held, then
 * tell a blocking task that waits for it.
 */
static void item_run(struct cb_item *it)
{
	it->fn(it->data);
	pthread_mutex_lock(&cb_lock);
	it->done = true;
	pthread_cond_broadcast(&cb_done);
	item_put_locked(it);
	pthread_mutex_unlock(&cb_lock);
}

/* Run the callbacks still queued for a thread from one stream (or all). */
static void run_leftovers(struct cb_item *list)
{
	struct cb_item *it;

	while ((it = list)) {
		list = it->next;
		item_run(it);
	}
}

/* Take a stream's items out of a reporter's queue (all when s is NULL). */
static struct cb_item *take_items_locked(struct reporter *r,
					 const struct aclmem_stream *s)
{
	struct cb_item **pi, *it, *out = NULL, **tail = &out;

	for (pi = &r->head; (it = *pi);) {
		if (!s || it->stream == s) {
			*pi = it->next;
			it->next = NULL;
			*tail = it;
			tail = &it->next;
		} else {
			pi = &it->next;
		}
	}
	r->tail = NULL;
	for (it = r->head; it; it = it->next)
		r->tail = it;
	return out;
}

/* Drop a reporter nobody is subscribed as any more. */
static void reporter_gc_locked(enum cb_kind kind, uint64_t tid)
{
	struct reporter **pr, *r;
	struct sub *p;

	for (p = subs; p; p = p->next)
		if (p->kind == kind && p->tid == tid)
			return;
	for (pr = &reporters; (r = *pr); pr = &r->next) {
		if (r->kind == kind && r->tid == tid && !r->head) {
			*pr = r->next;
			free(r);
			return;
		}
	}
}

static aclError unsubscribe(enum cb_kind kind, uint64_t tid,
			    aclrtStream stream)
{
	const char *fn = kind == CB_REPORT ? "aclrtUnSubscribeReport" :
					     "aclrtUnSubscribeHostFunc";
	struct aclmem_stream *s;
	struct cb_item *left = NULL;
	struct reporter *r;
	struct sub **pp, *p;
	int ret;

	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	pthread_mutex_lock(&cb_lock);
	for (pp = &subs; (p = *pp); pp = &p->next)
		if (p->kind == kind && p->stream == s && p->tid == tid)
			break;
	if (!p) {
		ret = aclmem_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
				  "%s: stream %p has no %s thread %llu", fn,
				  (void *)s,
				  kind == CB_REPORT ? "report" : "host function",
				  (unsigned long long)tid);
	} else {
		*pp = p->next;
		free(p);
		r = reporter_get_locked(kind, tid, false);
		if (r)
			left = take_items_locked(r, s);
		reporter_gc_locked(kind, tid);
	}
	pthread_mutex_unlock(&cb_lock);
	run_leftovers(left);
	aclmem_stream_put(s);
	return ret;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
	return subscribe(CB_REPORT, threadId, stream);
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
	return unsubscribe(CB_REPORT, threadId, stream);
}

aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId,
				aclrtStream exeStream)
{
	return subscribe(CB_HOSTFUNC, hostFuncThreadId, exeStream);
}

aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId,
				  aclrtStream exeStream)
{
	return unsubscribe(CB_HOSTFUNC, hostFuncThreadId, exeStream);
}

/* The calling thread's reporter, under either of its ids. */
static struct reporter *my_reporter_locked(enum cb_kind kind)
{
	struct reporter *r;

	r = reporter_get_locked(kind, (uint64_t)pthread_self(), false);
	if (!r)
		r = reporter_get_locked(kind, (uint64_t)syscall(SYS_gettid),
					false);
	return r;
}

/* timeout in ms; -1 waits for ever. */
static aclError process(enum cb_kind kind, int32_t timeout)
{
	const char *fn = kind == CB_REPORT ? "aclrtProcessReport" :
					     "aclrtProcessHostFunc";
	const struct timespec *dl;
	struct timespec dl_at;
	struct reporter *r;
	struct cb_item *it;
	int ret = ACL_SUCCESS;

	if (timeout < -1)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: timeout %d (-1 waits for ever)", fn,
				   (int)timeout);
	dl = aclmem_deadline_ms(&dl_at, timeout);
	pthread_mutex_lock(&cb_lock);
	for (;;) {
		r = my_reporter_locked(kind);
		if (!r) {
			ret = ACL_ERROR_RT_THREAD_SUBSCRIBE;
			break;
		}
		if (r->head)
			break;
		if (aclmem_cond_wait_until(&cb_posted, &cb_lock, dl) ==
		    ETIMEDOUT) {
			r = my_reporter_locked(kind);
			if (!r)
				ret = ACL_ERROR_RT_THREAD_SUBSCRIBE;
			else if (!r->head)
				ret = ACL_ERROR_RT_REPORT_TIMEOUT;
			if (ret || !r->head)
				break;
		}
	}
	if (ret) {
		pthread_mutex_unlock(&cb_lock);
		return aclmem_fail(ret, ret == ACL_ERROR_RT_REPORT_TIMEOUT ?
				   "%s: nothing to run in %d ms" :
				   "%s: this thread is subscribed to no stream",
				   fn, (int)timeout);
	}
	it = r->head;
	r->head = it->next;
	if (!r->head)
		r->tail = NULL;
	pthread_mutex_unlock(&cb_lock);
	item_run(it);
	return ACL_SUCCESS;
}

aclError aclrtProcessReport(int32_t timeout)
{
	return process(CB_REPORT, timeout);
}

aclError aclrtProcessHostFunc(int32_t timeout)
{
	return process(CB_HOSTFUNC, timeout);
}

/* ---- the task on the stream ---- */

struct cb_task {
	struct aclmem_task task;
	enum cb_kind kind;
	void (*fn)(void *);
	void *data;
	bool block;
};

static int cb_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct cb_task *t = (struct cb_task *)task;
	struct reporter *r = NULL;
	struct cb_item *it;
	struct sub *p;
	int ret = ACL_SUCCESS;

	it = calloc(1, sizeof(*it));
	if (!it)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	it->stream = s;
	it->fn = t->fn;
	it->data = t->data;
	pthread_mutex_lock(&cb_lock);
	p = sub_find_locked(t->kind, s);
	if (p)
		r = reporter_get_locked(p->kind, p->tid, false);
	if (!r) {
		pthread_mutex_unlock(&cb_lock);
		free(it);
		t->fn(t->data);
		return ACL_SUCCESS;
	}
	it->refs = t->block ? 2 : 1;
	if (r->tail)
		r->tail->next = it;
	else
		r->head = it;
	r->tail = it;
	pthread_cond_broadcast(&cb_posted);
	while (t->block && !it->done) {
		if (aclmem_stream_cancelled(s)) {
			ret = ACL_ERROR_RT_STREAM_ABORT;
			break;
		}
		pthread_cond_wait(&cb_done, &cb_lock);
	}
	if (t->block)
		item_put_locked(it);
	pthread_mutex_unlock(&cb_lock);
	return ret;
}

/* The stream was cancelled: a blocking callback's wait gives up. */
static void cb_cancel(struct aclmem_task *task)
{
	(void)task;
	pthread_mutex_lock(&cb_lock);
	pthread_cond_broadcast(&cb_done);
	pthread_mutex_unlock(&cb_lock);
}

static const char *cb_label(const struct aclmem_task *task)
{
	return ((const struct cb_task *)task)->kind == CB_HOSTFUNC ?
	       "host function" : NULL;
}

static const struct aclmem_task_ops cb_ops = {
	.run = cb_run,
	.release = aclmem_task_free,
	.replay = aclmem_task_dup,
	.cancel = cb_cancel,
	.name = "callback",
	.label = cb_label,
};

static aclError launch(enum cb_kind kind, void (*fn)(void *), void *data,
		       bool block, aclrtStream stream)
{
	const char *name = kind == CB_REPORT ? "aclrtLaunchCallback" :
					       "aclrtLaunchHostFunc";
	struct aclmem_stream *s;
	struct cb_task *t;
	bool subscribed;
	int ret;

	if (!fn)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: fn is NULL",
				   name);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(name, ret);
	pthread_mutex_lock(&cb_lock);
	subscribed = sub_find_locked(kind, s) != NULL;
	pthread_mutex_unlock(&cb_lock);
	aclmem_stream_put(s);
	if (kind == CB_REPORT && !subscribed)
		return aclmem_fail(ACL_ERROR_RT_STREAM_NO_CB_REG,
				   "aclrtLaunchCallback: stream %p has no report "
				   "thread (aclrtSubscribeReport)", stream);
	t = aclmem_task_new(name, sizeof(*t), &cb_ops);
	if (!t)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	t->kind = kind;
	t->fn = fn;
	t->data = data;
	t->block = block;
	return aclmem_task_queue(name, stream, &t->task);
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
			     aclrtCallbackBlockType blockType,
			     aclrtStream stream)
{
	if (blockType != ACL_CALLBACK_NO_BLOCK &&
	    blockType != ACL_CALLBACK_BLOCK)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtLaunchCallback: unknown blockType %d",
				   (int)blockType);
	return launch(CB_REPORT, fn, userData, blockType == ACL_CALLBACK_BLOCK,
		      stream);
}

/* CANN: the stream waits for the host function, which runs in order. */
aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
	return launch(CB_HOSTFUNC, fn, args, true, stream);
}

/*
 * A stream is being destroyed (its worker has stopped): forget its
 * subscriptions and run the callbacks it handed out that no thread ran.
 */
static void callbacks_stream_gone(struct aclmem_stream *s)
{
	struct cb_item *left = NULL, *more, **tail;
	struct reporter *r;
	struct sub **pp, *p;

	pthread_mutex_lock(&cb_lock);
	for (pp = &subs; (p = *pp);) {
		if (p->stream == s) {
			*pp = p->next;
			free(p);
		} else {
			pp = &p->next;
		}
	}
	/* NO_BLOCK callbacks it handed out and nobody ran yet still run. */
	for (r = reporters; r; r = r->next) {
		more = take_items_locked(r, s);
		for (tail = &left; *tail; tail = &(*tail)->next)
			;
		*tail = more;
	}
	pthread_mutex_unlock(&cb_lock);
	run_leftovers(left);
}

static void callbacks_fork_child(void)
{
	pthread_mutex_init(&cb_lock, NULL);
	pthread_cond_init(&cb_posted, NULL);
	pthread_cond_init(&cb_done, NULL);
	/* The threads named in subscriptions did not come along. */
	subs = NULL;
	reporters = NULL;
}

ACLMEM_PART(.rank = ACLMEM_RANK_CALLBACKS,
	    .fork_child = callbacks_fork_child,
	    .stream_gone = callbacks_stream_gone)
