// SPDX-License-Identifier: MIT
/*
 * The native API (<aclmem/aclmem.h>): one call per ioctl, 0/value or
 * -errno, errno untouched; mapping with large-page alignment; dma-buf
 * export; the errno -> ACL code helper; aclmem_get_info fills the whole
 * struct (ACLMEM_1.9) and its ACLMEM_1.0 version stops at reserved, what
 * programs linked before had room for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acltest.h"
#include "aclmem/aclmem.h"

#define MiB ((uint64_t)1 << 20)

START_TEST(round_trip)
{
	struct npu_mem_buffer b, q;
	struct npu_mem_info info;
	uint32_t h = 0;
	void *addr;
	int fd, dfd;

	fd = aclmem_open();
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(aclmem_get_info(fd, &info), 0);
	ck_assert_uint_eq(info.abi_major, NPU_MEM_ABI_MAJOR);
	ck_assert_uint_eq(info.client_buffers, 0);

	ck_assert_int_eq(aclmem_alloc(fd, 3 * MiB, NPU_MEM_POLICY_HUGE_ONLY, 0,
				      &h, &b), 0);
	ck_assert_uint_ne(h, 0);
	ck_assert_uint_eq(b.size, 4 * MiB);
	ck_assert_int_eq(aclmem_query(fd, h, &q), 0);
	ck_assert_uint_eq(q.size, b.size);
	ck_assert_uint_eq(q.mmap_offset, b.mmap_offset);

	ck_assert_int_eq(aclmem_map(fd, &b, &addr), 0);
	ck_assert_uint_eq((uintptr_t)addr % (2 * MiB), 0);
	memset(addr, 0x3c, b.size);
	ck_assert_int_eq(aclmem_sync(fd, h, NPU_MEM_SYNC_TO_DEVICE, 0, b.size), 0);
	ck_assert_int_eq(aclmem_sync(fd, h, NPU_MEM_SYNC_FROM_DEVICE, 4096, 4096), 0);
	ck_assert_int_eq(aclmem_sync(fd, h, NPU_MEM_SYNC_BIDIRECTIONAL, 0, 1), 0);

	dfd = aclmem_export(fd, h, O_CLOEXEC | O_RDWR);
	ck_assert_int_ge(dfd, 0);
	close(dfd);

	ck_assert_int_eq(aclmem_free(fd, h), 0);
	/* The mapping keeps the memory alive after FREE. */
	ck_assert_int_eq(((unsigned char *)addr)[b.size - 1], 0x3c);
	ck_assert_int_eq(aclmem_unmap(addr, &b), 0);
	ck_assert_int_eq(aclmem_close(fd), 0);
}
END_TEST

START_TEST(errors_are_negative_errno)
{
	struct npu_mem_buffer b;
	uint32_t h;
	int fd = aclmem_open();

	ck_assert_int_ge(fd, 0);
	errno = 1234;
	ck_assert_int_eq(aclmem_alloc(fd, 0, 0, 0, &h, &b), -EINVAL);
	ck_assert_int_eq(errno, 1234);
	ck_assert_int_eq(aclmem_alloc(fd, 4096, NPU_MEM_POLICY_COUNT, 0, &h, &b),
			 -EINVAL);
	ck_assert_int_eq(aclmem_alloc(fd, 4096, 0, 0x80, &h, &b), -EINVAL);
	ck_assert_int_eq(aclmem_alloc(fd, 4096, 0, 0, NULL, &b), -EFAULT);
	ck_assert_int_eq(aclmem_free(fd, 0), -ENOENT);
	ck_assert_int_eq(aclmem_free(fd, 777), -ENOENT);
	ck_assert_int_eq(aclmem_query(fd, 777, &b), -ENOENT);
	ck_assert_int_eq(aclmem_sync(fd, 777, 1, 0, 1), -ENOENT);
	ck_assert_int_eq(aclmem_alloc(fd, 4096, 2, 0, &h, &b), 0);
	ck_assert_int_eq(aclmem_sync(fd, h, 1, 0, 0), -EINVAL);
	ck_assert_int_eq(aclmem_sync(fd, h, 1, 4096, 1), -EINVAL);
	ck_assert_int_eq(aclmem_sync(fd, h, 9, 0, 1), -EINVAL);
	ck_assert_int_eq(aclmem_export(fd, h, 0x40000000), -EINVAL);
	ck_assert_int_eq(aclmem_free(fd, h), 0);
	ck_assert_int_eq(aclmem_free(fd, h), -ENOENT);
	ck_assert_int_eq(aclmem_get_info(-1, &(struct npu_mem_info){ 0 }), -EBADF);
	ck_assert_int_eq(aclmem_close(fd), 0);
}
END_TEST

START_TEST(acl_error_codes)
{
	ck_assert_int_eq(aclmem_acl_error(0), 0);
	ck_assert_int_eq(aclmem_acl_error(-EINVAL), 107000);
	ck_assert_int_eq(aclmem_acl_error(-ENOMEM), 207001);
	ck_assert_int_eq(aclmem_acl_error(ENOMEM), 207001);
	ck_assert_int_eq(aclmem_acl_error(-EOPNOTSUPP), 207000);
	ck_assert_int_eq(aclmem_acl_error(-EIO), 507899);
}
END_TEST

START_TEST(get_info_versions)
{
	const size_t old = offsetof(struct npu_mem_info, dev_bytes);
	int (*get_1_0)(int, struct npu_mem_info *);
	struct npu_mem_info info, want;
	int fd = aclmem_open();
	uint8_t *p = (uint8_t *)&info;

	ck_assert_int_ge(fd, 0);
	memset(&want, 0, sizeof(want));
	ck_assert_int_eq(ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &want), 0);
	memset(&info, 0xa5, sizeof(info));
	ck_assert_int_eq(aclmem_get_info(fd, &info), 0);
	/* the ABI 1.4 tail is the module's, not what was there */
	ck_assert_uint_eq(info.zero_reserve_low, want.zero_reserve_low);
	ck_assert_uint_eq(info.zero_reserve_high, want.zero_reserve_high);
	ck_assert_uint_eq(info.dev_buffers, want.dev_buffers);
	ck_assert_uint_eq(info.dev_bytes, want.dev_bytes);

	/* Statically linked (make arm64), there are no symbol versions. */
	get_1_0 = (int (*)(int, struct npu_mem_info *))
		  dlvsym(RTLD_DEFAULT, "aclmem_get_info", "ACLMEM_1.0");
	if (get_1_0) {
		memset(&info, 0xa5, sizeof(info));
		ck_assert_int_eq(get_1_0(fd, &info), 0);
		ck_assert_uint_eq(info.abi_minor, want.abi_minor);
		for (size_t i = old; i < sizeof(info); i++)
			ck_assert_msg(p[i] == 0xa5, "ACLMEM_1.0's "
				      "aclmem_get_info wrote byte %zu", i);
	}
	aclmem_close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("acl_native");

	acltest_require_device();
	nm_add(s, round_trip, 30);
	nm_add(s, errors_are_negative_errno, 30);
	nm_add(s, acl_error_codes, 30);
	nm_add(s, get_info_versions, 30);
	return acltest_run(s);
}
