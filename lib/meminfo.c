// SPDX-License-Identifier: MIT
/*
 * aclrtGetMemInfo.  The "device" memory is host RAM behind the driver, so
 * the figures are the driver's: total is the most npu-mem may hold
 * (limit_bytes, all of RAM unless capped), free what can still be had now
 * (the smaller of the room left under the cap and the RAM free).
 *
 * Buffers the pool keeps for reuse count as free: the library gives them
 * back to the driver as soon as an allocation would otherwise fail.
 *
 * Attributes: DDR and the generic ones report those figures; HBM ones fall
 * back to DDR, as CANN does on parts without HBM; huge-page ones report
 * whole 2 MiB (or 1 GiB) units, and 0/0 when the driver cannot back buffers
 * with pages of that size; P2P ones are 0/0 (no peer devices).
 */
#include "acl/acl_rt.h"
#include "context.h"
#include "log.h"
#include "meminfo.h"
#include "pool.h"

int aclmem_meminfo_compute(int attr, const struct npu_mem_info *info,
			   size_t *free_bytes, size_t *total_bytes)
{
	uint64_t total = info->limit_bytes, room, unit = 1;

	room = info->allocated_bytes < total ? total - info->allocated_bytes : 0;
	if (room > info->free_ram)
		room = info->free_ram;

	switch (attr) {
	case ACL_DDR_MEM:
	case ACL_HBM_MEM:
	case ACL_DDR_MEM_NORMAL:
	case ACL_HBM_MEM_NORMAL:
	case ACL_MEM_NORMAL:
		unit = 1;
		break;
	case ACL_DDR_MEM_HUGE:
	case ACL_HBM_MEM_HUGE:
	case ACL_MEM_HUGE:
		unit = info->page_sizes & NPU_MEM_PAGE_2M ? NPU_MEM_PAGE_2M : 0;
		break;
	case ACL_HBM_MEM_HUGE1G:
	case ACL_MEM_HUGE1G:
		unit = info->page_sizes & NPU_MEM_PAGE_1G ? NPU_MEM_PAGE_1G : 0;
		break;
	case ACL_DDR_MEM_P2P_HUGE:
	case ACL_DDR_MEM_P2P_NORMAL:
	case ACL_HBM_MEM_P2P_HUGE:
	case ACL_HBM_MEM_P2P_NORMAL:
	case ACL_HBM_MEM_P2P_HUGE1G:
	case ACL_MEM_P2P_NORMAL:
	case ACL_MEM_P2P_HUGE:
	case ACL_MEM_P2P_HUGE1G:
		unit = 0;
		break;
	default:
		return ACL_ERROR_INVALID_PARAM;
	}
	if (!unit) {
		*free_bytes = *total_bytes = 0;
		return ACL_SUCCESS;
	}
	*free_bytes = (size_t)(room / unit * unit);
	*total_bytes = (size_t)(total / unit * unit);
	return ACL_SUCCESS;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
	struct npu_mem_info info;
	struct aclmem_pool *pool;
	size_t f, t, kept;
	int ret;

	if (!free || !total)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetMemInfo: %s is NULL",
				   !free ? "free" : "total");
	ret = aclmem_ctx_require();
	if (!ret)
		ret = aclmem_ctx_info(&info);
	if (ret)
		return aclmem_api_ret("aclrtGetMemInfo", ret);
	pool = aclmem_pool_global();
	pthread_mutex_lock(&pool->lock);
	kept = pool->bytes;
	pthread_mutex_unlock(&pool->lock);
	if (kept > info.allocated_bytes)
		kept = info.allocated_bytes;
	info.allocated_bytes -= kept;
	info.free_ram += kept;
	ret = aclmem_meminfo_compute((int)attr, &info, &f, &t);
	if (ret)
		return aclmem_fail(ret, "aclrtGetMemInfo: unknown attr %d",
				   (int)attr);
	*free = f;
	*total = t;
	return ACL_SUCCESS;
}
