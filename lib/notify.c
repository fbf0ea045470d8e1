// SPDX-License-Identifier: MIT
/*
 * Notifies: a flag one stream sets (aclrtRecordNotify) and another waits
 * for and clears (aclrtWaitAndResetNotify), in stream order, within a
 * process or between processes (aclrtNotifyGetExportKey,
 * aclrtNotifySetImportPid, aclrtNotifyImportByKey).  Every notify lives in
 * a page of shared memory (ipc.h), so exporting one is only naming it; the
 * flag is a futex word, so a waiting stream sleeps in the kernel until a
 * record in any process wakes it.
 *
 * Where CANN is silent: a wait's timeout is in milliseconds, 0 waits for
 * ever, and a wait that times out fails its stream's next synchronisation
 * with ACL_ERROR_RT_WAIT_TIMEOUT; records do not count (two records before
 * a wait satisfy one wait).  A notify belongs to the context it was made
 * or imported in and dies with it; an imported one can be waited on and
 * recorded but not exported again.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "acl/acl_rt.h"
#include "context.h"
#include "deadline.h"
#include "ipc.h"
#include "log.h"
#include "stream.h"

struct aclmem_notify {
	struct aclmem_notify *next;	/* registry, under notify_lock */
	struct aclmem_ctx *ctx;
	struct aclmem_ipc ipc;
	uint32_t id;
	unsigned int refs;		/* under notify_lock */
};

static pthread_mutex_t notify_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclmem_notify *notifies;
static uint32_t next_notify_id;

static uint32_t *flag_word(struct aclmem_notify *n)
{
	return &n->ipc.page->word[0];
}

static void notify_put(struct aclmem_notify *n)
{
	bool last;

	pthread_mutex_lock(&notify_lock);
	last = --n->refs == 0;
	pthread_mutex_unlock(&notify_lock);
	if (last) {
		aclmem_ipc_destroy(&n->ipc);
		free(n);
	}
}

static int notify_get(aclrtNotify handle, struct aclmem_notify **out)
{
	struct aclmem_notify *n;

	/* The caller's aclmem_api_ret() names itself before these. */
	if (!handle) {
		aclmem_err("notify is NULL");
		return ACL_ERROR_INVALID_PARAM;
	}
	pthread_mutex_lock(&notify_lock);
	for (n = notifies; n && n != handle; n = n->next)
		;
	if (n)
		n->refs++;
	pthread_mutex_unlock(&notify_lock);
	if (!n) {
		aclmem_err("notify %p: not a live notify", handle);
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	*out = n;
	return ACL_SUCCESS;
}

static void publish(struct aclmem_notify *n)
{
	pthread_mutex_lock(&notify_lock);
	n->id = next_notify_id++;
	n->refs = 1;
	n->next = notifies;
	notifies = n;
	pthread_mutex_unlock(&notify_lock);
}

aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)
{
	struct aclmem_notify *n;
	int ret;

	if (!notify)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCreateNotify: notify is NULL");
	if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCreateNotify: unknown flag 0x%llx",
				   (unsigned long long)flag);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtCreateNotify", ret);
	n = calloc(1, sizeof(*n));
	if (!n)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtCreateNotify: out of memory");
	ret = aclmem_ipc_create(ACLMEM_IPC_NOTIFY, &n->ipc);
	if (ret) {
		free(n);
		return aclmem_api_ret("aclrtCreateNotify", ret);
	}
	n->ctx = aclmem_ctx_current();
	publish(n);
	*notify = n;
	return ACL_SUCCESS;
}

static struct aclmem_notify *unlink_locked(const void *handle)
{
	struct aclmem_notify **pn, *n;

	for (pn = &notifies; (n = *pn); pn = &n->next) {
		if (n == handle) {
			*pn = n->next;
			return n;
		}
	}
	return NULL;
}

