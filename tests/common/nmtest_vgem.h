/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_vgem: the vgem side of the dma-buf tests, through libdrm.  A header
 * (static functions) rather than a .c in tests/common, because every .c
 * there is linked into every test program and only the programs that set
 * KLIBS_<name> in tests/Makefile link libdrm.
 *
 * vgem is Debian's virtual GEM driver (CONFIG_DRM_VGEM=m): a DRM device
 * with no hardware that imports and exports dma-bufs like a real GPU
 * driver.  In a vm-run guest the host's /lib/modules is visible read-only
 * in the chroot, so `modprobe vgem` loads it and its dependencies (drm,
 * drm_shmem_helper, ...) from the booted kernel's own tree; kmod
 * decompresses 6.12's .ko.xz itself.
 */
#ifndef NMTEST_VGEM_H
#define NMTEST_VGEM_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <xf86drm.h>
#include <drm/vgem_drm.h>

#include "nmtest_dmabuf.h"

/* The first /dev/dri/card* whose driver is "vgem", opened O_RDWR, or -1. */
static inline int nm_vgem_find(void)
{
	for (int i = 0; i < 64; i++) {
		char path[64];
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && v->name && !strcmp(v->name, "vgem")) {
			drmFreeVersion(v);
			return fd;
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

/*
 * Make sure vgem is there, loading it when running in a vm-run guest (never
 * on a host: modules are only ever loaded in throw-away guests).  Returns 0,
 * or -1 with the reason in why.
 */
static inline int nm_vgem_ensure(char *why, size_t len)
{
	char *out = NULL;
	int fd = nm_vgem_find(), st;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (!getenv("VM_RUN") || strcmp(getenv("VM_RUN"), "1")) {
		snprintf(why, len, "no vgem device, and outside a vm-run guest "
			 "this test never loads modules");
		return -1;
	}
	st = nm_shell("modprobe vgem", &out);
	fd = nm_vgem_find();
	if (fd >= 0) {
		free(out);
		close(fd);
		return 0;
	}
	snprintf(why, len, "vgem cannot be loaded on this kernel: modprobe "
		 "vgem exited %d: %s", st, out && *out ? out : "(no output)");
	if (why[0] && why[strlen(why) - 1] == '\n')
		why[strlen(why) - 1] = 0;
	free(out);
	return -1;
}

#define nm_vgem_open() _nm_vgem_open(__FILE__, __LINE__)
static inline int _nm_vgem_open(const char *f, int l)
{
	int fd = nm_vgem_find();

	if (fd < 0)
		_ck_assert_failed(f, l, "vgem", "no /dev/dri/card* is vgem");
	return fd;
}

/* drmPrimeFDToHandle: 0 or -errno */
static inline int nm_vgem_import(int card, int dfd, uint32_t *handle)
{
	return drmPrimeFDToHandle(card, dfd, handle) ? -errno : 0;
}

#define nm_vgem_import_ok(card, dfd) \
	_nm_vgem_import_ok((card), (dfd), __FILE__, __LINE__)
static inline uint32_t _nm_vgem_import_ok(int card, int dfd, const char *f,
					  int l)
{
	uint32_t h = 0;
	int ret = nm_vgem_import(card, dfd, &h);

	if (ret || !h)
		_ck_assert_failed(f, l, "vgem",
				  "drmPrimeFDToHandle(vgem, dma-buf fd %d): %s "
				  "(handle %u)", dfd, nm_retname(ret), h);
	return h;
}

/* drmPrimeHandleToFD with DRM_CLOEXEC | DRM_RDWR: 0 or -errno */
static inline int nm_vgem_export(int card, uint32_t handle, int *dfd)
{
	return drmPrimeHandleToFD(card, handle, DRM_CLOEXEC | DRM_RDWR, dfd) ?
		-errno : 0;
}

#define nm_vgem_export_ok(card, h) \
	_nm_vgem_export_ok((card), (h), __FILE__, __LINE__)
static inline int _nm_vgem_export_ok(int card, uint32_t h, const char *f,
				     int l)
{
	int dfd = -1, ret = nm_vgem_export(card, h, &dfd);

	if (ret || dfd < 0)
		_ck_assert_failed(f, l, "vgem",
				  "drmPrimeHandleToFD(vgem handle %u): %s", h,
				  nm_retname(ret));
	return dfd;
}

static inline int nm_gem_close(int card, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return drmIoctl(card, DRM_IOCTL_GEM_CLOSE, &c) ? -errno : 0;
}

/* DRM_IOCTL_MODE_MAP_DUMB: the fake offset to mmap the card fd with */
static inline int nm_vgem_map_dumb(int card, uint32_t handle, uint64_t *off)
{
	struct drm_mode_map_dumb m = { .handle = handle };

	if (drmIoctl(card, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return -errno;
	*off = m.offset;
	return 0;
}

/* A vgem dumb buffer of its own (vgem's shmem pages), for contrast. */
static inline int nm_vgem_dumb_create(int card, uint32_t bytes,
				      uint32_t *handle, uint64_t *size)
{
	struct drm_mode_create_dumb c = {
		.width = bytes / 4, .height = 1, .bpp = 32,
	};

	if (drmIoctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	*handle = c.handle;
	*size = c.size;
	return 0;
}

/* VGEM_FENCE_ATTACH: a fence vgem signals on request (or after 10 s) */
static inline int nm_vgem_fence_attach(int card, uint32_t handle, bool write,
				       uint32_t *fence)
{
	struct drm_vgem_fence_attach a = {
		.handle = handle, .flags = write ? VGEM_FENCE_WRITE : 0,
	};

	if (drmIoctl(card, DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

static inline int nm_vgem_fence_signal(int card, uint32_t fence)
{
	struct drm_vgem_fence_signal s = { .fence = fence };

	return drmIoctl(card, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

#endif /* NMTEST_VGEM_H */
