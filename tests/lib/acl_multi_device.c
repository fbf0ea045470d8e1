// SPDX-License-Identifier: MIT
/*
 * Several NPUs through the ACL API.  Runs in the x86_64-multi-edu guest
 * (four edu devices: 0 and 1 on NUMA node 0, 2 and 3 on node 1); exits 77
 * with fewer than two devices.
 *  - aclrtGetDeviceCount is the module's device_count; ids past it are
 *    107001 in every call that takes one;
 *  - each device has its own default context, reference counted alone;
 *    setting another device's context current switches the device;
 *  - aclrtMalloc, aclrtMallocCached and aclrtMallocHost on device N take
 *    their pages from N's node (move_pages(2) without moving), and
 *    aclrtMallocWithCfg from the node of the device its attribute names;
 *  - peer access: CANN's argument rules and codes, enabling twice,
 *    disabling what is not enabled, the status per (device, peer);
 *  - peer access maps the peer's buffers for the device given it (the
 *    kernel's PEER_QUERY), those allocated later too, until disabled;
 *  - a copy between two devices' buffers is 107000 without peer access,
 *    synchronous and on a stream, and copies the bytes with it;
 *  - GET_INFO facts per device: aclrtGetDeviceInfo, aclrtGetMemInfo,
 *    aclrtGetDevicesTopo (PHB on one node, SYS across), the id mappings,
 *    aclrtDeviceGetPCIBusId and aclrtDeviceGetByPCIBusId both ways;
 *  - IPC memory exported on device 0 and imported by a process on device 1:
 *    device-to-device copies need peer access, which the import flag
 *    ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS enables;
 *  - aclrtHostRegister and aclrtHostRegisterV2 register for the current
 *    device: the driver's QUERY of the registration says device 2 (the
 *    last device with fewer) after aclrtSetDevice(2), device 0 after
 *    aclrtSetDevice(0);
 *  - every call that takes a device works on devices 2 and 3 with that
 *    device's memory, and refuses the id past the last (107001): usage
 *    info, the caching pool, memory pools, core limits, error details, TDT
 *    channels, batch copies, shareable handles imported into another
 *    device and access set for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "acltest.h"
#include "acl/acl.h"
#include "acl/acl_tdt.h"

#define N	(256 * 1024)
#define KEYLEN	65

static uint32_t g_count;

static void info_of(uint32_t dev, struct npu_mem_info *info)
{
	int fd = open(acltest_device_path(), O_RDWR | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	memset(info, 0, sizeof(*info));
	info->device = dev;
	ck_assert_msg(ioctl(fd, NPU_MEM_IOCTL_GET_INFO, info) == 0,
		      "GET_INFO(%u): %s", dev, strerror(errno));
	close(fd);
}

/* The node of the page at p, without moving it. */
static int node_of(void *p)
{
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
	int status = -1;

	ck_assert_int_eq(syscall(SYS_move_pages, 0, 1, &page, NULL, &status, 0),
			 0);
	return status;
}

