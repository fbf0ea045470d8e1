// SPDX-License-Identifier: MIT
/*
 * Events.  aclrtRecordEvent queues a record on a stream; the event is
 * complete once the stream's worker reaches the record, and its time is
 * taken then (CLOCK_MONOTONIC), so aclrtEventElapsedTime measures the work
 * queued between two records as it actually ran.  An event captures its
 * latest record: synchronising or waiting on it waits for the record queued
 * last before that call.  Waiting for an event never recorded returns at
 * once, as in CANN.
 *
 * Events are reference counted: the registry holds one reference and every
 * queued record or wait holds one, so destroying an event with work still
 * queued is safe: the work finds it dead and carries on.  A wait queued on
 * a stream gives up when the event is destroyed or the stream is.
 *
 * An event made with ACL_EVENT_IPC (alone, as CANN requires) keeps its
 * sequence numbers in a page another process can map by the handle
 * aclrtIpcGetEventHandle gives (ipc.h); there aclrtIpcOpenEventHandle makes
 * an event that waits (host or stream) for records made here.  Waits for
 * records made in another process poll every 10 ms.  CANN refuses reset,
 * timing, ids and the deprecated queries on IPC events: so do we
 * (ACL_ERROR_RT_FEATURE_NOT_SUPPORT).
 *
 * Choices where CANN's documentation is silent, written down in
 * lib/README.md: timestamps are nanoseconds of CLOCK_MONOTONIC; an event
 * made without ACL_EVENT_TIME_LINE (aclrtCreateEventWithFlag(ACL_EVENT_SYNC))
 * takes no time and aclrtEventElapsedTime/aclrtEventGetTimestamp refuse it
 * with ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, as for one never recorded;
 * a record not yet run gives ACL_ERROR_RT_EVENT_NOT_COMPLETE; an end event
 * that completed before its start gives ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "deadline.h"
#include "ipc.h"
#include "log.h"
#include "stream.h"

#define EVENT_FLAGS_KNOWN	(ACL_EVENT_SYNC | \
				 ACL_EVENT_CAPTURE_STREAM_PROGRESS | \
				 ACL_EVENT_TIME_LINE | ACL_EVENT_DEVICE_USE_ONLY | \
				 ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)
/* What aclrtCreateEvent makes: synchronisable and timed. */
#define EVENT_FLAGS_DEFAULT	(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE)
/* Live events per process: aclrtGetEventAvailNum counts down from here. */
#define EVENT_MAX		65536U
/* How often a wait looks for records made in another process. */
#define WAIT_POLL_NS		(10 * 1000 * 1000L)

struct aclmem_event {
	struct aclmem_event *next;	/* registry, under events_lock */
	struct aclmem_ctx *ctx;
	uint32_t flags;
	uint32_t id;
	pthread_mutex_t lock;
	pthread_cond_t done;		/* a record ran, or the event died */
	uint64_t queued;		/* sequence of the latest record queued */
	uint64_t completed;		/* highest sequence that has run */
	bool recorded;			/* a record queued since create/reset */
	bool stamped;			/* stamp_ns is the latest record's time */
	bool dead;
	uint64_t stamp_ns;
	unsigned int refs;
	/* ACL_EVENT_IPC: queued and completed live in a shared page. */
	struct aclmem_ipc ipc;
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclmem_event *events;
static unsigned int nr_events;
static uint32_t next_event_id;

/*
 * The sequence state, local or shared (an IPC event's page is written by
 * every process that records it, read by every one that waits).  Called
 * with e->lock held; the page's words are atomics of their own.
 */
static uint64_t ev_queued(const struct aclmem_event *e)
{
	if (e->ipc.page)
		return __atomic_load_n(&e->ipc.page->seq[0], __ATOMIC_ACQUIRE);
	return e->queued;
}

static uint64_t ev_completed(const struct aclmem_event *e)
{
	if (e->ipc.page)
		return __atomic_load_n(&e->ipc.page->seq[1], __ATOMIC_ACQUIRE);
	return e->completed;
}

static bool ev_recorded(const struct aclmem_event *e)
{
	return e->ipc.page ? ev_queued(e) > 0 : e->recorded;
}

static void event_put(struct aclmem_event *e)
{
	bool last;

	pthread_mutex_lock(&e->lock);
	last = --e->refs == 0;
	pthread_mutex_unlock(&e->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->done);
	if (e->ipc.page)
		aclmem_ipc_destroy(&e->ipc);
	free(e);
}

/* The live event a handle names, with a reference. */
static int event_get(aclrtEvent handle, struct aclmem_event **out)
{
	struct aclmem_event *e;

	if (!handle)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&events_lock);
	for (e = events; e && e != handle; e = e->next)
		;
	if (e) {
		pthread_mutex_lock(&e->lock);
		e->refs++;
		pthread_mutex_unlock(&e->lock);
	}
	pthread_mutex_unlock(&events_lock);
	if (!e) {
		aclmem_err("event %p: not a live event", handle);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	*out = e;
	return ACL_SUCCESS;
}

/* For a call that queues work on an event: a current context, then it. */
static int event_get_current(aclrtEvent handle, struct aclmem_event **out)
{
	int ret = aclmem_ctx_require();

	return ret ? ret : event_get(handle, out);
}

/* Make a new event visible: ACL code; frees it on failure. */
static int publish(struct aclmem_event *e, uint32_t flags, aclrtEvent *event)
{
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->done, NULL);
	e->ctx = aclmem_ctx_current();
	e->flags = flags;
	e->refs = 1;
	pthread_mutex_lock(&events_lock);
	if (nr_events >= EVENT_MAX) {
		pthread_mutex_unlock(&events_lock);
		event_put(e);
		return ACL_ERROR_RT_NO_EVENT_RESOURCE;
	}
	e->id = next_event_id++;
	e->next = events;
	events = e;
	nr_events++;
	pthread_mutex_unlock(&events_lock);
	*event = e;
	return ACL_SUCCESS;
}

