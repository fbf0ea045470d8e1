// SPDX-License-Identifier: MIT
/*
 * CANN's TDT queues (acl/acl_tdt_queue.h): queues named by a qid, between
 * the program's own threads.
 *
 * A queue is a tdt_fifo (tdt.h) of buffers.  acltdtAllocBuf makes a
 * buffer (zeroed data of its size, a data length that starts at the size,
 * and a 96-byte private area); acltdtEnqueue hands one to the queue and
 * acltdtDequeue hands it to the caller, who frees it with acltdtFreeBuf.
 * acltdtEnqueueData copies the caller's data and private data into a new
 * buffer, acltdtDequeueData copies them out and frees it: the caller's
 * memory is never kept.
 *
 * Queues belong to the process that made them: the qid means nothing to
 * another process, and acltdtGrantQueue / acltdtAttachQueue answer
 * ACL_ERROR_FEATURE_UNSUPPORTED, CANN's answer where it offers no sharing.
 * Qids count up from 1 and are not reused while the process lives.  A
 * caller finds its queue under queues_lock and stays counted inside its
 * FIFO, so acltdtDestroyQueue on another thread wakes it and waits for it
 * to leave (tdt_fifo_destroy) before the queue is freed.
 *
 * fork(): the child has none of the parent's queues (a qid is the
 * process's own), so it refuses their qids as unknown; its own queues get
 * qids the parent's never had.  queues_lock is held across the fork, so
 * the list the child drops is whole.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_tdt_queue.h"
#include "args.h"
#include "context.h"
#include "log.h"
#include "tdt.h"

/* CANN's runtime: a 128-byte name, depth 8 by default and at least 2. */
#define QUEUE_NAME_MAX		128
#define QUEUE_DEPTH_DEFAULT	8U
#define QUEUE_DEPTH_MIN		2U
#define BUF_USER_MAX		96

struct tagMemQueueAttr {
	char name[QUEUE_NAME_MAX];
	uint32_t depth;
};

struct tdt_buf {
	struct tdt_entry entry;
	size_t size, len;
	unsigned char user[BUF_USER_MAX];
	unsigned char data[];
};

struct tdt_queue {
	struct tdt_queue *next;
	uint32_t qid;
	char name[QUEUE_NAME_MAX];
	struct tdt_fifo fifo;
};

static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tdt_queue *queues;
static uint32_t last_qid;

static void queues_fork_prepare(void)
{
	pthread_mutex_lock(&queues_lock);
}

static void queues_fork_parent(void)
{
	pthread_mutex_unlock(&queues_lock);
}

static void queues_fork_child(void)
{
	struct tdt_queue *q;

	pthread_mutex_unlock(&queues_lock);
	while ((q = queues)) {
		queues = q->next;
		tdt_fifo_forget(&q->fifo);
		free(q);
	}
}

ACLMEM_PART(.rank = ACLMEM_RANK_TDT,
	    .fork_prepare = queues_fork_prepare,
	    .fork_parent = queues_fork_parent,
	    .fork_child = queues_fork_child)

static void buf_release(struct tdt_entry *e)
{
	free(e);
}

static struct tdt_buf *buf_new(size_t size)
{
	struct tdt_buf *b;

	if (size > SIZE_MAX - sizeof(*b))
		return NULL;
	b = calloc(1, sizeof(*b) + size);
	if (!b)
		return NULL;
	b->entry.release = buf_release;
	b->size = b->len = size;
	return b;
}

/* ---- attributes ---- */

acltdtQueueAttr *acltdtCreateQueueAttr(void)
{
	acltdtQueueAttr *a = calloc(1, sizeof(*a));

	if (!a) {
		aclmem_fail(ACL_ERROR_BAD_ALLOC,
			    "acltdtCreateQueueAttr: out of memory");
		return NULL;
	}
	a->depth = QUEUE_DEPTH_DEFAULT;
	return a;
}

aclError acltdtDestroyQueueAttr(const acltdtQueueAttr *attr)
{
	if (!attr)
		return aclmem_arg_null("acltdtDestroyQueueAttr", "attr");
	free((void *)attr);
	return ACL_SUCCESS;
}

/*
 * The length each type's value has: a name is passed as a char * (the
 * attribute keeps a copy of the string), a depth as a uint32_t.  CANN
 * copies len bytes of a shorter value too; a value that is not whole is
 * refused here instead.
 */
static int attr_len(const char *fn, acltdtQueueAttrType type, size_t *len)
{
	switch (type) {
	case ACL_TDT_QUEUE_NAME_PTR:
		*len = sizeof(char *);
		return ACL_SUCCESS;
	case ACL_TDT_QUEUE_DEPTH_UINT32:
		*len = sizeof(uint32_t);
		return ACL_SUCCESS;
	}
	return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown type %d", fn,
			   (int)type);
}

