/* SPDX-License-Identifier: MIT */
/*
 * Buffers and the table of live ones.
 *
 * A buffer is one npu-mem handle mapped once, whole, into the process; the
 * address of that mapping is the device pointer ACL hands out.  The table
 * maps start addresses to buffers so that range calls can take any pointer
 * inside a live buffer.  A buffer's "end" for those calls is the size ACL
 * reserved (CANN's rounding), not the page-rounded size behind it, so
 * behaviour does not depend on the page policy.
 *
 * A freed buffer leaves the table at once; it is then either released
 * (unmapped and freed in the driver) or, if the pool takes it, kept mapped
 * for reuse by a later allocation of the same class.
 */
#ifndef ACLMEM_MEMORY_H
#define ACLMEM_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addrtree.h"
#include "policy.h"

enum aclmem_buf_kind {
	ACLMEM_BUF_DEVICE = 1,	/* aclrtMalloc* */
	ACLMEM_BUF_HOST = 2,	/* aclrtMallocHost */
};

struct aclmem_buf {
	struct addrtree_node node;	/* key: start address */
	void *addr;			/* start of the mapping */
	size_t size;			/* bytes reserved by ACL's rounding */
	size_t map_len;			/* bytes mapped: the driver's size */
	uint32_t handle;
	uint32_t kpolicy;		/* enum npu_mem_policy asked for */
	uint32_t kflags;		/* NPU_MEM_ALLOC_* asked for */
	uint32_t page_size;		/* finest page size backing it */
	int32_t device;			/* the NPU it was allocated for */
	uint8_t kind;			/* enum aclmem_buf_kind */
	uint8_t share;			/* ACLMEM_SHARE_*: IPC keys (ipcmem.c) */
	bool dvpp;			/* from acldvppMalloc: acldvppFree's only */
	/* pool bookkeeping (pool.c), meaningless while in the table */
	size_t pool_class;		/* size class it was allocated for */
	struct aclmem_buf *cls_prev, *cls_next;
	struct aclmem_buf *lru_prev, *lru_next;
};

/*
 * aclmem_buf.share.  A buffer keys were made for is never pooled: other
 * processes may map it until they close it, so its pages must not be
 * handed to another allocation here.  An imported buffer is another
 * process's allocation: aclrtFree refuses it, aclrtIpcMemClose frees it.
 */
#define ACLMEM_SHARE_EXPORTED	1
#define ACLMEM_SHARE_IMPORTED	2

/* What a range call learns about the buffer a range lies in. */
struct aclmem_range {
	uint32_t handle;
	uint64_t offset;		/* from the start of the buffer */
	uint32_t page_size;
	int32_t device;			/* the NPU the buffer is for */
	uint8_t kind;
	bool readonly;
	bool dvpp;			/* media memory (acldvppMalloc) */
};

/*
 * Allocate for an ACL call; ACL code.  The current device is checked, and
 * the memory is that device's (its NUMA node's, by the driver).
 */
int aclmem_mem_alloc(enum aclmem_api api, void **ptr, size_t size,
		     uint32_t policy);
/* The same for device (a valid id), or the current device's when -1. */
int aclmem_mem_alloc_on(enum aclmem_api api, void **ptr, size_t size,
			uint32_t policy, int32_t device);

/*
 * Free a buffer of this kind by its start address; ACL code.  Media memory
 * (acldvppMalloc) is freed only by aclmem_mem_free_dvpp, and that frees
 * nothing else.
 */
int aclmem_mem_free(void *ptr, enum aclmem_buf_kind kind);
int aclmem_mem_free_dvpp(void *ptr);

enum aclmem_lookup {
	ACLMEM_RANGE_INSIDE,	/* [p, p + len) lies inside one live buffer */
	ACLMEM_RANGE_NONE,	/* p is in no live buffer */
	ACLMEM_RANGE_OVERRUN,	/* p is in a buffer, p + len runs past its end */
};

