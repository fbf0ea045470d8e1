// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's limits: the parameters an administrator sets (max_bytes,
 * reserve_bytes, writable at run time under
 * /sys/module/npu_mem/parameters/) and what the rest of the module reads
 * of them.  Nothing here calls into the rest of the module.
 */
#include <linux/mm.h>
#include <linux/moduleparam.h>

#include "npu_mem.h"

static unsigned long max_bytes;
module_param(max_bytes, ulong, 0644);
MODULE_PARM_DESC(max_bytes,
		 "Cap on bytes in npu-mem buffers, all processes together (0: 3/4 of RAM)");
static unsigned long reserve_bytes;
module_param(reserve_bytes, ulong, 0644);
MODULE_PARM_DESC(reserve_bytes,
		 "Memory an allocation must leave available to the rest of the system (0: 1/16 of RAM)");

/*
 * Pinned memory cannot be reclaimed, and unmapped buffers count in no
 * process's OOM score: by default a quarter of RAM stays out of reach, so
 * the system keeps working when every buffer is taken.  Pinning more is
 * the administrator's choice (max_bytes, at most all of RAM).
 */
u64 npu_mem_limit_bytes(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	u64 cap = READ_ONCE(max_bytes);

	if (!cap)
		return ram / 4 * 3;
	return min(cap, ram);
}

/* What MemAvailable must still hold after an allocation. */
u64 npu_mem_reserve_bytes(void)
{
	u64 reserve = READ_ONCE(reserve_bytes);

	return reserve ? reserve : ((u64)totalram_pages() << PAGE_SHIFT) / 16;
}

/* The largest ALLOC: the cap, and page counts that fit the UAPI's __u32. */
u64 npu_mem_max_alloc(void)
{
	return min_t(u64, npu_mem_limit_bytes(), NPU_MEM_MAX_ALLOC);
}
