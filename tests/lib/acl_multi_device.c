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
 *    aclrtSetDevice(0).
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
	return acltest_run(s);
}
