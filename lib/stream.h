/* SPDX-License-Identifier: MIT */
/*
 * Streams: each is a queue of tasks run in order by a worker thread of its
 * own, off the calling thread, as on a device.  A stream belongs to the
 * context that was current when it was created; NULL names the current
 * context's default stream.  Errors met by queued work are kept and
 * returned by the next synchronisation of that stream.
 *
 * A stream does not know what its tasks do: every kind of work (copies and
 * fills, event records and waits, callbacks, notifies, values, cache
 * operations and barriers, batches, pool frees) lives in its own file and
 * queues a struct aclmem_task embedded in its own structure, with the
 * operations of its kind.  A kind that can run more than once says how
 * (replay), so that a model run instance may keep its tasks and run them
 * again (lib/model.c).
 */
#ifndef ACLMEM_STREAM_H
#define ACLMEM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl_rt.h"

struct aclmem_exception_kernel;

struct aclmem_ctx;
struct aclmem_stream;

struct aclmem_task;

struct aclmem_task_ops {
	/* On the stream's worker, in queue order: an ACL code. */
	int (*run)(struct aclmem_task *t, struct aclmem_stream *s);
	/*
	 * Free the task: after run(), or without running it when the stream
	 * discards its queue (forced destruction, abort, stop on failure).
	 */
	void (*release)(struct aclmem_task *t, bool ran);
	/*
	 * For a task whose run() waits (may be NULL): the stream has just
	 * been cancelled while run() was under way; wake it, so that it sees
	 * aclmem_stream_cancelled() at once.  Called with the stream's lock
	 * held: it may take the lock run() waits under, which must never be
	 * held while a stream's lock is taken.
	 */
	void (*cancel)(struct aclmem_task *t);
	/* The kind of work, as a profiler's trace names it ("memset"). */
	const char *name;
	/*
	 * For a kind whose tasks differ (a copy's direction, a kernel's own
	 * name; may be NULL): this task's name, valid until its release().
	 */
	const char *(*label)(const struct aclmem_task *t);
	/*
	 * For a kind a model may keep and run again (NULL: the kind cannot
	 * be captured): a new task that does what t does, as if the call
	 * that made t were made again now, or NULL when out of memory.  t
	 * itself is then the model's copy: never run, released unrun when
	 * the model goes.
	 */
	struct aclmem_task *(*replay)(const struct aclmem_task *t);
	/*
	 * May be NULL: t was kept by a model instead of being queued (an
	 * event's record marks itself reached, so that nobody waits for a
	 * record that does not run).
	 */
	void (*kept)(struct aclmem_task *t);
	/*
	 * For a kernel launch (NULL for other kinds): what the exception
	 * report of its failure says of the kernel, valid until release().
	 */
	const struct aclmem_exception_kernel *(*kernel)(
		const struct aclmem_task *t);
};

struct aclmem_task {
	struct aclmem_task *next;
	uint32_t id;			/* set when queued: the stream's count */
	const struct aclmem_task_ops *ops;
	size_t size;			/* from aclmem_task_new(), else 0 */
};

/* A task's name for a trace: its label(), else its kind's name. */
const char *aclmem_task_name(const struct aclmem_task *t);

/*
 * A watcher of every task run (a profiler, above the streams: the stream
 * never calls it by name).  While one is set, each stream's worker reads
 * CLOCK_MONOTONIC around every run() and calls it on the worker, after
 * run() and before release(), with the task's stream, the times in ns and
 * run()'s code.  While none is set, a task costs one predictable branch
 * more than without this.  fn NULL removes it; a worker that read the old
 * one may still call it once after, so fn must stay callable and judge by
 * its own state whether to record.
 */
typedef void (*aclmem_task_watch_fn)(struct aclmem_stream *s,
				     const struct aclmem_task *t,
				     uint64_t start_ns, uint64_t end_ns,
				     int ret);
void aclmem_stream_watch_tasks(aclmem_task_watch_fn fn);

