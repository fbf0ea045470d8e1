// SPDX-License-Identifier: MIT
/*
 * Model run instances (aclmdlRI*): work kept instead of run, and run again
 * each time the program executes the instance.
 *
 * An instance fills in two ways, as in CANN.  aclmdlRICaptureBegin makes
 * one that records the work later queued on a stream, up to
 * aclmdlRICaptureEnd; aclmdlRIBuildBegin makes an empty one, to which
 * aclmdlRIBindStream binds streams whose work it records until
 * aclmdlRIEndTask (that stream) or aclmdlRIBuildEnd (every one).  Either
 * way the instance is the stream's sink (lib/stream.h): the calls that
 * queue work return success and nothing runs.  A kind of task that cannot
 * run twice (no replay op: launches, cache operations, batches, pool frees)
 * is refused with ACL_ERROR_RT_FEATURE_NOT_SUPPORT, and the
 * capture is invalidated: aclmdlRICaptureEnd then returns
 * ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED and no instance.
 *
 * aclmdlRIExecuteAsync queues one task on the given stream, with a fresh
 * copy of each kept task made then by its kind's replay op (so that every
 * execution does the work again, and is queued work from the call on: a
 * record in it is the event's latest for a wait queued after the call);
 * when it runs, it runs the copies in the order the work was queued.
 * The first task that fails ends that execution with its code.  Labels
 * (lib/label.c) are places in that order; a switch moves the next task to
 * run.  The tasks of every stream bound to an instance run in the order
 * they were queued, on the one stream that executes it.
 *
 * While captures are under way, the capture modes (CANN's: the mode a
 * capture began in, and each thread's, aclmdlRICaptureThreadExchangeMode)
 * decide whether a thread may make the synchronous copies and fills CANN
 * calls unsafe (lib/copy.c asks aclmem_model_unsafe()).
 *
 * Lock order: a stream's lock -> models_lock (a sink's keep() runs under
 * the stream's lock), so nothing here takes a stream's lock, or looks a
 * stream up, while models_lock is held.  An instance executions still hold
 * (queued or running) is not destroyed: ACL_ERROR_RT_MODEL_RUNNING, as
 * CANN.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "acl/acl_mdl.h"
#include "acl/acl_rt.h"
#include "context.h"
#include "log.h"
#include "model.h"
#include "stream.h"

enum model_state { CAPTURING, BUILDING, READY };

struct binding {
	struct aclmem_stream *s;	/* a reference of the model's */
	bool attached;			/* the model is the stream's sink */
};

struct aclmem_model {
	struct aclmem_model *next;	/* registry */
	struct aclmem_stream_sink sink;
	enum model_state state;
	bool invalid;			/* a capture met work it cannot keep */
	aclmdlRICaptureMode mode;
	pthread_t thread;		/* that began the capture */
	struct binding *bound;
	size_t nr_bound;
	struct aclmem_task **tasks;	/* fixed once READY */
	size_t nr_tasks, cap_tasks;
	unsigned int running;		/* executions queued or running */
};

static pthread_mutex_t models_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclmem_model *models;

/*
 * The capture mode of this thread (aclmdlRICaptureThreadExchangeMode),
 * GLOBAL until changed, and the captures under way (a quick no for
 * aclmem_model_unsafe() when there are none).
 */
static __thread aclmdlRICaptureMode thread_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
static _Atomic unsigned int nr_capturing;

/* ---- marks: where labels are ---- */

struct mark_task {
	struct aclmem_task task;
	const void *label;
};

static int mark_run(struct aclmem_task *t, struct aclmem_stream *s)
{
	(void)t;
	(void)s;
	return ACL_SUCCESS;
}

static const struct aclmem_task_ops mark_ops = {
	.run = mark_run,
	.release = aclmem_task_free,
	.replay = aclmem_task_dup,
	.name = "label",
};

struct aclmem_task *aclmem_model_mark_new(const char *fn, const void *label)
{
	struct mark_task *t = aclmem_task_new(fn, sizeof(*t), &mark_ops);

