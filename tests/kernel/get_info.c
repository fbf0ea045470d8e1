// SPDX-License-Identifier: GPL-2.0-only
/*
 * get_info: NPU_MEM_IOCTL_GET_INFO.
 *  - ABI 1.0, page sizes (4K and 2M at least, no unknown bits), dev_flags
 *    without unknown bits, total_ram = the kernel's MemTotal, 0 < free_ram <=
 *    total_ram, limit_bytes = max_bytes parameter (at most total_ram) or
 *    3/4 of total_ram when unset, max_alloc = the smaller of limit_bytes and
 *    NPU_MEM_MAX_ALLOC, the reserve_bytes parameter readable;
 *  - the kernel fills every output field (the struct is poisoned with 0xff
 *    first), reserved stays 0, also with a larger struct;
 *  - flags bits and reserved words non-zero: -EINVAL, nothing disturbed;
 *  - counters (allocated_bytes, huge/normal/giant pages, buffers,
 *    client_buffers, client_bytes) move by exactly what this test allocates
 *    and frees, per open file for the client_* ones, shared by dup()ed fds;
 *  - free_ram reflects a large allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "nmtest_util.h"

#define POISON64	0xffffffffffffffffULL
#define POISON32	0xffffffffU

START_TEST(abi_version)
{
	struct npu_mem_info info;
	int fd = nm_open();

	nm_get_info_ok(fd, &info);
	ck_assert_uint_eq(info.abi_major, 1);
	ck_assert_uint_eq(info.abi_minor, 5);
	ck_assert_uint_eq(info.abi_major, NPU_MEM_ABI_MAJOR);
	ck_assert_uint_eq(info.abi_minor, NPU_MEM_ABI_MINOR);
	close(fd);
}
END_TEST

START_TEST(page_sizes_and_dev_flags)
{
	const uint64_t known_pages = NPU_MEM_PAGE_4K | NPU_MEM_PAGE_2M |
				     NPU_MEM_PAGE_1G;
	const uint32_t known_dev = NPU_MEM_DEV_COHERENT | NPU_MEM_DEV_IOMMU |
				   NPU_MEM_DEV_PCI;
	struct npu_mem_info info;
	int fd = nm_open();

	nm_get_info_ok(fd, &info);
	printf("page_sizes %#llx dev_flags %#x\n",
	       (unsigned long long)info.page_sizes, info.dev_flags);
	ck_assert_msg(info.page_sizes & NPU_MEM_PAGE_4K, "no 4K page size");
	ck_assert_msg(info.page_sizes & NPU_MEM_PAGE_2M, "no 2M page size");
	ck_assert_msg(!(info.page_sizes & ~known_pages),
		      "unknown page size bits %#llx",
		      (unsigned long long)(info.page_sizes & ~known_pages));
	ck_assert_msg(!(info.dev_flags & ~known_dev),
		      "unknown dev_flags bits %#x", info.dev_flags & ~known_dev);
	close(fd);
}
END_TEST

START_TEST(memory_totals)
{
	struct npu_mem_info info;
	struct sysinfo si;
	uint64_t param = 0, memtotal;
	int fd = nm_open(), ret;

	nm_get_info_ok(fd, &info);
	ck_assert(sysinfo(&si) == 0);
	memtotal = (uint64_t)si.totalram * si.mem_unit;
	printf("total_ram %llu (sysinfo %llu) free_ram %llu limit_bytes %llu "
	       "max_alloc %llu\n", (unsigned long long)info.total_ram,
	       (unsigned long long)memtotal, (unsigned long long)info.free_ram,
	       (unsigned long long)info.limit_bytes,
	       (unsigned long long)info.max_alloc);
	ck_assert_uint_gt(info.total_ram, 0);
	/* "bytes of RAM the kernel manages": MemTotal, totalram_pages() */
	ck_assert_uint_eq(info.total_ram, memtotal);
	ck_assert_uint_gt(info.free_ram, 0);
	ck_assert_uint_le(info.free_ram, info.total_ram);
	ck_assert_uint_gt(info.limit_bytes, 0);
	ck_assert_uint_gt(info.max_alloc, 0);
	ck_assert_uint_eq(info.total_ram % NM_4K, 0);
	ret = nm_param_get("max_bytes", &param);
	ck_assert_msg(ret == 0, "read " NM_SYSMOD "/parameters/max_bytes: %s",
		      nm_retname(ret));
	/* unset: a quarter of RAM stays out of reach of pinned buffers */
	if (param == 0)
		ck_assert_uint_eq(info.limit_bytes, info.total_ram / 4 * 3);
	else if (param < info.total_ram)
		ck_assert_uint_eq(info.limit_bytes, param);
	else
		ck_assert_uint_eq(info.limit_bytes, info.total_ram);
	ck_assert_uint_eq(info.max_alloc,
			  info.limit_bytes < NPU_MEM_MAX_ALLOC ?
			  info.limit_bytes : NPU_MEM_MAX_ALLOC);
	ret = nm_param_get("reserve_bytes", &param);
	ck_assert_msg(ret == 0, "read " NM_SYSMOD "/parameters/reserve_bytes: "
		      "%s", nm_retname(ret));
	close(fd);
}
END_TEST

