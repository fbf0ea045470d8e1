/* SPDX-License-Identifier: MIT */
/*
 * Peer access between devices (lib/peer.c), for the calls that copy
 * between buffers of two devices and for IPC imports that enable it.
 */
#ifndef ACLMEM_PEER_H
#define ACLMEM_PEER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Whether memory of devices a and b may meet in one copy: the same
 * device, or peer access enabled between them (either way round).
 */
bool aclmem_peer_copy_allowed(int32_t a, int32_t b);

/*
 * Enable access of device dev to peer's memory, as aclrtDeviceEnablePeerAccess
 * does (an IPC import with ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS):
 * it cannot fail, and enabling again changes nothing.
 */
void aclmem_peer_enable(int32_t dev, int32_t peer);

#endif /* ACLMEM_PEER_H */