	if (t)
		t->label = label;
	return t ? &t->task : NULL;
}

/* ---- the registry ---- */

static struct aclmem_model *model_find_locked(aclmdlRI handle)
{
	struct aclmem_model *m;

	for (m = models; m && m != handle; m = m->next)
		;
	return m;
}

static struct aclmem_model *capture_of_locked(struct aclmem_stream *s)
{
	struct aclmem_model *m;

	for (m = models; m; m = m->next)
		if (m->state == CAPTURING && m->nr_bound &&
		    m->bound[0].s == s && m->bound[0].attached)
			return m;
	return NULL;
}

static void unlink_locked(struct aclmem_model *m)
{
	struct aclmem_model **pm;

	for (pm = &models; *pm; pm = &(*pm)->next) {
		if (*pm == m) {
			*pm = m->next;
			return;
		}
	}
}

/* ---- recording ---- */

static int append_locked(struct aclmem_model *m, struct aclmem_task *t)
{
	if (m->nr_tasks == m->cap_tasks) {
		size_t cap = m->cap_tasks ? 2 * m->cap_tasks : 16;
		struct aclmem_task **n = realloc(m->tasks, cap * sizeof(*n));

		if (!n)
			return ACL_ERROR_RT_MEMORY_ALLOCATION;
		m->tasks = n;
		m->cap_tasks = cap;
	}
	m->tasks[m->nr_tasks++] = t;
	return ACL_SUCCESS;
}

static int model_keep(struct aclmem_stream_sink *sink, struct aclmem_task *t)
{
	struct aclmem_model *m = (struct aclmem_model *)
		((char *)sink - offsetof(struct aclmem_model, sink));
	int ret;

	pthread_mutex_lock(&models_lock);
	if (m->state == READY) {
		/* Lost a race with the end of the recording. */
		ret = ACL_ERROR_RT_STREAM_NOT_CAPTURED;
	} else if (!t->ops->replay) {
		if (m->state == CAPTURING)
			m->invalid = true;
		ret = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	} else {
		ret = append_locked(m, t);
	}
	pthread_mutex_unlock(&models_lock);
	if (ret) {
		aclmem_err("model %p: work not kept (%d)", (void *)m, ret);
		t->ops->release(t, false);
		return ret;
	}
	if (t->ops->kept)
		t->ops->kept(t);
	return ACL_SUCCESS;
}

static struct aclmem_model *model_new(enum model_state state)
{
	struct aclmem_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->sink.keep = model_keep;
	m->state = state;
	return m;
}

/*
 * Free an unlinked model: its streams' sinks cleared first (so that no
 * keep() is under way), then its tasks and its stream references.
 */
static void model_free(struct aclmem_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_bound; i++) {
		if (m->bound[i].attached)
			aclmem_stream_set_sink(m->bound[i].s, NULL);
		aclmem_stream_put(m->bound[i].s);
	}
	for (i = 0; i < m->nr_tasks; i++)
		m->tasks[i]->ops->release(m->tasks[i], false);
	free(m->tasks);
	free(m->bound);
	free(m);
}

