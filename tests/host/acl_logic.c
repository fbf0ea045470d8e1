// SPDX-License-Identifier: MIT
/*
 * libaclmem's pure logic, on the host: CANN's size rounding and policy rules,
 * errno -> ACL code mapping, GetMemInfo figures, log and pool settings, and
 * the ABI values of the public headers.  Linked with libaclmem.a.
 */
#include <errno.h>
#include <stdint.h>

#include "acltest.h"
#include "acl/acl.h"
#include "../../lib/device.h"
#include "../../lib/log.h"
#include "../../lib/meminfo.h"
#include "../../lib/policy.h"
#include "../../lib/pool.h"

#define MiB ((size_t)1 << 20)

static struct aclmem_alloc_req resolve_ok(enum aclmem_api api, size_t size,
					  uint32_t policy)
{
	struct aclmem_alloc_req r;
	int ret = aclmem_policy_resolve(api, size, policy, &r);

	ck_assert_msg(ret == ACL_SUCCESS, "resolve(%d, %zu, %#x) = %d", api,
		      size, policy, ret);
	return r;
}

START_TEST(rounding_malloc_pads)
{
	static const struct {
		size_t in, out;
	} cases[] = {
		{ 1, 64 }, { 31, 64 }, { 32, 64 }, { 33, 96 }, { 64, 96 },
		{ 100, 160 }, { 4096, 4128 }, { 4065, 4128 }, { 4064, 4096 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, cases[i].in, 0).size,
				  cases[i].out);
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED,
					     cases[i].in, 0).size, cases[i].out);
	}
}
END_TEST

START_TEST(rounding_align32_no_pad)
{
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_ALIGN32, 1, 0).size, 32);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_ALIGN32, 32, 0).size, 32);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_ALIGN32, 33, 0).size, 64);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_ALIGN32, 4096, 2).size, 4096);
}
END_TEST

START_TEST(rounding_huge1g_no_pad)
{
	/* The 1 GiB policies drop the +32, in every allocator. */
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, 100,
				     ACL_MEM_MALLOC_HUGE1G_ONLY).size, 128);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, 100,
				     ACL_MEM_MALLOC_HUGE1G_ONLY_P2P).size, 128);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 100,
				     ACL_MEM_MALLOC_HUGE1G_ONLY).size, 128);
	/* CANN: cached with HUGE1G_ONLY_P2P is unpadded yet out of range. */
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 100,
				     ACL_MEM_MALLOC_HUGE1G_ONLY_P2P).size, 128);
}
END_TEST

/*
 * acldvppMalloc: CANN's ALIGN_UP(size, 32) + 32, size 0 included (CANN's
 * acl layer checks only the overflow), placed as HUGE_FIRST; the policy
 * word is not its to give.
 */
START_TEST(rounding_dvpp)
{
	struct aclmem_alloc_req r;

	ck_assert_uint_eq(resolve_ok(ACLMEM_API_DVPP_MALLOC, 0, 0).size, 32);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_DVPP_MALLOC, 1, 0).size, 64);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_DVPP_MALLOC, 100, 0).size, 160);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_DVPP_MALLOC, 4064, 0).size, 4096);
	r = resolve_ok(ACLMEM_API_DVPP_MALLOC, MiB, ACL_MEM_MALLOC_HUGE_ONLY);
	ck_assert_uint_eq(r.kpolicy, NPU_MEM_POLICY_HUGE_FIRST);
	ck_assert_uint_eq(r.kflags, 0);
	r = resolve_ok(ACLMEM_API_DVPP_MALLOC, 4096,
		       ACL_MEM_ACCESS_USER_SPACE_READONLY);
	ck_assert_uint_eq(r.kpolicy, NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_uint_eq(r.kflags, 0);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_DVPP_MALLOC,
					       SIZE_MAX - 62, 0, &r),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_DVPP_MALLOC, SIZE_MAX - 63,
				     0).size, SIZE_MAX - 31);
}
END_TEST

START_TEST(size_zero_and_overflow)
{
	struct aclmem_alloc_req r;

	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC, 0, 0, &r),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC_HOST, 0, 0, &r),
			 ACL_ERROR_INVALID_PARAM);
	/* +63 overflows for the padded calls, +31 for Align32. */
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC, SIZE_MAX, 0, &r),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC,
					       SIZE_MAX - 62, 0, &r),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC,
					       SIZE_MAX - 63, 0, &r),
			 ACL_SUCCESS);
	ck_assert_uint_eq(r.size, (SIZE_MAX - 63 + 63) / 32 * 32);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC_ALIGN32,
					       SIZE_MAX - 30, 0, &r),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC_ALIGN32,
					       SIZE_MAX - 31, 0, &r),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclmem_policy_resolve(ACLMEM_API_MALLOC_CACHED,
					       SIZE_MAX - 40, 2, &r),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

