/* SPDX-License-Identifier: MIT */
/*
 * Deadlines for the library's waits.  They are CLOCK_REALTIME instants, the
 * clock pthread_cond_timedwait() measures with a default condition, so one
 * deadline serves a whole wait however often it wakes.  Elapsed times and
 * event stamps are CLOCK_MONOTONIC nanoseconds (aclmem_now_ns()).
 */
#ifndef ACLMEM_DEADLINE_H
#define ACLMEM_DEADLINE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define ACLMEM_NS_PER_SEC	1000000000L

/* Now plus ms milliseconds and ns nanoseconds. */
static inline void aclmem_deadline_in(struct timespec *dl, long ms, long ns)
{
	clock_gettime(CLOCK_REALTIME, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (ms % 1000) * 1000000L + ns;
	while (dl->tv_nsec >= ACLMEM_NS_PER_SEC) {
		dl->tv_sec++;
		dl->tv_nsec -= ACLMEM_NS_PER_SEC;
	}
}

/* The deadline of a timeout in ms, < 0 for ever: dl, filled, or NULL. */
static inline const struct timespec *aclmem_deadline_ms(struct timespec *dl,
							 long ms)
{
	if (ms < 0)
		return NULL;
	aclmem_deadline_in(dl, ms, 0);
	return dl;
}

static inline bool aclmem_deadline_before(const struct timespec *a,
					  const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static inline bool aclmem_deadline_passed(const struct timespec *dl)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return !aclmem_deadline_before(&now, dl);
}

/*
 * Wait on cond until it is signalled or dl passes (NULL: no deadline):
 * pthread_cond_timedwait()'s answer, ETIMEDOUT once dl has passed.
 */
static inline int aclmem_cond_wait_until(pthread_cond_t *cond,
					 pthread_mutex_t *lock,
					 const struct timespec *dl)
{
	if (!dl)
		return pthread_cond_wait(cond, lock);
	return pthread_cond_timedwait(cond, lock, dl);
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t aclmem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * ACLMEM_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif /* ACLMEM_DEADLINE_H */