/* Bind s (the caller's reference, taken over) to m: ACL code. */
static int bind_stream(struct aclmem_model *m, struct aclmem_stream *s)
{
	struct binding *b;
	int ret;

	pthread_mutex_lock(&models_lock);
	b = realloc(m->bound, (m->nr_bound + 1) * sizeof(*b));
	if (b) {
		m->bound = b;
		m->bound[m->nr_bound].s = s;
		m->bound[m->nr_bound].attached = false;
	}
	pthread_mutex_unlock(&models_lock);
	if (!b) {
		aclmem_stream_put(s);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	ret = aclmem_stream_set_sink(s, &m->sink);
	if (ret) {
		aclmem_stream_put(s);
		return ret;
	}
	pthread_mutex_lock(&models_lock);
	m->bound[m->nr_bound].attached = true;
	m->nr_bound++;
	pthread_mutex_unlock(&models_lock);
	return ACL_SUCCESS;
}

/* ---- capture ---- */

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
	static const char fn[] = "aclmdlRICaptureBegin";
	struct aclmem_stream *s;
	struct aclmem_model *m;
	int ret;

	if ((unsigned int)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: mode %d", fn,
				   (int)mode);
	if (!stream)
		return aclmem_fail(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
				   "%s: the default stream is not captured", fn);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (aclmem_stream_is_default(s)) {
		aclmem_stream_put(s);
		return aclmem_fail(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
				   "%s: the default stream is not captured", fn);
	}
	m = model_new(CAPTURING);
	if (!m) {
		aclmem_stream_put(s);
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	}
	m->mode = mode;
	m->thread = pthread_self();
	pthread_mutex_lock(&models_lock);
	m->next = models;
	models = m;
	atomic_fetch_add(&nr_capturing, 1);
	pthread_mutex_unlock(&models_lock);
	ret = bind_stream(m, s);
	if (ret) {
		pthread_mutex_lock(&models_lock);
		unlink_locked(m);
		atomic_fetch_sub(&nr_capturing, 1);
		pthread_mutex_unlock(&models_lock);
		model_free(m);
		return aclmem_fail(ret, "%s(%p): %s", fn, stream,
				   ret == ACL_ERROR_RT_STREAM_CAPTURED ?
				   "already captured or bound to a model" :
				   "out of memory");
	}
	return ACL_SUCCESS;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream,
				aclmdlRICaptureStatus *status,
				aclmdlRI *modelRI)
{
	static const char fn[] = "aclmdlRICaptureGetInfo";
	struct aclmem_stream *s;
	struct aclmem_model *m;
	int ret;

	if (!status || !modelRI)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL",
				   fn, !status ? "status" : "modelRI");
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	pthread_mutex_lock(&models_lock);
	m = capture_of_locked(s);
	*status = !m ? ACL_MODEL_RI_CAPTURE_STATUS_NONE :
		  m->invalid ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED :
			       ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
	*modelRI = m;
	pthread_mutex_unlock(&models_lock);
	aclmem_stream_put(s);
	return ACL_SUCCESS;
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
	aclmdlRICaptureMode old = thread_mode;

	if (!mode || (unsigned int)*mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclmdlRICaptureThreadExchangeMode: %s",
				   mode ? "unknown mode" : "mode is NULL");
	thread_mode = *mode;
	*mode = old;
	return ACL_SUCCESS;
}

/*
 * CANN's rule for the calls it calls unsafe while captures are under way:
 * a thread in RELAXED mode may make them; otherwise not the thread that
 * began a capture not RELAXED, nor, in GLOBAL mode, any thread while
 * another began a GLOBAL one.
 */
int aclmem_model_unsafe(const char *fn)
{
	aclmdlRICaptureMode mode = thread_mode;
	pthread_t self = pthread_self();
	struct aclmem_model *m;
	bool refused = false;

	if (mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED ||
	    !atomic_load(&nr_capturing))
		return ACL_SUCCESS;
	pthread_mutex_lock(&models_lock);
	for (m = models; m && !refused; m = m->next) {
		if (m->state != CAPTURING)
			continue;
		if (pthread_equal(m->thread, self))
			refused = m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
		else
			refused = mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL &&
				  m->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
	}
	pthread_mutex_unlock(&models_lock);
	return refused ? aclmem_fail(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
				     "%s: not while a stream captures in this "
				     "mode (aclmdlRICaptureThreadExchangeMode)",
				     fn) : ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
	static const char fn[] = "aclmdlRICaptureEnd";
	struct aclmem_stream *s;
	struct aclmem_model *m;
	int ret = ACL_SUCCESS;

	if (!modelRI)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL",
				   fn);
	if (!stream)
		return aclmem_fail(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
				   "%s: the default stream is not captured", fn);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	pthread_mutex_lock(&models_lock);
	m = capture_of_locked(s);
	if (!m)
		ret = ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED;
	else if (m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED &&
		 !pthread_equal(m->thread, pthread_self()))
		ret = ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD;
	else
		m->bound[0].attached = false;
	pthread_mutex_unlock(&models_lock);
	aclmem_stream_put(s);
	if (ret)
		return aclmem_fail(ret, "%s(%p): %s", fn, stream,
				   ret == ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED ?
				   "the stream is not capturing" :
				   "not the thread that began the capture");
	/* From here on the stream queues its work again. */
	aclmem_stream_set_sink(s, NULL);
	pthread_mutex_lock(&models_lock);
	m->state = READY;
	atomic_fetch_sub(&nr_capturing, 1);
	if (m->invalid)
		unlink_locked(m);
	pthread_mutex_unlock(&models_lock);
	if (m->invalid) {
		model_free(m);
		return aclmem_fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
				   "%s(%p): a call during the capture could not "
				   "be captured", fn, stream);
	}
	*modelRI = m;
	return ACL_SUCCESS;
}