START_TEST(policy_huge_first_threshold)
{
	/* Normal pages up to 1 MiB reserved, huge first above (CANN driver). */
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, 100, 0).kpolicy,
			  NPU_MEM_POLICY_NORMAL_ONLY);
	/* reserved = ALIGN_UP(size, 32) + 32: 1 MiB exactly for MiB - 32 */
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, MiB - 32, 0).kpolicy,
			  NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, MiB - 31, 0).kpolicy,
			  NPU_MEM_POLICY_HUGE_FIRST);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_ALIGN32, MiB, 0).kpolicy,
			  NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_ALIGN32, MiB + 1, 0).kpolicy,
			  NPU_MEM_POLICY_HUGE_FIRST);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, 64 * MiB,
				     ACL_MEM_MALLOC_HUGE_FIRST_P2P).kpolicy,
			  NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(policy_exact_values)
{
	static const struct {
		uint32_t policy, kpolicy;
	} cases[] = {
		{ ACL_MEM_MALLOC_HUGE_ONLY, NPU_MEM_POLICY_HUGE_ONLY },
		{ ACL_MEM_MALLOC_NORMAL_ONLY, NPU_MEM_POLICY_NORMAL_ONLY },
		{ ACL_MEM_MALLOC_HUGE1G_ONLY, NPU_MEM_POLICY_HUGE1G_ONLY },
		{ ACL_MEM_MALLOC_HUGE_ONLY_P2P, NPU_MEM_POLICY_HUGE_ONLY },
		{ ACL_MEM_MALLOC_NORMAL_ONLY_P2P, NPU_MEM_POLICY_NORMAL_ONLY },
		{ ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, NPU_MEM_POLICY_HUGE1G_ONLY },
	};
	size_t i, sizes[] = { 1, 3 * MiB };
	int j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (j = 0; j < 2; j++)
			ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, sizes[j],
						     cases[i].policy).kpolicy,
					  cases[i].kpolicy);
}
END_TEST

START_TEST(policy_cached_refuses_p2p)
{
	/* aclrtMallocCached takes only 0, 1, 2 and 6; others are out of range. */
	uint32_t p2p[] = { ACL_MEM_MALLOC_HUGE_FIRST_P2P,
			   ACL_MEM_MALLOC_HUGE_ONLY_P2P,
			   ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
			   ACL_MEM_MALLOC_HUGE1G_ONLY_P2P };
	size_t i;

	for (i = 0; i < 4; i++) {
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 4096,
					     p2p[i]).kpolicy,
				  NPU_MEM_POLICY_NORMAL_ONLY);
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 2 * MiB,
					     p2p[i]).kpolicy,
				  NPU_MEM_POLICY_HUGE_FIRST);
	}
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 4096,
				     ACL_MEM_MALLOC_HUGE_ONLY).kpolicy,
			  NPU_MEM_POLICY_HUGE_ONLY);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 4096,
				     ACL_MEM_MALLOC_HUGE1G_ONLY).kpolicy,
			  NPU_MEM_POLICY_HUGE1G_ONLY);
}
END_TEST

START_TEST(policy_out_of_range)
{
	/* Documented rule: >= 2 MiB huge pages, else normal pages. */
	uint32_t bad[] = { 8, 9, 0x42, 0xff, 0x200, 0x80000000u };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, 2 * MiB - 1,
					     bad[i]).kpolicy,
				  NPU_MEM_POLICY_NORMAL_ONLY);
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC, 2 * MiB,
					     bad[i]).kpolicy,
				  NPU_MEM_POLICY_HUGE_FIRST);
		ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_CACHED, 2 * MiB,
					     bad[i]).kpolicy,
				  NPU_MEM_POLICY_HUGE_FIRST);
	}
}
END_TEST

