// SPDX-License-Identifier: MIT
/*
 * CANN's allocation rules (hicann/runtime src/acl/aclrt_impl/memory.cpp and
 * the aclrtMalloc documentation), mapped onto npu-mem's page policies:
 *
 *  - aclrtMalloc and aclrtMallocCached reserve ALIGN_UP(size, 32) + 32,
 *    aclrtMallocAlign32 ALIGN_UP(size, 32); the 1 GiB policies drop the
 *    +32.  A size that overflows doing so is ACL_ERROR_INVALID_PARAM.
 *  - The policy word is a page policy in its low byte, optionally ORed with
 *    a memory type (LOW/HIGH_BAND_WIDTH: there is one kind of memory here,
 *    so they change nothing) and ACL_MEM_ACCESS_USER_SPACE_READONLY.
 *  - HUGE_FIRST uses normal pages up to 1 MiB and tries huge pages above,
 *    as the CANN driver does.  The P2P variants are the same allocations
 *    (there is one device, so nothing to be peer to) for aclrtMalloc and
 *    aclrtMallocAlign32; aclrtMallocCached does not take them and, like
 *    CANN, treats them as out of range.
 *  - Out of range: huge pages when size >= 2 MiB, otherwise normal pages.
 *    Huge pages are then asked for "huge first", so such a call does not
 *    fail merely for lack of 2 MiB pages.
 *  - acldvppMalloc (CANN's acl_dvpp GetAlignedSize) reserves
 *    ALIGN_UP(size, 32) + 32 and checks only that this does not overflow:
 *    size 0 is taken and reserves 32 bytes.  CANN gives media memory huge
 *    pages; here it is placed as HUGE_FIRST places it.  Its start is page
 *    aligned, past the 128 bytes CANN's media engine needs.
 */
#include "acl/acl_rt.h"
#include "policy.h"

#include <linux/npu_mem.h>

#define ALIGN_PAD	32u	/* DATA_MEMORY_ALIGN_SIZE */
#define PAD_BYTES	32u	/* DATA_MEMORY_PADDING_SIZE */
#define TYPE_BITS	(ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH)

size_t aclmem_policy_granule(uint32_t kpolicy)
{
	/*
	 * HUGE_FIRST buffers are sized in 4 KiB pages (the tail that does not
	 * fill a 2 MiB chunk gets small pages); HUGE_ONLY in 2 MiB chunks.
	 */
	switch (kpolicy) {
	case NPU_MEM_POLICY_HUGE_ONLY:
		return ACLMEM_SZ_2M;
	case NPU_MEM_POLICY_HUGE1G_ONLY:
		return (size_t)1 << 30;
	default:
		return 4096;
	}
}

static uint32_t out_of_range(size_t size)
{
	return size >= ACLMEM_SZ_2M ? NPU_MEM_POLICY_HUGE_FIRST :
				      NPU_MEM_POLICY_NORMAL_ONLY;
}

int aclmem_policy_resolve(enum aclmem_api api, size_t size, uint32_t policy,
			  struct aclmem_alloc_req *req)
{
	uint32_t base = policy & 0xff;
	int known = !(policy & ~(0xffu | TYPE_BITS |
				 ACL_MEM_ACCESS_USER_SPACE_READONLY));
	int huge1g, pad;
	size_t add;

	req->kflags = 0;
	if (api == ACLMEM_API_DVPP_MALLOC) {
		if (size > SIZE_MAX - (ALIGN_PAD - 1 + PAD_BYTES))
			return ACL_ERROR_INVALID_PARAM;
		req->size = (size + ALIGN_PAD - 1 + PAD_BYTES) / ALIGN_PAD *
			    ALIGN_PAD;
		known = 1;
		base = ACL_MEM_MALLOC_HUGE_FIRST;
		goto place;
	}
	if (!size)
		return ACL_ERROR_INVALID_PARAM;

	if (api == ACLMEM_API_MALLOC_HOST) {
		req->size = size;
		req->kpolicy = out_of_range(size);
		return ACL_SUCCESS;
	}
	if (policy & ACL_MEM_ACCESS_USER_SPACE_READONLY)
		req->kflags |= NPU_MEM_ALLOC_READONLY;

	huge1g = known && (base == ACL_MEM_MALLOC_HUGE1G_ONLY ||
			   base == ACL_MEM_MALLOC_HUGE1G_ONLY_P2P);
	pad = api != ACLMEM_API_MALLOC_ALIGN32 && !huge1g;
	add = ALIGN_PAD - 1 + (pad ? PAD_BYTES : 0);
	if (size > SIZE_MAX - add)
		return ACL_ERROR_INVALID_PARAM;
	req->size = (size + add) / ALIGN_PAD * ALIGN_PAD;

	if (known && api == ACLMEM_API_MALLOC_CACHED &&
	    base != ACL_MEM_MALLOC_HUGE_FIRST &&
	    base != ACL_MEM_MALLOC_HUGE_ONLY &&
	    base != ACL_MEM_MALLOC_NORMAL_ONLY &&
	    base != ACL_MEM_MALLOC_HUGE1G_ONLY)
		known = 0;

place:
	switch (known ? base : 0xff) {
	case ACL_MEM_MALLOC_HUGE_FIRST:
	case ACL_MEM_MALLOC_HUGE_FIRST_P2P:
		req->kpolicy = req->size <= ACLMEM_SZ_1M ?
			       NPU_MEM_POLICY_NORMAL_ONLY :
			       NPU_MEM_POLICY_HUGE_FIRST;
		break;
	case ACL_MEM_MALLOC_HUGE_ONLY:
	case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
		req->kpolicy = NPU_MEM_POLICY_HUGE_ONLY;
		break;
	case ACL_MEM_MALLOC_NORMAL_ONLY:
	case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
		req->kpolicy = NPU_MEM_POLICY_NORMAL_ONLY;
		break;
	case ACL_MEM_MALLOC_HUGE1G_ONLY:
	case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
		req->kpolicy = NPU_MEM_POLICY_HUGE1G_ONLY;
		break;
	default:
		req->kpolicy = out_of_range(size);
		break;
	}
	return ACL_SUCCESS;
}