static aclError create(aclrtEvent *event, uint32_t flags)
{
	struct aclmem_event *e;
	int ret;

	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	if (flags & ~EVENT_FLAGS_KNOWN)
		return ACL_ERROR_INVALID_PARAM;
	/* CANN: the IPC flag goes alone. */
	if ((flags & ACL_EVENT_IPC) && flags != ACL_EVENT_IPC)
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	e->ipc.fd = -1;
	if (flags == ACL_EVENT_IPC) {
		ret = aclmem_ipc_create(ACLMEM_IPC_EVENT, &e->ipc);
		if (ret) {
			free(e);
			return ret;
		}
		/* CANN has no import pid list for events: the user decides. */
		e->ipc.page->any_pid = 1;
	}
	return publish(e, flags, event);
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	return aclmem_api_ret(__func__, create(event, EVENT_FLAGS_DEFAULT));
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
	return aclmem_api_ret(__func__, create(event, flag));
}

aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
	return aclmem_api_ret(__func__, create(event, flag));
}

/* Mark dead and wake every waiter; the caller unlinked it. */
static void event_kill(struct aclmem_event *e)
{
	pthread_mutex_lock(&e->lock);
	e->dead = true;
	pthread_cond_broadcast(&e->done);
	pthread_mutex_unlock(&e->lock);
	event_put(e);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	struct aclmem_event **pe, *e = NULL;

	if (!event)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&events_lock);
	for (pe = &events; *pe; pe = &(*pe)->next) {
		if (*pe == event) {
			e = *pe;
			*pe = e->next;
			nr_events--;
			break;
		}
	}
	pthread_mutex_unlock(&events_lock);
	if (!e) {
		aclmem_err("aclrtDestroyEvent(%p): not a live event", event);
		return aclmem_api_ret(__func__, ACL_ERROR_RT_PARAM_INVALID);
	}
	event_kill(e);
	return ACL_SUCCESS;
}

/*
 * Destroy every event of a dying context (its streams are gone already,
 * so forced or not, nothing is left to wait for).
 */
static void events_destroy_ctx(struct aclmem_ctx *ctx, bool force)
{
	struct aclmem_event **pe, *e, *list = NULL;

	(void)force;

	pthread_mutex_lock(&events_lock);
	for (pe = &events; (e = *pe);) {
		if (e->ctx == ctx) {
			*pe = e->next;
			e->next = list;
			list = e;
			nr_events--;
		} else {
			pe = &e->next;
		}
	}
	pthread_mutex_unlock(&events_lock);
	while ((e = list)) {
		list = e->next;
		event_kill(e);
	}
}

