// SPDX-License-Identifier: GPL-2.0-only
/*
 * dev_remove: the NPU device goes away while buffers exist, and comes back
 * (the UAPI header's "Device removal").  Root, and a PCI function bound to
 * the module (GET_INFO NPU_MEM_DEV_PCI; the x86_64-iommu-edu guest binds
 * QEMU's edu device): elsewhere the program exits 77.
 *
 * The device leaves by sysfs unbind of the npu_mem driver, or by PCI
 * remove of the function; it comes back by sysfs bind, or by a bus rescan
 * (the driver binds its function through a dynamic id, so a rescan probes
 * it again).  Every test gives the device back at its end, and a Check
 * fixture in the parent process does it too when a test failed half-way,
 * so the tests are independent and later programs in the guest still have
 * a device.
 *
 *  - unbind / remove with buffers of every policy allocated (HUGE1G_ONLY
 *    where the guest can back it), some mapped with a pattern, some
 *    exported (one dma-buf mapped, one held only by its dma-buf, one only
 *    by the mapping of a closed file): then ALLOC (also one that
 *    RLIMIT_MEMLOCK would refuse: the device comes first),
 *    SYNC, EXPORT and IPC_IMPORT of a key made before give -ENODEV,
 *    QUERY gives 0 with
 *    NPU_MEM_BUF_DEV_UNMAPPED, dev_addr 0 and dev_segments 0 (the rest of
 *    the description unchanged), GET_INFO has NPU_MEM_DEV_REMOVED (also
 *    through a file opened afterwards), FREE gives 0; the CPU mappings
 *    still hold the pattern and data the device copied before, and take
 *    writes; new mappings of a handle and of a dma-buf work, and so does
 *    DMA_BUF_IOCTL_SYNC; debugfs dma_copy is gone (ENOENT; a file opened
 *    before gets EIO from debugfs on write); the counters do not move until the holders go, and are back
 *    at the baseline when the last one does.  Then bind / rescan: no
 *    REMOVED flag, new buffers have device addresses and the edu engine
 *    copies between them, old buffers stay DEV_UNMAPPED (and SYNC, EXPORT
 *    and IPC_IMPORT of them stay -ENODEV: they have no device address);
 *  - races: a loop of debugfs dma_copy writes, a loop of ALLOC/FREE, a
 *    loop of SYNC + QUERY, a child that munmaps and closes everything, and
 *    a child killed with live buffers, all while the device goes (and for
 *    ALLOC/FREE, comes back).  Results are judged against the removal as
 *    each thread saw it: an operation that ended before the removal began
 *    must succeed, one that began after the removal returned must fail with
 *    its documented error, one that overlapped may do either; nothing else
 *    is accepted, and everything must end within a time limit (a hang is a
 *    failure; a kernel report in dmesg fails the run).  The ALLOC loop
 *    keeps its last buffers live: any made before the removal returned
 *    must be DEV_UNMAPPED after it (none may keep a mapping for the gone
 *    device), any made after the device came back must be mapped;
 *  - dma-bufs and another driver (vgem, through raw DRM ioctls, so the
 *    program needs no libdrm): an import after the removal fails with
 *    ENODEV (vgem's import maps the dma-buf at once, and the exporter's
 *    map refuses), one made before keeps working for the CPU and lets go
 *    cleanly, and after bind new buffers import again while an old
 *    buffer's dma-buf still cannot be mapped.  Left out, with the reason
 *    printed, where vgem cannot be loaded.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <drm/drm.h>

#include "nmtest_cred.h"
#include "nmtest_dmabuf.h"
#include "nmtest_pci.h"

#define RW	(PROT_READ | PROT_WRITE)

/* Under TCG a sysfs unbind or rescan takes seconds; a minute is a hang. */
#define OP_TIMEOUT	60
/* How long the racing loops may take to show progress or to end. */
#define RACE_TIMEOUT	60
/* Operations each racing loop must complete in each phase. */
#define MIN_OPS		20

static char g_bdf[NM_BDF_LEN];	/* the PCI function npu_mem had at start */
static bool g_have_copy;	/* debugfs dma_copy existed at start (edu) */
static uint32_t g_flags0;	/* GET_INFO dev_flags at start */

enum how { UNBIND, REMOVE };

static const char *gone_name(enum how how)
{
	return how == UNBIND ? "unbind" : "PCI remove";
}

static const char *back_name(enum how how)
{
	return how == UNBIND ? "bind" : "rescan";
}

/* ------------------------------------------------------------------ */
/* Taking the device away and giving it back                           */

struct sysop {
	enum how how;
	bool back;
};

static int sysop_fn(void *arg)
{
	const struct sysop *o = arg;

	if (!o->back)
		return o->how == UNBIND ? nm_pci_unbind(g_bdf) :
					  nm_pci_remove(g_bdf);
	return o->how == UNBIND ? nm_pci_bind(g_bdf) : nm_pci_rescan();
}

/*
 * The sysfs write runs in a thread: a driver that hangs in remove (say,
 * waiting on a lock a dead writer holds) is then a failure with a message,
 * not a program stuck until the guest's time runs out.
 */
static void dev_op(enum how how, bool back)
{
	struct sysop o = { how, back };
	const char *what = back ? back_name(how) : gone_name(how);
	struct nm_bg bg;
	double t0 = nm_now();

	fflush(stdout);
	nm_bg_start(&bg, sysop_fn, &o);
	ck_assert_msg(nm_bg_wait(&bg, OP_TIMEOUT), "%s of %s: no return "
		      "after %d s (hung in the driver?)", what, g_bdf,
		      OP_TIMEOUT);
	nm_bg_join(&bg);
	printf("%s %s: %s in %.2f s\n", what, g_bdf, nm_retname(bg.ret),
	       nm_now() - t0);
	ck_assert_msg(bg.ret == 0, "%s of %s: %s", what, g_bdf,
		      nm_retname(bg.ret));
	if (!back) {
		ck_assert_msg(!nm_pci_is_bound(g_bdf), "%s still bound to "
			      "npu_mem after %s", g_bdf, what);
		if (how == REMOVE)
			ck_assert_msg(!nm_pci_present(g_bdf), "%s still on the "
				      "bus after remove", g_bdf);
	} else {
		ck_assert_msg(nm_pci_wait_bound(g_bdf, true, OP_TIMEOUT),
			      "%s not bound to npu_mem %d s after %s", g_bdf,
			      OP_TIMEOUT, what);
	}
}

static void dev_gone(enum how how)
{
	dev_op(how, false);
}

static void dev_back(enum how how)
{
	dev_op(how, true);
}

static uint32_t dev_flags(int fd)
{
	struct npu_mem_info info;

	nm_get_info_ok(fd, &info);
	return info.dev_flags;
}

static void assert_dev_bound_again(int fd)
{
	uint32_t f = dev_flags(fd);

	printf("dev_flags after it came back: %#x (at start %#x)\n", f,
	       g_flags0);
	ck_assert_msg(!(f & NPU_MEM_DEV_REMOVED), "dev_flags %#x: REMOVED "
		      "after the device was bound again", f);
	ck_assert_msg((f & (NPU_MEM_DEV_PCI | NPU_MEM_DEV_IOMMU)) ==
		      (g_flags0 & (NPU_MEM_DEV_PCI | NPU_MEM_DEV_IOMMU)),
		      "dev_flags %#x after the device came back, %#x before",
		      f, g_flags0);
	if (g_have_copy)
		ck_assert_msg(access(NM_DMA_COPY, W_OK) == 0, "%s not back "
			      "with the device: %s", NM_DMA_COPY,
			      nm_errname(errno));
}

