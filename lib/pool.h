/* SPDX-License-Identifier: MIT */
/*
 * The caching allocator: freed buffers are kept mapped, per (kind, page
 * policy, flags, device, size class), and handed out again instead of going
 * back to the driver, within one cap on the bytes kept for all devices: a
 * buffer is only ever reused for the device it was allocated for (its
 * pages are on that device's node and mapped for it).
 *
 * NPU_MEM_POOL_MAX sets the cap in bytes (suffixes K, M, G; default 256M);
 * 0 or "off" turns the pool off.  Past the cap the least recently freed
 * buffers are released.  The pool is emptied when an allocation fails for
 * lack of memory (which is then retried once, as CANN does), when the device
 * is reset to zero references, and on aclFinalize.  A fork()ed child starts
 * with an empty pool: the parent's buffers are not mapped there.
 *
 * Reused memory is not cleared (CANN's contract does not zero memory); it
 * never leaves the process.  The pool is an object so its logic is tested on
 * the host with fake buffers.
 */
#ifndef ACLMEM_POOL_H
#define ACLMEM_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "memory.h"

#define ACLMEM_POOL_DEFAULT_CAP	((size_t)256 << 20)
#define ACLMEM_POOL_BUCKETS	256

struct aclmem_pool_class;

struct aclmem_pool_stats {
	uint64_t hits;		/* allocations served from the pool */
	uint64_t misses;	/* allocations that went to the driver */
	uint64_t puts;		/* frees kept */
	uint64_t evictions;	/* kept buffers released (cap, trim) */
};

struct aclmem_pool {
	pthread_mutex_t lock;
	size_t cap;		/* bytes; 0: the pool is off */
	size_t bytes;		/* mapped bytes kept now */
	size_t dev_bytes[ACLMEM_DEVICES_MAX];	/* of them, per device */
	size_t count;		/* buffers kept now */
	struct aclmem_buf *lru_head;	/* most recently freed */
	struct aclmem_buf *lru_tail;	/* next to evict */
	struct aclmem_pool_class *buckets[ACLMEM_POOL_BUCKETS];
	struct aclmem_pool_class *spare;	/* the last class to empty */
	void (*release)(struct aclmem_buf *buf);
	struct aclmem_pool_stats stats;
};

/* Parse NPU_MEM_POOL_MAX; NULL or "" gives dflt, junk gives dflt too. */
size_t aclmem_pool_parse_cap(const char *s, size_t dflt);

void aclmem_pool_init(struct aclmem_pool *p, size_t cap,
		      void (*release)(struct aclmem_buf *buf));

/* A kept buffer of this class and device, or NULL.  The caller owns it. */
struct aclmem_buf *aclmem_pool_get(struct aclmem_pool *p, uint8_t kind,
				   uint32_t kpolicy, uint32_t kflags,
				   int32_t device, size_t size_class);

/*
 * Offer a freed buffer: true if kept, false if the caller must release it
 * (pool off, or the buffer alone is above the cap).
 */
bool aclmem_pool_put(struct aclmem_pool *p, struct aclmem_buf *buf);

/* Release kept buffers until at most keep bytes remain; bytes released. */
size_t aclmem_pool_trim(struct aclmem_pool *p, size_t keep);

/* fork() child: drop every kept buffer without touching the driver. */
void aclmem_pool_forget(struct aclmem_pool *p);

/* The process-wide pool (cap from the environment on first use). */
struct aclmem_pool *aclmem_pool_global(void);

#endif /* ACLMEM_POOL_H */