static void events_fork_child(void)
{
	struct aclmem_event *e;

	/* Like streams: locks may be held by threads that did not come. */
	pthread_mutex_init(&events_lock, NULL);
	while ((e = events)) {
		events = e->next;
		free(e);
	}
	nr_events = 0;
}

ACLMEM_PART(.rank = ACLMEM_RANK_EVENTS,
	    .ctx_destroy = events_destroy_ctx,
	    .fork_child = events_fork_child)

/* ---- records, resets and waits, queued on streams ---- */

enum event_op { OP_RECORD, OP_RESET, OP_WAIT };

struct event_task {
	struct aclmem_task task;
	struct aclmem_event *event;
	enum event_op op;
	uint64_t seq;
	int32_t timeout_ms;		/* OP_WAIT; < 0 for ever */
};

/* A record that ran, or that its stream dropped: the event is reached. */
static void record_reached(struct aclmem_event *e, uint64_t seq, bool ran)
{
	pthread_mutex_lock(&e->lock);
	if (e->ipc.page) {
		uint64_t *done = &e->ipc.page->seq[1];
		uint64_t cur = __atomic_load_n(done, __ATOMIC_ACQUIRE);

		while (seq > cur &&
		       !__atomic_compare_exchange_n(done, &cur, seq, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE))
			;
		__atomic_add_fetch(&e->ipc.page->word[0], 1, __ATOMIC_RELEASE);
		aclmem_ipc_wake(&e->ipc.page->word[0]);
	} else if (seq > e->completed) {
		e->completed = seq;
		e->stamped = ran && (e->flags & ACL_EVENT_TIME_LINE);
		e->stamp_ns = e->stamped ? aclmem_now_ns() : 0;
	}
	pthread_cond_broadcast(&e->done);
	pthread_mutex_unlock(&e->lock);
}

/* Sleep on the event's condition for a poll period, or to dl if sooner. */
static void poll_wait(struct aclmem_event *e, const struct timespec *dl)
{
	struct timespec t;

	aclmem_deadline_in(&t, 0, WAIT_POLL_NS);
	if (dl && aclmem_deadline_before(dl, &t))
		t = *dl;
	pthread_cond_timedwait(&e->done, &e->lock, &t);
}

