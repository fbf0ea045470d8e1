/* SPDX-License-Identifier: MIT */
/*
 * Events: points in a stream's work that the host or other streams can
 * wait for and time.  Each belongs to the context current at its creation.
 */
#ifndef ACLMEM_EVENT_H
#define ACLMEM_EVENT_H

struct aclmem_ctx;

/* Destroy every event of a dying context (its streams are gone already). */
void aclmem_events_destroy_ctx(struct aclmem_ctx *ctx);

void aclmem_events_atfork_child(void);

#endif /* ACLMEM_EVENT_H */
