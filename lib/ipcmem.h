/* SPDX-License-Identifier: MIT */
/*
 * Device memory shared between processes by key (aclrtIpcMem*), over the
 * driver's IPC_EXPORT/IPC_SET_PIDS/IPC_IMPORT/IPC_REVOKE.
 *
 * A key string names a 128-bit driver key and the offset of the exported
 * pointer in its buffer: "aclmem:mem:<32 hex digits>:<12 hex digits>",
 * always ACLMEM_IPCMEM_KEY_LEN - 1 characters.  The process keeps a list of
 * the keys it exported (for aclrtIpcMemSetImportPid and aclrtIpcMemClose)
 * and of those it imported (one mapping per key, counted).
 *
 * Locking: one mutex of this file, taken after the buffer table's lock and
 * never held while calling into memory.c (see aclmem_mem_atfork_prepare).
 */
#ifndef ACLMEM_IPCMEM_H
#define ACLMEM_IPCMEM_H

#include <stdint.h>

/* A key's size with its NUL; CANN's key buffers are 65 bytes. */
#define ACLMEM_IPCMEM_KEY_LEN	57

/* A buffer with keys is being freed (its FREE revokes them): forget them. */
void aclmem_ipcmem_buf_freed(uint32_t handle);

/* The device file is being closed (aclFinalize): forget every key. */
void aclmem_ipcmem_forget_all(void);

/* fork(): called from the buffer table's handlers (memory.c). */
void aclmem_ipcmem_atfork_prepare(void);
void aclmem_ipcmem_atfork_parent(void);
void aclmem_ipcmem_atfork_child(void);

#endif /* ACLMEM_IPCMEM_H */
