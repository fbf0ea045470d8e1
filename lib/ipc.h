/* SPDX-License-Identifier: MIT */
/*
 * Small objects shared between processes (notifies, IPC events): one page
 * of memory another process can map by a key string.
 *
 * The page is a memfd of the exporting process; the key names it as
 * "aclmem:<pid>:<fd>:<nonce>" and the importer opens /proc/<pid>/fd/<fd>.
 * The kernel decides who may do that (the same user, or a privileged one:
 * ptrace_may_access), so the boundary between users is the kernel's.  The
 * list of importing pids that CANN's *SetImportPid calls keep is checked by
 * the importing library, as a guard against mistakes, not against a
 * process of the same user (which could read the exporter's memory anyway).
 * The nonce tells a reused fd number from the page the key was made for.
 */
#ifndef ACLMEM_IPC_H
#define ACLMEM_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACLMEM_IPC_MAX_PIDS	64
#define ACLMEM_IPC_KEY_LEN	64	/* with the NUL; CANN's keys fit 65 */

enum aclmem_ipc_kind {
	ACLMEM_IPC_NOTIFY = 1,
	ACLMEM_IPC_EVENT = 2,
};

/* The shared page: a header, then the object's own words. */
struct aclmem_ipc_page {
	uint32_t magic;
	uint32_t kind;
	uint8_t nonce[16];
	int32_t owner;			/* exporting pid */
	uint32_t any_pid;		/* pid validation disabled */
	uint32_t npids;
	int32_t pids[ACLMEM_IPC_MAX_PIDS];
	/* The object's state, shared: futex words and counters. */
	_Alignas(64) uint32_t word[16];
	uint64_t seq[8];
};

struct aclmem_ipc {
	struct aclmem_ipc_page *page;
	int fd;				/* the memfd, -1 in an importer */
};

/* Make a page of this kind: ACL code. */
int aclmem_ipc_create(enum aclmem_ipc_kind kind, struct aclmem_ipc *ipc);

/* Unmap (and close the memfd of) a page. */
void aclmem_ipc_destroy(struct aclmem_ipc *ipc);

/* The key naming the page; len must hold ACLMEM_IPC_KEY_LEN: ACL code. */
int aclmem_ipc_key(const struct aclmem_ipc *ipc, char *key, size_t len);

/* Add pids allowed to import: ACL code (ACL_ERROR_RT_OVER_LIMIT if full). */
int aclmem_ipc_allow(struct aclmem_ipc *ipc, const int32_t *pid, size_t num);

/*
 * Map the page a key names, of this kind: ACL code.  A malformed key, or
 * one whose page is gone or of another kind, is ACL_ERROR_RT_PARAM_INVALID;
 * an importer the exporter did not allow (and that the kernel would let
 * in) is ACL_ERROR_RT_NO_PERMISSION, as is one the kernel refuses.
 */
int aclmem_ipc_open(enum aclmem_ipc_kind kind, const char *key,
		    struct aclmem_ipc *ipc);

/* Futex wait on a shared word while it equals val, up to ns (< 0: 10 ms). */
void aclmem_ipc_wait(uint32_t *word, uint32_t val, long ns);
void aclmem_ipc_wake(uint32_t *word);

#endif /* ACLMEM_IPC_H */