/* attr and param given, and the length type's value has. */
static int attr_args(const char *fn, const void *attr, const void *param,
		     acltdtQueueAttrType type, size_t *want)
{
	if (!attr)
		return aclmem_arg_null(fn, "attr");
	if (!param)
		return aclmem_arg_null(fn, "param");
	return attr_len(fn, type, want);
}

aclError acltdtSetQueueAttr(acltdtQueueAttr *attr, acltdtQueueAttrType type,
			    size_t len, const void *param)
{
	static const char fn[] = "acltdtSetQueueAttr";
	const char *name;
	size_t want = 0;
	int ret;

	ret = attr_args(fn, attr, param, type, &want);
	if (ret)
		return ret;
	if (len != want)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: len %zu for type %d, not %zu", fn, len,
				   (int)type, want);
	if (type == ACL_TDT_QUEUE_DEPTH_UINT32) {
		memcpy(&attr->depth, param, sizeof(attr->depth));
		return ACL_SUCCESS;
	}
	memcpy(&name, param, sizeof(name));
	if (!name)
		return aclmem_arg_null(fn, "the name");
	if (strnlen(name, QUEUE_NAME_MAX) + 1 > QUEUE_NAME_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: name longer than %d bytes with its NUL",
				   fn, QUEUE_NAME_MAX);
	strcpy(attr->name, name);
	return ACL_SUCCESS;
}

aclError acltdtGetQueueAttr(const acltdtQueueAttr *attr,
			    acltdtQueueAttrType type, size_t len,
			    size_t *paramRetSize, void *param)
{
	static const char fn[] = "acltdtGetQueueAttr";
	const char *name;
	size_t want = 0;
	int ret;

	ret = attr_args(fn, attr, param, type, &want);
	if (ret)
		return ret;
	if (!paramRetSize)
		return aclmem_arg_null(fn, "paramRetSize");
	if (len < want)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: len %zu for type %d, less than %zu", fn,
				   len, (int)type, want);
	if (type == ACL_TDT_QUEUE_DEPTH_UINT32) {
		memcpy(param, &attr->depth, want);
	} else {
		name = attr->name;
		memcpy(param, &name, want);
	}
	*paramRetSize = want;
	return ACL_SUCCESS;
}

/* ---- queues ---- */

aclError acltdtCreateQueue(const acltdtQueueAttr *attr, uint32_t *qid)
{
	static const char fn[] = "acltdtCreateQueue";
	static const acltdtQueueAttr defaults = { .depth = QUEUE_DEPTH_DEFAULT };
	struct tdt_queue *q;
	int ret;

	if (!qid)
		return aclmem_arg_null(fn, "qid");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret(fn, ret);
	if (!attr)
		attr = &defaults;
	if (attr->depth < QUEUE_DEPTH_MIN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: depth %u, at least %u", fn, attr->depth,
				   QUEUE_DEPTH_MIN);
	q = calloc(1, sizeof(*q));
	if (!q)
		return aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	memcpy(q->name, attr->name, sizeof(q->name));
	tdt_fifo_init(&q->fifo, attr->depth);
	pthread_mutex_lock(&queues_lock);
	q->qid = ++last_qid;
	q->next = queues;
	queues = q;
	pthread_mutex_unlock(&queues_lock);
	*qid = q->qid;
	return ACL_SUCCESS;
}

/* Under queues_lock: the queue qid names, or NULL. */
static struct tdt_queue **queue_slot(uint32_t qid)
{
	struct tdt_queue **p;

	for (p = &queues; *p; p = &(*p)->next)
		if ((*p)->qid == qid)
			return p;
	return NULL;
}

aclError acltdtDestroyQueue(uint32_t qid)
{
	struct tdt_queue **p, *q = NULL;

	pthread_mutex_lock(&queues_lock);
	p = queue_slot(qid);
	if (p) {
		q = *p;
		*p = q->next;
	}
	pthread_mutex_unlock(&queues_lock);
	if (!q)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "acltdtDestroyQueue: no queue %u", qid);
	tdt_fifo_destroy(&q->fifo);
	free(q);
	return ACL_SUCCESS;
}

/*
 * Check the timeout, find qid's queue and count the caller inside its
 * FIFO before queues_lock drops, so that a destroy waits for the caller.
 */
static struct tdt_fifo *queue_enter(const char *fn, uint32_t qid,
				    int32_t timeout, int *ret)
{
	struct tdt_queue **p;
	struct tdt_fifo *f = NULL;

	if (timeout < -1) {
		*ret = aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: timeout %d below -1", fn, timeout);
		return NULL;
	}
	pthread_mutex_lock(&queues_lock);
	p = queue_slot(qid);
	if (p) {
		f = &(*p)->fifo;
		pthread_mutex_lock(&f->lock);
		f->inside++;
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_unlock(&queues_lock);
	if (!f)
		*ret = aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: no queue %u",
				   fn, qid);
	return f;
}

