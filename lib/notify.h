/* SPDX-License-Identifier: MIT */
/*
 * Notifies: flags set and waited for in stream order, shareable with other
 * processes by key.
 */
#ifndef ACLMEM_NOTIFY_H
#define ACLMEM_NOTIFY_H

struct aclmem_ctx;

/* Destroy every notify of a dying context (its streams are gone already). */
void aclmem_notifies_destroy_ctx(struct aclmem_ctx *ctx);

void aclmem_notifies_atfork_child(void);

#endif /* ACLMEM_NOTIFY_H */
