// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmabuf_vgem: an npu-mem dma-buf imported by another real driver, vgem
 * (Debian's virtual GEM driver), through libdrm.
 *  - drmPrimeFDToHandle imports it: the dma-buf gets vgem as an attached
 *    device (our map_dma_buf ran for vgem's device; debugfs bufinfo), and
 *    importing it again, or a dup() of the fd, gives the same vgem handle;
 *    GEM_CLOSE detaches again;
 *  - data: vgem hands the import back as a dma-buf (drmPrimeHandleToFD);
 *    it is the very dma-buf npu-mem exported (same inode), and its mmap
 *    shows what was written through /dev/npu-mem and the other way round,
 *    for normal, huge and mixed buffers.  DRM_IOCTL_MODE_MAP_DUMB on the
 *    imported handle is refused (EINVAL) by the DRM core on the kernels we
 *    run (drm_gem_dumb_map_offset: "Don't allow imported objects to be
 *    mapped"); should a kernel allow it, the card mapping is checked too;
 *  - vgem's fences land in the dma-buf's own reservation object: with a
 *    vgem write fence attached, poll() on the npu-mem dma-buf is not
 *    readable and DMA_BUF_IOCTL_SYNC blocks until vgem signals it; a read
 *    fence blocks writers only;
 *  - export again after import: a new dma-buf (another inode), imported as
 *    another vgem object, of the same bytes;
 *  - FREE the handle before importing: the import still works;
 *  - every order of releasing the holders (npu-mem handle, exported fd,
 *    vgem handle, vgem's fd, the re-exported fd, its mapping): the buffer
 *    lives exactly until the last one goes (GET_INFO counters).
 * Exits 77 only when vgem cannot be loaded on the running kernel.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_fixture.h"
#include "nmtest_vgem.h"

#define RW	(PROT_READ | PROT_WRITE)

/* The shared fixture, and vgem's card for the importing side. */
struct ctx {
	struct nm_ctx nm;
	int card;
};

static void ctx_init(struct ctx *c)
{
	nm_ctx_init(&c->nm, NM_CTX_BASE);
	c->card = nm_vgem_open();
}

/* vgem's handles hold buffers: the card closes after the check. */
static void ctx_fini(struct ctx *c)
{
	nm_ctx_fini(&c->nm);
	close(c->card);
}

/* Mapped, patterned and exported for vgem to import. */
static void tbuf_new(struct nm_tbuf *t, struct ctx *c, uint64_t size,
		     uint32_t policy)
{
	nm_tbuf_alloc(t, &c->nm, size, policy, 0);
	nm_tbuf_map(t, &c->nm, 0x76e3 ^ ((uint64_t)t->a.handle << 40) ^ size);
	t->dfd = nm_export_ok(c->nm.fd, t->a.handle, O_RDWR | O_CLOEXEC);
}

/* vgem as an attached device of the dma-buf, per debugfs (-1: no bufinfo) */
static int vgem_attachments(int dfd)
{
	char *e = nm_bufinfo_entry(nm_ino(dfd));
	int n;

	if (!e) {
		ck_assert_msg(!getenv("VM_RUN"), "dma-buf not in %s: %s",
			      NM_BUFINFO, nm_errname(errno));
		return -1;
	}
	n = nm_bufinfo_attached(e, "vgem");
	free(e);
	return n;
}

START_TEST(vgem_import_attaches)
{
	struct ctx c;
	struct nm_tbuf t;
	uint32_t h, h2, h3;
	int dup_fd;

	ctx_init(&c);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	ck_assert_int_le(vgem_attachments(t.dfd), 0);
	h = nm_vgem_import_ok(c.card, t.dfd);
	printf("imported as vgem handle %u; bufinfo attachments to vgem: %d\n",
	       h, vgem_attachments(t.dfd));
	ck_assert_int_ne(vgem_attachments(t.dfd), 0);
	/* DRM's prime cache: the same dma-buf is the same object */
	h2 = nm_vgem_import_ok(c.card, t.dfd);
	ck_assert_uint_eq(h2, h);
	dup_fd = dup(t.dfd);
	h3 = nm_vgem_import_ok(c.card, dup_fd);
	ck_assert_uint_eq(h3, h);
	close(dup_fd);
	/* the import is a reference, not a second buffer */
	{
		struct nm_counters want = c.nm.base, now;

		nm_counters_add(&want, &t.a.buf, 1, true);
		nm_counters(c.nm.fd, &now);
		nm_assert_counters_eq(&want, &now);
	}
	nm_assert_ok(nm_gem_close(c.card, h));
	ck_assert_int_le(vgem_attachments(t.dfd), 0);
	nm_tbuf_free(&t, &c.nm);
	ctx_fini(&c);
}
END_TEST

static void data_both_ways(uint64_t size, uint32_t policy)
{
	struct ctx c;
	struct nm_tbuf t;
	uint64_t off = 0;
	uint8_t *v;
	uint32_t h;
	int vfd, ret;

	ctx_init(&c);
	tbuf_new(&t, &c, size, policy);
	size = t.a.buf.size;
	h = nm_vgem_import_ok(c.card, t.dfd);

	/* The DRM core does not let an importer mmap an imported object. */
	ret = nm_vgem_map_dumb(c.card, h, &off);
	printf("%s %llu: MAP_DUMB on the imported vgem handle: %s\n",
	       nm_policy_name(policy), (unsigned long long)size,
	       nm_retname(ret));
	if (ret == 0) {
		v = mmap(NULL, size, RW, MAP_SHARED, c.card, (off_t)off);
		ck_assert_msg(v != MAP_FAILED, "mmap vgem card at %#llx: %s",
			      (unsigned long long)off, nm_errname(errno));
		nm_assert_pattern(v, size, t.seed, 0);
		nm_fill(v, size, t.seed + 9);
		nm_assert_pattern(t.map, size, t.seed + 9, 0);
		nm_fill(t.map, size, t.seed);
		munmap(v, size);
	} else {
		nm_assert_ret(ret, -EINVAL);
	}

	/* What vgem hands back is our dma-buf, and maps our pages. */
	vfd = nm_vgem_export_ok(c.card, h);
	ck_assert_int_ne(vfd, t.dfd);
	ck_assert_msg(nm_ino(vfd) == nm_ino(t.dfd), "vgem re-export is "
		      "dma-buf ino %llu, npu-mem's is %llu",
		      (unsigned long long)nm_ino(vfd),
		      (unsigned long long)nm_ino(t.dfd));
	v = nm_dmabuf_map_ok(vfd, 0, size, RW);
	/* npu-mem -> vgem */
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_assert_pattern(v, size, t.seed, 0);
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	nm_fill(t.map, size, t.seed + 1);
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_assert_pattern(v, size, t.seed + 1, 0);
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	/* vgem -> npu-mem */
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	nm_fill(v, size, t.seed + 2);
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	nm_assert_pattern(t.map, size, t.seed + 2, 0);
	/* a window across the 2 MiB boundary when there is one */
	if (size > NM_2M + NM_4K) {
		uint8_t *w = nm_dmabuf_map_ok(vfd, NM_2M - NM_4K, 2 * NM_4K, RW);

		nm_assert_pattern(w, 2 * NM_4K, t.seed + 2, NM_2M - NM_4K);
		nm_fill_at(w, 2 * NM_4K, t.seed + 3, NM_2M - NM_4K);
		nm_assert_pattern(t.map + NM_2M - NM_4K, 2 * NM_4K, t.seed + 3,
			       NM_2M - NM_4K);
		munmap(w, 2 * NM_4K);
	}
	munmap(v, size);
	close(vfd);
	nm_assert_ok(nm_gem_close(c.card, h));
	nm_tbuf_free(&t, &c.nm);
	ctx_fini(&c);
}

START_TEST(vgem_data_normal)
{
	data_both_ways(256 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(vgem_data_huge)
{
	data_both_ways(4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(vgem_data_mixed)
{
	data_both_ways(2 * NM_MiB + 8 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

/* For contrast: vgem maps its own objects through the card fd. */
START_TEST(vgem_own_dumb_maps)
{
	int card = nm_vgem_open();
	uint32_t h = 0;
	uint64_t size = 0, off = 0;
	uint8_t *p;

	nm_assert_ok(nm_vgem_dumb_create(card, 64 * NM_KiB, &h, &size));
	nm_assert_ok(nm_vgem_map_dumb(card, h, &off));
	p = mmap(NULL, size, RW, MAP_SHARED, card, (off_t)off);
	ck_assert_msg(p != MAP_FAILED, "mmap vgem dumb: %s", nm_errname(errno));
	nm_fill(p, size, 42);
	nm_assert_pattern(p, size, 42, 0);
	munmap(p, size);
	nm_assert_ok(nm_gem_close(card, h));
	close(card);
}
END_TEST

static int sync_start(void *arg)
{
	int *a = arg;

	return nm_dmabuf_sync(a[0], DMA_BUF_SYNC_START | (uint64_t)a[1]);
}

static int poll_now(int dfd, short events)
{
	struct pollfd p = { .fd = dfd, .events = events };
	int r = poll(&p, 1, 0);

	ck_assert_int_ge(r, 0);
	return r ? p.revents : 0;
}

/* A SYNC blocked on a fence returns once the fence is signalled: the
 * wait for it ends when it does, and a loaded guest can take long. */
#define SIGNAL_WAIT_S	120

START_TEST(vgem_fences_shared)
{
	struct ctx c;
	struct nm_tbuf t;
	struct nm_bg bg;
	uint32_t h, fence = 0;
	int arg[2];

	ctx_init(&c);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
	h = nm_vgem_import_ok(c.card, t.dfd);
	ck_assert_int_eq(poll_now(t.dfd, POLLIN | POLLOUT), POLLIN | POLLOUT);

	/* vgem "writes": readers and writers of our dma-buf wait */
	nm_assert_ok(nm_vgem_fence_attach(c.card, h, true, &fence));
	ck_assert_int_eq(poll_now(t.dfd, POLLIN), 0);
	ck_assert_int_eq(poll_now(t.dfd, POLLOUT), 0);
	arg[0] = t.dfd;
	arg[1] = DMA_BUF_SYNC_READ;
	nm_bg_start(&bg, sync_start, arg);
	ck_assert_msg(!nm_bg_wait(&bg, 0.3),
		      "DMA_BUF_IOCTL_SYNC(START|READ) did not wait for vgem's "
		      "write fence (returned %s)", nm_retname(bg.ret));
	nm_assert_ok(nm_vgem_fence_signal(c.card, fence));
	ck_assert_msg(nm_bg_wait(&bg, SIGNAL_WAIT_S),
		      "SYNC still blocked after signal");
	nm_bg_join(&bg);
	nm_assert_ok(bg.ret);
	nm_dmabuf_sync_ok(t.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	ck_assert_int_eq(poll_now(t.dfd, POLLIN | POLLOUT), POLLIN | POLLOUT);

	/* vgem "reads": CPU readers go ahead, writers wait */
	nm_assert_ok(nm_vgem_fence_attach(c.card, h, false, &fence));
	ck_assert_int_eq(poll_now(t.dfd, POLLIN), POLLIN);
	ck_assert_int_eq(poll_now(t.dfd, POLLOUT), 0);
	nm_dmabuf_sync_ok(t.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_dmabuf_sync_ok(t.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	arg[1] = DMA_BUF_SYNC_WRITE;
	nm_bg_start(&bg, sync_start, arg);
	ck_assert_msg(!nm_bg_wait(&bg, 0.3),
		      "DMA_BUF_IOCTL_SYNC(START|WRITE) did not wait for vgem's "
		      "read fence");
	nm_assert_ok(nm_vgem_fence_signal(c.card, fence));
	ck_assert_msg(nm_bg_wait(&bg, SIGNAL_WAIT_S),
		      "SYNC still blocked after signal");
	nm_bg_join(&bg);
	nm_assert_ok(bg.ret);
	nm_dmabuf_sync_ok(t.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	ck_assert_int_eq(poll_now(t.dfd, POLLIN | POLLOUT), POLLIN | POLLOUT);
	nm_assert_pattern(t.map, t.a.buf.size, t.seed, 0);

	nm_assert_ok(nm_gem_close(c.card, h));
	nm_tbuf_free(&t, &c.nm);
	ctx_fini(&c);
}
END_TEST

START_TEST(vgem_export_again_after_import)
{
	struct ctx c;
	struct nm_tbuf t;
	uint32_t h1, h2;
	int d2, v1, v2;
	uint8_t *m1, *m2;
	uint64_t size;

	ctx_init(&c);
	tbuf_new(&t, &c, NM_2M + 4 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
	size = t.a.buf.size;
	h1 = nm_vgem_import_ok(c.card, t.dfd);
	d2 = nm_export_ok(c.nm.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	ck_assert(nm_ino(d2) != nm_ino(t.dfd));
	h2 = nm_vgem_import_ok(c.card, d2);
	ck_assert_msg(h2 != h1, "a second dma-buf imported as the same vgem "
		      "object %u", h1);
	v1 = nm_vgem_export_ok(c.card, h1);
	v2 = nm_vgem_export_ok(c.card, h2);
	ck_assert(nm_ino(v1) == nm_ino(t.dfd));
	ck_assert(nm_ino(v2) == nm_ino(d2));
	m1 = nm_dmabuf_map_ok(v1, 0, size, RW);
	m2 = nm_dmabuf_map_ok(v2, 0, size, RW);
	nm_fill(m1, size, t.seed + 1);
	nm_assert_pattern(m2, size, t.seed + 1, 0);
	nm_assert_pattern(t.map, size, t.seed + 1, 0);
	nm_fill(m2, size, t.seed + 2);
	nm_assert_pattern(m1, size, t.seed + 2, 0);
	/* one buffer behind all of it */
	{
		struct nm_counters now, want = c.nm.base;

		nm_counters_add(&want, &t.a.buf, 1, true);
		nm_counters(c.nm.fd, &now);
		nm_assert_counters_eq(&want, &now);
	}
	munmap(m1, size);
	munmap(m2, size);
	close(v1);
	close(v2);
	close(d2);
	nm_assert_ok(nm_gem_close(c.card, h1));
	nm_assert_ok(nm_gem_close(c.card, h2));
	nm_tbuf_free(&t, &c.nm);
	ctx_fini(&c);
}
END_TEST

START_TEST(vgem_import_after_free)
{
	struct nm_counters now, live;
	struct ctx c;
	struct nm_tbuf t;
	uint64_t size;
	uint32_t h;
	uint8_t *v;
	int vfd;

	ctx_init(&c);
	tbuf_new(&t, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY);
	size = t.a.buf.size;
	nm_counters(c.nm.fd, &live);
	munmap(t.map, size);
	nm_free_ok(c.nm.fd, t.a.handle);
	h = nm_vgem_import_ok(c.card, t.dfd);
	close(t.dfd);
	/* only vgem holds it now */
	nm_counters(c.nm.fd, &now);
	nm_assert_global_eq(&live, &now);
	vfd = nm_vgem_export_ok(c.card, h);
	v = nm_dmabuf_map_ok(vfd, 0, size, RW);
	nm_assert_pattern(v, size, t.seed, 0);
	close(vfd);
	nm_assert_ok(nm_gem_close(c.card, h));
	/* the mapping is the last holder */
	nm_assert_global_now(c.nm.fd, &live);
	nm_fill(v, size, t.seed + 1);
	nm_assert_pattern(v, size, t.seed + 1, 0);
	munmap(v, size);
	ctx_fini(&c);
}
END_TEST

/* ---- release orders --------------------------------------------------- */

enum holder {
	H_HANDLE, H_EXPORT_FD, H_GEM_HANDLE, H_CARD, H_VGEM_FD, H_VGEM_MAP, H_N
};
static const char *const holder_name[H_N] = {
	"FREE", "close(export)", "GEM_CLOSE", "close(card)", "close(vgem fd)",
	"munmap(vgem fd)",
};

static bool alive(const bool *held)
{
	return held[H_HANDLE] || held[H_EXPORT_FD] || held[H_VGEM_FD] ||
	       held[H_VGEM_MAP] || (held[H_GEM_HANDLE] && held[H_CARD]);
}

static void release_in_order(int fd, const int *order, int obs,
			     const struct nm_counters *start)
{
	struct npu_mem_alloc a;
	struct nm_counters live = *start;
	bool held[H_N];
	uint8_t *vmap;
	uint32_t gh;
	int dfd, card, vfd;
	char what[160];

	snprintf(what, sizeof(what), "%s, %s, %s, %s, %s, %s",
		 holder_name[order[0]], holder_name[order[1]],
		 holder_name[order[2]], holder_name[order[3]],
		 holder_name[order[4]], holder_name[order[5]]);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_counters_add(&live, &a.buf, 1, false);
	dfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	card = nm_vgem_open();
	gh = nm_vgem_import_ok(card, dfd);
	vfd = nm_vgem_export_ok(card, gh);
	vmap = nm_dmabuf_map_ok(vfd, 0, a.buf.size, RW);
	nm_fill(vmap, a.buf.size, gh);
	for (int h = 0; h < H_N; h++)
		held[h] = true;

	for (int k = 0; k < H_N; k++) {
		struct nm_counters now;

		switch (order[k]) {
		case H_HANDLE:
			nm_free_ok(fd, a.handle);
			break;
		case H_EXPORT_FD:
			close(dfd);
			break;
		case H_GEM_HANDLE:
			/* after close(card) the handle went with the file */
			if (held[H_CARD])
				nm_assert_ok(nm_gem_close(card, gh));
			break;
		case H_CARD:
			close(card);
			break;
		case H_VGEM_FD:
			close(vfd);
			break;
		case H_VGEM_MAP:
			munmap(vmap, a.buf.size);
			break;
		}
		held[order[k]] = false;
		if (held[H_VGEM_MAP])
			ck_assert_msg(nm_verify(vmap, a.buf.size, gh) == SIZE_MAX,
				      "%s: data changed after step %d", what, k);
		nm_counters(obs, &now);
		ck_assert_msg(now.buffers == (alive(held) ? live.buffers :
					      start->buffers),
			      "%s: after step %d (%s) %llu buffers, want %llu",
			      what, k, holder_name[order[k]],
			      (unsigned long long)now.buffers,
			      (unsigned long long)(alive(held) ? live.buffers :
						   start->buffers));
		nm_assert_global_eq(alive(held) ? &live : start, &now);
	}
}

static bool next_permutation(int *v, int n)
{
	int i, j, tmp;

	for (i = n - 2; i >= 0 && v[i] > v[i + 1]; i--)
		;
	if (i < 0)
		return false;
	for (j = n - 1; v[j] < v[i]; j--)
		;
	tmp = v[i];
	v[i] = v[j];
	v[j] = tmp;
	for (int l = i + 1, r = n - 1; l < r; l++, r--) {
		tmp = v[l];
		v[l] = v[r];
		v[r] = tmp;
	}
	return true;
}

START_TEST(vgem_close_every_order)
{
	int order[H_N], fd = nm_open(), obs = nm_open(), n = 0;
	struct nm_counters start;
	double t0 = nm_now();

	for (int i = 0; i < H_N; i++)
		order[i] = i;
	nm_counters(obs, &start);
	do {
		release_in_order(fd, order, obs, &start);
		n++;
	} while (next_permutation(order, H_N));
	printf("%d release orders in %.1f s\n", n, nm_now() - t0);
	ck_assert_int_eq(n, 720);
	close(fd);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("dmabuf_vgem");
	char why[512];

	nm_require_device();
	if (nm_vgem_ensure(why, sizeof(why))) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	nm_add(s, vgem_import_attaches, 30);
	nm_add(s, vgem_data_normal, 60);
	nm_add(s, vgem_data_huge, 60);
	nm_add(s, vgem_data_mixed, 60);
	nm_add(s, vgem_own_dumb_maps, 30);
	nm_add(s, vgem_fences_shared, 2 * SIGNAL_WAIT_S + 60);
	nm_add(s, vgem_export_again_after_import, 30);
	nm_add(s, vgem_import_after_free, 30);
	nm_add(s, vgem_close_every_order, 240);
	return nm_run(s, NM_NEEDS_DEVICE);
}