START_TEST(policy_flag_bits)
{
	struct aclmem_alloc_req r;

	r = resolve_ok(ACLMEM_API_MALLOC, 4096, ACL_MEM_MALLOC_NORMAL_ONLY |
		       ACL_MEM_ACCESS_USER_SPACE_READONLY);
	ck_assert_uint_eq(r.kpolicy, NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_uint_eq(r.kflags, NPU_MEM_ALLOC_READONLY);
	r = resolve_ok(ACLMEM_API_MALLOC, 4096, ACL_MEM_MALLOC_HUGE_ONLY |
		       ACL_MEM_TYPE_HIGH_BAND_WIDTH);
	ck_assert_uint_eq(r.kpolicy, NPU_MEM_POLICY_HUGE_ONLY);
	ck_assert_uint_eq(r.kflags, 0);
	r = resolve_ok(ACLMEM_API_MALLOC, 4096, ACL_MEM_MALLOC_HUGE_ONLY |
		       ACL_MEM_TYPE_LOW_BAND_WIDTH);
	ck_assert_uint_eq(r.kpolicy, NPU_MEM_POLICY_HUGE_ONLY);
	r = resolve_ok(ACLMEM_API_MALLOC, 4096, ACL_MEM_MALLOC_NORMAL_ONLY);
	ck_assert_uint_eq(r.kflags, 0);
}
END_TEST

START_TEST(policy_host)
{
	struct aclmem_alloc_req r = resolve_ok(ACLMEM_API_MALLOC_HOST, 100, 0);

	ck_assert_uint_eq(r.size, 100);
	ck_assert_uint_eq(r.kpolicy, NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_uint_eq(resolve_ok(ACLMEM_API_MALLOC_HOST, 2 * MiB, 0).kpolicy,
			  NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(errno_mapping)
{
	ck_assert_int_eq(aclmem_open_errno_to_acl(ENOENT), ACL_ERROR_RT_NO_DEVICE);
	ck_assert_int_eq(aclmem_open_errno_to_acl(ENODEV), ACL_ERROR_RT_NO_DEVICE);
	ck_assert_int_eq(aclmem_open_errno_to_acl(EACCES),
			 ACL_ERROR_RT_NO_PERMISSION);
	ck_assert_int_eq(aclmem_open_errno_to_acl(EPERM),
			 ACL_ERROR_RT_NO_PERMISSION);
	ck_assert_int_eq(aclmem_open_errno_to_acl(EMFILE),
			 ACL_ERROR_RT_DRV_INTERNAL_ERROR);

	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(0), ACL_SUCCESS);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(EINVAL),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(ENOENT),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(ENOMEM),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(E2BIG),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(EOPNOTSUPP),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(ENOTTY),
			 ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(EIO),
			 ACL_ERROR_RT_DRV_INTERNAL_ERROR);
	ck_assert_int_eq(aclmem_ioctl_errno_to_acl(12345),
			 ACL_ERROR_RT_DRV_INTERNAL_ERROR);

	ck_assert_int_eq(aclmem_mmap_errno_to_acl(ENOMEM),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(aclmem_mmap_errno_to_acl(EAGAIN),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	ck_assert_int_eq(aclmem_mmap_errno_to_acl(EINVAL),
			 ACL_ERROR_RT_DRV_INTERNAL_ERROR);
}
END_TEST

START_TEST(page_size_of_buffer)
{
	struct npu_mem_buffer b = { 0 };

	b.normal_pages = 3;
	ck_assert_uint_eq(aclmem_buffer_page_size(&b), 4096);
	b.huge_pages = 1;	/* huge first, with a small-page tail */
	ck_assert_uint_eq(aclmem_buffer_page_size(&b), 2u << 20);
	b.normal_pages = 0;
	ck_assert_uint_eq(aclmem_buffer_page_size(&b), 2u << 20);
	b.huge_pages = 0;
	b.giant_pages = 1;
	ck_assert_uint_eq(aclmem_buffer_page_size(&b), 1u << 30);
}
END_TEST

START_TEST(size_class_granules)
{
	ck_assert_uint_eq(aclmem_policy_granule(NPU_MEM_POLICY_NORMAL_ONLY), 4096);
	ck_assert_uint_eq(aclmem_policy_granule(NPU_MEM_POLICY_HUGE_FIRST), 4096);
	ck_assert_uint_eq(aclmem_policy_granule(NPU_MEM_POLICY_HUGE_ONLY),
			  2 * MiB);
	ck_assert_uint_eq(aclmem_policy_granule(NPU_MEM_POLICY_HUGE1G_ONLY),
			  1024 * MiB);
}
END_TEST

START_TEST(log_levels)
{
	ck_assert_int_eq(aclmem_log_parse(NULL), ACLMEM_LOG_NONE);
	ck_assert_int_eq(aclmem_log_parse(""), ACLMEM_LOG_NONE);
	ck_assert_int_eq(aclmem_log_parse("0"), ACLMEM_LOG_NONE);
	ck_assert_int_eq(aclmem_log_parse("off"), ACLMEM_LOG_NONE);
	ck_assert_int_eq(aclmem_log_parse("error"), ACLMEM_LOG_ERROR);
	ck_assert_int_eq(aclmem_log_parse("ERROR"), ACLMEM_LOG_ERROR);
	ck_assert_int_eq(aclmem_log_parse("1"), ACLMEM_LOG_ERROR);
	ck_assert_int_eq(aclmem_log_parse("warning"), ACLMEM_LOG_WARN);
	ck_assert_int_eq(aclmem_log_parse("info"), ACLMEM_LOG_INFO);
	ck_assert_int_eq(aclmem_log_parse("debug"), ACLMEM_LOG_DEBUG);
	ck_assert_int_eq(aclmem_log_parse("9"), ACLMEM_LOG_DEBUG);
	ck_assert_int_eq(aclmem_log_parse("bogus"), ACLMEM_LOG_NONE);
	ck_assert_int_eq(aclmem_log_parse("12"), ACLMEM_LOG_NONE);
}
END_TEST

START_TEST(pool_cap_setting)
{
	size_t d = 12345;

	ck_assert_uint_eq(aclmem_pool_parse_cap(NULL, d), d);
	ck_assert_uint_eq(aclmem_pool_parse_cap("", d), d);
	ck_assert_uint_eq(aclmem_pool_parse_cap("0", d), 0);
	ck_assert_uint_eq(aclmem_pool_parse_cap("off", d), 0);
	ck_assert_uint_eq(aclmem_pool_parse_cap("4096", d), 4096);
	ck_assert_uint_eq(aclmem_pool_parse_cap("64K", d), 64 << 10);
	ck_assert_uint_eq(aclmem_pool_parse_cap("64M", d), 64 * MiB);
	ck_assert_uint_eq(aclmem_pool_parse_cap("64MiB", d), 64 * MiB);
	ck_assert_uint_eq(aclmem_pool_parse_cap("2g", d), 2048 * MiB);
	ck_assert_uint_eq(aclmem_pool_parse_cap("12x", d), d);
	ck_assert_uint_eq(aclmem_pool_parse_cap("-1", d), d);
	ck_assert_uint_eq(aclmem_pool_parse_cap("99999999999999999999", d), d);
	ck_assert_uint_eq(aclmem_pool_parse_cap("99999999999999G", d), SIZE_MAX);
}
END_TEST

START_TEST(meminfo_figures)
{
	struct npu_mem_info in = { 0 };
	size_t f, t;
	int a;

	in.limit_bytes = 1000 * MiB + 5;
	in.allocated_bytes = 100 * MiB;
	in.free_ram = 2000 * MiB;
	in.page_sizes = NPU_MEM_PAGE_4K | NPU_MEM_PAGE_2M;

	ck_assert_int_eq(aclmem_meminfo_compute(ACL_DDR_MEM, &in, &f, &t), 0);
	ck_assert_uint_eq(t, 1000 * MiB + 5);
	ck_assert_uint_eq(f, 900 * MiB + 5);	/* room under the cap */
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_HBM_MEM, &in, &f, &t), 0);
	ck_assert_uint_eq(t, 1000 * MiB + 5);	/* HBM falls back to DDR */
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_MEM_HUGE, &in, &f, &t), 0);
	ck_assert_uint_eq(t, 1000 * MiB);
	ck_assert_uint_eq(f, 900 * MiB);
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_MEM_HUGE1G, &in, &f, &t), 0);
	ck_assert_uint_eq(t, 0);
	ck_assert_uint_eq(f, 0);
	for (a = ACL_DDR_MEM_P2P_HUGE; a <= ACL_HBM_MEM_P2P_NORMAL; a++) {
		f = t = 1;
		ck_assert_int_eq(aclmem_meminfo_compute(a, &in, &f, &t), 0);
		ck_assert_uint_eq(f + t, 0);
	}
	in.free_ram = 10 * MiB;		/* RAM shorter than the cap's room */
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_MEM_NORMAL, &in, &f, &t), 0);
	ck_assert_uint_eq(f, 10 * MiB);
	in.allocated_bytes = 2000 * MiB;	/* over the cap: no room */
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_MEM_NORMAL, &in, &f, &t), 0);
	ck_assert_uint_eq(f, 0);
	in.page_sizes |= NPU_MEM_PAGE_1G;
	in.allocated_bytes = 0;
	in.free_ram = 3000 * MiB;
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_HBM_MEM_HUGE1G, &in, &f, &t), 0);
	ck_assert_uint_eq(t, 0);	/* 1000 MiB holds no whole GiB */
	ck_assert_int_eq(aclmem_meminfo_compute(ACL_MEM_P2P_HUGE1G + 1, &in,
						&f, &t), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclmem_meminfo_compute(-1, &in, &f, &t),
			 ACL_ERROR_INVALID_PARAM);
}
END_TEST