static void queue_leave(struct tdt_fifo *f)
{
	pthread_mutex_lock(&f->lock);
	f->inside--;
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
}

static int queue_push(const char *fn, uint32_t qid, struct tdt_buf *b,
		      int32_t timeout)
{
	struct tdt_fifo *f;
	int ret;

	f = queue_enter(fn, qid, timeout, &ret);
	if (!f)
		return ret;
	ret = tdt_fifo_push(f, &b->entry, timeout, ACL_ERROR_RT_QUEUE_FULL);
	queue_leave(f);
	if (ret == ACL_ERROR_RT_QUEUE_FULL)
		return aclmem_fail(ret, "%s: queue %u full", fn, qid);
	if (ret)
		return aclmem_fail(ret, "%s: queue %u destroyed", fn, qid);
	return ACL_SUCCESS;
}

static int queue_pop(const char *fn, uint32_t qid, struct tdt_buf **b,
		     int32_t timeout,
		     int (*fits)(struct tdt_entry *e, void *arg), void *arg)
{
	struct tdt_entry *e;
	struct tdt_fifo *f;
	int ret;

	f = queue_enter(fn, qid, timeout, &ret);
	if (!f)
		return ret;
	ret = tdt_fifo_pop(f, &e, timeout, ACL_ERROR_RT_QUEUE_EMPTY, fits, arg);
	queue_leave(f);
	if (ret == ACL_ERROR_RT_QUEUE_EMPTY)
		return aclmem_fail(ret, "%s: queue %u empty", fn, qid);
	if (ret == ACL_ERROR_FAILURE)
		return aclmem_fail(ret, "%s: queue %u destroyed", fn, qid);
	if (ret)
		return aclmem_api_ret(fn, ret);
	*b = (struct tdt_buf *)e;
	return ACL_SUCCESS;
}

aclError acltdtEnqueue(uint32_t qid, acltdtBuf buf, int32_t timeout)
{
	if (!buf)
		return aclmem_arg_null("acltdtEnqueue", "buf");
	return queue_push("acltdtEnqueue", qid, buf, timeout);
}

aclError acltdtDequeue(uint32_t qid, acltdtBuf *buf, int32_t timeout)
{
	struct tdt_buf *b;
	int ret;

	if (!buf)
		return aclmem_arg_null("acltdtDequeue", "buf");
	ret = queue_pop("acltdtDequeue", qid, &b, timeout, NULL, NULL);
	if (!ret)
		*buf = b;
	return ret;
}

static int check_user(const char *fn, const void *user, size_t size)
{
	if (!user && size)
		return aclmem_arg_null(fn, "userData");
	if (size > BUF_USER_MAX)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: userDataSize %zu over %d", fn, size,
				   BUF_USER_MAX);
	return ACL_SUCCESS;
}

aclError acltdtEnqueueData(uint32_t qid, const void *data, size_t dataSize,
			   const void *userData, size_t userDataSize,
			   int32_t timeout, uint32_t rsv)
{
	static const char fn[] = "acltdtEnqueueData";
	struct tdt_buf *b;
	int ret;

	(void)rsv;
	if (!data)
		return aclmem_arg_null(fn, "data");
	if (!dataSize)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: dataSize 0", fn);
	ret = check_user(fn, userData, userDataSize);
	if (ret)
		return ret;
	b = buf_new(dataSize);
	if (!b)
		return aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	memcpy(b->data, data, dataSize);
	if (userDataSize)
		memcpy(b->user, userData, userDataSize);
	ret = queue_push(fn, qid, b, timeout);
	if (ret)
		free(b);
	return ret;
}

struct dequeue_room {
	size_t size;
	size_t *ret_size;
};

/* The first buffer's length is told; it stays queued when it does not fit. */
static int data_fits(struct tdt_entry *e, void *arg)
{
	struct tdt_buf *b = (struct tdt_buf *)e;
	struct dequeue_room *r = arg;

	*r->ret_size = b->len;
	if (b->len > r->size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "acltdtDequeueData: %zu bytes queued, dataSize %zu",
				   b->len, r->size);
	return ACL_SUCCESS;
}