/* Check's parent process, after each test whatever its result. */
static void restore_device(void)
{
	nm_pci_give_back(g_bdf, OP_TIMEOUT);
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */

struct tb {
	const char *name;
	struct npu_mem_alloc a;
	struct npu_mem_buffer before;	/* QUERY while the device was there */
	uint8_t *map;			/* mapping of the npu-mem file */
	int dfd;			/* exported dma-buf */
	uint8_t *dmap;			/* mapping of the dma-buf */
	uint64_t seed;			/* pattern the CPU views hold */
};

static void tb_new(struct tb *t, int fd, const char *name, uint64_t size,
		   uint32_t policy, bool map)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->dfd = -1;
	/* copy_ok addresses it by offset from dev_addr */
	nm_alloc_dev_contig_ok(fd, size, policy, 0, &t->a);
	t->seed = 0xde7 ^ ((uint64_t)t->a.handle << 32) ^ size;
	if (map) {
		t->map = nm_map_ok(fd, &t->a, RW);
		nm_fill(t->map, t->a.buf.size, t->seed);
	}
}

static void tb_export(struct tb *t, int fd, bool map)
{
	t->dfd = nm_export_ok(fd, t->a.handle, O_RDWR | O_CLOEXEC);
	if (map)
		t->dmap = nm_dmabuf_map_ok(t->dfd, 0, t->a.buf.size, RW);
}

/* A live buffer of a live device: a device address, nothing unmapped. */
static void assert_dev_mapped(const char *name, const struct npu_mem_buffer *b)
{
	ck_assert_msg(!(b->flags & NPU_MEM_BUF_DEV_UNMAPPED) && b->dev_addr &&
		      b->dev_segments >= 1, "%s with the device bound: flags "
		      "%#x dev_addr %#llx dev_segments %u", name, b->flags,
		      (unsigned long long)b->dev_addr, b->dev_segments);
	if (g_flags0 & NPU_MEM_DEV_IOMMU)
		ck_assert_msg((b->flags & NPU_MEM_BUF_DEV_CONTIG) &&
			      b->dev_segments == 1, "%s under an IOMMU: flags "
			      "%#x, %u segments", name, b->flags,
			      b->dev_segments);
}

static void tb_query_before(struct tb *t, int fd)
{
	nm_assert_ok(nm_query(fd, t->a.handle, &t->before));
	assert_dev_mapped(t->name, &t->before);
}

/* QUERY after the removal: the same buffer, without a device address. */
static void assert_unmapped(const struct tb *t, int fd)
{
	struct npu_mem_buffer q, want = t->before;

	nm_assert_ok(nm_query(fd, t->a.handle, &q));
	printf("%s (%s %llu): QUERY flags %#x dev_addr %#llx dev_segments %u"
	       " (before: flags %#x dev_addr %#llx)\n", t->name,
	       nm_policy_name(q.policy), (unsigned long long)q.size, q.flags,
	       (unsigned long long)q.dev_addr, q.dev_segments,
	       t->before.flags, (unsigned long long)t->before.dev_addr);
	ck_assert_msg(q.flags & NPU_MEM_BUF_DEV_UNMAPPED, "%s: flags %#x "
		      "without DEV_UNMAPPED after the device went", t->name,
		      q.flags);
	ck_assert_msg(!(q.flags & NPU_MEM_BUF_DEV_CONTIG) && q.dev_addr == 0 &&
		      q.dev_segments == 0, "%s unmapped: flags %#x dev_addr "
		      "%#llx dev_segments %u, want no DEV_CONTIG, 0, 0",
		      t->name, q.flags, (unsigned long long)q.dev_addr,
		      q.dev_segments);
	/* what the buffer is as memory does not change */
	want.dev_addr = 0;
	want.dev_segments = 0;
	want.flags = q.flags;
	nm_assert_buf_eq(&want, &q);
	ck_assert_uint_eq(q.flags & NPU_MEM_BUF_READONLY,
			  t->before.flags & NPU_MEM_BUF_READONLY);
}

/* The device copies src+soff -> dst+doff; the CPU sees it in dst. */
static void copy_ok(int fd, const struct tb *src, uint64_t soff,
		    const struct tb *dst, uint64_t doff, uint64_t len)
{
	ck_assert_msg((src->a.buf.flags & dst->a.buf.flags &
		       NPU_MEM_BUF_DEV_CONTIG), "edu copy %s -> %s: offsets "
		      "need one device range each (flags %#x, %#x)", src->name,
		      dst->name, src->a.buf.flags, dst->a.buf.flags);
	nm_sync_ok(fd, src->a.handle, NPU_MEM_SYNC_TO_DEVICE, soff, len);
	nm_sync_ok(fd, dst->a.handle, NPU_MEM_SYNC_TO_DEVICE, doff, len);
	nm_assert_ok(nm_dma_copy(src->a.buf.dev_addr + soff,
			      dst->a.buf.dev_addr + doff, len));
	nm_sync_ok(fd, dst->a.handle, NPU_MEM_SYNC_FROM_DEVICE, doff, len);
	ck_assert_msg(nm_cmp(dst->map + doff, src->map + soff, len) ==
		      SIZE_MAX, "edu copy %s+%llu -> %s+%llu (%llu bytes): "
		      "target differs", src->name, (unsigned long long)soff,
		      dst->name, (unsigned long long)doff,
		      (unsigned long long)len);
}

/*
 * After the device came back: new buffers get device addresses and work
 * with SYNC, EXPORT and (edu) the DMA engine, and the device really is the
 * one doing it: the bytes copied land in the target.
 */