static void poison(struct npu_mem_info *i)
{
	memset(i, 0xff, sizeof(*i));
	i->flags = 0;
	i->device = 0;
	i->reserved = 0;
}

/* Every field of a answered with a poisoned struct equals the same field
 * of b answered with a zeroed one (free_ram moves: only sane-checked). */
static void assert_filled(const struct npu_mem_info *a,
			  const struct npu_mem_info *b)
{
#define EQ(f) ck_assert_msg(a->f == b->f, #f ": %llu after poisoning, %llu " \
			    "otherwise: the kernel did not fill it",	\
			    (unsigned long long)a->f, (unsigned long long)b->f)
	EQ(flags);
	EQ(abi_major);
	EQ(abi_minor);
	EQ(dev_flags);
	EQ(page_sizes);
	EQ(total_ram);
	EQ(limit_bytes);
	EQ(max_alloc);
	EQ(allocated_bytes);
	EQ(huge_pages);
	EQ(normal_pages);
	EQ(giant_pages);
	EQ(buffers);
	EQ(client_buffers);
	EQ(client_bytes);
	EQ(retained_bytes);
	EQ(device);
	EQ(device_count);
	EQ(dev_node);
	EQ(dev_pci_domain);
	EQ(dev_pci_bdf);
	EQ(dev_bytes);
	EQ(dev_buffers);
	EQ(dev_node_bytes);
	EQ(zero_reserve_low);
	EQ(zero_reserve_high);
#undef EQ
	ck_assert_uint_ne(a->free_ram, POISON64);
	ck_assert_uint_le(a->free_ram, a->total_ram);
	ck_assert_uint_ge(a->device_count, 1);
	ck_assert_uint_eq(a->reserved, 0);
}

START_TEST(kernel_fills_every_field)
{
	struct npu_mem_info p, z;
	struct npu_mem_alloc a;
	int fd = nm_open();

	/* fresh file: client fields are 0, not left poisoned */
	poison(&p);
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &p));
	nm_get_info_ok(fd, &z);
	assert_filled(&p, &z);
	ck_assert_uint_eq(p.client_buffers, 0);
	ck_assert_uint_eq(p.client_bytes, 0);
	ck_assert_uint_ne(p.abi_major, POISON32);
	ck_assert_uint_ne(p.dev_flags, POISON32);
	/* no 1 GiB pages can exist where the module cannot make them */
	if (!(p.page_sizes & NPU_MEM_PAGE_1G))
		ck_assert_uint_eq(p.giant_pages, 0);

	/* and with a buffer live */
	nm_alloc_ok(fd, 3 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	poison(&p);
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &p));
	nm_get_info_ok(fd, &z);
	assert_filled(&p, &z);
	ck_assert_uint_eq(p.client_buffers, 1);
	ck_assert_uint_eq(p.client_bytes, 3 * NM_4K);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

START_TEST(kernel_fills_every_field_larger_struct)
{
	struct {
		struct npu_mem_info info;
		uint8_t extra[40];
		uint8_t guard[24];
	} big;
	struct npu_mem_info z;
	int fd = nm_open();

	poison(&big.info);
	memset(big.extra, 0, sizeof(big.extra));
	memset(big.guard, 0x5a, sizeof(big.guard));
	nm_assert_ok(nm_ioctl(fd, NM_IOC(NM_IOC_RW, 0,
					 sizeof(big.info) + sizeof(big.extra)),
			      &big));
	nm_get_info_ok(fd, &z);
	assert_filled(&big.info, &z);
	for (size_t i = 0; i < sizeof(big.extra); i++)
		ck_assert_uint_eq(big.extra[i], 0);
	for (size_t i = 0; i < sizeof(big.guard); i++)
		ck_assert_uint_eq(big.guard[i], 0x5a);
	close(fd);
}
END_TEST