aclError aclrtDestroyNotify(aclrtNotify notify)
{
	struct aclmem_notify *n;

	if (!notify)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDestroyNotify: notify is NULL");
	pthread_mutex_lock(&notify_lock);
	n = unlink_locked(notify);
	pthread_mutex_unlock(&notify_lock);
	if (!n)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "aclrtDestroyNotify(%p): not a live notify",
				   notify);
	/* Queued waits hold references and the page stays mapped for them. */
	notify_put(n);
	return ACL_SUCCESS;
}

/*
 * Destroy every notify of a dying context (its streams are gone already,
 * so forced or not, nothing is left to wait for).
 */
static void notifies_destroy_ctx(struct aclmem_ctx *ctx, bool force)
{
	struct aclmem_notify **pn, *n, *list = NULL;

	(void)force;

	pthread_mutex_lock(&notify_lock);
	for (pn = &notifies; (n = *pn);) {
		if (n->ctx == ctx) {
			*pn = n->next;
			n->next = list;
			list = n;
		} else {
			pn = &n->next;
		}
	}
	pthread_mutex_unlock(&notify_lock);
	while ((n = list)) {
		list = n->next;
		notify_put(n);
	}
}

static void notifies_fork_child(void)
{
	/* The child keeps the mappings it inherited; it forgets the objects. */
	pthread_mutex_init(&notify_lock, NULL);
	notifies = NULL;
}

ACLMEM_PART(.rank = ACLMEM_RANK_NOTIFIES,
	    .ctx_destroy = notifies_destroy_ctx,
	    .fork_child = notifies_fork_child)

aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t *notifyId)
{
	struct aclmem_notify *n;
	int ret;

	if (!notifyId)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetNotifyId: notifyId is NULL");
	ret = notify_get(notify, &n);
	if (ret)
		return aclmem_api_ret("aclrtGetNotifyId", ret);
	*notifyId = n->id;
	notify_put(n);
	return ACL_SUCCESS;
}

/* ---- between processes ---- */

aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len,
				 uint64_t flags)
{
	struct aclmem_notify *n;
	int ret;

	if (!key || len < ACLMEM_IPC_KEY_LEN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtNotifyGetExportKey: %s", !key ?
				   "key is NULL" : "len is too short for a key");
	if (flags != ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT &&
	    flags != ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtNotifyGetExportKey: unknown flags 0x%llx",
				   (unsigned long long)flags);
	ret = notify_get(notify, &n);
	if (ret)
		return aclmem_api_ret("aclrtNotifyGetExportKey", ret);
	ret = aclmem_ipc_key(&n->ipc, key, len);
	if (!ret && flags == ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
		__atomic_store_n(&n->ipc.page->any_pid, 1, __ATOMIC_RELEASE);
	notify_put(n);
	return aclmem_api_ret("aclrtNotifyGetExportKey", ret);
}

aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t *pid, size_t num)
{
	struct aclmem_notify *n;
	int ret;

	if (!pid || !num)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtNotifySetImportPid: %s",
				   !pid ? "pid is NULL" : "num is 0");
	ret = notify_get(notify, &n);
	if (ret)
		return aclmem_api_ret("aclrtNotifySetImportPid", ret);
	if (n->ipc.fd < 0) {
		aclmem_err("notify %p was imported: only its exporter says "
			   "who may import it", notify);
		ret = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		ret = aclmem_ipc_allow(&n->ipc, pid, num);
	}
	notify_put(n);
	return aclmem_api_ret("aclrtNotifySetImportPid", ret);
}

aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key,
				uint64_t flags)
{
	struct aclmem_notify *n;
	int ret;

	if (!notify || !key)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtNotifyImportByKey: %s is NULL",
				   !notify ? "notify" : "key");
	if (flags != ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT &&
	    flags != ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtNotifyImportByKey: unknown flags 0x%llx",
				   (unsigned long long)flags);
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtNotifyImportByKey", ret);
	n = calloc(1, sizeof(*n));
	if (!n)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtNotifyImportByKey: out of memory");
	ret = aclmem_ipc_open(ACLMEM_IPC_NOTIFY, key, &n->ipc);
	if (ret) {
		free(n);
		return aclmem_api_ret("aclrtNotifyImportByKey", ret);
	}
	n->ctx = aclmem_ctx_current();
	publish(n);
	*notify = n;
	return ACL_SUCCESS;
}