/* ---- building ---- */

aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)
{
	static const char fn[] = "aclmdlRIBuildBegin";
	struct aclmem_model *m;
	int ret;

	if (!modelRI || flag)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !modelRI ? "modelRI is NULL" :
				   "flag must be 0");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	m = model_new(BUILDING);
	if (!m)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "%s: out of memory", fn);
	pthread_mutex_lock(&models_lock);
	m->next = models;
	models = m;
	pthread_mutex_unlock(&models_lock);
	*modelRI = m;
	return ACL_SUCCESS;
}

/* The live model a handle names, in one of the states in mask. */
static int model_check(aclmdlRI handle, unsigned int mask)
{
	struct aclmem_model *m;
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&models_lock);
	m = model_find_locked(handle);
	if (!m || !((1U << m->state) & mask))
		ret = ACL_ERROR_INVALID_PARAM;
	pthread_mutex_unlock(&models_lock);
	return ret;
}

#define IN(state)	(1U << (state))

aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream,
			    uint32_t flag)
{
	static const char fn[] = "aclmdlRIBindStream";
	struct aclmem_stream *s;
	int ret;

	if (!stream || (flag != ACL_MODEL_STREAM_FLAG_HEAD &&
			flag != ACL_MODEL_STREAM_FLAG_DEFAULT))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: %s", fn,
				   !stream ? "stream is NULL" : "unknown flag");
	if (model_check(modelRI, IN(BUILDING)))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s(%p): not a model being built", fn,
				   modelRI);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (!(aclmem_stream_flags(s) & ACL_STREAM_PERSISTENT)) {
		aclmem_stream_put(s);
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s(%p): the stream is not ACL_STREAM_PERSISTENT",
				   fn, stream);
	}
	ret = bind_stream(modelRI, s);
	return ret ? aclmem_fail(ret, "%s(%p): %s", fn, stream,
				 ret == ACL_ERROR_RT_STREAM_CAPTURED ?
				 "already captured or bound to a model" :
				 "out of memory") : ACL_SUCCESS;
}

/*
 * Stop recording the work of m's stream s (NULL: of every stream); with
 * unbind, forget s too.  ACL_ERROR_INVALID_PARAM when s is not bound.
 */