START_TEST(flags_nonzero)
{
	struct nm_sentinel s;
	int fd = nm_open();

	nm_sentinel_init(&s, fd);
	for (int bit = 0; bit < 32; bit++) {
		struct npu_mem_info info = { .flags = 1U << bit };

		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info),
			      -EINVAL);
		NM_SENTINEL_CHECK(&s);
	}
	{
		struct npu_mem_info info = { .flags = POISON32 };

		nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info),
			      -EINVAL);
		NM_SENTINEL_CHECK(&s);
	}
	nm_sentinel_fini(&s);
	close(fd);
}
END_TEST

/* reserved, and a device index past device_count, are refused. */
START_TEST(reserved_nonzero)
{
	static const uint32_t vals[] = { 1, 0x80, 1U << 16, 1U << 31,
					 (uint32_t)POISON64 };
	struct npu_mem_info z = { 0 };
	struct nm_sentinel s;
	int fd = nm_open();

	nm_sentinel_init(&s, fd);
	nm_get_info_ok(fd, &z);
	for (int i = 0; i < 2; i++) {
		for (size_t v = 0; v < NM_ARRAY_SIZE(vals); v++) {
			struct npu_mem_info info = { 0 };

			if (i)
				info.reserved = vals[v];
			else
				info.device = vals[v] < z.device_count ?
					      z.device_count : vals[v];
			nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO,
					       &info), -EINVAL);
			NM_SENTINEL_CHECK(&s);
		}
	}
	nm_sentinel_fini(&s);
	close(fd);
}
END_TEST

START_TEST(output_fields_are_not_inputs)
{
	/* Garbage in the output fields is not an error: they are overwritten
	 * (only flags, device and reserved are inputs). */
	struct npu_mem_info p;
	int fd = nm_open();

	poison(&p);
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &p));
	ck_assert_uint_eq(p.abi_major, 1);
	close(fd);
}
END_TEST

/* c += what buffer b adds */
static void expect_add(struct nm_counters *c, const struct npu_mem_alloc *a)
{
	nm_counters_add(c, &a->buf, +1, true);
}

START_TEST(counters_track_allocations)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} reqs[] = {
		{ 1, NPU_MEM_POLICY_NORMAL_ONLY },
		{ NM_MiB + 123, NPU_MEM_POLICY_NORMAL_ONLY },
		{ 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY },
		{ 1, NPU_MEM_POLICY_HUGE_ONLY },
		{ 5 * NM_MiB + 5, NPU_MEM_POLICY_HUGE_FIRST },
		{ 7 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST },
	};
	struct npu_mem_alloc a[NM_ARRAY_SIZE(reqs)];
	struct nm_counters start, expect, other_start;
	int fd = nm_open(), other = nm_open();

	nm_counters(fd, &start);
	nm_counters(other, &other_start);
	ck_assert_uint_eq(start.client_buffers, 0);
	ck_assert_uint_eq(start.client_bytes, 0);
	expect = start;
	for (size_t i = 0; i < NM_ARRAY_SIZE(reqs); i++) {
		nm_alloc_ok(fd, reqs[i].size, reqs[i].policy, 0, &a[i]);
		nm_assert_buffer_sane(reqs[i].size, reqs[i].policy, 0,
				      &a[i].buf);
		expect_add(&expect, &a[i]);
		nm_assert_counters_now(fd, &expect);
		/* another open file sees the global counters move, not its
		 * own client fields */
		{
			struct nm_counters o;

			nm_counters(other, &o);
			nm_assert_global_eq(&expect, &o);
			ck_assert_uint_eq(o.client_buffers, 0);
			ck_assert_uint_eq(o.client_bytes, 0);
		}
	}
	/* free in a different order */
	for (size_t k = 0; k < NM_ARRAY_SIZE(reqs); k++) {
		size_t i = (k * 5 + 3) % NM_ARRAY_SIZE(reqs);

		nm_free_ok(fd, a[i].handle);
		nm_counters_add(&expect, &a[i].buf, -1, true);
		nm_assert_counters_now(fd, &expect);
	}
	nm_assert_counters_now(fd, &start);
	nm_assert_counters_now(other, &other_start);
	close(fd);
	close(other);
}
END_TEST