aclError acltdtDequeueData(uint32_t qid, void *data, size_t dataSize,
			   size_t *retDataSize, void *userData,
			   size_t userDataSize, int32_t timeout)
{
	static const char fn[] = "acltdtDequeueData";
	struct dequeue_room room = { dataSize, retDataSize };
	struct tdt_buf *b;
	int ret;

	if (!data)
		return aclmem_arg_null(fn, "data");
	if (!retDataSize)
		return aclmem_arg_null(fn, "retDataSize");
	if (!dataSize)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: dataSize 0", fn);
	ret = check_user(fn, userData, userDataSize);
	if (ret)
		return ret;
	ret = queue_pop(fn, qid, &b, timeout, data_fits, &room);
	if (ret)
		return ret;
	memcpy(data, b->data, b->len);
	if (userDataSize)
		memcpy(userData, b->user, userDataSize);
	free(b);
	return ACL_SUCCESS;
}

aclError acltdtGrantQueue(uint32_t qid, int32_t pid, uint32_t permission,
			  int32_t timeout)
{
	(void)pid;
	(void)permission;
	(void)timeout;
	return aclmem_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
			   "acltdtGrantQueue: queue %u cannot be shared between processes",
			   qid);
}

aclError acltdtAttachQueue(uint32_t qid, int32_t timeout, uint32_t *permission)
{
	(void)timeout;
	(void)permission;
	return aclmem_fail(ACL_ERROR_FEATURE_UNSUPPORTED,
			   "acltdtAttachQueue: queue %u cannot be shared between processes",
			   qid);
}

/* ---- buffers ---- */

aclError acltdtAllocBuf(size_t size, uint32_t type, acltdtBuf *buf)
{
	static const char fn[] = "acltdtAllocBuf";
	struct tdt_buf *b;

	if (type != ACL_TDT_NORMAL_MEM && type != ACL_TDT_DVPP_MEM)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: type %u", fn,
				   type);
	if (!buf)
		return aclmem_arg_null(fn, "buf");
	if (!size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: size 0", fn);
	b = buf_new(size);
	if (!b)
		return aclmem_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory", fn);
	*buf = b;
	return ACL_SUCCESS;
}

aclError acltdtFreeBuf(acltdtBuf buf)
{
	if (!buf)
		return aclmem_arg_null("acltdtFreeBuf", "buf");
	free(buf);
	return ACL_SUCCESS;
}

aclError acltdtGetBufData(const acltdtBuf buf, void **dataPtr, size_t *size)
{
	static const char fn[] = "acltdtGetBufData";
	struct tdt_buf *b = buf;

	if (!buf)
		return aclmem_arg_null(fn, "buf");
	if (!dataPtr)
		return aclmem_arg_null(fn, "dataPtr");
	if (!size)
		return aclmem_arg_null(fn, "size");
	*dataPtr = b->data;
	*size = b->size;
	return ACL_SUCCESS;
}

aclError acltdtSetBufDataLen(acltdtBuf buf, size_t len)
{
	struct tdt_buf *b = buf;

	if (!buf)
		return aclmem_arg_null("acltdtSetBufDataLen", "buf");
	if (len > b->size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "acltdtSetBufDataLen: len %zu over the size %zu",
				   len, b->size);
	b->len = len;
	return ACL_SUCCESS;
}

aclError acltdtGetBufDataLen(acltdtBuf buf, size_t *len)
{
	if (!buf)
		return aclmem_arg_null("acltdtGetBufDataLen", "buf");
	if (!len)
		return aclmem_arg_null("acltdtGetBufDataLen", "len");
	*len = ((struct tdt_buf *)buf)->len;
	return ACL_SUCCESS;
}

/* The user-data range [offset, offset + size) of buf's private area. */
static int user_area(const char *fn, const void *buf, const void *p,
		     size_t size, size_t offset, unsigned char **area)
{
	if (!buf)
		return aclmem_arg_null(fn, "buf");
	if (!p)
		return aclmem_arg_null(fn, "dataPtr");
	if (size > BUF_USER_MAX || offset > BUF_USER_MAX - size)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: size %zu at offset %zu, past %d bytes", fn,
				   size, offset, BUF_USER_MAX);
	*area = ((struct tdt_buf *)buf)->user + offset;
	return ACL_SUCCESS;
}

aclError acltdtGetBufUserData(const acltdtBuf buf, void *dataPtr, size_t size,
			      size_t offset)
{
	unsigned char *area = NULL;
	int ret = user_area("acltdtGetBufUserData", buf, dataPtr, size, offset,
			    &area);

	if (!ret)
		memcpy(dataPtr, area, size);
	return ret;
}

aclError acltdtSetBufUserData(acltdtBuf buf, const void *dataPtr, size_t size,
			      size_t offset)
{
	unsigned char *area = NULL;
	int ret = user_area("acltdtSetBufUserData", buf, dataPtr, size, offset,
			    &area);

	if (!ret)
		memcpy(area, dataPtr, size);
	return ret;
}