static int wait_run(struct event_task *t, struct aclmem_stream *s)
{
	struct aclmem_event *e = t->event;
	const struct timespec *end;
	struct timespec end_at;
	int ret = ACL_SUCCESS;

	end = aclmem_deadline_ms(&end_at, t->timeout_ms);
	pthread_mutex_lock(&e->lock);
	while (ev_completed(e) < t->seq && !e->dead) {
		if (aclmem_stream_cancelled(s)) {
			ret = ACL_ERROR_RT_STREAM_ABORT;
			break;
		}
		if (end && aclmem_deadline_passed(end)) {
			ret = ACL_ERROR_RT_WAIT_TIMEOUT;
			break;
		}
		/*
		 * A record that runs, the event's death and the stream's
		 * cancellation broadcast the condition; records in other
		 * processes wake nobody here: an IPC event is polled.
		 */
		if (e->ipc.page)
			poll_wait(e, end);
		else
			aclmem_cond_wait_until(&e->done, &e->lock, end);
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

static int event_task_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct event_task *t = (struct event_task *)task;
	struct aclmem_event *e = t->event;

	switch (t->op) {
	case OP_RECORD:
		record_reached(e, t->seq, true);
		return ACL_SUCCESS;
	case OP_RESET:
		pthread_mutex_lock(&e->lock);
		/* A record queued after this reset stays recorded. */
		if (e->queued <= t->seq) {
			e->recorded = false;
			e->stamped = false;
		}
		pthread_mutex_unlock(&e->lock);
		return ACL_SUCCESS;
	case OP_WAIT:
		return wait_run(t, s);
	}
	return ACL_ERROR_RT_INTERNAL_ERROR;
}

static void event_task_release(struct aclmem_task *task, bool ran)
{
	struct event_task *t = (struct event_task *)task;

	/* A dropped record must not leave its waiters waiting for ever. */
	if (!ran && t->op == OP_RECORD)
		record_reached(t->event, t->seq, false);
	event_put(t->event);
	free(t);
}

/* The stream was cancelled: a wait gives up. */
static void event_task_cancel(struct aclmem_task *task)
{
	struct aclmem_event *e = ((struct event_task *)task)->event;

	pthread_mutex_lock(&e->lock);
	pthread_cond_broadcast(&e->done);
	pthread_mutex_unlock(&e->lock);
}

static const char *event_task_label(const struct aclmem_task *task)
{
	switch (((const struct event_task *)task)->op) {
	case OP_RECORD:
		return "event record";
	case OP_RESET:
		return "event reset";
	default:
		return "event wait";
	}
}

/* A record kept by a model instead of queued: nobody waits for it. */
static void event_task_kept(struct aclmem_task *task)
{
	struct event_task *t = (struct event_task *)task;

	if (t->op == OP_RECORD)
		record_reached(t->event, t->seq, false);
}

static uint64_t next_record(struct aclmem_event *e);

/*
 * A model runs the operation again: a record is a new record, the
 * event's latest; a reset or a wait looks at the record latest then.
 */
static struct aclmem_task *event_task_replay(const struct aclmem_task *task)
{
	const struct event_task *t = (const struct event_task *)task;
	struct aclmem_event *e = t->event;
	struct event_task *n = malloc(sizeof(*n));

	if (!n)
		return NULL;
	*n = *t;
	n->task.next = NULL;
	pthread_mutex_lock(&e->lock);
	e->refs++;
	if (t->op != OP_RECORD)
		n->seq = t->op == OP_WAIT ? ev_queued(e) : e->queued;
	pthread_mutex_unlock(&e->lock);
	if (t->op == OP_RECORD)
		n->seq = next_record(e);
	return &n->task;
}

static const struct aclmem_task_ops event_ops = {
	.run = event_task_run,
	.release = event_task_release,
	.cancel = event_task_cancel,
	.name = "event",
	.label = event_task_label,
	.replay = event_task_replay,
	.kept = event_task_kept,
};

/* Queue an operation on an event; takes over the caller's reference. */
static int event_queue(struct aclmem_event *e, enum event_op op, uint64_t seq,
		       int32_t timeout_ms, aclrtStream stream)
{
	struct event_task *t = calloc(1, sizeof(*t));

	if (!t) {
		event_put(e);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	t->task.ops = &event_ops;
	t->event = e;
	t->op = op;
	t->seq = seq;
	t->timeout_ms = timeout_ms;
	return aclmem_stream_submit(stream, &t->task);
}

/* The sequence of a record about to be queued: the event's latest. */
static uint64_t next_record(struct aclmem_event *e)
{
	uint64_t seq;

	pthread_mutex_lock(&e->lock);
	if (e->ipc.page) {
		seq = __atomic_add_fetch(&e->ipc.page->seq[0], 1,
					 __ATOMIC_ACQ_REL);
	} else {
		seq = ++e->queued;
		e->recorded = true;
	}
	pthread_mutex_unlock(&e->lock);
	return seq;
}

static aclError record(aclrtEvent event, aclrtStream stream)
{
	struct aclmem_event *e;
	uint64_t seq;
	int ret;

	ret = event_get_current(event, &e);
	if (ret)
		return ret;
	seq = next_record(e);
	/* On failure the task's release marked the record reached. */
	return event_queue(e, OP_RECORD, seq, -1, stream);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	return aclmem_api_ret(__func__, record(event, stream));
}

aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream,
				  uint32_t flag)
{
	if (flag != ACL_EVENT_RECORD_DEFAULT &&
	    flag != ACL_EVENT_RECORD_EXTERNAL)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__, record(event, stream));
}

/* CANN refuses these on an ACL_EVENT_IPC event. */
static int not_ipc(struct aclmem_event *e)
{
	if (!e->ipc.page)
		return ACL_SUCCESS;
	aclmem_err("event %p: not supported on an IPC event", (void *)e);
	event_put(e);
	return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
	struct aclmem_event *e;
	uint64_t seq;
	int ret;

	ret = event_get_current(event, &e);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	ret = not_ipc(e);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	pthread_mutex_lock(&e->lock);
	seq = e->queued;
	pthread_mutex_unlock(&e->lock);
	return aclmem_api_ret(__func__,
				      event_queue(e, OP_RESET, seq, -1, stream));
}