START_TEST(counters_per_open_file)
{
	struct npu_mem_alloc a1, a2, a3;
	struct nm_counters s1, c1, c2;
	int f1 = nm_open(), f2 = nm_open(), d1;

	nm_counters(f1, &s1);
	nm_alloc_ok(f1, 8 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a1);
	nm_alloc_ok(f2, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0, &a2);
	nm_alloc_ok(f2, NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0, &a3);
	nm_counters(f1, &c1);
	nm_counters(f2, &c2);
	nm_assert_global_eq(&c1, &c2);
	ck_assert_uint_eq(c1.client_buffers, 1);
	ck_assert_uint_eq(c1.client_bytes, 8 * NM_4K);
	ck_assert_uint_eq(c2.client_buffers, 2);
	ck_assert_uint_eq(c2.client_bytes, NM_2M + NM_4K);
	ck_assert_uint_eq(c1.buffers, s1.buffers + 3);
	ck_assert_uint_eq(c1.allocated_bytes,
			  s1.allocated_bytes + 8 * NM_4K + NM_2M + NM_4K);

	/* a dup()ed descriptor is the same open file: same client */
	d1 = dup(f1);
	ck_assert_int_ge(d1, 0);
	{
		struct nm_counters cd;

		nm_counters(d1, &cd);
		nm_assert_counters_eq(&c1, &cd);
	}
	close(f1);		/* d1 keeps the client alive */
	nm_assert_counters_now(d1, &c1);
	close(d1);		/* now a1 is gone */
	{
		struct nm_counters after;

		nm_counters(f2, &after);
		ck_assert_uint_eq(after.buffers, c2.buffers - 1);
		ck_assert_uint_eq(after.allocated_bytes,
				  c2.allocated_bytes - 8 * NM_4K);
		ck_assert_uint_eq(after.normal_pages, c2.normal_pages - 8);
		ck_assert_uint_eq(after.client_buffers, 2);
	}
	close(f2);
	f1 = nm_open();
	{
		struct nm_counters end;

		nm_counters(f1, &end);
		nm_assert_counters_eq(&s1, &end);
	}
	close(f1);
}
END_TEST

START_TEST(free_ram_reflects_allocation)
{
	const uint64_t size = 256 * NM_MiB;
	struct npu_mem_info before, during, after;
	struct npu_mem_alloc a;
	int fd = nm_open();

	nm_get_info_ok(fd, &before);
	if (before.free_ram < 2 * size) {
		printf("only %llu bytes free: using a smaller buffer\n",
		       (unsigned long long)before.free_ram);
	}
	{
		uint64_t sz = before.free_ram < 2 * size ? before.free_ram / 4 :
							   size;

		sz &= ~(NM_4K - 1);
		nm_alloc_ok(fd, sz, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
		nm_get_info_ok(fd, &during);
		printf("free_ram %llu -> %llu with %llu bytes allocated\n",
		       (unsigned long long)before.free_ram,
		       (unsigned long long)during.free_ram,
		       (unsigned long long)sz);
		/* generous slack for the rest of the system */
		ck_assert_msg(during.free_ram + sz / 2 <= before.free_ram,
			      "free_ram did not drop by half of a %llu byte "
			      "allocation", (unsigned long long)sz);
		nm_free_ok(fd, a.handle);
		nm_get_info_ok(fd, &after);
		ck_assert_msg(after.free_ram >= during.free_ram + sz / 2,
			      "free_ram did not come back after FREE");
	}
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("get_info");

	nm_add(s, abi_version, 30);
	nm_add(s, page_sizes_and_dev_flags, 30);
	nm_add(s, memory_totals, 30);
	nm_add(s, kernel_fills_every_field, 30);
	nm_add(s, kernel_fills_every_field_larger_struct, 30);
	nm_add(s, output_fields_are_not_inputs, 30);
	nm_add(s, flags_nonzero, 30);
	nm_add(s, reserved_nonzero, 30);
	nm_add(s, counters_track_allocations, 60);
	nm_add(s, counters_per_open_file, 60);
	nm_add(s, free_ram_reflects_allocation, 120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
