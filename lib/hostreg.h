/* SPDX-License-Identifier: MIT */
/*
 * Registered host memory (aclrtHostRegister*, aclrtHostUnregister,
 * aclrtHostGetDevicePointer) over the driver's HOST_REGISTER.
 *
 * Locking: one mutex of this file, taken after the buffer table's lock and
 * never held while calling into memory.c (see aclmem_mem_atfork_prepare).
 */
#ifndef ACLMEM_HOSTREG_H
#define ACLMEM_HOSTREG_H

#include <stddef.h>

/* An aclrtMallocHost buffer is freed: drop the registrations inside it. */
void aclmem_hostreg_host_freed(void *addr, size_t len);

/* The device file is being closed (aclFinalize): its pins went with it. */
void aclmem_hostreg_forget_all(void);

/* fork(): called from the buffer table's handlers (memory.c). */
void aclmem_hostreg_atfork_prepare(void);
void aclmem_hostreg_atfork_parent(void);
void aclmem_hostreg_atfork_child(void);

#endif /* ACLMEM_HOSTREG_H */