/* Where [p, p + len) lies; *out (may be NULL) filled when INSIDE. */
enum aclmem_lookup aclmem_mem_lookup(const void *p, size_t len,
				     struct aclmem_range *out);

/*
 * Look up [p, p + len) (len may be 0: then just p): ACL_SUCCESS if it lies
 * inside one live buffer of one of the kinds in kinds (a mask), else
 * ACL_ERROR_RT_PARAM_INVALID.  *out may be NULL.
 */
int aclmem_mem_range(const void *p, size_t len, unsigned int kinds,
		     struct aclmem_range *out);

/*
 * IPC (ipcmem.c).  aclmem_mem_share: [p, p + len) inside one live device
 * buffer of this process's own (not imported): fill *out;
 * ACL_ERROR_RT_PARAM_INVALID otherwise.  aclmem_mem_share_commit, once the
 * key is made: if that buffer (handle) still holds the range, mark it
 * exported (a failed export leaves it poolable) and record(arg) under the
 * table's lock, so that the buffer's free, which forgets its keys
 * (exported_freed) after taking it out of the table, comes wholly after
 * the key is recorded; else ACL_ERROR_RT_PARAM_INVALID (freed meanwhile).
 * aclmem_mem_insert: put an imported buffer (share = ACLMEM_SHARE_IMPORTED,
 * mapped) in the table: ACL code.  aclmem_mem_take: remove the imported
 * buffer starting at addr from the table and return it (NULL if there is
 * none) for aclmem_buf_release.
 */
int aclmem_mem_share(const void *p, size_t len, struct aclmem_range *out);
int aclmem_mem_share_commit(const void *p, size_t len, uint32_t handle,
			    void (*record)(void *arg), void *arg);
int aclmem_mem_insert(struct aclmem_buf *b);
struct aclmem_buf *aclmem_mem_take(void *addr);

/* Unmap and free a buffer in the driver (pool eviction, teardown). */
void aclmem_buf_release(struct aclmem_buf *buf);

/*
 * What is built on the buffer table (IPC keys, host registrations, the
 * virtual-memory API) hears of frees, and answers for addresses outside
 * the table, through the hooks it registers here (ACLMEM_MEM_EXT: at
 * load, before any thread), so that memory.c names none of them.  Any hook may
 * be NULL.  Hooks run without the table's lock held.
 */
struct aclmem_mem_ext {
	/* A buffer this process exported is freed (FREE revokes its keys). */
	void (*exported_freed)(uint32_t handle);
	/* An aclrtMallocHost buffer is freed. */
	void (*host_freed)(void *addr, size_t len);
	/*
	 * Where [p, p + len) lies among addresses the table does not hold:
	 * as aclmem_mem_lookup(); NONE when they are not this extension's.
	 */
	enum aclmem_lookup (*lookup)(const void *p, size_t len,
				     struct aclmem_range *out);
	/* The piece of memory holding p: ACL_SUCCESS or 107000. */
	int (*piece_range)(const void *p, void **base, size_t *size);
	/*
	 * A device buffer was allocated for device (made or taken from the
	 * pool) and is in the table; before its pointer is handed out.
	 */
	void (*allocated)(uint32_t handle, int32_t device);
};

void aclmem_mem_ext_register(const struct aclmem_mem_ext *ext);

/*
 * fn(handle, arg) for every device buffer of device this process holds:
 * in the table (imported ones too) and kept by the pool.  Under the
 * table's lock, shared: no buffer is freed meanwhile, so each handle is
 * live while fn runs; fn must not call back into this file.
 */
void aclmem_mem_foreach_device(int32_t device,
			       void (*fn)(uint32_t handle, void *arg),
			       void *arg);

/* Defines and registers, at load, the extension of this file. */
#define ACLMEM_MEM_EXT(...)						\
	static const struct aclmem_mem_ext aclmem_this_ext = { __VA_ARGS__ }; \
	__attribute__((constructor)) static void aclmem_this_ext_init(void) \
	{								\
		aclmem_mem_ext_register(&aclmem_this_ext);		\
	}

#endif /* ACLMEM_MEMORY_H */
