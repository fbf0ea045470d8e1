/* SPDX-License-Identifier: MIT */
/*
 * CANN's virtual-memory calls (aclrtReserveMemAddress, aclrtMallocPhysical,
 * aclrtMapMem...): what the rest of the library needs to know of them.
 *
 * A reservation is address space only (an anonymous PROT_NONE mapping);
 * a physical handle is one npu-mem buffer; a piece is a handle's pages
 * (or a granularity-aligned part of them) mapped at an address inside a
 * reservation.  Pieces are device memory for memcpy, memset, attributes
 * and the like, found through aclmem_vmm_lookup(), which memory.c's
 * lookups consult for addresses outside their own buffers.
 */
#ifndef ACLMEM_VMM_H
#define ACLMEM_VMM_H

#include <stddef.h>

#include "memory.h"

/*
 * Where [p, p + len) lies among the mapped pieces: INSIDE when every byte
 * is in pieces that follow each other without a gap and none of them has
 * ACL_RT_MEM_ACCESS_FLAGS_NONE (out describes the first: its handle, the
 * offset in it; readonly if any is read-only); OVERRUN when p is inside a
 * reservation but the range is not wholly usable; NONE when p is in no
 * reservation.
 */
enum aclmem_lookup aclmem_vmm_lookup(const void *p, size_t len,
				     struct aclmem_range *out);

/* The piece holding p: its start and size; ACL_SUCCESS or 107000. */
int aclmem_vmm_piece_range(const void *p, void **base, size_t *size);

#endif /* ACLMEM_VMM_H */