static aclError stream_wait_event(aclrtStream stream, aclrtEvent event,
				  int32_t timeout_ms)
{
	struct aclmem_event *e;
	uint64_t seq;
	bool recorded;
	int ret;

	ret = event_get_current(event, &e);
	if (ret)
		return ret;
	pthread_mutex_lock(&e->lock);
	seq = ev_queued(e);
	recorded = ev_recorded(e);
	pthread_mutex_unlock(&e->lock);
	/* Nothing to wait for, but the stream handle must still be good. */
	if (!recorded) {
		struct aclmem_stream *s;

		event_put(e);
		ret = aclmem_stream_get(stream, &s);
		if (!ret)
			aclmem_stream_put(s);
		return ret;
	}
	return event_queue(e, OP_WAIT, seq, timeout_ms, stream);
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
	return aclmem_api_ret(__func__, stream_wait_event(stream, event, -1));
}

/*
 * CANN: timeout in ms, 0 for ever (only 0 with ACL_EVENT_WAIT_EXTERNAL); a
 * wait that times out fails the stream's next synchronisation with
 * ACL_ERROR_RT_WAIT_TIMEOUT, like a notify wait.
 */
aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event,
				      uint32_t timeout, uint32_t flag)
{
	if (flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	if ((flag == ACL_EVENT_WAIT_EXTERNAL && timeout) ||
	    timeout > INT32_MAX)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__,
				      stream_wait_event(stream, event, timeout ? (int32_t)timeout : -1));
}

/* timeout in ms, > 0; -1 waits for ever, as aclrtStreamWaitEvent. */
aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event,
					 int32_t timeout)
{
	if (timeout == 0 || timeout < -1)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__,
				      stream_wait_event(stream, event, timeout));
}

/* ---- host side ---- */

static aclError query(aclrtEvent event, bool *complete, bool ipc_ok)
{
	struct aclmem_event *e;
	int ret;

	ret = event_get(event, &e);
	if (ret)
		return ret;
	if (!ipc_ok) {
		ret = not_ipc(e);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&e->lock);
	*complete = ev_recorded(e) && ev_completed(e) >= ev_queued(e);
	pthread_mutex_unlock(&e->lock);
	event_put(e);
	return ACL_SUCCESS;
}

/* The three status enums are written through one int-sized helper. */
_Static_assert(sizeof(aclrtEventRecordedStatus) == sizeof(int) &&
	       sizeof(aclrtEventStatus) == sizeof(int) &&
	       sizeof(aclrtEventWaitStatus) == sizeof(int), "status enums");

/*
 * The status queries differ only in the enum they write (complete or
 * not_ready) and in whether an IPC event may be asked.
 */
static aclError query_status(const char *fn, aclrtEvent event, bool ipc_ok,
			     void *status, int complete, int not_ready)
{
	bool done;
	int ret, v;

	if (!status)
		return aclmem_api_ret(fn, ACL_ERROR_INVALID_PARAM);
	ret = query(event, &done, ipc_ok);
	if (!ret) {
		v = done ? complete : not_ready;
		memcpy(status, &v, sizeof(v));
	}
	return aclmem_api_ret(fn, ret);
}

/*
 * CANN: COMPLETE once the event has been recorded and the record has run;
 * an event never recorded (or reset) is NOT_READY.
 */
aclError aclrtQueryEventStatus(aclrtEvent event,
			       aclrtEventRecordedStatus *status)
{
	return query_status(__func__, event, true, status,
			    ACL_EVENT_RECORDED_STATUS_COMPLETE,
			    ACL_EVENT_RECORDED_STATUS_NOT_READY);
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
	return query_status(__func__, event, false, status,
			    ACL_EVENT_STATUS_COMPLETE,
			    ACL_EVENT_STATUS_NOT_READY);
}

aclError aclrtQueryEventWaitStatus(aclrtEvent event,
				   aclrtEventWaitStatus *status)
{
	return query_status(__func__, event, false, status,
			    ACL_EVENT_WAIT_STATUS_COMPLETE,
			    ACL_EVENT_WAIT_STATUS_NOT_READY);
}

