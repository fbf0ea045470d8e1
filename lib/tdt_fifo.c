// SPDX-License-Identifier: MIT
/*
 * The bounded FIFO of TDT channels and queues (tdt.h).  One mutex and one
 * condition per FIFO: every change broadcasts, and each waiter checks its
 * own condition again, so pushers and poppers need no separate
 * conditions.  Destroy counts the callers still inside (a waiter that a
 * stop woke has yet to take the lock back) and frees nothing before they
 * have left.
 */
#include <errno.h>
#include <stdlib.h>

#include "acl/acl_base.h"
#include "deadline.h"
#include "tdt.h"

void tdt_fifo_init(struct tdt_fifo *f, size_t cap)
{
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->changed, NULL);
	f->head = f->tail = NULL;
	f->count = 0;
	f->cap = cap;
	f->inside = 0;
	f->stopped = false;
}

/* Under f->lock: wait until ready(f) or the timeout; ACL_SUCCESS or code. */
static int wait_for(struct tdt_fifo *f, bool (*ready)(struct tdt_fifo *f),
		    int32_t timeout, int code)
{
	struct timespec dl;
	const struct timespec *d = aclmem_deadline_ms(&dl, timeout);

	while (!f->stopped && !ready(f)) {
		if (!timeout)
			return code;
		if (aclmem_cond_wait_until(&f->changed, &f->lock, d) == ETIMEDOUT &&
		    !f->stopped && !ready(f))
			return code;
	}
	return f->stopped ? ACL_ERROR_FAILURE : ACL_SUCCESS;
}

static bool has_room(struct tdt_fifo *f)
{
	return f->count < f->cap;
}

static bool has_entry(struct tdt_fifo *f)
{
	return f->count > 0;
}

static void leave(struct tdt_fifo *f)
{
	f->inside--;
	if (f->stopped)
		pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
}

int tdt_fifo_push(struct tdt_fifo *f, struct tdt_entry *e, int32_t timeout,
		  int full)
{
	int ret;

	if (timeout < -1)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&f->lock);
	f->inside++;
	ret = wait_for(f, has_room, timeout, full);
	if (ret == ACL_SUCCESS) {
		e->next = NULL;
		if (f->tail)
			f->tail->next = e;
		else
			f->head = e;
		f->tail = e;
		f->count++;
		pthread_cond_broadcast(&f->changed);
	}
	leave(f);
	return ret;
}

int tdt_fifo_pop(struct tdt_fifo *f, struct tdt_entry **out, int32_t timeout,
		 int empty, int (*fits)(struct tdt_entry *e, void *arg),
		 void *arg)
{
	struct tdt_entry *e;
	int ret;

	if (timeout < -1)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&f->lock);
	f->inside++;
	ret = wait_for(f, has_entry, timeout, empty);
	if (ret == ACL_SUCCESS && fits)
		ret = fits(f->head, arg);
	if (ret == ACL_SUCCESS) {
		e = f->head;
		f->head = e->next;
		if (!f->head)
			f->tail = NULL;
		f->count--;
		e->next = NULL;
		*out = e;
		pthread_cond_broadcast(&f->changed);
	}
	leave(f);
	return ret;
}

size_t tdt_fifo_size(struct tdt_fifo *f)
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->count;
	pthread_mutex_unlock(&f->lock);
	return n;
}

void tdt_fifo_stop(struct tdt_fifo *f)
{
	pthread_mutex_lock(&f->lock);
	f->stopped = true;
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
}

void tdt_fifo_destroy(struct tdt_fifo *f)
{
	struct tdt_entry *e, *next;

	pthread_mutex_lock(&f->lock);
	f->stopped = true;
	pthread_cond_broadcast(&f->changed);
	while (f->inside)
		pthread_cond_wait(&f->changed, &f->lock);
	e = f->head;
	f->head = f->tail = NULL;
	f->count = 0;
	pthread_mutex_unlock(&f->lock);
	for (; e; e = next) {
		next = e->next;
		e->release(e);
	}
	pthread_cond_destroy(&f->changed);
	pthread_mutex_destroy(&f->lock);
}

void tdt_fifo_forget(struct tdt_fifo *f)
{
	/* Its lock or condition may be mid-use by a thread that is gone. */
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->changed, NULL);
	f->inside = 0;
	tdt_fifo_destroy(f);
}
