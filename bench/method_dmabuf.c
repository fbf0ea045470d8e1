// SPDX-License-Identifier: GPL-2.0-only
/*
 * The other ways to get a dma-buf the CPU can map: a vgem dumb buffer
 * exported through PRIME, the system dma-buf heap, and udmabuf over a
 * sealed memfd.  Each row keeps the device it allocates from open for the
 * run (struct fd_method behind m->priv).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <drm/drm.h>
#include <drm/drm_mode.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "bench.h"

#ifndef F_ADD_SEALS
#define F_ADD_SEALS	1033
#define F_SEAL_SHRINK	0x0002
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 2U
#endif

struct fd_method {
	int fd;			/* the device allocated from, -1 while closed */
};

/* vgem: a dumb buffer, exported as a dma-buf, mapped through the dma-buf. */
static int vgem_setup(struct method *m)
{
	struct fd_method *fm = m->priv;
	char path[32], name[32];
	int i;

	for (i = 0; i < 64; i++) {
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem")) {
			fm->fd = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(m->na, sizeof(m->na), "no vgem device (modprobe vgem)");
	return -ENODEV;
}

static void fd_teardown(struct method *m)
{
	struct fd_method *fm = m->priv;

	if (fm->fd >= 0)
		close(fm->fd);
	fm->fd = -1;
}

static int vgem_once(struct method *m, uint64_t size, struct sample *s)
{
	struct fd_method *fm = m->priv;
	struct drm_mode_create_dumb c = {
		.width = 1024, .bpp = 32, .height = (uint32_t)(size / PAGE),
	};
	struct drm_prime_handle ph = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_gem_close gc = { 0 };
	uint64_t t0, t1, t2;
	void *p;
	int ret;

	t0 = now_ns();
	if (ioctl(fm->fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	ph.handle = gc.handle = c.handle;
	if (ioctl(fm->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph)) {
		ret = -errno;
		goto close_gem;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ph.fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(ph.fd);
		goto close_gem;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	close(ph.fd);
	ioctl(fm->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
close_gem:
	ioctl(fm->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	return ret;
}

/* The upstream system dma-buf heap. */
static int heap_setup(struct method *m)
{
	struct fd_method *fm = m->priv;

	fm->fd = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (fm->fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/dma_heap/system");
		return -errno;
	}
	return 0;
}

static int heap_once(struct method *m, uint64_t size, struct sample *s)
{
	struct fd_method *fm = m->priv;
	struct dma_heap_allocation_data d = {
		.len = size, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	uint64_t t0, t1, t2;
	void *p;
	int ret;

	t0 = now_ns();
	if (ioctl(fm->fd, DMA_HEAP_IOCTL_ALLOC, &d))
		return -errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, d.fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(d.fd);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	close(d.fd);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

/* udmabuf: a sealed memfd turned into a dma-buf, mapped through it. */
static int udmabuf_setup(struct method *m)
{
	struct fd_method *fm = m->priv;

	fm->fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (fm->fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/udmabuf");
		return -errno;
	}
	return 0;
}

static int udmabuf_once(struct method *m, uint64_t size, struct sample *s)
{
	struct fd_method *fm = m->priv;
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	uint64_t t0, t1, t2;
	int mfd, dfd, ret;
	void *p;

	t0 = now_ns();
	mfd = memfd_create("bench", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0)
		return -errno;
	if (ftruncate(mfd, size) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK))
		goto fail_memfd;
	c.memfd = mfd;
	dfd = ioctl(fm->fd, UDMABUF_CREATE, &c);
	if (dfd < 0)
		goto fail_memfd;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		close(dfd);
		close(mfd);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, size);
	close(dfd);
	close(mfd);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
fail_memfd:
	ret = -errno;
	close(mfd);
	return ret;
}

static struct fd_method vgem = { .fd = -1 };
static struct fd_method heap = { .fd = -1 };
static struct fd_method udmabuf = { .fd = -1 };

struct method method_vgem = {
	.key = "vgem",
	.label = "vgem dumb+PRIME export+mmap",
	.setup = vgem_setup,
	.once = vgem_once,
	.teardown = fd_teardown,
	.priv = &vgem,
	.alternative = true,
};

struct method method_heap = {
	.key = "dma_heap_system",
	.label = "dma-heap system+mmap",
	.setup = heap_setup,
	.once = heap_once,
	.teardown = fd_teardown,
	.priv = &heap,
	.alternative = true,
};

struct method method_udmabuf = {
	.key = "udmabuf",
	.label = "udmabuf(memfd)+mmap",
	.setup = udmabuf_setup,
	.once = udmabuf_once,
	.teardown = fd_teardown,
	.priv = &udmabuf,
	.alternative = true,
};