static void assert_new_buffers_work(int fd)
{
	struct tb a, b;
	int dfd;

	tb_new(&a, fd, "new-a", 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_new(&b, fd, "new-b", NM_2M, NPU_MEM_POLICY_HUGE_ONLY, true);
	assert_dev_mapped(a.name, &a.a.buf);
	assert_dev_mapped(b.name, &b.a.buf);
	tb_query_before(&a, fd);
	tb_query_before(&b, fd);
	nm_assert_buf_eq(&a.before, &a.a.buf);
	nm_sync_ok(fd, a.a.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, a.a.buf.size);
	dfd = nm_export_ok(fd, a.a.handle, O_RDWR | O_CLOEXEC);
	close(dfd);
	if (g_have_copy) {
		copy_ok(fd, &a, 100, &b, NM_2M - 6000, 5000);
		nm_assert_pattern(b.map, NM_2M - 6000, b.seed, 0);
		nm_assert_pattern(b.map + NM_2M - 1000, 1000, b.seed,
			       NM_2M - 1000);
		printf("edu copied 5000 bytes between new buffers at %#llx and "
		       "%#llx\n", (unsigned long long)a.a.buf.dev_addr,
		       (unsigned long long)b.a.buf.dev_addr);
	}
	munmap(a.map, a.a.buf.size);
	munmap(b.map, b.a.buf.size);
	nm_free_ok(fd, a.a.handle);
	nm_free_ok(fd, b.a.handle);
}

/* ALLOC with the device gone: -ENODEV, and nothing made */
static void alloc_refused(int fd, uint64_t size, uint32_t policy,
			  uint32_t flags)
{
	struct npu_mem_alloc a;
	int ret = nm_alloc(fd, size, policy, flags, &a);

	ck_assert_msg(ret == -ENODEV, "ALLOC %s %llu with the device gone: "
		      "%s (dev_addr %#llx, %u device segments), want -ENODEV",
		      nm_policy_name(policy), (unsigned long long)size,
		      nm_retname(ret), (unsigned long long)a.buf.dev_addr,
		      a.buf.dev_segments);
}

/*
 * The device's absence is said first: an ALLOC that a limit would refuse
 * too (uid 65534 with RLIMIT_MEMLOCK 64 KiB asking 1 MiB: -ENOMEM with a
 * device) gets -ENODEV, before any page is taken.
 */
static void alloc_refused_before_limits(void)
{
	pid_t pid;
	int ret;

	ret = nm_node_open_to_all();
	if (ret) {
		printf("ALLOC over RLIMIT_MEMLOCK not tried: %s\n",
		       nm_retname(ret));
		return;
	}
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		nm_become_ok(NM_UID_NOBODY, 64 * NM_KiB);
		alloc_refused(nm_open(), NM_MiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
		_exit(0);
	}
	nm_wait_ok(pid, "uid 65534 over its RLIMIT_MEMLOCK, no device");
	nm_node_restore();
}

static void counters_sub(struct nm_counters *c, const struct tb *t)
{
	nm_counters_add(c, &t->a.buf, -1, false);
}

/* ------------------------------------------------------------------ */
/* Unbind / remove, and every call's result afterwards                 */

static void revoke_cycle(enum how how)
{
	static const uint32_t dirs[] = {
		NPU_MEM_SYNC_TO_DEVICE, NPU_MEM_SYNC_FROM_DEVICE,
		NPU_MEM_SYNC_BIDIRECTIONAL,
	};
	struct tb n, h, m, x, p, t, q, g;
	struct tb *handles[] = { &n, &h, &m, &p, &t, &g };
	struct nm_counters base, live, want;
	struct npu_mem_alloc na;
	struct npu_mem_info info;
	struct npu_mem_ipc_export key = { 0 };
	struct npu_mem_ipc_import im;
	uint8_t *t_want = NULL;
	int fd, fd2, copy_fd = -1, dfd, r, g_ret;
	uint32_t f;

	fd = nm_open();
	nm_counters(fd, &base);
	ck_assert_msg(!(dev_flags(fd) & NPU_MEM_DEV_REMOVED), "REMOVED at "
		      "the start, with %s bound", g_bdf);

	/* mapped with a pattern, one of each backing */
	tb_new(&n, fd, "n", 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_new(&h, fd, "h", 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, true);
	tb_new(&m, fd, "m", NM_2M + 16 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST,
	       true);
	/* exported, its dma-buf mapped too */
	tb_export(&m, fd, true);
	/* held by its dma-buf alone: handle freed, mapping gone */
	tb_new(&x, fd, "x", 32 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_query_before(&x, fd);
	tb_export(&x, fd, false);
	munmap(x.map, x.a.buf.size);
	x.map = NULL;
	nm_free_ok(fd, x.a.handle);
	/* a handle alone, never mapped; an IPC key made of it */
	tb_new(&p, fd, "p", 128 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST, false);
	key.handle = p.a.handle;
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, &key));
	/* the edu engine's target before the removal */
	tb_new(&t, fd, "t", 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	/* held by the mapping of a file already closed */
	fd2 = nm_open();
	tb_new(&q, fd2, "q", 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_query_before(&q, fd2);
	close(fd2);
	/* 1 GiB pages where the guest can have one */
	memset(&g, 0, sizeof(g));
	g.name = "g";
	g.dfd = -1;
	g_ret = nm_alloc(fd, NM_1G, NPU_MEM_POLICY_HUGE1G_ONLY, 0, &g.a);
	printf("HUGE1G_ONLY 1 GiB before the removal: %s\n",
	       nm_retname(g_ret));
	ck_assert_msg(g_ret == 0 || g_ret == -ENOMEM || g_ret == -EOPNOTSUPP,
		      "HUGE1G_ONLY: %s", nm_retname(g_ret));
	for (size_t i = 0; i < NM_ARRAY_SIZE(handles); i++)
		if (handles[i] != &g || g_ret == 0)
			tb_query_before(handles[i], fd);

	if (g_have_copy) {
		copy_ok(fd, &n, 0, &t, 100, NM_4K);
		t_want = malloc(t.a.buf.size);
		ck_assert(t_want);
		memcpy(t_want, t.map, t.a.buf.size);
		copy_fd = open(NM_DMA_COPY, O_WRONLY | O_CLOEXEC);
		ck_assert_msg(copy_fd >= 0, "open %s: %s", NM_DMA_COPY,
			      nm_errname(errno));
	}
	nm_counters(fd, &live);

	dev_gone(how);

	/* ALLOC: every policy, read-only too */
	alloc_refused(fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	alloc_refused(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
		      NPU_MEM_ALLOC_READONLY);
	alloc_refused(fd, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0);
	alloc_refused(fd, NM_2M + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0);
	alloc_refused_before_limits();
	/*
	 * 1 GiB: the kernel may refuse a policy it cannot back (EOPNOTSUPP)
	 * before it looks at the device, or find no 1 GiB page (ENOMEM)
	 * before it maps one; what it may never do is succeed.
	 */
	r = nm_alloc(fd, NM_1G, NPU_MEM_POLICY_HUGE1G_ONLY, 0, &na);
	printf("HUGE1G_ONLY 1 GiB after %s: %s\n", gone_name(how),
	       nm_retname(r));
	ck_assert_msg(r == -ENODEV || r == -ENOMEM || r == -EOPNOTSUPP,
		      "HUGE1G_ONLY after %s: %s, want -ENODEV (or -ENOMEM, "
		      "-EOPNOTSUPP)", gone_name(how), nm_retname(r));
	nm_assert_global_now(fd, &live);

	/* the DMA engine went with the device */
	if (g_have_copy) {
		char text[96];
		ssize_t w;

		ck_assert_msg(access(NM_DMA_COPY, F_OK) && errno == ENOENT,
			      "%s still there after %s", NM_DMA_COPY,
			      gone_name(how));
		nm_assert_ret(nm_dma_copy(n.before.dev_addr, t.before.dev_addr,
				       64), -ENOENT);
		/* an open file of it only gets an error (debugfs: EIO) */
		snprintf(text, sizeof(text), "%#llx %#llx 64",
			 (unsigned long long)n.before.dev_addr,
			 (unsigned long long)t.before.dev_addr);
		errno = 0;
		w = write(copy_fd, text, strlen(text));
		printf("write to a dma_copy file opened before %s: %zd (%s)\n",
		       gone_name(how), w, nm_errname(errno));
		ck_assert_msg(w == -1 && errno == EIO, "dma_copy opened "
			      "before %s: write gave %zd/%s, want -1/EIO",
			      gone_name(how), w, nm_errname(errno));
		close(copy_fd);
		if (t_want)
			ck_assert(nm_cmp(t.map, t_want, t.a.buf.size) ==
				  SIZE_MAX);
	}
	/* GET_INFO: through the file that saw it go, and a new one */
	f = dev_flags(fd);
	printf("dev_flags after %s: %#x (before: %#x)\n", gone_name(how), f,
	       g_flags0);
	ck_assert_msg(f & NPU_MEM_DEV_REMOVED, "dev_flags %#x without REMOVED "
		      "after %s", f, gone_name(how));
	fd2 = nm_open();
	ck_assert_msg(dev_flags(fd2) & NPU_MEM_DEV_REMOVED, "a file opened "
		      "after %s: no REMOVED", gone_name(how));
	nm_assert_ret(nm_alloc(fd2, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &na),
		      -ENODEV);
	/* a key made before names a buffer with nothing to share: -ENODEV */
	im = (struct npu_mem_ipc_import){ .key = { key.key[0], key.key[1] } };
	nm_assert_ret(nm_ioctl(fd2, NPU_MEM_IOCTL_IPC_IMPORT, &im), -ENODEV);
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, &im), -ENODEV);
	close(fd2);
	/* the removal changes no count: the buffers are all still there */
	nm_assert_global_now(fd, &live);

	/* QUERY, SYNC, EXPORT on every handle */
	for (size_t i = 0; i < NM_ARRAY_SIZE(handles); i++) {
		struct tb *b = handles[i];

		if (b == &g && g_ret)
			continue;
		assert_unmapped(b, fd);
		for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
			nm_assert_ret(nm_sync(fd, b->a.handle, dirs[d], 0,
					      b->a.buf.size), -ENODEV);
			nm_assert_ret(nm_sync(fd, b->a.handle, dirs[d], 0, 1),
				      -ENODEV);
		}
		dfd = -1;
		nm_assert_ret(nm_export(fd, b->a.handle, O_RDWR | O_CLOEXEC,
					&dfd), -ENODEV);
		nm_assert_ret(nm_export(fd, b->a.handle, O_CLOEXEC, &dfd),
			      -ENODEV);
	}

	/* the CPU views: the pattern, the device's earlier copy, and writes */
	nm_assert_pattern(n.map, n.a.buf.size, n.seed, 0);
	nm_assert_pattern(h.map, h.a.buf.size, h.seed, 0);
	nm_assert_pattern(m.map, m.a.buf.size, m.seed, 0);
	nm_assert_pattern(q.map, q.a.buf.size, q.seed, 0);
	if (t_want)
		ck_assert_msg(nm_cmp(t.map, t_want, t.a.buf.size) == SIZE_MAX,
			      "t lost what the device copied into it");
	else
		nm_assert_pattern(t.map, t.a.buf.size, t.seed, 0);
	n.seed++;
	h.seed++;
	q.seed++;
	nm_fill(n.map, n.a.buf.size, n.seed);
	nm_fill(h.map, h.a.buf.size, h.seed);
	nm_fill(q.map, q.a.buf.size, q.seed);
	nm_assert_pattern(n.map, n.a.buf.size, n.seed, 0);
	nm_assert_pattern(h.map, h.a.buf.size, h.seed, 0);
	nm_assert_pattern(q.map, q.a.buf.size, q.seed, 0);
	/* m: the file mapping and the dma-buf mapping are the same pages */
	nm_dmabuf_sync_ok(m.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_assert_pattern(m.dmap, m.a.buf.size, m.seed, 0);
	nm_dmabuf_sync_ok(m.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	nm_dmabuf_sync_ok(m.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	nm_fill(m.dmap, m.a.buf.size, ++m.seed);
	nm_dmabuf_sync_ok(m.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	nm_assert_pattern(m.map, m.a.buf.size, m.seed, 0);
	nm_fill(m.map, m.a.buf.size, ++m.seed);
	nm_assert_pattern(m.dmap, m.a.buf.size, m.seed, 0);
	/* new mappings: a handle never mapped (zeroed), a dma-buf */
	p.map = nm_map_ok(fd, &p.a, RW);
	ck_assert_uint_eq(nm_nonzero(p.map, p.a.buf.size), SIZE_MAX);
	nm_fill(p.map, p.a.buf.size, p.seed);
	nm_assert_pattern(p.map, p.a.buf.size, p.seed, 0);
	x.dmap = nm_dmabuf_map_ok(x.dfd, 0, x.a.buf.size, RW);
	nm_dmabuf_sync_ok(x.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	nm_assert_pattern(x.dmap, x.a.buf.size, x.seed, 0);
	nm_fill(x.dmap, x.a.buf.size, ++x.seed);
	nm_dmabuf_sync_ok(x.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	nm_assert_pattern(x.dmap, x.a.buf.size, x.seed, 0);

	nm_assert_global_now(fd, &live);

	/* FREE works; the memory stays while mapped or exported */
	for (size_t i = 0; i < NM_ARRAY_SIZE(handles); i++) {
		if (handles[i] == &p || (handles[i] == &g && g_ret))
			continue;
		nm_free_ok(fd, handles[i]->a.handle);
		nm_assert_ret(nm_query(fd, handles[i]->a.handle, NULL),
			      -ENOENT);
	}
	want = live;
	if (!g_ret)
		counters_sub(&want, &g);	/* only its handle held it */
	nm_assert_global_now(fd, &want);
	munmap(n.map, n.a.buf.size);
	munmap(h.map, h.a.buf.size);
	munmap(t.map, t.a.buf.size);
	counters_sub(&want, &n);
	counters_sub(&want, &h);
	counters_sub(&want, &t);
	nm_assert_global_now(fd, &want);
	/* m: fd closed, then the file mapping, then the dma-buf mapping */
	close(m.dfd);
	munmap(m.map, m.a.buf.size);
	nm_assert_global_now(fd, &want);
	nm_assert_pattern(m.dmap, m.a.buf.size, m.seed, 0);
	munmap(m.dmap, m.a.buf.size);
	counters_sub(&want, &m);
	nm_assert_global_now(fd, &want);
	/* q: its file's last mapping */
	munmap(q.map, q.a.buf.size);
	counters_sub(&want, &q);
	nm_assert_global_now(fd, &want);

	/* p (handle + mapping) and x (dma-buf + mapping) outlive the device */
	dev_back(how);
	assert_dev_bound_again(fd);
	assert_unmapped(&p, fd);
	nm_assert_pattern(p.map, p.a.buf.size, p.seed, 0);
	nm_assert_pattern(x.dmap, x.a.buf.size, x.seed, 0);
	/* no device address, so nothing to sync or to share with a device */
	nm_assert_ret(nm_sync(fd, p.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0,
			      p.a.buf.size), -ENODEV);
	dfd = -1;
	nm_assert_ret(nm_export(fd, p.a.handle, O_RDWR | O_CLOEXEC, &dfd),
		      -ENODEV);
	im = (struct npu_mem_ipc_import){ .key = { key.key[0], key.key[1] } };
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, &im), -ENODEV);
	nm_dmabuf_sync_ok(x.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	nm_dmabuf_sync_ok(x.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	nm_get_info_ok(fd, &info);
	ck_assert_uint_eq(info.buffers, want.buffers);
	assert_new_buffers_work(fd);
	/* the old addresses name nothing on the new device */
	if (g_have_copy) {
		struct tb a;

		tb_new(&a, fd, "a", 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
		       true);
		if (p.before.dev_addr + p.before.size <= a.a.buf.dev_addr ||
		    p.before.dev_addr >= a.a.buf.dev_addr + a.a.buf.size)
			nm_assert_ret(nm_dma_copy(p.before.dev_addr,
					       a.a.buf.dev_addr, 64), -EINVAL);
		nm_assert_pattern(a.map, a.a.buf.size, a.seed, 0);
		munmap(a.map, a.a.buf.size);
		nm_free_ok(fd, a.a.handle);
	}

	munmap(p.map, p.a.buf.size);
	nm_free_ok(fd, p.a.handle);
	counters_sub(&want, &p);
	nm_assert_global_now(fd, &want);
	close(x.dfd);
	nm_assert_global_now(fd, &want);
	munmap(x.dmap, x.a.buf.size);
	nm_assert_global_now(fd, &base);
	nm_assert_counters_now(fd, &base);
	free(t_want);
	close(fd);
}

START_TEST(unbind_revokes)
{
	revoke_cycle(UNBIND);
}
END_TEST

START_TEST(remove_rescan_revokes)
{
	revoke_cycle(REMOVE);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Races                                                                */

/*
 * The removal as the threads see it: 0 before it starts, 1 while the sysfs
 * write runs, 2 once it returned; 3 and 4 likewise for the way back.  Read
 * before and after each operation (sequentially consistent, as the main
 * thread writes it), this says whether the operation ended before the
 * removal began (must succeed), began after it ended (must fail), or
 * overlapped it (either).
 */
static volatile int g_phase;

static int phase(void)
{
	return __atomic_load_n(&g_phase, __ATOMIC_SEQ_CST);
}

static void set_phase(int p)
{
	__atomic_store_n(&g_phase, p, __ATOMIC_SEQ_CST);
}

enum when { BEFORE, DURING, AFTER, BACK, NWHEN };
static const char *const when_name[NWHEN] = {
	"before", "overlapping", "while gone", "after it came back",
};

static enum when when_of(int p0, int p1)
{
	if (p1 == 0)
		return BEFORE;
	if (p0 == 2 && p1 == 2)
		return AFTER;
	if (p0 == 4)
		return BACK;
	return DURING;
}

struct tally {
	unsigned int ok[NWHEN], enodev[NWHEN], other[NWHEN];
	unsigned int bad;		/* results that break the rules */
	char first_bad[160];
};

static unsigned int tally_ok(const struct tally *t, enum when w)
{
	return __atomic_load_n(&t->ok[w], __ATOMIC_RELAXED);
}

static unsigned int tally_err(const struct tally *t, enum when w)
{
	return __atomic_load_n(&t->enodev[w], __ATOMIC_RELAXED) +
	       __atomic_load_n(&t->other[w], __ATOMIC_RELAXED);
}

static void tally_bad(struct tally *t, const char *what, enum when w, int ret)
{
	if (!t->bad++)
		snprintf(t->first_bad, sizeof(t->first_bad), "%s %s the "
			 "removal: %s", what, when_name[w], nm_retname(ret));
}

/*
 * Count ret, with `fail` the one failure expected once the device is gone;
 * `ok_after` says whether success is right after it came back.
 */
static void tally(struct tally *t, const char *what, enum when w, int ret,
		  int fail, bool ok_after)
{
	if (ret == 0)
		__atomic_fetch_add(&t->ok[w], 1, __ATOMIC_RELAXED);
	else if (ret == fail)
		__atomic_fetch_add(&t->enodev[w], 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&t->other[w], 1, __ATOMIC_RELAXED);
	if (ret != 0 && ret != fail)
		tally_bad(t, what, w, ret);
	else if ((w == BEFORE && ret) || (w == AFTER && !ret) ||
		 (w == BACK && !ret != ok_after))
		tally_bad(t, what, w, ret);
}

static void tally_print(const char *name, const struct tally *t)
{
	printf("%-14s", name);
	for (int w = 0; w < NWHEN; w++)
		printf(" %s: %u ok, %u failed;", when_name[w], t->ok[w],
		       t->enodev[w] + t->other[w]);
	printf(" %u wrong\n", t->bad);
}

struct race {
	int fd;
	struct tb s, d, y;
	volatile int stop_sync, stop_alloc, stop_copy;
	struct tally copy, alloc, sync, query;
	int copy_held_after, copy_open_after;	/* errors after the loop */
};

/*
 * The device copies S -> D over and over, through a dma_copy file held
 * open and through a fresh open each time, until a write fails: a write
 * that began after the removal returned must fail (a fresh open: ENOENT,
 * the file is gone; the held file: EIO, as debugfs answers for a removed
 * file), one in flight when it began may finish.
 */
static int copy_worker(void *arg)
{
	struct race *r = arg;
	char text[96];
	int held = open(NM_DMA_COPY, O_WRONLY | O_CLOEXEC);

	if (held < 0)
		return -errno;
	snprintf(text, sizeof(text), "%#llx %#llx %#llx",
		 (unsigned long long)r->s.a.buf.dev_addr,
		 (unsigned long long)r->d.a.buf.dev_addr,
		 (unsigned long long)NM_4K);
	for (unsigned int i = 0; !r->stop_copy; i++) {
		int p0 = phase(), ret, fail;
		enum when w;

		if (i % 2) {
			ssize_t n = write(held, text, strlen(text));

			ret = n < 0 ? -errno : n == (ssize_t)strlen(text) ?
			      0 : -EIO;
			fail = -EIO;
		} else {
			ret = nm_write_file(NM_DMA_COPY, text);
			/* opened in time, written after: as a held file */
			fail = ret == -EIO ? -EIO : -ENOENT;
		}
		w = when_of(p0, phase());
		tally(&r->copy, i % 2 ? "dma_copy (held file)" :
		      "dma_copy (new open)", w, ret, fail, false);
		if (ret)
			break;
	}
	{
		ssize_t n = write(held, text, strlen(text));

		r->copy_held_after = n < 0 ? -errno : 0;
	}
	r->copy_open_after = nm_write_file(NM_DMA_COPY, text);
	close(held);
	return 0;
}

/*
 * ALLOC + FREE in a file of its own, through the removal and back.  The
 * last RING buffers stay allocated, so some made just before or while the
 * device went are live when it is gone: every buffer ALLOC returned before
 * the removal did must then be DEV_UNMAPPED (a buffer mapped after the
 * revocation walked the buffers would keep a mapping for a device that is
 * gone), and every buffer made after the device came back must be mapped.
 */
#define RING	8

struct ring_buf {
	uint32_t handle;	/* 0: empty */
	int made;		/* the phase when its ALLOC returned */
};

static void ring_check(struct race *r, int fd, const struct ring_buf *ring,
		       int p0)
{
	for (int k = 0; k < RING; k++) {
		struct npu_mem_buffer q;
		bool unmapped;
		int ret;

		if (!ring[k].handle)
			continue;
		ret = nm_query(fd, ring[k].handle, &q);
		if (ret) {
			tally_bad(&r->alloc, "QUERY of a live buffer",
				  when_of(p0, phase()), ret);
			continue;
		}
		unmapped = q.flags & NPU_MEM_BUF_DEV_UNMAPPED;
		if (unmapped && (q.dev_addr || q.dev_segments))
			tally_bad(&r->alloc, "QUERY: DEV_UNMAPPED with a "
				  "device address", when_of(p0, phase()), 0);
		/* made before the removal returned, looked at after */
		if (ring[k].made <= 2 && p0 >= 2 && !unmapped) {
			tally_bad(&r->alloc, "a buffer ALLOC made as the "
				  "device went is still mapped", AFTER, 0);
			printf("handle %u (ALLOC returned in phase %d) in phase "
			       "%d: flags %#x dev_addr %#llx\n", ring[k].handle,
			       ring[k].made, p0, q.flags,
			       (unsigned long long)q.dev_addr);
		}
		/* made after the device came back */
		if (ring[k].made == 4 && unmapped)
			tally_bad(&r->alloc, "a buffer made on the new device "
				  "is unmapped", BACK, 0);
	}
}

static int alloc_worker(void *arg)
{
	static const struct {
		uint64_t size;
		uint32_t policy;
	} spec[] = {
		{ NM_4K, NPU_MEM_POLICY_NORMAL_ONLY },
		{ 64 * NM_KiB + NM_4K, NPU_MEM_POLICY_HUGE_FIRST },
		{ NM_2M, NPU_MEM_POLICY_HUGE_ONLY },
		{ 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
	};
	struct ring_buf ring[RING] = { { 0, 0 } };
	struct race *r = arg;
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (unsigned int i = 0; !r->stop_alloc; i++) {
		struct ring_buf *slot = &ring[i % RING];
		struct npu_mem_alloc a;
		int p0 = phase(), p1, ret;
		enum when w;

		if (slot->handle) {
			ret = nm_free(fd, slot->handle);
			if (ret)
				tally_bad(&r->alloc, "FREE",
					  when_of(p0, phase()), ret);
			slot->handle = 0;
		}
		p0 = phase();
		ret = nm_alloc(fd, spec[i % 4].size, spec[i % 4].policy, 0, &a);
		p1 = phase();
		w = when_of(p0, p1);
		tally(&r->alloc, "ALLOC", w, ret, -ENODEV, true);
		if (ret == 0) {
			/* a buffer made as the device went may be either */
			bool mapped = a.buf.dev_addr && a.buf.dev_segments &&
				      !(a.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED);

			if (!mapped && w != DURING)
				tally_bad(&r->alloc, "ALLOC without a device "
					  "address", w, 0);
			slot->handle = a.handle;
			slot->made = p1;
		}
		ring_check(r, fd, ring, phase());
	}
	for (int k = 0; k < RING; k++)
		if (ring[k].handle && nm_free(fd, ring[k].handle))
			tally_bad(&r->alloc, "FREE at the end", BACK, -1);
	close(fd);
	return 0;
}

/* SYNC and QUERY of Y through the removal: never anything but 0/-ENODEV
 * and "mapped at its address" / "unmapped, 0, 0". */
static int sync_worker(void *arg)
{
	static const uint32_t dirs[] = {
		NPU_MEM_SYNC_TO_DEVICE, NPU_MEM_SYNC_FROM_DEVICE,
		NPU_MEM_SYNC_BIDIRECTIONAL,
	};
	struct race *r = arg;
	const struct npu_mem_buffer *y = &r->y.before;

	for (unsigned int i = 0; !r->stop_sync; i++) {
		struct npu_mem_buffer q;
		int p0 = phase(), ret;
		enum when w;
		bool unmapped;

		ret = nm_sync(r->fd, r->y.a.handle, dirs[i % 3],
			      (i % 5) * NM_4K, y->size - (i % 5) * NM_4K);
		w = when_of(p0, phase());
		tally(&r->sync, "SYNC", w, ret, -ENODEV, false);

		p0 = phase();
		ret = nm_query(r->fd, r->y.a.handle, &q);
		w = when_of(p0, phase());
		if (ret) {
			tally(&r->query, "QUERY", w, ret, 1, false);
			continue;
		}
		unmapped = q.flags & NPU_MEM_BUF_DEV_UNMAPPED;
		if (unmapped ? q.dev_addr || q.dev_segments :
		    q.dev_addr != y->dev_addr || q.dev_segments != y->dev_segments)
			tally_bad(&r->query, "QUERY (half unmapped)", w, 0);
		/* as SYNC: "fails" meaning reports DEV_UNMAPPED */
		tally(&r->query, "QUERY (DEV_UNMAPPED)", w, unmapped ? 1 : 0, 1,
		      false);
	}
	return 0;
}

/*
 * A process with buffers mapped and exported, told to let go of them all
 * just as the device goes: its patterns hold and every munmap, close and
 * FREE works.  Exit status: 0, or the step that went wrong.
 */
static void munmap_child(int ready, int go)
{
	struct npu_mem_alloc a[6];
	uint8_t *map[6], *dmap;
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC), dfd[2];
	char c;

	if (fd < 0)
		_exit(2);
	for (int i = 0; i < 6; i++) {
		if (nm_alloc(fd, (i + 1) * 48 * NM_KiB, i % 3, 0, &a[i]))
			_exit(3);
		map[i] = nm_mmap(fd, a[i].buf.mmap_offset, a[i].buf.size, RW);
		if (map[i] == MAP_FAILED)
			_exit(4);
		nm_fill(map[i], a[i].buf.size, 0xc0 + i);
	}
	for (int i = 0; i < 2; i++)
		if (nm_export(fd, a[i].handle, O_RDWR | O_CLOEXEC, &dfd[i]))
			_exit(5);
	dmap = mmap(NULL, a[0].buf.size, RW, MAP_SHARED, dfd[0], 0);
	if (dmap == MAP_FAILED)
		_exit(6);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(7);
	for (int i = 0; i < 6; i++) {
		if (nm_verify(map[i], a[i].buf.size, 0xc0 + i) != SIZE_MAX)
			_exit(10);
		if (munmap(map[i], a[i].buf.size))
			_exit(11);
		if (i % 2 && nm_free(fd, a[i].handle))
			_exit(12);
	}
	if (close(dfd[1]) || close(fd))
		_exit(13);
	if (nm_verify(dmap, a[0].buf.size, 0xc0) != SIZE_MAX)
		_exit(14);
	if (munmap(dmap, a[0].buf.size) || close(dfd[0]))
		_exit(15);
	_exit(0);
}

/* A process with buffers mapped and exported that is killed as the device
 * goes: exit cleanup races the removal. */
static void killed_child(int ready)
{
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC), dfd;
	struct npu_mem_alloc a;

	if (fd < 0)
		_exit(2);
	for (int i = 0; i < 4; i++) {
		if (nm_alloc(fd, NM_2M + i * NM_4K, NPU_MEM_POLICY_HUGE_FIRST,
			     0, &a))
			_exit(3);
		if (nm_mmap(fd, a.buf.mmap_offset, a.buf.size, RW) ==
		    MAP_FAILED)
			_exit(4);
		if (i % 2 && nm_export(fd, a.handle, O_RDWR | O_CLOEXEC, &dfd))
			_exit(5);
	}
	if (write(ready, "r", 1) != 1)
		_exit(7);
	for (;;)
		pause();
}

static pid_t spawn(void (*fn)(int, int), int *go_w)
{
	int ready[2], go[2];
	pid_t pid;
	char c;

	ck_assert(pipe2(ready, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		fn(ready[1], go[0]);
		_exit(1);
	}
	close(ready[1]);
	close(go[0]);
	ck_assert_msg(read(ready[0], &c, 1) == 1, "child %d did not get "
		      "ready", (int)pid);
	close(ready[0]);
	if (go_w)
		*go_w = go[1];
	else
		close(go[1]);
	return pid;
}

static void killed_child_fn(int ready, int go)
{
	(void)go;
	killed_child(ready);
}

/* Wait (bounded) until cond holds; fail with what did not progress. */
#define WAIT_FOR(cond, ...) do {					\
	double _end = nm_now() + RACE_TIMEOUT;				\
	while (!(cond)) {						\
		NM_REQUIRE(nm_now() < _end, __VA_ARGS__);		\
		usleep(5000);						\
	}								\
} while (0)

static void race(enum how how)
{
	struct race r;
	struct nm_bg copy_bg, alloc_bg, sync_bg;
	struct nm_counters base;
	pid_t munmapper, victim;
	int go, st, ret;
	unsigned int n;

	memset(&r, 0, sizeof(r));
	set_phase(0);
	r.fd = nm_open();
	nm_counters(r.fd, &base);
	tb_new(&r.s, r.fd, "S", 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_new(&r.d, r.fd, "D", 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_new(&r.y, r.fd, "Y", NM_2M + 8 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST,
	       true);
	tb_query_before(&r.s, r.fd);
	tb_query_before(&r.d, r.fd);
	tb_query_before(&r.y, r.fd);

	/* the children first: no threads yet when they fork */
	munmapper = spawn(munmap_child, &go);
	victim = spawn(killed_child_fn, NULL);

	if (g_have_copy)
		nm_bg_start(&copy_bg, copy_worker, &r);
	nm_bg_start(&alloc_bg, alloc_worker, &r);
	nm_bg_start(&sync_bg, sync_worker, &r);
	/* progress with the device there */
	if (g_have_copy)
		WAIT_FOR(tally_ok(&r.copy, BEFORE) >= 1 || copy_bg.done,
			 "no dma_copy completed in %d s", RACE_TIMEOUT);
	WAIT_FOR(tally_ok(&r.alloc, BEFORE) >= MIN_OPS, "ALLOC/FREE: %u in "
		 "%d s", tally_ok(&r.alloc, BEFORE), RACE_TIMEOUT);
	WAIT_FOR(tally_ok(&r.sync, BEFORE) >= MIN_OPS, "SYNC: %u in %d s",
		 tally_ok(&r.sync, BEFORE), RACE_TIMEOUT);

	set_phase(1);
	ck_assert(write(go, "g", 1) == 1);
	close(go);
	kill(victim, SIGKILL);
	dev_gone(how);
	set_phase(2);

	/* everything ends, with the results the removal calls for */
	if (g_have_copy)
		ck_assert_msg(nm_bg_wait(&copy_bg, RACE_TIMEOUT), "the "
			      "dma_copy loop still runs %d s after %s",
			      RACE_TIMEOUT, gone_name(how));
	WAIT_FOR(tally_err(&r.alloc, AFTER) >= MIN_OPS, "ALLOC/FREE: %u "
		 "calls in %d s after %s", tally_err(&r.alloc, AFTER),
		 RACE_TIMEOUT, gone_name(how));
	WAIT_FOR(tally_err(&r.sync, AFTER) >= MIN_OPS, "SYNC: %u calls in "
		 "%d s after %s", tally_err(&r.sync, AFTER), RACE_TIMEOUT,
		 gone_name(how));
	r.stop_sync = 1;
	ck_assert_msg(nm_bg_wait(&sync_bg, RACE_TIMEOUT), "SYNC loop hung");
	st = nm_wait_timeout(munmapper, RACE_TIMEOUT);
	ck_assert_msg(st != -1, "the munmap/close child hung");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "munmap/close "
		      "child: status %#x (10: pattern, 11: munmap, 12: FREE, "
		      "13: close, 14-15: its dma-buf)", st);
	st = nm_wait_timeout(victim, RACE_TIMEOUT);
	ck_assert_msg(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		      "killed child: status %#x", st);

	/* and back, with ALLOC/FREE still running */
	set_phase(3);
	dev_back(how);
	set_phase(4);
	n = tally_ok(&r.alloc, BACK);
	WAIT_FOR(tally_ok(&r.alloc, BACK) >= n + MIN_OPS, "ALLOC/FREE: %u "
		 "successes in %d s after %s", tally_ok(&r.alloc, BACK) - n,
		 RACE_TIMEOUT, back_name(how));
	r.stop_alloc = 1;
	ck_assert_msg(nm_bg_wait(&alloc_bg, RACE_TIMEOUT), "ALLOC loop hung");
	nm_bg_join(&alloc_bg);
	nm_bg_join(&sync_bg);
	if (g_have_copy) {
		nm_bg_join(&copy_bg);
		tally_print("dma_copy", &r.copy);
		printf("dma_copy after the loop: held file %s, new open %s\n",
		       nm_retname(r.copy_held_after),
		       nm_retname(r.copy_open_after));
	}
	tally_print("ALLOC/FREE", &r.alloc);
	tally_print("SYNC", &r.sync);
	tally_print("QUERY", &r.query);
	printf("(QUERY: \"failed\" counts DEV_UNMAPPED answers)\n");

	if (g_have_copy) {
		ck_assert_msg(copy_bg.ret == 0, "dma_copy loop: open: %s",
			      nm_retname(copy_bg.ret));
		ck_assert_msg(!r.copy.bad, "%s", r.copy.first_bad);
		ck_assert_msg(tally_err(&r.copy, DURING) +
			      tally_err(&r.copy, AFTER) == 1, "the dma_copy "
			      "loop did not end on an error");
		nm_assert_ret(r.copy_held_after, -EIO);
		nm_assert_ret(r.copy_open_after, -ENOENT);
		/* back with the new device, where S and D have no address */
		ret = nm_dma_copy(r.s.before.dev_addr, r.d.before.dev_addr,
			       NM_4K);
		ck_assert_msg(ret == -EINVAL, "dma_copy S -> D after the "
			      "device came back: %s, want -EINVAL",
			      nm_retname(ret));
		/*
		 * every copy wrote S's first page into D's; with bounce
		 * buffers the device wrote D's bounce copy, which no SYNC
		 * brought back before the device went: lost with it (the
		 * UAPI header's rule), so only D's other pages are known.
		 */
		if (!(r.d.before.flags & NPU_MEM_BUF_BOUNCED))
			nm_assert_pattern(r.d.map, NM_4K, r.s.seed, 0);
		nm_assert_pattern(r.d.map + NM_4K, r.d.a.buf.size - NM_4K,
			       r.d.seed, NM_4K);
	}
	ck_assert_msg(!r.alloc.bad, "%s", r.alloc.first_bad);
	ck_assert_msg(!r.sync.bad, "%s", r.sync.first_bad);
	ck_assert_msg(!r.query.bad, "%s", r.query.first_bad);

	assert_dev_bound_again(r.fd);
	assert_unmapped(&r.s, r.fd);
	assert_unmapped(&r.y, r.fd);
	nm_assert_pattern(r.s.map, r.s.a.buf.size, r.s.seed, 0);
	nm_assert_pattern(r.y.map, r.y.a.buf.size, r.y.seed, 0);
	assert_new_buffers_work(r.fd);
	munmap(r.s.map, r.s.a.buf.size);
	munmap(r.d.map, r.d.a.buf.size);
	munmap(r.y.map, r.y.a.buf.size);
	nm_free_ok(r.fd, r.s.a.handle);
	nm_free_ok(r.fd, r.d.a.handle);
	nm_free_ok(r.fd, r.y.a.handle);
	/* the children's buffers went with them, the workers' with theirs */
	nm_assert_counters_now(r.fd, &base);
	close(r.fd);
}

START_TEST(race_unbind)
{
	race(UNBIND);
}
END_TEST

START_TEST(race_remove)
{
	race(REMOVE);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Another driver's view: vgem imports (raw DRM ioctls, no libdrm)      */

static int drm_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

static int vgem_find(void)
{
	for (int i = 0; i < 64; i++) {
		char path[64], name[32] = "";
		struct drm_version v = {
			.name_len = sizeof(name) - 1, .name = name,
		};
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!drm_ioctl(fd, DRM_IOCTL_VERSION, &v) &&
		    !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/* As nmtest_vgem.h's nm_vgem_ensure(): modprobe only in a vm-run guest. */
static int vgem_ensure(char *why, size_t len)
{
	char *out = NULL;
	int fd = vgem_find(), st;

	if (fd < 0 && getenv("VM_RUN") && !strcmp(getenv("VM_RUN"), "1")) {
		st = nm_shell("modprobe vgem", &out);
		fd = vgem_find();
		if (fd < 0)
			snprintf(why, len, "vgem cannot be loaded: modprobe "
				 "exited %d: %s", st, out ? out : "");
		free(out);
	} else if (fd < 0) {
		snprintf(why, len, "no vgem device, and outside a vm-run "
			 "guest this test never loads modules");
	}
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int prime_import(int card, int dfd, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dfd };
	int ret = drm_ioctl(card, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	*handle = ret ? 0 : p.handle;
	return ret;
}

static int prime_export(int card, uint32_t handle, int *dfd)
{
	struct drm_prime_handle p = {
		.handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1,
	};
	int ret = drm_ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	*dfd = ret ? -1 : p.fd;
	return ret;
}

static int gem_close(int card, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return drm_ioctl(card, DRM_IOCTL_GEM_CLOSE, &c);
}

START_TEST(vgem_import_after_unbind)
{
	struct tb pre, late, fresh;
	struct nm_counters base;
	uint32_t h_pre, h, h2;
	uint8_t *v;
	int fd, card, vfd, ret;

	fd = nm_open();
	card = vgem_find();
	ck_assert_msg(card >= 0, "vgem went away");
	nm_counters(fd, &base);
	/* imported by vgem (attached and mapped for its device) before */
	tb_new(&pre, fd, "pre", 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, true);
	tb_export(&pre, fd, false);
	nm_assert_ok(prime_import(card, pre.dfd, &h_pre));
	/* exported before, imported only after */
	tb_new(&late, fd, "late", NM_2M + 8 * NM_KiB,
	       NPU_MEM_POLICY_HUGE_FIRST, true);
	tb_export(&late, fd, false);

	dev_gone(UNBIND);

	/*
	 * A new import maps the dma-buf for vgem's device: the exporter's
	 * map_dma_buf refuses once its device is gone, and the DRM core
	 * hands that error back from PRIME_FD_TO_HANDLE.
	 */
	ret = prime_import(card, late.dfd, &h);
	printf("vgem import of a dma-buf after unbind: %s\n", nm_retname(ret));
	nm_assert_ret(ret, -ENODEV);
	/* the importer made before: DRM's cache has it, the same handle */
	nm_assert_ok(prime_import(card, pre.dfd, &h2));
	ck_assert_uint_eq(h2, h_pre);
	/* and it still gives the CPU the buffer's pages */
	nm_assert_ok(prime_export(card, h_pre, &vfd));
	ck_assert_uint_eq(nm_ino(vfd), nm_ino(pre.dfd));
	v = nm_dmabuf_map_ok(vfd, 0, pre.a.buf.size, RW);
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	nm_assert_pattern(v, pre.a.buf.size, pre.seed, 0);
	nm_fill(v, pre.a.buf.size, ++pre.seed);
	nm_dmabuf_sync_ok(vfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	nm_assert_pattern(pre.map, pre.a.buf.size, pre.seed, 0);
	/* letting go of it (detach, unmap) after the device went */
	nm_assert_ok(gem_close(card, h_pre));
	munmap(v, pre.a.buf.size);
	close(vfd);
	/* once let go, importing again is a new mapping: refused */
	ret = prime_import(card, pre.dfd, &h);
	printf("vgem import again after GEM_CLOSE: %s\n", nm_retname(ret));
	nm_assert_ret(ret, -ENODEV);
	nm_assert_pattern(late.map, late.a.buf.size, late.seed, 0);

	dev_back(UNBIND);
	assert_dev_bound_again(fd);
	/* new buffers share again */
	tb_new(&fresh, fd, "fresh", 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
	       true);
	tb_export(&fresh, fd, false);
	nm_assert_ok(prime_import(card, fresh.dfd, &h));
	nm_assert_ok(prime_export(card, h, &vfd));
	v = nm_dmabuf_map_ok(vfd, 0, fresh.a.buf.size, RW);
	nm_assert_pattern(v, fresh.a.buf.size, fresh.seed, 0);
	munmap(v, fresh.a.buf.size);
	close(vfd);
	nm_assert_ok(gem_close(card, h));
	/* a buffer from before stays without a device */
	ret = prime_import(card, late.dfd, &h);
	printf("vgem import of an old buffer's dma-buf after bind: %s\n",
	       nm_retname(ret));
	nm_assert_ret(ret, -ENODEV);

	munmap(pre.map, pre.a.buf.size);
	munmap(late.map, late.a.buf.size);
	munmap(fresh.map, fresh.a.buf.size);
	close(pre.dfd);
	close(late.dfd);
	close(fresh.dfd);
	nm_free_ok(fd, pre.a.handle);
	nm_free_ok(fd, late.a.handle);
	nm_free_ok(fd, fresh.a.handle);
	nm_assert_counters_now(fd, &base);
	close(card);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */

/* in Check's own process, after the test, passed or failed */
static const struct nm_fixture restore_fx = {
	.teardown = restore_device, .unchecked = true,
};

int main(void)
{
	Suite *s = nm_suite("dev_remove");
	struct npu_mem_info info;
	char why[512] = "";
	int fd, ret;

	nm_require_device();
	if (geteuid()) {
		printf("SKIP: unbinding a PCI device needs root\n");
		return 77;
	}
	fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 || nm_get_info(fd, &info)) {
		printf("FAIL: open/GET_INFO of %s: %s\n", NM_DEV_PATH,
		       strerror(errno));
		return 1;
	}
	close(fd);
	g_flags0 = info.dev_flags;
	if (!(g_flags0 & NPU_MEM_DEV_PCI)) {
		printf("SKIP: the module maps buffers for its platform device "
		       "(dev_flags %#x, no NPU_MEM_DEV_PCI): nothing to unbind;"
		       " run in the x86_64-iommu-edu guest\n", g_flags0);
		return 77;
	}
	ret = nm_pci_bound(g_bdf, sizeof(g_bdf));
	if (ret || (g_flags0 & NPU_MEM_DEV_REMOVED)) {
		printf("FAIL: dev_flags %#x, but no PCI function bound to "
		       "npu_mem in %s (%s)\n", g_flags0, NM_PCI_DRIVER,
		       nm_retname(ret));
		return 1;
	}
	g_have_copy = access(NM_DMA_COPY, W_OK) == 0;
	if (!g_have_copy && strstr(nm_vm_config(), "-edu")) {
		printf("FAIL: %s guest without %s\n", nm_vm_config(),
		       NM_DMA_COPY);
		return 1;
	}
	printf("device %s, dev_flags %#x, dma_copy %s\n", g_bdf, g_flags0,
	       g_have_copy ? "yes" : "no (not edu: DMA checks left out)");

	nm_add_fx(s, unbind_revokes, 120, &restore_fx);
	nm_add_fx(s, remove_rescan_revokes, 120, &restore_fx);
	nm_add_fx(s, race_unbind, 180, &restore_fx);
	nm_add_fx(s, race_remove, 180, &restore_fx);
	if (vgem_ensure(why, sizeof(why)) == 0)
		nm_add_fx(s, vgem_import_after_unbind, 120, &restore_fx);
	else
		printf("vgem_import_after_unbind left out: %s\n", why);
	return nm_run(s, NM_NEEDS_DEVICE);
}