/* ---- records and waits on streams ---- */

struct notify_task {
	struct aclmem_task task;
	struct aclmem_notify *notify;
	bool wait;
	uint32_t timeout_ms;
};

static int notify_wait(struct notify_task *t, struct aclmem_stream *s)
{
	uint32_t *word = flag_word(t->notify);
	uint64_t end = aclmem_now_ns() + (uint64_t)t->timeout_ms * 1000000ULL;

	while (!__atomic_exchange_n(word, 0, __ATOMIC_ACQ_REL)) {
		if (aclmem_stream_cancelled(s))
			return ACL_ERROR_RT_STREAM_ABORT;
		if (t->timeout_ms && aclmem_now_ns() >= end)
			return ACL_ERROR_RT_WAIT_TIMEOUT;
		aclmem_ipc_wait(word, 0, -1);
	}
	return ACL_SUCCESS;
}

static int notify_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct notify_task *t = (struct notify_task *)task;

	if (t->wait)
		return notify_wait(t, s);
	__atomic_store_n(flag_word(t->notify), 1, __ATOMIC_RELEASE);
	aclmem_ipc_wake(flag_word(t->notify));
	return ACL_SUCCESS;
}

static void notify_release(struct aclmem_task *task, bool ran)
{
	struct notify_task *t = (struct notify_task *)task;

	(void)ran;
	notify_put(t->notify);
	free(t);
}

static const char *notify_label(const struct aclmem_task *task)
{
	return ((const struct notify_task *)task)->wait ? "notify wait" :
							  "notify record";
}

/* A model runs the record or wait again: one more reference. */
static struct aclmem_task *notify_replay(const struct aclmem_task *task)
{
	struct notify_task *t = (struct notify_task *)aclmem_task_dup(task);

	if (t) {
		pthread_mutex_lock(&notify_lock);
		t->notify->refs++;
		pthread_mutex_unlock(&notify_lock);
	}
	return t ? &t->task : NULL;
}

static const struct aclmem_task_ops notify_ops = {
	.run = notify_run,
	.release = notify_release,
	.name = "notify",
	.label = notify_label,
	.replay = notify_replay,
};

static aclError queue(aclrtNotify notify, aclrtStream stream, bool wait,
		      uint32_t timeout)
{
	const char *fn = wait ? "aclrtWaitAndResetNotify" : "aclrtRecordNotify";
	struct aclmem_notify *n;
	struct notify_task *t;
	int ret;

	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	ret = notify_get(notify, &n);
	if (ret)
		return aclmem_api_ret(fn, ret);
	t = aclmem_task_new(fn, sizeof(*t), &notify_ops);
	if (!t) {
		notify_put(n);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	t->notify = n;
	t->wait = wait;
	t->timeout_ms = timeout;
	return aclmem_task_queue(fn, stream, &t->task);
}

aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)
{
	return queue(notify, stream, false, 0);
}

aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream,
				 uint32_t timeout)
{
	return queue(notify, stream, true, timeout);
}

/*
 * Clear notifies at once, from the host (CANN: not in stream order).  All
 * handles are checked before any is cleared, so a bad one changes nothing.
 */
aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num)
{
	struct aclmem_notify **got;
	size_t i, n = 0;
	int ret = ACL_SUCCESS;

	if (!notifies || !num)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtNotifyBatchReset: no notifies");
	got = calloc(num, sizeof(*got));
	if (!got)
		return aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				   "aclrtNotifyBatchReset: out of memory");
	for (i = 0; i < num && !ret; i++)
		if (!(ret = notify_get(notifies[i], &got[i])))
			n++;
	for (i = 0; i < n; i++) {
		if (!ret)
			__atomic_store_n(flag_word(got[i]), 0, __ATOMIC_RELEASE);
		notify_put(got[i]);
	}
	free(got);
	return ret ? aclmem_api_ret("aclrtNotifyBatchReset", ret) : ACL_SUCCESS;
}
