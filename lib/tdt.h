/* SPDX-License-Identifier: MIT */
/*
 * The bounded FIFO under TDT channels (tdt.c) and TDT queues
 * (tdt_queue.c): entries that the caller allocated, linked in order, at
 * most cap of them.  A push or pop waits under CANN's timeout convention
 * (-1 for ever, 0 not at all, otherwise milliseconds); a stopped FIFO
 * wakes every waiter and refuses every later push and pop with
 * ACL_ERROR_FAILURE.  The FIFO takes over a pushed entry and hands a
 * popped one back; whatever is left at tdt_fifo_destroy() goes to its
 * release.
 */
#ifndef ACLMEM_TDT_H
#define ACLMEM_TDT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tdt_entry {
	struct tdt_entry *next;
	void (*release)(struct tdt_entry *e);
};

struct tdt_fifo {
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* an entry came or went, or stop */
	struct tdt_entry *head, *tail;
	size_t count, cap;
	unsigned int inside;		/* callers in push, pop, size */
	bool stopped;
};

void tdt_fifo_init(struct tdt_fifo *f, size_t cap);

/*
 * Wait for room and append e: ACL_SUCCESS, full (the caller's code for a
 * full FIFO at the timeout), ACL_ERROR_FAILURE once stopped (e is then
 * still the caller's), ACL_ERROR_INVALID_PARAM for a timeout below -1.
 */
int tdt_fifo_push(struct tdt_fifo *f, struct tdt_entry *e, int32_t timeout,
		  int full);

/*
 * Wait for the oldest entry; fits, when given, may refuse it (a nonzero
 * ACL code, which is returned, and the entry stays first).
 */
int tdt_fifo_pop(struct tdt_fifo *f, struct tdt_entry **out, int32_t timeout,
		 int empty, int (*fits)(struct tdt_entry *e, void *arg),
		 void *arg);

size_t tdt_fifo_size(struct tdt_fifo *f);

/* Stop: wake every waiter, refuse what comes later. */
void tdt_fifo_stop(struct tdt_fifo *f);

/* Stop, wait for the callers inside to leave, release what is left. */
void tdt_fifo_destroy(struct tdt_fifo *f);

/*
 * In the child of a fork() that held the owner's lock over it: release
 * what is left.  The callers inside were the parent's other threads,
 * which did not come along, so nobody is waited for.
 */
void tdt_fifo_forget(struct tdt_fifo *f);

#endif /* ACLMEM_TDT_H */