/* The release of a task that owns nothing but its own allocation. */
void aclmem_task_free(struct aclmem_task *t, bool ran);

/*
 * The replay of a task that owns nothing but its own allocation, made by
 * aclmem_task_new(): a copy of its bytes.
 */
struct aclmem_task *aclmem_task_dup(const struct aclmem_task *t);

/*
 * Where a stream's work goes instead of its queue while a model records
 * it (lib/model.c): keep() takes over every task submitted to the stream,
 * called with the stream's lock held (so it never takes a stream's lock),
 * and returns what the submitting call returns; on failure it has
 * released the task.
 */
struct aclmem_stream_sink {
	int (*keep)(struct aclmem_stream_sink *sink, struct aclmem_task *t);
};

/*
 * Set (sink) or clear (NULL) a stream's sink: ACL_ERROR_RT_STREAM_CAPTURED
 * when setting one on a stream that has one.  Once cleared, keep() is
 * never called again for this stream.
 */
int aclmem_stream_set_sink(struct aclmem_stream *s,
			   struct aclmem_stream_sink *sink);
struct aclmem_stream_sink *aclmem_stream_get_sink(struct aclmem_stream *s);
/* True for a context's default stream. */
bool aclmem_stream_is_default(struct aclmem_stream *s);
/* The flags the stream was made with (ACL_STREAM_*). */
uint32_t aclmem_stream_flags(struct aclmem_stream *s);

/*
 * Queue a task on a stream (NULL: the current context's default stream).
 * On failure the task has been released unrun.  ACL_ERROR_RT_CONTEXT_NULL
 * without a current context; ACL_ERROR_RT_STREAM_CONTEXT for a stream of
 * another context; ACL_ERROR_RT_PARAM_INVALID for a handle that is not a
 * live stream.
 */
int aclmem_stream_submit(aclrtStream stream, struct aclmem_task *t);

/*
 * How a public call fn queues its work: a zeroed task of size bytes (a
 * struct that starts with its struct aclmem_task) with ops set, or NULL
 * when out of memory, which is then recorded as fn's failure
 * (ACL_ERROR_RT_MEMORY_ALLOCATION, "fn: out of memory for the task");
 * aclmem_task_queue() submits it, and returns aclmem_stream_submit()'s
 * code recorded as fn's (aclmem_api_ret(), log.h).
 */
void *aclmem_task_new(const char *fn, size_t size,
		      const struct aclmem_task_ops *ops);
int aclmem_task_queue(const char *fn, aclrtStream stream,
		      struct aclmem_task *t);

/*
 * The stream a handle names, with a reference for the caller, checked as
 * aclmem_stream_submit() does.
 */
int aclmem_stream_get(aclrtStream stream, struct aclmem_stream **out);
void aclmem_stream_put(struct aclmem_stream *s);

/* Handle and id (as aclrtStreamGetId reports) of a stream. */
aclrtStream aclmem_stream_handle(struct aclmem_stream *s);
int32_t aclmem_stream_id(struct aclmem_stream *s);
/* The device of the stream's context. */
int32_t aclmem_stream_device(struct aclmem_stream *s);

/*
 * True once the stream is being destroyed or aborted: a task that waits
 * checks it before every wait and gives up, so that destruction never
 * hangs.  A wait some other party ends (an event's record, a callback, a
 * barrier) sleeps until its task's cancel() wakes it; a wait for memory
 * that anyone may write (a value, a notify's futex word, an event of
 * another process) polls and checks it every few milliseconds.
 */
bool aclmem_stream_cancelled(struct aclmem_stream *s);

/*
 * Wait for every stream of every context, up to timeout_ms in all (< 0:
 * for ever; 0: only check): ACL_ERROR_RT_STREAM_SYNC_TIMEOUT if one is
 * still busy then, else the first error a stream kept (cleared).
 */
int aclmem_streams_sync_all(int32_t timeout_ms);

#endif /* ACLMEM_STREAM_H */