/* The values are ABI shared with CANN programs: pin every one. */
START_TEST(abi_values)
{
	ck_assert_int_eq(ACL_SUCCESS, 0);
	ck_assert_int_eq(ACL_ERROR_NONE, 0);
	ck_assert_int_eq(ACL_ERROR_INVALID_PARAM, 100000);
	ck_assert_int_eq(ACL_ERROR_UNINITIALIZE, 100001);
	ck_assert_int_eq(ACL_ERROR_REPEAT_INITIALIZE, 100002);
	ck_assert_int_eq(ACL_ERROR_INVALID_FILE, 100003);
	ck_assert_int_eq(ACL_ERROR_REPEAT_FINALIZE, 100037);
	ck_assert_int_eq(ACL_ERROR_BAD_ALLOC, 200000);
	ck_assert_int_eq(ACL_ERROR_API_NOT_SUPPORT, 200001);
	ck_assert_int_eq(ACL_ERROR_INVALID_DEVICE, 200002);
	ck_assert_int_eq(ACL_ERROR_MEMORY_ADDRESS_UNALIGNED, 200003);
	ck_assert_int_eq(ACL_ERROR_FEATURE_UNSUPPORTED, 200006);
	ck_assert_int_eq(ACL_ERROR_STORAGE_OVER_LIMIT, 300000);
	ck_assert_int_eq(ACL_ERROR_INTERNAL_ERROR, 500000);
	ck_assert_int_eq(ACL_ERROR_FAILURE, 500001);
	ck_assert_int_eq(ACL_ERROR_RT_FAILURE, 500003);
	ck_assert_int_eq(ACL_ERROR_DRV_FAILURE, 500004);
	ck_assert_int_eq(ACL_ERROR_RT_PARAM_INVALID, 107000);
	ck_assert_int_eq(ACL_ERROR_RT_INVALID_DEVICEID, 107001);
	ck_assert_int_eq(ACL_ERROR_RT_CONTEXT_NULL, 107002);
	ck_assert_int_eq(ACL_ERROR_RT_INVALID_MEMORY_TYPE, 107016);
	ck_assert_int_eq(ACL_ERROR_RT_INVALID_HANDLE, 107017);
	ck_assert_int_eq(ACL_ERROR_RT_INVALID_MALLOC_TYPE, 107018);
	ck_assert_int_eq(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, 207000);
	ck_assert_int_eq(ACL_ERROR_RT_MEMORY_ALLOCATION, 207001);
	ck_assert_int_eq(ACL_ERROR_RT_MEMORY_FREE, 207002);
	ck_assert_int_eq(ACL_ERROR_RT_NO_DEVICE, 207004);
	ck_assert_int_eq(ACL_ERROR_RT_NO_PERMISSION, 207006);
	ck_assert_int_eq(ACL_ERROR_RT_NO_STREAM_RESOURCE, 207008);
	ck_assert_int_eq(ACL_ERROR_RT_OVER_LIMIT, 207012);
	ck_assert_int_eq(ACL_ERROR_RT_DEVICE_OOM, 207018);
	ck_assert_int_eq(ACL_ERROR_RT_INTERNAL_ERROR, 507000);
	ck_assert_int_eq(ACL_ERROR_RT_DRV_INTERNAL_ERROR, 507899);

	ck_assert_int_eq(ACL_MEM_MALLOC_HUGE_FIRST, 0);
	ck_assert_int_eq(ACL_MEM_MALLOC_HUGE_ONLY, 1);
	ck_assert_int_eq(ACL_MEM_MALLOC_NORMAL_ONLY, 2);
	ck_assert_int_eq(ACL_MEM_MALLOC_HUGE_FIRST_P2P, 3);
	ck_assert_int_eq(ACL_MEM_MALLOC_HUGE_ONLY_P2P, 4);
	ck_assert_int_eq(ACL_MEM_MALLOC_NORMAL_ONLY_P2P, 5);
	ck_assert_int_eq(ACL_MEM_MALLOC_HUGE1G_ONLY, 6);
	ck_assert_int_eq(ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, 7);
	ck_assert_int_eq(ACL_MEM_TYPE_LOW_BAND_WIDTH, 0x100);
	ck_assert_int_eq(ACL_MEM_TYPE_HIGH_BAND_WIDTH, 0x1000);
	ck_assert_int_eq(ACL_MEM_ACCESS_USER_SPACE_READONLY, 0x100000);

	ck_assert_int_eq(ACL_MEMCPY_HOST_TO_HOST, 0);
	ck_assert_int_eq(ACL_MEMCPY_HOST_TO_DEVICE, 1);
	ck_assert_int_eq(ACL_MEMCPY_DEVICE_TO_HOST, 2);
	ck_assert_int_eq(ACL_MEMCPY_DEVICE_TO_DEVICE, 3);
	ck_assert_int_eq(ACL_MEMCPY_DEFAULT, 4);
	ck_assert_int_eq(ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, 5);
	ck_assert_int_eq(ACL_DEVICE, 0);
	ck_assert_int_eq(ACL_HOST, 1);
	ck_assert_int_eq(ACL_MEM_LOCATION_TYPE_HOST, 0);
	ck_assert_int_eq(ACL_MEM_LOCATION_TYPE_DEVICE, 1);
	ck_assert_int_eq(ACL_MEM_LOCATION_TYPE_UNREGISTERED, 2);
	ck_assert_int_eq(ACL_MEM_LOCATION_TYPE_MANAGED, 3);
	ck_assert_int_eq(ACL_MEM_LOCATION_TYPE_HOST_NUMA, 4);

	ck_assert_int_eq(ACL_DDR_MEM, 0);
	ck_assert_int_eq(ACL_HBM_MEM, 1);
	ck_assert_int_eq(ACL_DDR_MEM_HUGE, 2);
	ck_assert_int_eq(ACL_DDR_MEM_NORMAL, 3);
	ck_assert_int_eq(ACL_HBM_MEM_HUGE, 4);
	ck_assert_int_eq(ACL_HBM_MEM_NORMAL, 5);
	ck_assert_int_eq(ACL_DDR_MEM_P2P_HUGE, 6);
	ck_assert_int_eq(ACL_DDR_MEM_P2P_NORMAL, 7);
	ck_assert_int_eq(ACL_HBM_MEM_P2P_HUGE, 8);
	ck_assert_int_eq(ACL_HBM_MEM_P2P_NORMAL, 9);
	ck_assert_int_eq(ACL_HBM_MEM_HUGE1G, 10);
	ck_assert_int_eq(ACL_HBM_MEM_P2P_HUGE1G, 11);
	ck_assert_int_eq(ACL_MEM_NORMAL, 12);
	ck_assert_int_eq(ACL_MEM_HUGE, 13);
	ck_assert_int_eq(ACL_MEM_HUGE1G, 14);
	ck_assert_int_eq(ACL_MEM_P2P_NORMAL, 15);
	ck_assert_int_eq(ACL_MEM_P2P_HUGE, 16);
	ck_assert_int_eq(ACL_MEM_P2P_HUGE1G, 17);

	/* CANN's struct layouts. */
	ck_assert_uint_eq(sizeof(aclrtMemLocation), 8);
	ck_assert_uint_eq(sizeof(aclrtPtrAttributes), 28);
	ck_assert_uint_eq(offsetof(aclrtPtrAttributes, pageSize), 8);
	ck_assert_uint_eq(sizeof(aclError), sizeof(int));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_logic");

	nm_add(s, rounding_malloc_pads, 10);
	nm_add(s, rounding_align32_no_pad, 10);
	nm_add(s, rounding_huge1g_no_pad, 10);
	nm_add(s, rounding_dvpp, 10);
	nm_add(s, size_zero_and_overflow, 10);
	nm_add(s, policy_huge_first_threshold, 10);
	nm_add(s, policy_exact_values, 10);
	nm_add(s, policy_cached_refuses_p2p, 10);
	nm_add(s, policy_out_of_range, 10);
	nm_add(s, policy_flag_bits, 10);
	nm_add(s, policy_host, 10);
	nm_add(s, errno_mapping, 10);
	nm_add(s, page_size_of_buffer, 10);
	nm_add(s, size_class_granules, 10);
	nm_add(s, log_levels, 10);
	nm_add(s, pool_cap_setting, 10);
	nm_add(s, meminfo_figures, 10);
	nm_add(s, abi_values, 10);
	return acltest_run(s);
}