static void *dev_alloc(size_t size, uint32_t seed)
{
	void *p = NULL, *h = malloc(size);

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(aclrtMalloc(&p, size, ACL_MEM_MALLOC_NORMAL_ONLY),
			 ACL_SUCCESS);
	acltest_fill(h, size, seed);
	ck_assert_int_eq(aclrtMemcpy(p, size, h, size,
				     ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	free(h);
	return p;
}

START_TEST(count_and_ids)
{
	int64_t total = 0;
	int32_t id, out;
	uint32_t n = 0;

	ck_assert_int_eq(aclrtGetDeviceCount(&n), ACL_SUCCESS);
	ck_assert_uint_eq(n, g_count);
	ck_assert_int_eq(aclrtSetDevice((int32_t)n), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDevice((int32_t)n),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	for (id = 0; id < (int32_t)n; id++) {
		ck_assert_int_eq(aclrtGetPhyDevIdByLogicDevId(id, &out), 0);
		ck_assert_int_eq(out, id);
		ck_assert_int_eq(aclrtGetLogicDevIdByUserDevId(id, &out), 0);
		ck_assert_int_eq(out, id);
		ck_assert_int_eq(aclrtGetDeviceInfo((uint32_t)id,
				 ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &total), 0);
		ck_assert_int_gt(total, 0);
	}
	ck_assert_int_eq(aclrtGetPhyDevIdByLogicDevId((int32_t)n, &out),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtGetDeviceInfo(n, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
					    &total), ACL_ERROR_RT_INVALID_DEVICEID);
}
END_TEST

START_TEST(default_context_per_device)
{
	aclrtContext c0, c1, c;
	int32_t id = -1, active = -1;

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetCurrentContext(&c0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSetDevice(1), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_SUCCESS);
	ck_assert_int_eq(id, 1);
	ck_assert_int_eq(aclrtGetCurrentContext(&c1), ACL_SUCCESS);
	ck_assert_ptr_ne(c0, c1);
	/* Another device's context made current switches the device. */
	ck_assert_int_eq(aclrtSetCurrentContext(c0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_SUCCESS);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(aclrtCreateContext(&c, 1), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_SUCCESS);
	ck_assert_int_eq(id, 1);
	ck_assert_int_eq(aclrtDestroyContext(c), ACL_SUCCESS);
	/* Device 1's reset leaves device 0's default context alone. */
	ck_assert_int_eq(aclrtResetDevice(1), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetPrimaryCtxState(1, NULL, &active), 0);
	ck_assert_int_eq(active, 0);
	ck_assert_int_eq(aclrtGetPrimaryCtxState(0, NULL, &active), 0);
	ck_assert_int_eq(active, 1);
	ck_assert_int_eq(aclrtSetCurrentContext(c0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_SUCCESS);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetDevice(&id), ACL_ERROR_RT_CONTEXT_NULL);
}
END_TEST

START_TEST(memory_on_device_node)
{
	struct npu_mem_info info;
	size_t free_b, total_b;
	uint32_t d;

	for (d = 0; d < g_count; d++) {
		void *a = NULL, *b = NULL, *h = NULL;

		info_of(d, &info);
		ck_assert_int_eq(aclrtSetDevice((int32_t)d), ACL_SUCCESS);
		ck_assert_int_eq(aclrtMalloc(&a, 1 << 20,
					     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
		ck_assert_int_eq(aclrtMallocCached(&b, 4 << 20,
						   ACL_MEM_MALLOC_HUGE_FIRST), 0);
		ck_assert_int_eq(aclrtMallocHost(&h, 1 << 20), 0);
		ck_assert_int_eq(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b),
				 ACL_SUCCESS);
		ck_assert_uint_gt(total_b, 0);
		if (info.dev_node != NPU_MEM_NODE_NONE) {
			ck_assert_int_eq(node_of(a), (int)info.dev_node);
			ck_assert_int_eq(node_of((char *)b + (3 << 20)),
					 (int)info.dev_node);
			ck_assert_int_eq(node_of(h), (int)info.dev_node);
		}
		ck_assert_int_eq(aclrtFree(a), 0);
		ck_assert_int_eq(aclrtFree(b), 0);
		ck_assert_int_eq(aclrtFreeHost(h), 0);
		ck_assert_int_eq(aclrtResetDevice((int32_t)d), 0);
	}
}
END_TEST

START_TEST(malloc_with_cfg_device)
{
	struct npu_mem_info info;
	aclrtMallocAttribute attr = { .attr = ACL_RT_MEM_ATTR_DEVICE_ID };
	aclrtMallocConfig cfg = { .attrs = &attr, .numAttrs = 1 };
	uint32_t last = g_count - 1;
	void *p = NULL;

	info_of(last, &info);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	attr.value.deviceId = g_count;
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 1 << 20,
					    ACL_MEM_MALLOC_NORMAL_ONLY, &cfg),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	attr.value.deviceId = last;
	ck_assert_int_eq(aclrtMallocWithCfg(&p, 1 << 20,
					    ACL_MEM_MALLOC_NORMAL_ONLY, &cfg),
			 ACL_SUCCESS);
	if (info.dev_node != NPU_MEM_NODE_NONE)
		ck_assert_int_eq(node_of(p), (int)info.dev_node);
	ck_assert_int_eq(aclrtFree(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

START_TEST(peer_rules)
{
	int32_t can = -1, st = -1;
	int32_t n = (int32_t)g_count;

	/* No current device: CANN's 107002 before the peer is looked at. */
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(1, 0),
			 ACL_ERROR_RT_CONTEXT_NULL);
	ck_assert_int_eq(aclrtDeviceCanAccessPeer(NULL, 0, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceCanAccessPeer(&can, 0, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceCanAccessPeer(&can, 0, n),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_SUCCESS);
	ck_assert_int_eq(can, 1);

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(1, 1),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(0, 0),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(n, 0),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtDeviceDisablePeerAccess(1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDevicePeerAccessStatus(0, 1, &st), 0);
	ck_assert_int_eq(st, 1);
	ck_assert_int_eq(aclrtDevicePeerAccessStatus(1, 0, &st), 0);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDevicePeerAccessStatus(0, 1, &st), 0);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(aclrtDeviceDisablePeerAccess(1),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
}
END_TEST

/*
 * The handle of fd whose buffer's first page is p's: p holds a mark for
 * the while, and each handle's buffer is mapped here to look for it (the
 * mapping's offset in /proc/self/maps is the buffer's own, not the
 * file's).  0 if there is none.
 */
static uint32_t handle_at(int fd, void *p)
{
	const uint64_t mark = 0x6e70752d70656572ull ^ (uintptr_t)p;
	uint64_t saved;
	uint32_t h, found = 0;

	memcpy(&saved, p, sizeof(saved));
	memcpy(p, &mark, sizeof(mark));
	for (h = 1; h < 4096 && !found; h++) {
		struct npu_mem_query q = { .handle = h };
		void *m;

		if (ioctl(fd, NPU_MEM_IOCTL_QUERY, &q) ||
		    (q.buf.flags & NPU_MEM_BUF_HOST))
			continue;
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			 (off_t)q.buf.mmap_offset);
		if (m == MAP_FAILED)
			continue;
		if (!memcmp(m, &mark, sizeof(mark)))
			found = h;
		munmap(m, 4096);
	}
	memcpy(p, &saved, sizeof(saved));
	return found;
}

/*
 * The library's device file and the handle of its buffer starting at p:
 * of the files this process has open on the device node, the one with a
 * handle for p's pages.
 */
static void lib_handle(void *p, int *fdp, uint32_t *handlep)
{
	struct stat node, st;
	struct dirent *de;
	DIR *dir;

	ck_assert_int_eq(stat(acltest_device_path(), &node), 0);
	*handlep = 0;
	dir = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(dir);
	while (!*handlep && (de = readdir(dir))) {
		if (de->d_name[0] != '.' &&
		    !fstatat(dirfd(dir), de->d_name, &st, 0) &&
		    S_ISCHR(st.st_mode) && st.st_rdev == node.st_rdev) {
			*fdp = atoi(de->d_name);
			*handlep = handle_at(*fdp, p);
		}
	}
	closedir(dir);
	ck_assert_msg(*handlep, "no handle of the library's maps %p", p);
}

/* PEER_QUERY of the library's buffer at p for device dev: 0 or errno. */
static int peer_query(void *p, uint32_t dev)
{
	struct npu_mem_peer q = { .device = dev };
	int fd = -1;

	lib_handle(p, &fd, &q.handle);
	return ioctl(fd, NPU_MEM_IOCTL_PEER_QUERY, &q) ? errno : 0;
}

START_TEST(peer_access_maps_buffers)
{
	void *a0, *a1, *b0, *c0;

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	a0 = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtSetDevice(1), ACL_SUCCESS);
	a1 = dev_alloc(N, 2);
	ck_assert_int_eq(peer_query(a0, 1), ENXIO);

	/* Device 1 gets access to device 0's memory, present and future. */
	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(0, 0), ACL_SUCCESS);
	ck_assert_int_eq(peer_query(a0, 1), 0);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	b0 = dev_alloc(N, 3);
	ck_assert_int_eq(peer_query(b0, 1), 0);
	/* One way only: device 0 was given no access to device 1's. */
	ck_assert_int_eq(peer_query(a1, 0), ENXIO);
	/* Its own mapping describes itself. */
	ck_assert_int_eq(peer_query(a0, 0), 0);

	ck_assert_int_eq(aclrtSetDevice(1), ACL_SUCCESS);
	ck_assert_int_eq(aclrtDeviceDisablePeerAccess(0), ACL_SUCCESS);
	ck_assert_int_eq(peer_query(a0, 1), ENXIO);
	ck_assert_int_eq(peer_query(b0, 1), ENXIO);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	c0 = dev_alloc(N, 4);
	ck_assert_int_eq(peer_query(c0, 1), ENXIO);

	ck_assert_int_eq(aclrtFree(c0), 0);
	ck_assert_int_eq(aclrtFree(b0), 0);
	ck_assert_int_eq(aclrtFree(a1), 0);
	ck_assert_int_eq(aclrtFree(a0), 0);
	ck_assert_int_eq(aclrtResetDevice(1), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

START_TEST(copy_between_devices)
{
	unsigned char *a0, *a1, *b1, *h = malloc(N);
	aclrtStream s;

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	a0 = dev_alloc(N, 1);
	ck_assert_int_eq(aclrtSetDevice(1), ACL_SUCCESS);
	a1 = dev_alloc(N, 2);
	b1 = dev_alloc(N, 3);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);

	/* Within device 1: no peer access needed. */
	ck_assert_int_eq(aclrtMemcpy(b1, N, a1, N, ACL_MEMCPY_DEVICE_TO_DEVICE),
			 ACL_SUCCESS);
	/* Device 0's buffer into device 1's, both ways, and by address. */
	ck_assert_int_eq(aclrtMemcpy(a1, N, a0, N, ACL_MEMCPY_DEVICE_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpy(a0, N, a1, N, ACL_MEMCPY_DEFAULT),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtMemcpyAsync(a1, N, a0, N,
					  ACL_MEMCPY_DEVICE_TO_DEVICE, s),
			 ACL_ERROR_RT_PARAM_INVALID);
	/* Host copies of another device's memory need no peer access. */
	ck_assert_int_eq(aclrtMemcpy(h, N, a0, N, ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_SUCCESS);
	ck_assert_uint_eq(acltest_verify(h, N, 1), SIZE_MAX);
	ck_assert_uint_eq(acltest_verify(a1, N, 2), SIZE_MAX);

	ck_assert_int_eq(aclrtDeviceEnablePeerAccess(0, 0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(a1, N, a0, N, ACL_MEMCPY_DEVICE_TO_DEVICE),
			 ACL_SUCCESS);
	ck_assert_uint_eq(acltest_verify(a1, N, 1), SIZE_MAX);
	ck_assert_int_eq(aclrtMemcpyAsync(a0, N, b1, N,
					  ACL_MEMCPY_DEVICE_TO_DEVICE, s),
			 ACL_SUCCESS);
	ck_assert_int_eq(aclrtSynchronizeStream(s), ACL_SUCCESS);
	ck_assert_uint_eq(acltest_verify(a0, N, 2), SIZE_MAX);

	ck_assert_int_eq(aclrtDeviceDisablePeerAccess(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMemcpy(a1, N, a0, N, ACL_MEMCPY_DEVICE_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtFree(a1), 0);
	ck_assert_int_eq(aclrtFree(b1), 0);
	ck_assert_int_eq(aclrtFree(a0), 0);
	ck_assert_int_eq(aclrtResetDevice(1), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
	free(h);
}
END_TEST

START_TEST(topology)
{
	struct npu_mem_info a, b;
	uint64_t v = 0;
	uint32_t d;

	ck_assert_int_eq(aclrtGetDevicesTopo(0, 0, &v), ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtGetDevicesTopo(0, g_count, &v),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	info_of(0, &a);
	for (d = 1; d < g_count; d++) {
		info_of(d, &b);
		ck_assert_int_eq(aclrtGetDevicesTopo(0, d, &v), ACL_SUCCESS);
		ck_assert_uint_eq(v, a.dev_node != NPU_MEM_NODE_NONE &&
				  a.dev_node == b.dev_node ?
				  ACL_RT_DEVS_TOPOLOGY_PHB :
				  ACL_RT_DEVS_TOPOLOGY_SYS);
	}
}
END_TEST

START_TEST(pci_bus_ids)
{
	struct npu_mem_info info;
	char id[16], want[48];
	int32_t dev = -1;
	uint32_t d;

	ck_assert_int_eq(aclrtDeviceGetPCIBusId(0, NULL, 16),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceGetPCIBusId(0, id, 12),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceGetPCIBusId((int32_t)g_count, id, 16),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtDeviceGetByPCIBusId(NULL, &dev),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceGetByPCIBusId("0000:21:00", &dev),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceGetByPCIBusId("0000:21:00.0x", &dev),
			 ACL_ERROR_INVALID_PARAM);
	ck_assert_int_eq(aclrtDeviceGetByPCIBusId("00ff:ff:1f.7", &dev),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	for (d = 0; d < g_count; d++) {
		info_of(d, &info);
		ck_assert(info.dev_flags & NPU_MEM_DEV_PCI);
		snprintf(want, sizeof(want), "%04x:%02x:%02x.%x",
			 info.dev_pci_domain, info.dev_pci_bdf >> 8,
			 (info.dev_pci_bdf >> 3) & 0x1f, info.dev_pci_bdf & 7);
		ck_assert_int_eq(aclrtDeviceGetPCIBusId((int32_t)d, id, 13), 0);
		ck_assert_str_eq(id, want);
		ck_assert_int_eq(aclrtDeviceGetByPCIBusId(id, &dev), 0);
		ck_assert_int_eq(dev, (int32_t)d);
	}
}
END_TEST

/*
 * On device 1: import the key (flags as given), then copy the memory
 * (seed 1) into a buffer of device 1: refused until peer access is
 * enabled unless the import enabled it.  Exit status: where it failed.
 */
static int import_on_device_1(int rfd, void *arg)
{
	uint64_t flags = *(uint64_t *)arg;
	char key[KEYLEN];
	void *p = NULL, *own = NULL;
	int ret;

	if (read(rfd, key, KEYLEN) != KEYLEN || aclrtSetDevice(1))
		return 10;
	if (aclrtIpcMemImportByKey(&p, key, flags))
		return 11;
	if (aclrtMalloc(&own, N, ACL_MEM_MALLOC_NORMAL_ONLY))
		return 12;
	ret = aclrtMemcpy(own, N, p, N, ACL_MEMCPY_DEVICE_TO_DEVICE);
	if (!flags) {
		if (ret != ACL_ERROR_RT_PARAM_INVALID)
			return 13;
		if (aclrtDeviceEnablePeerAccess(0, 0))
			return 14;
		ret = aclrtMemcpy(own, N, p, N, ACL_MEMCPY_DEVICE_TO_DEVICE);
	}
	if (ret)
		return 15;
	if (acltest_verify(own, N, 1) != SIZE_MAX)
		return 16;
	if (aclrtFree(own) || aclrtIpcMemClose(key))
		return 17;
	aclrtResetDevice(1);
	return 0;
}

static void ipc_between_devices(uint64_t flags)
{
	char key[KEYLEN] = { 0 };
	void *a0;
	pid_t pid;
	int wfd;

	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	a0 = dev_alloc(N, 1);
	pid = acltest_spawn(import_on_device_1, &flags, &wfd);
	ck_assert_int_eq(aclrtIpcMemGetExportKey(a0, N, key, KEYLEN, 0), 0);
	ck_assert_int_eq(aclrtIpcMemSetImportPid(key, &pid, 1), 0);
	ck_assert_int_eq(write(wfd, key, KEYLEN), KEYLEN);
	close(wfd);
	ck_assert_int_eq(acltest_reap(pid), 0);
	ck_assert_int_eq(aclrtIpcMemClose(key), 0);
	ck_assert_int_eq(aclrtFree(a0), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}

START_TEST(ipc_needs_peer_access)
{
	ipc_between_devices(ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT);
}
END_TEST

START_TEST(ipc_import_enables_peer_access)
{
	ipc_between_devices(ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS);
}
END_TEST

/*
 * The device the driver mapped the process's only registration of size
 * bytes for: of the files this process has open on the device node, the
 * handle that is registered host memory of that size.
 */
static uint32_t host_reg_device(uint64_t size)
{
	struct stat node, st;
	struct dirent *de;
	uint32_t dev = UINT32_MAX;
	int found = 0;
	DIR *dir;

	ck_assert_int_eq(stat(acltest_device_path(), &node), 0);
	dir = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir))) {
		int fd;

		if (de->d_name[0] == '.' ||
		    fstatat(dirfd(dir), de->d_name, &st, 0) ||
		    !S_ISCHR(st.st_mode) || st.st_rdev != node.st_rdev)
			continue;
		fd = atoi(de->d_name);
		for (uint32_t h = 1; h < 4096; h++) {
			struct npu_mem_query q = { .handle = h };

			if (ioctl(fd, NPU_MEM_IOCTL_QUERY, &q) ||
			    !(q.buf.flags & NPU_MEM_BUF_HOST) ||
			    q.buf.size != size)
				continue;
			dev = q.device;
			found++;
		}
	}
	closedir(dir);
	ck_assert_msg(found == 1, "%d registrations of %llu bytes in the "
		      "library's files, want 1", found,
		      (unsigned long long)size);
	return dev;
}

START_TEST(host_register_for_current_device)
{
	const uint64_t size = 3 * 4096;
	uint32_t dev = g_count > 2 ? 2 : g_count - 1;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *d = NULL;

	ck_assert_ptr_ne(p, MAP_FAILED);
	memset(p, 0x2d, size);
	ck_assert_int_eq(aclrtSetDevice((int32_t)dev), ACL_SUCCESS);
	ck_assert_int_eq(aclrtHostRegister(p, size, ACL_HOST_REGISTER_MAPPED,
					   &d), ACL_SUCCESS);
	ck_assert_uint_eq(host_reg_device(size), dev);
	ck_assert_int_eq(aclrtHostUnregister(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtHostRegisterV2(p, size, ACL_HOST_REG_MAPPED),
			 ACL_SUCCESS);
	ck_assert_uint_eq(host_reg_device(size), dev);
	ck_assert_int_eq(aclrtHostUnregister(p), ACL_SUCCESS);
	/* Device 0 again: the registration follows the current device. */
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtHostRegister(p, size, ACL_HOST_REGISTER_MAPPED,
					   &d), ACL_SUCCESS);
	ck_assert_uint_eq(host_reg_device(size), 0);
	ck_assert_int_eq(aclrtHostUnregister(p), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice(0), ACL_SUCCESS);
	ck_assert_int_eq(aclrtResetDevice((int32_t)dev), ACL_SUCCESS);
	munmap(p, size);
}
END_TEST

/* ---- every call that takes a device, on devices 2 and 3 ---- */

/* Device dev's aclrtGetMemUsageInfo figure called name ("APP", "RUNTIME"). */
static uint64_t usage_of(int32_t dev, const char *name)
{
	aclrtMemUsageInfo u[2];
	size_t n = 0, i;

	ck_assert_int_eq(aclrtGetMemUsageInfo(dev, u, 2, &n), ACL_SUCCESS);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < n; i++)
		if (!strcmp(u[i].name, name))
			return u[i].curMemSize;
	ck_abort_msg("device %d reports no %s", (int)dev, name);
	return 0;
}

/* The other device of a pair of the high ones: 2 and 3, else 0 and 1. */
static int32_t hi(int i)
{
	return g_count >= 4 ? 2 + i : i;
}

/*
 * Each device's usage is its own: a buffer of device d raises d's APP
 * figure and the driver's per-device bytes (GET_INFO), not another's; a
 * freed one is d's RUNTIME (the caching pool keeps it for d).
 */
START_TEST(usage_info_per_device)
{
	struct npu_mem_info before, after;
	uint64_t app, other, rt;
	int32_t d, o;
	void *a = NULL;
	int i;

	for (i = 0; i < 2; i++) {
		d = hi(i);
		o = hi(!i);
		ck_assert_int_eq(aclrtSetDevice(d), ACL_SUCCESS);
		app = usage_of(d, "APP");
		other = usage_of(o, "APP");
		rt = usage_of(d, "RUNTIME");
		info_of((uint32_t)d, &before);
		ck_assert_int_eq(aclrtMalloc(&a, 1 << 20,
					     ACL_MEM_MALLOC_NORMAL_ONLY), 0);
		info_of((uint32_t)d, &after);
		ck_assert_uint_ge(after.dev_bytes, before.dev_bytes + (1 << 20));
		ck_assert_uint_ge(usage_of(d, "APP"), app + (1 << 20));
		ck_assert_uint_eq(usage_of(o, "APP"), other);
		ck_assert_int_eq(aclrtFree(a), 0);
		ck_assert_uint_eq(usage_of(d, "APP"), app);
		ck_assert_uint_ge(usage_of(d, "RUNTIME"), rt + (1 << 20));
		ck_assert_int_eq(aclrtResetDevice(d), 0);
	}
	ck_assert_int_eq(aclrtGetMemUsageInfo((int32_t)g_count, NULL, 0, NULL),
			 ACL_ERROR_INVALID_PARAM);
	{
		aclrtMemUsageInfo u[2];
		size_t n;

		ck_assert_int_eq(aclrtGetMemUsageInfo((int32_t)g_count, u, 2,
						      &n),
				 ACL_ERROR_RT_INVALID_DEVICEID);
	}
}
END_TEST

/*
 * The caching pool keeps each device's freed buffers for that device: a
 * buffer device 2 freed (still mapped, in the pool) is never handed to
 * device 3, whose allocation gets its own node's memory.
 */
START_TEST(pool_per_device)
{
	struct npu_mem_info info;
	void *p2 = NULL, *p3 = NULL, *q = NULL;

	ck_assert_int_eq(aclrtSetDevice(hi(0)), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&p2, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_int_eq(aclrtFree(p2), 0);
	ck_assert_uint_ge(usage_of(hi(0), "RUNTIME"), 4096);
	ck_assert_int_eq(aclrtSetDevice(hi(1)), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&p3, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_ptr_ne(p3, p2);
	info_of((uint32_t)hi(1), &info);
	memset(p3, 1, 4096);
	if (info.dev_node != NPU_MEM_NODE_NONE)
		ck_assert_int_eq(node_of(p3), (int)info.dev_node);
	ck_assert_int_eq(aclrtFree(p3), 0);
	/* Device 2's own buffer comes back to it. */
	ck_assert_int_eq(aclrtSetDevice(hi(0)), ACL_SUCCESS);
	ck_assert_int_eq(aclrtMalloc(&q, 4096, ACL_MEM_MALLOC_NORMAL_ONLY), 0);
	ck_assert_ptr_eq(q, p2);
	ck_assert_int_eq(aclrtFree(q), 0);
	ck_assert_int_eq(aclrtResetDevice(hi(0)), 0);
	ck_assert_int_eq(aclrtResetDevice(hi(1)), 0);
	ck_assert_int_eq(aclrtResetDevice(hi(0)), 0);
}
END_TEST

/* A memory pool of device 2 hands out device 2's memory, from device 0. */
START_TEST(mem_pool_of_device)
{
	aclrtMemPoolProps pp;
	aclrtMemPool pool;
	aclrtStream s;
	uint64_t app0, app2;
	void *p = NULL;

	memset(&pp, 0, sizeof(pp));
	pp.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	pp.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	pp.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	pp.location.id = g_count;
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, &pp),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	pp.location.id = (uint32_t)hi(0);
	ck_assert_int_eq(aclrtMemPoolCreate(&pool, &pp), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	app0 = usage_of(0, "APP");
	app2 = usage_of(hi(0), "APP");
	ck_assert_int_eq(aclrtMemPoolMallocAsync(&p, 1 << 20, pool, s), 0);
	ck_assert_uint_ge(usage_of(hi(0), "APP"), app2 + (1 << 20));
	ck_assert_uint_eq(usage_of(0, "APP"), app0);
	ck_assert_int_eq(aclrtMemPoolFreeAsync(p, s), 0);
	ck_assert_int_eq(aclrtSynchronizeStream(s), 0);
	ck_assert_int_eq(aclrtMemPoolDestroy(pool), 0);
	ck_assert_int_eq(aclrtDestroyStream(s), 0);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

/* Vector core limits are per device; a stream's are its device's. */
START_TEST(res_limits_per_device)
{
	const aclrtDevResLimitType vec = ACL_RT_DEV_RES_VECTOR_CORE;
	uint32_t cores = 0, v = 0;
	aclrtStream s;

	ck_assert_int_eq(aclrtGetDeviceResLimit(hi(1), vec, &cores), 0);
	ck_assert_uint_ge(cores, 1);
	ck_assert_int_eq(aclrtSetDeviceResLimit(hi(0), vec, 0), 0);
	ck_assert_int_eq(aclrtGetDeviceResLimit(hi(0), vec, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtGetDeviceResLimit(hi(1), vec, &v), 0);
	ck_assert_uint_eq(v, cores);
	ck_assert_int_eq(aclrtSetDevice(hi(0)), ACL_SUCCESS);
	ck_assert_int_eq(aclrtCreateStream(&s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetStreamResLimit(s, vec, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtDestroyStream(s), ACL_SUCCESS);
	ck_assert_int_eq(aclrtSetDevice(hi(1)), ACL_SUCCESS);
	ck_assert_int_eq(aclrtGetResInCurrentThread(vec, &v), 0);
	ck_assert_uint_eq(v, cores);
	/* Another device's reset leaves the limit. */
	ck_assert_int_eq(aclrtResetDeviceResLimit(hi(1)), 0);
	ck_assert_int_eq(aclrtGetDeviceResLimit(hi(0), vec, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(aclrtResetDeviceResLimit(hi(0)), 0);
	ck_assert_int_eq(aclrtGetDeviceResLimit(hi(0), vec, &v), 0);
	ck_assert_uint_eq(v, cores);
	ck_assert_int_eq(aclrtGetDeviceResLimit((int32_t)g_count, vec, &v),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtSetDeviceResLimit((int32_t)g_count, vec, 0),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDeviceResLimit((int32_t)g_count),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_int_eq(aclrtResetDevice(hi(0)), 0);
	ck_assert_int_eq(aclrtResetDevice(hi(1)), 0);
}
END_TEST

/* Error details and TDT channels of every device; 107001 past them. */
START_TEST(verbose_and_channels)
{
	acltdtChannelHandle *ch;
	aclrtErrorInfo ei;
	uint32_t d;

	for (d = 0; d < g_count; d++) {
		memset(&ei, 0xff, sizeof(ei));
		ck_assert_int_eq(aclrtGetErrorVerbose((int32_t)d, &ei), 0);
		ck_assert_int_eq(ei.errorType, ACL_RT_NO_ERROR);
		ch = acltdtCreateChannelWithCapacity(d, "multi", 2);
		ck_assert_ptr_nonnull(ch);
		ck_assert_int_eq(acltdtDestroyChannel(ch), 0);
	}
	ck_assert_int_eq(aclrtGetErrorVerbose((int32_t)g_count, &ei),
			 ACL_ERROR_RT_INVALID_DEVICEID);
	ck_assert_ptr_null(acltdtCreateChannel(g_count, "multi"));
	ck_assert_int_eq(aclrtGetLastError(ACL_RT_THREAD_LEVEL),
			 ACL_ERROR_RT_INVALID_DEVICEID);
}
END_TEST

static aclrtMemcpyBatchAttr batch_attr(bool h2d, int32_t dev)
{
	aclrtMemcpyBatchAttr a;

	memset(&a, 0, sizeof(a));
	a.srcLoc.type = h2d ? ACL_MEM_LOCATION_TYPE_HOST :
			      ACL_MEM_LOCATION_TYPE_DEVICE;
	a.dstLoc.type = h2d ? ACL_MEM_LOCATION_TYPE_DEVICE :
			      ACL_MEM_LOCATION_TYPE_HOST;
	(h2d ? &a.dstLoc : &a.srcLoc)->id = (uint32_t)dev;
	return a;
}

/* One copy of N bytes: its code, *fail set. */
static int batch1(void *dst, void *src, aclrtMemcpyBatchAttr a, size_t *fail)
{
	size_t max = N, size = N, idx = 0;

	return aclrtMemcpyBatch(&dst, &max, &src, &size, 1, &a, &idx, 1, fail);
}

/*
 * Batch copies to and from any device's memory, whichever is current;
 * the location must name the device the memory is of.
 */
START_TEST(batch_any_device)
{
	void *a2, *a3, *h = malloc(N), *back = malloc(N);
	size_t fail = 0;

	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_nonnull(back);
	ck_assert_int_eq(aclrtSetDevice(hi(0)), ACL_SUCCESS);
	a2 = dev_alloc(N, 0);
	ck_assert_int_eq(aclrtSetDevice(hi(1)), ACL_SUCCESS);
	a3 = dev_alloc(N, 0);
	acltest_fill(h, N, 9);
	ck_assert_int_eq(batch1(a2, h, batch_attr(true, hi(0)), &fail), 0);
	ck_assert_uint_eq(fail, SIZE_MAX);
	ck_assert_int_eq(batch1(back, a2, batch_attr(false, hi(0)), &fail), 0);
	ck_assert_uint_eq(acltest_verify(back, N, 9), SIZE_MAX);
	ck_assert_int_eq(batch1(a3, h, batch_attr(true, hi(1)), &fail), 0);
	/* Device 2's memory named as device 3's, and no device at all. */
	ck_assert_int_eq(batch1(a2, h, batch_attr(true, hi(1)), &fail),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_uint_eq(fail, 0);
	ck_assert_int_eq(batch1(back, a3, batch_attr(false, hi(0)), &fail),
			 ACL_ERROR_RT_PARAM_INVALID);
	ck_assert_int_eq(batch1(a2, h, batch_attr(true, (int32_t)g_count),
				&fail), ACL_ERROR_INVALID_PARAM);
	ck_assert_uint_eq(fail, 0);
	ck_assert_int_eq(aclrtFree(a2), 0);
	ck_assert_int_eq(aclrtFree(a3), 0);
	free(h);
	free(back);
	ck_assert_int_eq(aclrtResetDevice(hi(0)), 0);
	ck_assert_int_eq(aclrtResetDevice(hi(1)), 0);
}
END_TEST

#define PHYS	(64 * 1024)

/*
 * In another process, on device 3: import device 2's handle into device
 * 3 (its properties say 3; an id past the devices is 107001), map it;
 * a copy into device 3's own buffer needs peer access with device 2,
 * whose memory it stays; access may be set for device 3.  Exit status:
 * where it failed.
 */
static int import_into_other(int rfd, void *unused)
{
	aclrtPhysicalMemProp prop;
	aclrtMemAccessDesc d;
	aclrtDrvMemHandle h;
	uint64_t sh;
	void *v = NULL, *own = NULL;

	(void)unused;
	if (read(rfd, &sh, sizeof(sh)) != (ssize_t)sizeof(sh) ||
	    aclrtSetDevice(hi(1)))
		return 10;
	if (aclrtMemImportFromShareableHandle(sh, (int32_t)g_count, &h) !=
	    ACL_ERROR_RT_INVALID_DEVICEID)
		return 11;
	if (aclrtMemImportFromShareableHandle(sh, hi(1), &h))
		return 12;
	memset(&prop, 0, sizeof(prop));
	if (aclrtMemGetAllocationPropertiesFromHandle(h, &prop) ||
	    prop.location.type != ACL_MEM_LOCATION_TYPE_DEVICE ||
	    prop.location.id != (uint32_t)hi(1))
		return 13;
	if (aclrtReserveMemAddress(&v, PHYS, 0, NULL, 0) ||
	    aclrtMapMem(v, PHYS, 0, h, 0))
		return 14;
	if (aclrtMalloc(&own, PHYS, ACL_MEM_MALLOC_NORMAL_ONLY))
		return 15;
	if (aclrtMemcpy(own, PHYS, v, PHYS, ACL_MEMCPY_DEVICE_TO_DEVICE) !=
	    ACL_ERROR_RT_PARAM_INVALID)
		return 16;
	if (aclrtDeviceEnablePeerAccess(hi(0), 0) ||
	    aclrtMemcpy(own, PHYS, v, PHYS, ACL_MEMCPY_DEVICE_TO_DEVICE) ||
	    acltest_verify(own, PHYS, 3) != SIZE_MAX)
		return 17;
	memset(&d, 0, sizeof(d));
	d.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
	d.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	d.location.id = (uint32_t)hi(1);
	if (aclrtMemSetAccess(v, PHYS, &d, 1))
		return 18;
	d.location.id = g_count;
	if (aclrtMemSetAccess(v, PHYS, &d, 1) != ACL_ERROR_RT_INVALID_DEVICEID)
		return 19;
	if (aclrtFree(own) || aclrtUnmapMem(v) || aclrtFreePhysical(h) ||
	    aclrtReleaseMemAddress(v))
		return 20;
	aclrtResetDevice(hi(1));
	return 0;
}

START_TEST(vmm_import_into_other_device)
{
	aclrtPhysicalMemProp prop;
	aclrtDrvMemHandle h;
	int32_t pid;
	uint64_t sh;
	void *v = NULL, *host = malloc(PHYS);
	pid_t c;
	int wfd;

	ck_assert_ptr_nonnull(host);
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
	memset(&prop, 0, sizeof(prop));
	prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
	prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
	prop.memAttr = ACL_MEM_NORMAL;
	prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = (uint32_t)hi(0);
	ck_assert_int_eq(aclrtMallocPhysical(&h, PHYS, &prop, 0), 0);
	ck_assert_int_eq(aclrtReserveMemAddress(&v, PHYS, 0, NULL, 0), 0);
	ck_assert_int_eq(aclrtMapMem(v, PHYS, 0, h, 0), 0);
	acltest_fill(host, PHYS, 3);
	ck_assert_int_eq(aclrtMemcpy(v, PHYS, host, PHYS,
				     ACL_MEMCPY_HOST_TO_DEVICE), 0);
	ck_assert_int_eq(aclrtMemExportToShareableHandle(h,
			 ACL_MEM_HANDLE_TYPE_NONE, 0, &sh), 0);
	c = acltest_spawn(import_into_other, NULL, &wfd);
	pid = (int32_t)c;
	ck_assert_int_eq(aclrtMemSetPidToShareableHandle(sh, &pid, 1), 0);
	ck_assert_int_eq(write(wfd, &sh, sizeof(sh)), (ssize_t)sizeof(sh));
	close(wfd);
	ck_assert_int_eq(acltest_reap(c), 0);
	ck_assert_int_eq(aclrtUnmapMem(v), 0);
	ck_assert_int_eq(aclrtFreePhysical(h), 0);
	ck_assert_int_eq(aclrtReleaseMemAddress(v), 0);
	free(host);
	ck_assert_int_eq(aclrtResetDevice(0), 0);
}
END_TEST

int main(void)
{
	struct npu_mem_info info = { 0 };
	Suite *s;
	int fd;

	acltest_require_device();
	/* Outside a test: no Check assertions. */
	fd = open(acltest_device_path(), O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info)) {
		perror(acltest_device_path());
		return 1;
	}
	close(fd);
	if (info.device_count < 2) {
		printf("acl_multi_device: %u NPU(s), two needed: skipped\n",
		       info.device_count);
		return 77;
	}
	g_count = info.device_count;
	/* Made only now: a skip must not leave it behind for valgrind. */
	s = suite_create("acl_multi_device");
	nm_add(s, count_and_ids, 30);
	nm_add(s, default_context_per_device, 30);
	nm_add(s, memory_on_device_node, 60);
	nm_add(s, malloc_with_cfg_device, 30);
	nm_add(s, peer_rules, 30);
	nm_add(s, copy_between_devices, 60);
	nm_add(s, peer_access_maps_buffers, 60);
	nm_add(s, topology, 30);
	nm_add(s, pci_bus_ids, 30);
	nm_add(s, ipc_needs_peer_access, 60);
	nm_add(s, ipc_import_enables_peer_access, 60);
	nm_add(s, host_register_for_current_device, 30);
	nm_add(s, usage_info_per_device, 30);
	nm_add(s, pool_per_device, 30);
	nm_add(s, mem_pool_of_device, 30);
	nm_add(s, res_limits_per_device, 30);
	nm_add(s, verbose_and_channels, 30);
	nm_add(s, batch_any_device, 30);
	nm_add(s, vmm_import_into_other_device, 60);
	return acltest_run(s);
}