static int detach(struct aclmem_model *m, struct aclmem_stream *s,
		  bool unbind)
{
	struct aclmem_stream *clear[1] = { NULL }, **all = clear;
	size_t i, n = 0;
	bool found = false;

	pthread_mutex_lock(&models_lock);
	if (!s) {
		all = calloc(m->nr_bound + 1, sizeof(*all));
		if (!all) {
			pthread_mutex_unlock(&models_lock);
			return ACL_ERROR_RT_MEMORY_ALLOCATION;
		}
	}
	for (i = 0; i < m->nr_bound; i++) {
		if (s && m->bound[i].s != s)
			continue;
		found = true;
		if (m->bound[i].attached)
			all[n++] = m->bound[i].s;
		m->bound[i].attached = false;
		if (unbind) {
			clear[0] = m->bound[i].s;
			m->bound[i] = m->bound[--m->nr_bound];
			break;
		}
	}
	pthread_mutex_unlock(&models_lock);
	for (i = 0; i < n; i++)
		aclmem_stream_set_sink(all[i], NULL);
	if (all != clear)
		free(all);
	if (unbind && found)
		aclmem_stream_put(clear[0]);
	return found || !s ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

/* The stream a model call names; refused for the default stream (NULL). */
static int bound_call(const char *fn, aclmdlRI modelRI, aclrtStream stream,
		      bool unbind)
{
	struct aclmem_stream *s;
	int ret;

	if (!stream)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL",
				   fn);
	if (model_check(modelRI, IN(BUILDING) | IN(READY)))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s(%p): not a built model", fn, modelRI);
	ret = aclmem_stream_get(stream, &s);
	if (ret)
		return aclmem_api_ret(fn, ret);
	ret = detach(modelRI, s, unbind);
	aclmem_stream_put(s);
	return ret ? aclmem_fail(ret, "%s(%p, %p): the stream is not bound to "
				 "it", fn, modelRI, stream) : ACL_SUCCESS;
}

aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream)
{
	return bound_call("aclmdlRIEndTask", modelRI, stream, false);
}

aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream)
{
	return bound_call("aclmdlRIUnbindStream", modelRI, stream, true);
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)
{
	static const char fn[] = "aclmdlRIBuildEnd";
	struct aclmem_model *m = modelRI;
	int ret;

	if (reserve)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: reserve must be NULL", fn);
	if (model_check(modelRI, IN(BUILDING)))
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s(%p): not a model being built", fn,
				   modelRI);
	ret = detach(m, NULL, false);
	if (ret)
		return aclmem_fail(ret, "%s: out of memory", fn);
	pthread_mutex_lock(&models_lock);
	m->state = READY;
	pthread_mutex_unlock(&models_lock);
	return ACL_SUCCESS;
}

/* ---- execution ---- */

struct exec_task {
	struct aclmem_task task;
	struct aclmem_model *m;
	pthread_mutex_t lock;
	struct aclmem_task *cur;	/* the copy running */
	/*
	 * A copy of each kept task (NULL for marks), made when the execution
	 * is queued, so that it is queued work from then on: a record is the
	 * event's latest for whoever waits after the call.  A loop may run a
	 * copy more than once; each is released once, at the end.
	 */
	struct aclmem_task **copy;
	bool *ran;
};

/* The execution this worker is running, for aclmem_model_goto(). */
struct run {
	struct aclmem_model *m;
	size_t next;
};

static __thread struct run *current_run;

int aclmem_model_goto(const void *label)
{
	struct run *r = current_run;
	size_t i;

	if (!r)
		return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	for (i = 0; i < r->m->nr_tasks; i++) {
		struct aclmem_task *t = r->m->tasks[i];

		if (t->ops == &mark_ops &&
		    ((struct mark_task *)t)->label == label) {
			r->next = i + 1;
			return ACL_SUCCESS;
		}
	}
	return ACL_ERROR_RT_PARAM_INVALID;
}

static int exec_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct exec_task *x = (struct exec_task *)task;
	struct run r = { x->m, 0 }, *outer = current_run;
	struct aclmem_task *t;
	size_t i;
	int ret = ACL_SUCCESS;

	current_run = &r;
	while (!ret && r.next < x->m->nr_tasks) {
		i = r.next++;
		t = x->copy[i];
		if (!t)
			continue;
		if (aclmem_stream_cancelled(s)) {
			ret = ACL_ERROR_RT_STREAM_ABORT;
			break;
		}
		pthread_mutex_lock(&x->lock);
		x->cur = t;
		pthread_mutex_unlock(&x->lock);
		ret = t->ops->run(t, s);
		pthread_mutex_lock(&x->lock);
		x->cur = NULL;
		pthread_mutex_unlock(&x->lock);
		x->ran[i] = true;
	}
	current_run = outer;
	if (ret)
		aclmem_info("model %p: task %zu of %zu failed: %d",
			    (void *)x->m, r.next, x->m->nr_tasks, ret);
	return ret;
}