/* timeout_ms < 0: for ever. */
static aclError sync_event(aclrtEvent event, int32_t timeout_ms)
{
	const struct timespec *dl;
	struct aclmem_event *e;
	struct timespec dl_at;
	uint64_t target;
	int ret;

	ret = event_get(event, &e);
	if (ret)
		return ret;
	dl = aclmem_deadline_ms(&dl_at, timeout_ms);
	pthread_mutex_lock(&e->lock);
	target = ev_queued(e);
	while (ev_recorded(e) && ev_completed(e) < target && !e->dead) {
		if (!dl && !e->ipc.page) {
			pthread_cond_wait(&e->done, &e->lock);
			continue;
		}
		if (dl && aclmem_deadline_passed(dl)) {
			ret = ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
			break;
		}
		/* Records in other processes wake nobody here: poll. */
		poll_wait(e, dl);
	}
	pthread_mutex_unlock(&e->lock);
	event_put(e);
	return ret;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	return aclmem_api_ret(__func__, sync_event(event, -1));
}

/* CANN: -1 waits for ever, 0 only checks, > 0 is milliseconds. */
aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
	if (timeout < -1)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__, sync_event(event, timeout));
}

/* The time of an event's latest record, once it ran: ACL code. */
static int stamp(aclrtEvent event, uint64_t *ns)
{
	struct aclmem_event *e;
	int ret;

	ret = event_get(event, &e);
	if (ret)
		return ret;
	pthread_mutex_lock(&e->lock);
	if (e->ipc.page)
		ret = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	else if (!e->recorded || !(e->flags & ACL_EVENT_TIME_LINE))
		ret = ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID;
	else if (e->completed < e->queued)
		ret = ACL_ERROR_RT_EVENT_NOT_COMPLETE;
	else if (!e->stamped)
		ret = ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID;
	else
		*ns = e->stamp_ns;
	pthread_mutex_unlock(&e->lock);
	event_put(e);
	return ret;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
			       aclrtEvent endEvent)
{
	uint64_t start, end;
	int ret;

	if (!ms)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	ret = stamp(startEvent, &start);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	ret = stamp(endEvent, &end);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	if (end < start)
		return aclmem_api_ret(__func__,
					      ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL);
	*ms = (float)((double)(end - start) / 1e6);
	return ACL_SUCCESS;
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)
{
	if (!timestamp)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	return aclmem_api_ret(__func__, stamp(event, timestamp));
}

aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId)
{
	struct aclmem_event *e;
	int ret;

	if (!eventId)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	ret = event_get(event, &e);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	ret = not_ipc(e);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	*eventId = e->id;
	event_put(e);
	return ACL_SUCCESS;
}

aclError aclrtGetEventAvailNum(uint32_t *eventCount)
{
	if (!eventCount)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&events_lock);
	*eventCount = EVENT_MAX - nr_events;
	pthread_mutex_unlock(&events_lock);
	return ACL_SUCCESS;
}

/* ---- between processes ---- */

aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle)
{
	struct aclmem_event *e;
	int ret;

	if (!handle)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	ret = event_get(event, &e);
	if (ret)
		return aclmem_api_ret(__func__, ret);
	if (!e->ipc.page || e->ipc.fd < 0) {
		aclmem_err("aclrtIpcGetEventHandle(%p): not an event made here "
			   "with ACL_EVENT_IPC", event);
		ret = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		memset(handle, 0, sizeof(*handle));
		ret = aclmem_ipc_key(&e->ipc, handle->reserved,
				     sizeof(handle->reserved));
	}
	event_put(e);
	return aclmem_api_ret(__func__, ret);
}

aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle,
				 aclrtEvent *event)
{
	struct aclmem_event *e;
	int ret;

	if (!event)
		return aclmem_api_ret(__func__, ACL_ERROR_INVALID_PARAM);
	if (!memchr(handle.reserved, '\0', sizeof(handle.reserved)))
		return aclmem_api_ret(__func__, ACL_ERROR_RT_PARAM_INVALID);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(__func__, ret);
	e = calloc(1, sizeof(*e));
	if (!e)
		return aclmem_api_ret(__func__, ACL_ERROR_RT_MEMORY_ALLOCATION);
	ret = aclmem_ipc_open(ACLMEM_IPC_EVENT, handle.reserved, &e->ipc);
	if (ret) {
		free(e);
		return aclmem_api_ret(__func__, ret);
	}
	return aclmem_api_ret(__func__, publish(e, ACL_EVENT_IPC, event));
}
