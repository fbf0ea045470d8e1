/* SPDX-License-Identifier: MIT */
/*
 * Named callback registries, as CANN's aclrtRegStreamStateCallback,
 * aclrtRegDeviceStateCallback and aclrtSetDeviceTaskAbortCallback keep
 * them: one callback per name; registering a name again replaces it, a
 * NULL callback removes it.
 */
#ifndef ACLMEM_HOOKS_H
#define ACLMEM_HOOKS_H

#include <pthread.h>

#define ACLMEM_HOOK_NAME_MAX	64	/* names longer than this: refused */

struct aclmem_hook;

struct aclmem_hooks {
	pthread_mutex_t lock;
	struct aclmem_hook *head;
};

#define ACLMEM_HOOKS_INIT { PTHREAD_MUTEX_INITIALIZER, NULL }

/* ACL code: 100000 for a NULL, empty or too long name. */
int aclmem_hooks_set(struct aclmem_hooks *h, const char *name, void *fn,
		     void *args);

/*
 * Call each registered callback as call(fn, args, ctx), in registration
 * order, with no lock held (a callback may register or remove others; it
 * sees the set as it was when the calls began).
 */
void aclmem_hooks_call(struct aclmem_hooks *h,
		       void (*call)(void *fn, void *args, void *ctx),
		       void *ctx);

/* The child of a fork(): forget every registration's lock state. */
void aclmem_hooks_atfork_child(struct aclmem_hooks *h);

#endif /* ACLMEM_HOOKS_H */