static void exec_release(struct aclmem_task *task, bool ran)
{
	struct exec_task *x = (struct exec_task *)task;
	size_t i;

	(void)ran;
	for (i = 0; x->copy && x->ran && i < x->m->nr_tasks; i++)
		if (x->copy[i])
			x->copy[i]->ops->release(x->copy[i], x->ran[i]);
	free(x->copy);
	free(x->ran);
	pthread_mutex_lock(&models_lock);
	x->m->running--;
	pthread_mutex_unlock(&models_lock);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

/* The stream was cancelled: so is the copy running. */
static void exec_cancel(struct aclmem_task *task)
{
	struct exec_task *x = (struct exec_task *)task;

	pthread_mutex_lock(&x->lock);
	if (x->cur && x->cur->ops->cancel)
		x->cur->ops->cancel(x->cur);
	pthread_mutex_unlock(&x->lock);
}

static struct aclmem_task *exec_replay(const struct aclmem_task *task);

static const struct aclmem_task_ops exec_ops = {
	.run = exec_run,
	.release = exec_release,
	.cancel = exec_cancel,
	.replay = exec_replay,
	.name = "model execute",
};

/*
 * An execution of m, READY, which the caller counted in m->running (the
 * task's release uncounts it, also when this fails: NULL).
 */
static struct exec_task *exec_new(const char *fn, struct aclmem_model *m)
{
	struct exec_task *x = aclmem_task_new(fn, sizeof(*x), &exec_ops);
	size_t i, n = m->nr_tasks;

	if (!x) {
		pthread_mutex_lock(&models_lock);
		m->running--;
		pthread_mutex_unlock(&models_lock);
		return NULL;
	}
	x->m = m;
	pthread_mutex_init(&x->lock, NULL);
	x->copy = calloc(n ? n : 1, sizeof(*x->copy));
	x->ran = calloc(n ? n : 1, sizeof(*x->ran));
	for (i = 0; x->copy && x->ran && i < n; i++) {
		if (m->tasks[i]->ops == &mark_ops)
			continue;
		x->copy[i] = m->tasks[i]->ops->replay(m->tasks[i]);
		if (!x->copy[i])
			break;
	}
	if (!x->copy || !x->ran || i < n) {
		aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
			    "%s: out of memory for the copies", fn);
		exec_release(&x->task, false);
		return NULL;
	}
	return x;
}

/*
 * An execution captured into another model: the copy kept there holds the
 * model executed (it cannot be destroyed before the other one is).
 */
static struct aclmem_task *exec_replay(const struct aclmem_task *task)
{
	const struct exec_task *x = (const struct exec_task *)task;
	struct exec_task *n;

	pthread_mutex_lock(&models_lock);
	x->m->running++;
	pthread_mutex_unlock(&models_lock);
	n = exec_new("aclmdlRIExecuteAsync", x->m);
	return n ? &n->task : NULL;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
	static const char fn[] = "aclmdlRIExecuteAsync";
	struct aclmem_model *m;
	struct exec_task *x;
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&models_lock);
	m = model_find_locked(modelRI);
	if (!m)
		ret = ACL_ERROR_INVALID_PARAM;
	else if (m->state != READY)
		ret = ACL_ERROR_RT_MODEL_CAPTURED;
	else
		m->running++;
	pthread_mutex_unlock(&models_lock);
	if (ret)
		return aclmem_fail(ret, "%s(%p): %s", fn, modelRI,
				   ret == ACL_ERROR_INVALID_PARAM ?
				   "not a model run instance" :
				   "still being captured or built");
	x = exec_new(fn, m);
	if (!x)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	return aclmem_task_queue(fn, stream, &x->task);
}

/*
 * Synchronous: queued on the current context's default stream, which is
 * then synchronised (with what else it holds).
 */
aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout)
{
	int ret;

	if (timeout < -1 || !timeout)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclmdlRIExecute: timeout %d (-1 or > 0 ms)",
				   (int)timeout);
	ret = aclmdlRIExecuteAsync(modelRI, NULL);
	if (ret)
		return ret;
	return aclrtSynchronizeStreamWithTimeout(NULL, timeout);
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
	struct aclmem_model *m;
	int ret = ACL_SUCCESS;

	pthread_mutex_lock(&models_lock);
	m = model_find_locked(modelRI);
	if (!m)
		ret = ACL_ERROR_INVALID_PARAM;
	else if (m->state == CAPTURING)
		ret = ACL_ERROR_RT_MODEL_CAPTURED;
	else if (m->running)
		ret = ACL_ERROR_RT_MODEL_RUNNING;
	else
		unlink_locked(m);
	pthread_mutex_unlock(&models_lock);
	if (ret)
		return aclmem_fail(ret, "aclmdlRIDestroy(%p): %s", modelRI,
				   ret == ACL_ERROR_INVALID_PARAM ?
				   "not a model run instance" :
				   ret == ACL_ERROR_RT_MODEL_CAPTURED ?
				   "still capturing" :
				   "executions are queued or running");
	model_free(m);
	return ACL_SUCCESS;
}

/* ---- streams that go ---- */

/*
 * A capture whose stream is destroyed can never end: it goes.  A build
 * forgets the stream.
 */
static void models_stream_gone(struct aclmem_stream *s)
{
	struct aclmem_model *m, **pm, *dead = NULL;
	struct aclmem_stream **drop = NULL;
	size_t i, n = 0;

	pthread_mutex_lock(&models_lock);
	for (m = models; m; m = m->next)
		for (i = 0; i < m->nr_bound; i++)
			n += m->bound[i].s == s;
	if (n)
		drop = calloc(n, sizeof(*drop));
	n = 0;
	for (pm = &models; drop && (m = *pm);) {
		if (m->state == CAPTURING && m->nr_bound &&
		    m->bound[0].s == s) {
			atomic_fetch_sub(&nr_capturing, 1);
			*pm = m->next;
			m->next = dead;
			dead = m;
			continue;
		}
		for (i = 0; i < m->nr_bound; i++) {
			if (m->bound[i].s != s)
				continue;
			drop[n++] = s;
			m->bound[i] = m->bound[--m->nr_bound];
			break;
		}
		pm = &m->next;
	}
	pthread_mutex_unlock(&models_lock);
	for (i = 0; i < n; i++) {
		aclmem_stream_set_sink(drop[i], NULL);
		aclmem_stream_put(drop[i]);
	}
	free(drop);
	while ((m = dead)) {
		dead = m->next;
		model_free(m);
	}
}

/*
 * aclFinalize: every stream is gone, and with it every execution; the
 * models the program did not destroy go too.
 */
static void models_idle(bool finalize)
{
	struct aclmem_model *m, *all;

	if (!finalize)
		return;
	pthread_mutex_lock(&models_lock);
	all = models;
	models = NULL;
	atomic_store(&nr_capturing, 0);
	pthread_mutex_unlock(&models_lock);
	while ((m = all)) {
		all = m->next;
		model_free(m);
	}
}

static void models_fork_prepare(void)
{
	pthread_mutex_lock(&models_lock);
}

static void models_fork_parent(void)
{
	pthread_mutex_unlock(&models_lock);
}

/* The streams did not come along: the child forgets every model. */
static void models_fork_child(void)
{
	pthread_mutex_init(&models_lock, NULL);
	models = NULL;
	atomic_store(&nr_capturing, 0);
}

ACLMEM_PART(.rank = ACLMEM_RANK_MODELS,
	    .stream_gone = models_stream_gone,
	    .idle = models_idle,
	    .fork_prepare = models_fork_prepare,
	    .fork_parent = models_fork_parent,
	    .fork_child = models_fork_child)
