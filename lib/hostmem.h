/* SPDX-License-Identifier: MIT */
/*
 * Whether ordinary host memory (not an ACL buffer) can be read, and
 * written, without a fault: the copies ask before they touch it.
 */
#ifndef ACLMEM_HOSTMEM_H
#define ACLMEM_HOSTMEM_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Is every byte of [p, p + len) mapped readable (and, if write, writable)?
 * True where the process may not find out (seccomp), so a refusal is
 * always a fault avoided.
 */
bool aclmem_host_usable(const void *p, size_t len, bool write);

#endif
