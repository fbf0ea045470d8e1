// SPDX-License-Identifier: MIT
/*
 * Named callback registries: see hooks.h.
 */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_base.h"
#include "hooks.h"

struct aclmem_hook {
	struct aclmem_hook *next;
	char name[ACLMEM_HOOK_NAME_MAX + 1];
	void *fn;
	void *args;
};

int aclmem_hooks_set(struct aclmem_hooks *h, const char *name, void *fn,
		     void *args)
{
	struct aclmem_hook **pp, *p;
	size_t len;

	if (!name)
		return ACL_ERROR_INVALID_PARAM;
	len = strnlen(name, ACLMEM_HOOK_NAME_MAX + 1);
	if (!len || len > ACLMEM_HOOK_NAME_MAX)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&h->lock);
	for (pp = &h->head; (p = *pp); pp = &p->next)
		if (!strcmp(p->name, name))
			break;
	if (!fn) {
		if (p) {
			*pp = p->next;
			free(p);
		}
	} else if (p) {
		p->fn = fn;
		p->args = args;
	} else {
		p = calloc(1, sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&h->lock);
			return ACL_ERROR_RT_MEMORY_ALLOCATION;
		}
		memcpy(p->name, name, len);
		p->fn = fn;
		p->args = args;
		*pp = p;	/* at the end: calls keep registration order */
	}
	pthread_mutex_unlock(&h->lock);
	return ACL_SUCCESS;
}

void aclmem_hooks_call(struct aclmem_hooks *h,
		       void (*call)(void *fn, void *args, void *ctx),
		       void *ctx)
{
	struct { void *fn, *args; } *snap;
	struct aclmem_hook *p;
	size_t n = 0, i;

	pthread_mutex_lock(&h->lock);
	for (p = h->head; p; p = p->next)
		n++;
	snap = n ? calloc(n, sizeof(*snap)) : NULL;
	for (p = h->head, i = 0; snap && p; p = p->next, i++) {
		snap[i].fn = p->fn;
		snap[i].args = p->args;
	}
	pthread_mutex_unlock(&h->lock);
	for (i = 0; snap && i < n; i++)
		call(snap[i].fn, snap[i].args, ctx);
	free(snap);
}

void aclmem_hooks_atfork_child(struct aclmem_hooks *h)
{
	pthread_mutex_init(&h->lock, NULL);
}
