// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmabuf_import: NPU_MEM_IOCTL_DMABUF_IMPORT turns a dma-buf into a handle of
 * an npu-mem file (the UAPI header's struct npu_mem_dmabuf_import).
 *
 * Exporters: vgem (a dumb buffer exported with PRIME; both kernels),
 * udmabuf (a sealed memfd made into a dma-buf; 6.12: Debian's 6.1 is built
 * without it), the system dma-heap (6.12, same reason) and npu-mem itself.
 * A test of an exporter the running kernel lacks is a skip with the reason,
 * unless the kernel's own config says it is built in: then its missing
 * device node is a failure.
 *
 *  - another driver's dma-buf: the handle is NPU_MEM_BUF_FOREIGN and
 *    NPU_MEM_BUF_IMPORTED, its size the dma-buf's, no npu-mem pages
 *    (huge/normal/giant 0), a device address for root (one range under an
 *    IOMMU), QUERY gives what the import gave; mmap of its mmap_offset
 *    through /dev/npu-mem shows what the exporter's own mapping holds and
 *    the other way round (whole and part; MAP_PRIVATE and past the end are
 *    EINVAL, also where the exporter would map it privately); SYNC of the
 *    whole and of a part is 0 (also before the exporter's CPU access ever
 *    began), a range outside it,
 *    length 0 and a bad direction -EINVAL; EXPORT and IPC_EXPORT of the
 *    handle -EINVAL; importing twice gives two handles; npu-mem attaches to
 *    the dma-buf (debugfs bufinfo) until FREE, after which the exporter's
 *    buffer is as it was and still maps;
 *  - the import holds the dma-buf: with the exporter's fd, mapping and
 *    object all gone, the handle still maps the same bytes, and after FREE
 *    its last mapping still does; the dma-buf is released with that mapping;
 *  - accounting: a foreign import adds nothing to GET_INFO's global counters
 *    (the memory is the exporter's), only a handle to the file's
 *    client_buffers, which FREE takes back; 300 import/FREE rounds leave
 *    no handle, attachment or file descriptor behind;
 *  - npu-mem's own dma-buf: a handle on the same buffer (IMPORTED, not
 *    FOREIGN; size, policy, pages and device address the original's),
 *    through the same file or another one; writes through either mapping
 *    show in the other; it keeps the buffer alive after the original handle,
 *    the dma-buf and the original file are gone; a READONLY buffer's import
 *    is READONLY, with the buffer's own device address;
 *  - errors: a closed or negative fd -EBADF; a pipe, /dev/null, a memfd, a
 *    directory and the npu-mem file itself -EINVAL; non-zero flags or a
 *    device index that names no NPU (device_count and past it) -EINVAL;
 *    NULL argument -EFAULT; the struct-size rules of the header; no
 *    handle is made by a refused call and a sentinel buffer is intact;
 *  - a race: two threads import and FREE the same fd number, a third maps
 *    and unmaps whatever handle they last made, a fourth replaces the
 *    dma-buf behind that fd number (dup2), for a few seconds with a
 *    minimum of completed operations each; then nothing is left over;
 *  - the device really reaches imported memory (x86_64-iommu-edu guest,
 *    debugfs npu_mem/dma_copy): the edu engine copies from an npu-mem
 *    buffer into an import and from an import into an npu-mem buffer, and
 *    the bytes show through the exporter's mapping and the import's;
 *  - several NPUs (x86_64-multi-edu guest): a foreign dma-buf imported for
 *    device 2 and for device 0 gets one import per device (QUERY's device,
 *    one attachment each), importing again for device 2 names its import
 *    (same device address), device 2's engine writes into it and device
 *    0's does not reach that address; an npu-mem dma-buf imported "for"
 *    device 2 names the buffer, which stays device 0's; PCI remove of
 *    device 2 (root) detaches its import only: QUERY DEV_UNMAPPED, a new
 *    import for it -ENODEV, while device 0's import keeps its address and
 *    device 0's engine still writes into it;
 *  - device removal (a PCI device bound to the module, root): after unbind
 *    imports are NPU_MEM_BUF_DEV_UNMAPPED with no device address, their old
 *    and new mappings work, SYNC and new imports are -ENODEV, FREE works;
 *    after bind a new import has a device address again.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "nmtest_multi.h"
#include "nmtest_pci.h"
#include "nmtest_vgem.h"

#define RW		(PROT_READ | PROT_WRITE)
#define UDMABUF_DEV	"/dev/udmabuf"
#define HEAP_DEV	"/dev/dma_heap/system"
/* Under TCG a sysfs unbind or bind takes seconds; a minute is a hang. */
#define OP_TIMEOUT	60

/* ------------------------------------------------------------------ */
/* The ioctl                                                           */

static int nm_dmabuf_import(int fd, uint32_t dfd, uint32_t flags,
			    uint32_t device, struct npu_mem_dmabuf_import *out)
{
	struct npu_mem_dmabuf_import d = {
		.fd = dfd, .flags = flags, .device = device,
	};
	int ret = nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, &d);

	if (out)
		*out = d;
	return ret;
}

#define import_ok(fd, dfd, out) _import_ok((fd), (dfd), (out), __FILE__, __LINE__)
static uint32_t _import_ok(int fd, int dfd, struct npu_mem_dmabuf_import *out,
			   const char *f, int l)
{
	struct npu_mem_dmabuf_import d;
	int ret = nm_dmabuf_import(fd, (uint32_t)dfd, 0, 0, &d);

	if (ret || !d.handle)
		_ck_assert_failed(f, l, "DMABUF_IMPORT",
				  "DMABUF_IMPORT(dma-buf fd %d): %s (handle %u)",
				  dfd, nm_retname(ret), d.handle);
	if (out)
		*out = d;
	return d.handle;
}

static int ipc_export(int fd, uint32_t handle)
{
	struct npu_mem_ipc_export e = { .handle = handle };

	return nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, &e);
}

static uint32_t g_dev_flags;	/* GET_INFO dev_flags at start */

/* Device addresses are shown to root (CAP_SYS_ADMIN) whatever the IOMMU. */
static bool dev_visible(void)
{
	return geteuid() == 0;
}

/* ------------------------------------------------------------------ */
/* Exporters                                                           */

enum ekind { E_VGEM, E_UDMABUF, E_HEAP, E_N };
static const char *const ekind_name[E_N] = { "vgem", "udmabuf", "system heap" };
static bool g_have[E_N];
static char g_why[E_N][512];

struct exp {
	enum ekind kind;
	int dfd;		/* the dma-buf */
	uint64_t size;		/* its size (lseek SEEK_END) */
	uint64_t ino;		/* its inode, for debugfs bufinfo */
	uint8_t *cpu;		/* the exporter's own CPU mapping */
	int card;		/* vgem: the DRM file */
	uint32_t gem;		/* vgem: the dumb buffer */
	int memfd;		/* udmabuf: the memory behind it */
};

/* "CONFIG_X=y" in the running kernel's config: 'y', 'm', 'n', or 0 unknown */
static char kconfig(const char *opt)
{
	char path[128], line[256];
	struct utsname u;
	size_t n = strlen(opt);
	char ret = 0;
	FILE *f;

	uname(&u);
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ret = 'n';
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, opt, n) && line[n] == '=')
			ret = line[n + 1];
	fclose(f);
	return ret;
}

static bool running_debug_kernel(void)
{
	struct utsname u;

	return uname(&u) == 0 && strstr(u.release, "-npudebug-");
}

/*
 * Can this kernel give us a dma-buf of kind k?  false with the reason in
 * g_why[k]; a node that the kernel's config promises but that is missing
 * is reported as such (the tests then fail instead of skipping).
 */
static bool exporter_probe(enum ekind k)
{
	const char *node = k == E_UDMABUF ? UDMABUF_DEV : HEAP_DEV;
	const char *opt = k == E_UDMABUF ? "CONFIG_UDMABUF" :
			  "CONFIG_DMABUF_HEAPS_SYSTEM";
	char c;

	if (k == E_VGEM)
		return nm_vgem_ensure(g_why[k], sizeof(g_why[k])) == 0;
	/*
	 * Not on the debug kernel (scripts/debug-kernel.sh, release
	 * "-npudebug-", a 6.1): both exporters have bugs there that any
	 * importer's CPU-access sync triggers, none of them npu-mem's.
	 *  - CONFIG_DMABUF_DEBUG scrambles the page links of a table while an
	 *    importer has it mapped, and 6.1's system heap syncs those very
	 *    tables in its begin_cpu_access: an oops;
	 *  - 6.1's udmabuf maps its pages for its own misc device, whose DMA
	 *    parameters it never set, in segments longer than the default
	 *    64 KiB: DMA-API debugging warns on every map and sync.
	 */
	if (k != E_VGEM && running_debug_kernel()) {
		snprintf(g_why[k], sizeof(g_why[k]), "%s",
			 k == E_HEAP ? "the debug kernel's CONFIG_DMABUF_DEBUG "
			 "breaks the system heap's own CPU-access syncs of "
			 "mapped attachments" : "6.1's udmabuf maps for its own "
			 "device beyond that device's segment size, which "
			 "DMA-API debugging warns about");
		return false;
	}
	if (access(node, R_OK) == 0)
		return true;
	c = kconfig(opt);
	snprintf(g_why[k], sizeof(g_why[k]), "%s: %s; the running kernel has "
		 "%s=%c%s", node, strerror(errno), opt, c ? c : '?',
		 c == 'y' ? " (built in: the node should be there)" :
		 c == 'n' ? " (Debian's 6.1 is built without it)" :
		 c == 'm' ? " (a module this test does not load)" :
		 " (config unknown)");
	return false;
}

/* Skip the running test when the kernel has no such exporter. */
#define need_exporter(k) do {						\
	if (!g_have[k]) {						\
		ck_assert_msg(kconfig((k) == E_UDMABUF ? "CONFIG_UDMABUF" :\
				      (k) == E_HEAP ?			\
				      "CONFIG_DMABUF_HEAPS_SYSTEM" :	\
				      "CONFIG_DRM_VGEM") != 'y',	\
			      "%s", g_why[k]);				\
		nm_skip("no %s: %s", ekind_name[k], g_why[k]);		\
	}								\
} while (0)

static void exp_new(struct exp *e, enum ekind k, uint64_t size)
{
	off_t end;

	memset(e, 0, sizeof(*e));
	e->kind = k;
	e->dfd = e->card = e->memfd = -1;
	switch (k) {
	case E_VGEM: {
		uint64_t got = 0, off = 0;

		e->card = nm_vgem_open();
		nm_assert_ok(nm_vgem_dumb_create(e->card, (uint32_t)size,
						 &e->gem, &got));
		nm_assert_ok(nm_vgem_map_dumb(e->card, e->gem, &off));
		e->cpu = mmap(NULL, got, RW, MAP_SHARED, e->card, (off_t)off);
		ck_assert_msg(e->cpu != MAP_FAILED, "mmap vgem dumb: %s",
			      nm_errname(errno));
		e->dfd = nm_vgem_export_ok(e->card, e->gem);
		break;
	}
	case E_UDMABUF: {
		struct udmabuf_create c = {
			.flags = UDMABUF_FLAGS_CLOEXEC, .size = size,
		};
		int dev;

		e->memfd = nm_assert_sys(memfd_create("nmtest-udmabuf",
					 MFD_ALLOW_SEALING | MFD_CLOEXEC));
		nm_assert_sys(ftruncate(e->memfd, (off_t)size));
		/* udmabuf insists that the memfd cannot shrink under it */
		nm_assert_sys(fcntl(e->memfd, F_ADD_SEALS, F_SEAL_SHRINK));
		e->cpu = mmap(NULL, size, RW, MAP_SHARED, e->memfd, 0);
		ck_assert_msg(e->cpu != MAP_FAILED, "mmap memfd: %s",
			      nm_errname(errno));
		dev = nm_assert_sys(open(UDMABUF_DEV, O_RDWR | O_CLOEXEC));
		c.memfd = (uint32_t)e->memfd;
		e->dfd = nm_assert_sys(ioctl(dev, UDMABUF_CREATE, &c));
		close(dev);
		break;
	}
	case E_HEAP: {
		struct dma_heap_allocation_data a = {
			.len = size, .fd_flags = O_RDWR | O_CLOEXEC,
		};
		int heap = nm_assert_sys(open(HEAP_DEV, O_RDONLY | O_CLOEXEC));

		nm_assert_sys(ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a));
		close(heap);
		e->dfd = (int)a.fd;
		e->cpu = nm_dmabuf_map_ok(e->dfd, 0, size, RW);
		break;
	}
	default:
		ck_abort();
	}
	end = lseek(e->dfd, 0, SEEK_END);
	ck_assert_msg(end > 0, "lseek(dma-buf, SEEK_END): %s",
		      nm_errname(errno));
	e->size = (uint64_t)end;
	ck_assert_uint_ge(e->size, size);
	e->ino = nm_ino(e->dfd);
}

/* The exporter's CPU access, bracketed as dma-buf users must. */
static void exp_fill(struct exp *e, uint64_t seed)
{
	nm_dmabuf_sync_ok(e->dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	nm_fill(e->cpu, e->size, seed);
	nm_dmabuf_sync_ok(e->dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
}

#define exp_check(e, seed) _exp_check((e), (seed), __FILE__, __LINE__)
static void _exp_check(struct exp *e, uint64_t seed, const char *f, int l)
{
	size_t bad;

	nm_dmabuf_sync_ok(e->dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	bad = nm_verify(e->cpu, e->size, seed);
	nm_dmabuf_sync_ok(e->dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	if (bad != SIZE_MAX)
		_ck_assert_failed(f, l, "exporter", "%s's own mapping: pattern "
				  "%#llx wrong at offset %zu of %llu",
				  ekind_name[e->kind], (unsigned long long)seed,
				  bad, (unsigned long long)e->size);
}

/*
 * Does the exporter's own dma-buf mmap honour a non-zero offset?  DRM's
 * shmem helpers (vgem) fault pages in by their distance from the start of
 * the mapping, not by its offset, so a window of a vgem dma-buf shows the
 * dma-buf's first pages.  An import maps through that same mmap, so the
 * window checks of an import are only as good as its exporter's: where
 * they are not, the import is checked to map what the exporter maps.
 */
static bool exp_offsets_work(struct exp *e)
{
	uint8_t *w = nm_dmabuf_map_ok(e->dfd, NM_4K, NM_4K, PROT_READ);
	bool ok;

	ck_assert_msg(memcmp(e->cpu, e->cpu + NM_4K, NM_4K),
		      "fill the exporter's buffer first");
	ok = !memcmp(w, e->cpu + NM_4K, NM_4K);
	if (!ok)
		printf("%s's own dma-buf mmap at offset 4096 shows %s: the "
		       "exporter ignores mmap offsets\n", ekind_name[e->kind],
		       memcmp(w, e->cpu, NM_4K) ? "neither page 1 nor page 0" :
		       "its page 0");
	munmap(w, NM_4K);
	return ok;
}

/* What the exporter's dma-buf mmap shows at [off, off+len), copied. */
static uint8_t *exp_window(struct exp *e, uint64_t off, size_t len)
{
	uint8_t *w = nm_dmabuf_map_ok(e->dfd, off, len, PROT_READ);
	uint8_t *copy = malloc(len);

	ck_assert(copy);
	memcpy(copy, w, len);
	munmap(w, len);
	return copy;
}

/* Let go of everything the exporter's side holds: its fd, its mapping, its
 * object.  Only importers keep the dma-buf after this. */
static void exp_drop(struct exp *e)
{
	if (e->cpu)
		munmap(e->cpu, e->size);
	e->cpu = NULL;
	if (e->dfd >= 0)
		close(e->dfd);
	e->dfd = -1;
	if (e->card >= 0) {
		nm_assert_ok(nm_gem_close(e->card, e->gem));
		close(e->card);
	}
	e->card = -1;
	if (e->memfd >= 0)
		close(e->memfd);
	e->memfd = -1;
}

static bool have_bufinfo(void)
{
	return access(NM_BUFINFO, R_OK) == 0;
}

/* Devices attached to a live dma-buf (debugfs bufinfo); -1: no bufinfo,
 * which only a run outside a vm-run guest may lack */
static int attachments(uint64_t ino)
{
	char *e;
	int n;

	if (!have_bufinfo()) {
		ck_assert_msg(!getenv("VM_RUN"), "%s: %s", NM_BUFINFO,
			      nm_errname(errno));
		return -1;
	}
	e = nm_bufinfo_entry(ino);
	ck_assert_msg(e, "live dma-buf ino %llu not in %s: %s",
		      (unsigned long long)ino, NM_BUFINFO, nm_errname(errno));
	n = nm_bufinfo_attached(e, NULL);
	free(e);
	return n;
}

/* Is the dma-buf still alive (listed in bufinfo)?  Waits up to 2 s for it
 * to go when want is false: the last fput may be deferred. */
/*
 * Whether the mapping at @addr has a dma-buf as its file.  dma_buf_mmap()
 * makes it so, but an exporter's ->mmap may put a file of its own there
 * (5.10's vgem: its shmem file): the mapping then keeps the pages, not the
 * dma-buf.
 */
static bool mapped_by_dmabuf(const void *addr)
{
	char line[512], *path;
	unsigned long lo, hi;
	bool ret = false;
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
		    (uintptr_t)addr < lo || (uintptr_t)addr >= hi)
			continue;
		path = strchr(line, '/');
		ret = path && !strncmp(path, "/dmabuf:", 8);
		break;
	}
	fclose(f);
	return ret;
}

/* Waits up to 120 s for the answer wanted: the last fput can be deferred
 * (delayed_fput, unix garbage collection) and a loaded TCG guest stall
 * for many seconds. */
static bool dmabuf_alive(uint64_t ino, bool want)
{
	double end = nm_now() + 120;

	for (;;) {
		char *e = nm_bufinfo_entry(ino);
		bool alive = e != NULL;

		free(e);
		if (alive == want || nm_now() > end)
			return alive;
		usleep(10000);
	}
}

/* ------------------------------------------------------------------ */
/* Descriptions                                                        */

#define assert_foreign(b, e) _assert_foreign((b), (e), __FILE__, __LINE__)
static void _assert_foreign(const struct npu_mem_buffer *b, const struct exp *e,
			    const char *f, int l)
{
	uint32_t want = NPU_MEM_BUF_FOREIGN | NPU_MEM_BUF_IMPORTED;

	if ((b->flags & want) != want || b->size != e->size ||
	    b->huge_pages || b->normal_pages || b->giant_pages ||
	    !b->mmap_offset || b->mmap_offset % NM_4K ||
	    (b->flags & (NPU_MEM_BUF_DEV_UNMAPPED | NPU_MEM_BUF_READONLY |
			 NPU_MEM_BUF_HOST)))
		_ck_assert_failed(f, l, "foreign", "import of a %s dma-buf of "
				  "%llu bytes: size %llu flags %#x pages %u/%u/%u"
				  " mmap_offset %#llx; want FOREIGN|IMPORTED "
				  "(no UNMAPPED/READONLY/HOST), the dma-buf's "
				  "size, no pages, an aligned offset",
				  ekind_name[e->kind],
				  (unsigned long long)e->size,
				  (unsigned long long)b->size, b->flags,
				  b->huge_pages, b->normal_pages,
				  b->giant_pages,
				  (unsigned long long)b->mmap_offset);
	if (dev_visible() &&
	    ((b->flags & NPU_MEM_BUF_DEV_HIDDEN) || !b->dev_addr ||
	     !b->dev_segments))
		_ck_assert_failed(f, l, "foreign", "%s import as root: flags "
				  "%#x dev_addr %#llx dev_segments %u: want a "
				  "device address", ekind_name[e->kind],
				  b->flags, (unsigned long long)b->dev_addr,
				  b->dev_segments);
	_nm_assert_dev_contig(b, f, l);
	/* an IOMMU maps a scatterlist into one range of IOVAs */
	if ((g_dev_flags & NPU_MEM_DEV_IOMMU) && b->dev_segments != 1)
		_ck_assert_failed(f, l, "foreign", "%s import under an IOMMU: "
				  "%u device segments, flags %#x",
				  ekind_name[e->kind], b->dev_segments,
				  b->flags);
}

/* The counters a foreign import may move: the file's handle count only. */
static void assert_counters_plus_handles(int fd, const struct nm_counters *base,
					 int handles)
{
	struct nm_counters now, want = *base;

	nm_counters(fd, &now);
	want.client_buffers += handles;
	/* client_bytes: what a foreign handle counts there is not specified */
	want.client_bytes = now.client_bytes;
	nm_assert_counters_eq(&want, &now);
}

/* ------------------------------------------------------------------ */
/* Foreign dma-bufs: description, data, SYNC, refusals, FREE            */

static void foreign_basic(enum ekind k, uint64_t size)
{
	struct npu_mem_dmabuf_import d, d2;
	struct npu_mem_buffer q;
	struct nm_sentinel s;
	struct nm_counters base;
	struct exp e;
	uint64_t seed;
	uint8_t *m, *w;
	int fd, x, att0, nfd;

	fd = nm_open();
	nm_sentinel_init(&s, fd);
	base = s.counters;
	exp_new(&e, k, size);
	seed = 0x1a90 ^ e.ino;
	exp_fill(&e, seed);
	att0 = attachments(e.ino);
	nfd = nm_fd_count();

	import_ok(fd, e.dfd, &d);
	printf("%s %llu: handle %u flags %#x dev_addr %#llx segments %u "
	       "mmap_offset %#llx\n", ekind_name[k],
	       (unsigned long long)e.size, d.handle, d.buf.flags,
	       (unsigned long long)d.buf.dev_addr, d.buf.dev_segments,
	       (unsigned long long)d.buf.mmap_offset);
	assert_foreign(&d.buf, &e);
	ck_assert_uint_eq(d.fd, (uint32_t)e.dfd);
	nm_assert_ok(nm_query(fd, d.handle, &q));
	nm_assert_buf_eq(&d.buf, &q);
	assert_counters_plus_handles(fd, &base, 1);
	ck_assert_int_eq(nm_fd_count(), nfd);
	if (att0 >= 0)
		ck_assert_msg(attachments(e.ino) == att0 + 1, "bufinfo: %d "
			      "devices attached after the import, %d before",
			      attachments(e.ino), att0);

	/* the same bytes through both mappings, both ways */
	m = nm_mmap(fd, d.buf.mmap_offset, e.size, RW);
	ck_assert_msg(m != MAP_FAILED, "mmap of the import: %s",
		      nm_errname(errno));
	nm_assert_pattern(m, e.size, seed, 0);
	nm_fill(m, e.size, seed + 1);
	exp_check(&e, seed + 1);
	exp_fill(&e, seed + 2);
	nm_assert_pattern(m, e.size, seed + 2, 0);
	/* a part, from its third page on */
	w = nm_mmap(fd, d.buf.mmap_offset + 3 * NM_4K, 2 * NM_4K, RW);
	ck_assert_msg(w != MAP_FAILED, "mmap of 2 pages of the import: %s",
		      nm_errname(errno));
	if (exp_offsets_work(&e)) {
		nm_assert_pattern(w, 2 * NM_4K, seed + 2, 3 * NM_4K);
		nm_fill_at(w, 2 * NM_4K, seed + 3, 3 * NM_4K);
		nm_assert_pattern(m + 3 * NM_4K, 2 * NM_4K, seed + 3, 3 * NM_4K);
		nm_assert_pattern(e.cpu + 3 * NM_4K, 2 * NM_4K, seed + 3,
			       3 * NM_4K);
	} else {
		uint8_t *x = exp_window(&e, 3 * NM_4K, 2 * NM_4K);

		ck_assert_msg(!memcmp(w, x, 2 * NM_4K), "a window of the "
			      "import differs from the same window of its "
			      "exporter's dma-buf");
		free(x);
	}
	munmap(w, 2 * NM_4K);
	nm_fill(m, e.size, seed + 2);
	/* mappings of npu-mem handles are MAP_SHARED and end at the end */
	nm_assert_mmap_errno(mmap(NULL, e.size, RW, MAP_PRIVATE, fd,
				  (off_t)d.buf.mmap_offset), EINVAL);
	nm_assert_mmap_errno(nm_mmap(fd, d.buf.mmap_offset, e.size + NM_4K,
				     RW), EINVAL);

	/* SYNC: the range is checked, then the whole dma-buf maintained */
	for (uint32_t dir = NPU_MEM_SYNC_TO_DEVICE;
	     dir <= NPU_MEM_SYNC_BIDIRECTIONAL; dir++) {
		nm_sync_ok(fd, d.handle, dir, 0, e.size);
		nm_sync_ok(fd, d.handle, dir, NM_4K + 1, 100);
		nm_sync_ok(fd, d.handle, dir, e.size - 1, 1);
		nm_assert_ret(nm_sync(fd, d.handle, dir, 0, e.size + 1),
			      -EINVAL);
		nm_assert_ret(nm_sync(fd, d.handle, dir, e.size, 1), -EINVAL);
		nm_assert_ret(nm_sync(fd, d.handle, dir, NM_4K, 0), -EINVAL);
		nm_assert_ret(nm_sync(fd, d.handle, dir, UINT64_MAX, 2),
			      -EINVAL);
		nm_assert_ret(nm_sync(fd, d.handle, dir, NM_4K,
				      UINT64_MAX - NM_4K + 2), -EINVAL);
	}
	nm_assert_ret(nm_sync(fd, d.handle, 0, 0, e.size), -EINVAL);
	nm_assert_ret(nm_sync(fd, d.handle, 4, 0, e.size), -EINVAL);
	nm_assert_pattern(m, e.size, seed + 2, 0);

	/* not npu-mem's to share: the original dma-buf is */
	nm_assert_ret(nm_export(fd, d.handle, O_RDWR | O_CLOEXEC, &x), -EINVAL);
	nm_assert_ret(nm_export(fd, d.handle, O_CLOEXEC, &x), -EINVAL);
	nm_assert_ret(nm_export(fd, d.handle, 0, &x), -EINVAL);
	nm_assert_ret(ipc_export(fd, d.handle), -EINVAL);
	ck_assert_int_eq(nm_fd_count(), nfd);

	/* a second import of the same dma-buf is a second handle */
	import_ok(fd, e.dfd, &d2);
	ck_assert_uint_ne(d2.handle, d.handle);
	ck_assert_uint_ne(d2.buf.mmap_offset, d.buf.mmap_offset);
	assert_foreign(&d2.buf, &e);
	assert_counters_plus_handles(fd, &base, 2);
	nm_free_ok(fd, d2.handle);
	assert_counters_plus_handles(fd, &base, 1);

	/* FREE: gone from the file; the exporter's buffer is untouched */
	munmap(m, e.size);
	nm_free_ok(fd, d.handle);
	nm_assert_ret(nm_query(fd, d.handle, &q), -ENOENT);
	nm_assert_ret(nm_free(fd, d.handle), -ENOENT);
	nm_assert_ret(nm_sync(fd, d.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K),
		      -ENOENT);
	nm_assert_mmap_errno(nm_mmap(fd, d.buf.mmap_offset, NM_4K, RW), EINVAL);
	assert_counters_plus_handles(fd, &base, 0);
	ck_assert_int_eq(nm_fd_count(), nfd);
	if (att0 >= 0)
		ck_assert_msg(attachments(e.ino) == att0, "bufinfo: %d devices "
			      "attached after FREE, %d before the import",
			      attachments(e.ino), att0);
	exp_check(&e, seed + 2);
	exp_fill(&e, seed + 4);
	exp_check(&e, seed + 4);
	w = nm_dmabuf_map_ok(e.dfd, 0, e.size, PROT_READ);
	nm_assert_pattern(w, e.size, seed + 4, 0);
	munmap(w, e.size);

	exp_drop(&e);
	s.counters = base;
	NM_SENTINEL_CHECK(&s);
	nm_sentinel_fini(&s);
	close(fd);
}

START_TEST(vgem_foreign)
{
	need_exporter(E_VGEM);
	/* not a power of two: a 2 MiB boundary inside, 3 pages past it */
	foreign_basic(E_VGEM, NM_2M + 3 * NM_4K);
}
END_TEST

/*
 * One dma-buf imported three times (twice into one file, once into
 * another) is one import: one attachment, one device mapping (the same
 * dev_addr, which under an IOMMU two mappings would not share), and it
 * goes with the last of its handles.  The later imports hold no dma-buf
 * reference of their own: once every handle is freed and every fd
 * closed, vgem's object is gone and bufinfo no longer lists the dma-buf.
 */
START_TEST(vgem_import_twice_one_attachment)
{
	struct npu_mem_dmabuf_import d1, d2, d3;
	struct npu_mem_buffer q;
	int fd, fd2, att0;
	struct exp e;
	uint64_t ino;

	need_exporter(E_VGEM);
	exp_new(&e, E_VGEM, 4 * NM_4K);
	fd = nm_open();
	fd2 = nm_open();
	att0 = attachments(e.ino);
	import_ok(fd, e.dfd, &d1);
	import_ok(fd, e.dfd, &d2);
	import_ok(fd2, e.dfd, &d3);
	ck_assert_uint_ne(d1.handle, d2.handle);
	if (att0 >= 0)
		ck_assert_int_eq(attachments(e.ino), att0 + 1);
	if (dev_visible()) {
		ck_assert_uint_eq(d2.buf.dev_addr, d1.buf.dev_addr);
		ck_assert_uint_eq(d3.buf.dev_addr, d1.buf.dev_addr);
	}
	nm_free_ok(fd, d1.handle);
	nm_assert_ok(nm_query(fd, d2.handle, &q));
	ck_assert_uint_eq(q.flags & NPU_MEM_BUF_FOREIGN, NPU_MEM_BUF_FOREIGN);
	nm_free_ok(fd, d2.handle);
	if (att0 >= 0)
		ck_assert_int_eq(attachments(e.ino), att0 + 1);
	nm_free_ok(fd2, d3.handle);
	if (att0 >= 0)
		ck_assert_int_eq(attachments(e.ino), att0);
	close(fd2);
	close(fd);
	ino = e.ino;
	exp_drop(&e);
	if (have_bufinfo())
		ck_assert_msg(!dmabuf_alive(ino, false), "the vgem dma-buf "
			      "imported three times outlives every handle, fd "
			      "and object (an import kept a reference)");
}
END_TEST

START_TEST(udmabuf_foreign)
{
	need_exporter(E_UDMABUF);
	foreign_basic(E_UDMABUF, 256 * NM_KiB);
}
END_TEST

START_TEST(heap_foreign)
{
	need_exporter(E_HEAP);
	foreign_basic(E_HEAP, NM_MiB + NM_4K);
}
END_TEST

/*
 * A dma-buf nobody has touched with the CPU yet: SYNC of its import is 0
 * in every direction (the exporter's CPU-access hooks must be used as
 * DMA_BUF_IOCTL_SYNC uses them, begin before end: udmabuf refuses an end
 * without a begin), and a private mapping is refused whatever the
 * exporter would allow (the system heap maps page by page, and
 * remap_pfn_range maps a single page copy-on-write).
 */
static void foreign_fresh(enum ekind k)
{
	struct npu_mem_dmabuf_import d;
	struct exp e;
	int fd = nm_open();

	exp_new(&e, k, 64 * NM_KiB);
	import_ok(fd, e.dfd, &d);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_TO_DEVICE, 0, e.size);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, e.size);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_BIDIRECTIONAL, NM_4K, NM_4K);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_TO_DEVICE, 0, e.size);
	nm_assert_mmap_errno(mmap(NULL, e.size, PROT_READ, MAP_PRIVATE, fd,
				  (off_t)d.buf.mmap_offset), EINVAL);
	nm_assert_mmap_errno(mmap(NULL, e.size, RW, MAP_PRIVATE, fd,
				  (off_t)d.buf.mmap_offset), EINVAL);
	/* one page: the system heap maps page by page, and one page alone
	 * is a copy-on-write mapping remap_pfn_range accepts */
	nm_assert_mmap_errno(mmap(NULL, NM_4K, PROT_READ, MAP_PRIVATE, fd,
				  (off_t)d.buf.mmap_offset), EINVAL);
	nm_assert_mmap_errno(mmap(NULL, NM_4K, RW, MAP_PRIVATE, fd,
				  (off_t)d.buf.mmap_offset + NM_4K), EINVAL);
	nm_free_ok(fd, d.handle);
	exp_drop(&e);
	close(fd);
}

START_TEST(vgem_fresh)
{
	need_exporter(E_VGEM);
	foreign_fresh(E_VGEM);
}
END_TEST

START_TEST(udmabuf_fresh)
{
	need_exporter(E_UDMABUF);
	foreign_fresh(E_UDMABUF);
}
END_TEST

START_TEST(heap_fresh)
{
	need_exporter(E_HEAP);
	foreign_fresh(E_HEAP);
}
END_TEST

/* The import alone keeps the dma-buf (and so the memory) alive. */
static void foreign_outlives_exporter(enum ekind k)
{
	struct npu_mem_dmabuf_import d;
	struct nm_counters base;
	struct exp e;
	uint64_t seed, size, ino;
	uint8_t *m, *m2;
	bool offsets;
	int fd;

	fd = nm_open();
	nm_counters(fd, &base);
	exp_new(&e, k, 128 * NM_KiB);
	seed = 0x0de ^ e.ino;
	exp_fill(&e, seed);
	size = e.size;
	ino = e.ino;
	offsets = exp_offsets_work(&e);
	import_ok(fd, e.dfd, &d);
	assert_foreign(&d.buf, &e);
	/* fd, mapping and object of the exporter's side all go */
	exp_drop(&e);
	if (have_bufinfo())
		ck_assert_msg(dmabuf_alive(ino, true), "the dma-buf is gone "
			      "although a handle imported it");
	m = nm_mmap(fd, d.buf.mmap_offset, size, RW);
	ck_assert_msg(m != MAP_FAILED, "mmap of the import after the exporter "
		      "let go: %s", nm_errname(errno));
	nm_assert_pattern(m, size, seed, 0);
	nm_fill(m, size, seed + 1);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, size);
	munmap(m, size);
	/* a new mapping: the same pages */
	m = nm_mmap(fd, d.buf.mmap_offset, size, RW);
	ck_assert_msg(m != MAP_FAILED, "mmap again: %s", nm_errname(errno));
	nm_assert_pattern(m, size, seed + 1, 0);
	m2 = nm_mmap(fd, d.buf.mmap_offset + NM_4K, NM_4K, PROT_READ);
	ck_assert(m2 != MAP_FAILED);
	/* FREE with the mappings live: they still hold the memory */
	nm_free_ok(fd, d.handle);
	assert_counters_plus_handles(fd, &base, 0);
	nm_assert_pattern(m, size, seed + 1, 0);
	nm_fill(m, size, seed + 2);
	/* (an exporter that ignores offsets maps its first page there) */
	if (offsets)
		nm_assert_pattern(m2, NM_4K, seed + 2, NM_4K);
	else
		nm_assert_pattern(m2, NM_4K, seed + 2, 0);
	munmap(m, size);
	if (have_bufinfo() && mapped_by_dmabuf(m2))
		ck_assert_msg(dmabuf_alive(ino, true), "the dma-buf went while "
			      "a mapping of its import was left");
	else if (have_bufinfo())
		printf("the exporter maps a file of its own, not the dma-buf: "
		       "the mapping keeps the pages only\n");
	if (offsets)
		nm_assert_pattern(m2, NM_4K, seed + 2, NM_4K);
	else
		nm_assert_pattern(m2, NM_4K, seed + 2, 0);
	munmap(m2, NM_4K);
	/* nothing holds it now */
	if (have_bufinfo())
		ck_assert_msg(!dmabuf_alive(ino, false), "the %s dma-buf "
			      "outlives its last importer and mapping (a "
			      "reference leaked)", ekind_name[k]);
	nm_assert_counters_now(fd, &base);
	close(fd);
}

START_TEST(vgem_outlives_exporter)
{
	need_exporter(E_VGEM);
	foreign_outlives_exporter(E_VGEM);
}
END_TEST

START_TEST(udmabuf_outlives_exporter)
{
	need_exporter(E_UDMABUF);
	foreign_outlives_exporter(E_UDMABUF);
}
END_TEST

START_TEST(heap_outlives_exporter)
{
	need_exporter(E_HEAP);
	foreign_outlives_exporter(E_HEAP);
}
END_TEST

/* Closing the importing file (with its handle, without FREE) lets go too. */
START_TEST(foreign_file_close_releases)
{
	struct npu_mem_dmabuf_import d;
	struct exp e;
	uint64_t ino;
	uint8_t *m;
	int fd, obs, att0;
	struct nm_counters base;

	need_exporter(E_VGEM);
	obs = nm_open();
	nm_counters(obs, &base);
	exp_new(&e, E_VGEM, 64 * NM_KiB);
	exp_fill(&e, 77);
	ino = e.ino;
	att0 = attachments(ino);
	fd = nm_open();
	import_ok(fd, e.dfd, &d);
	m = nm_mmap(fd, d.buf.mmap_offset, e.size, PROT_READ);
	ck_assert(m != MAP_FAILED);
	close(fd);
	/* the mapping outlives the file */
	nm_assert_pattern(m, e.size, 77, 0);
	munmap(m, e.size);
	if (att0 >= 0)
		ck_assert_msg(attachments(ino) == att0, "bufinfo: %d devices "
			      "attached after the importing file was closed, "
			      "%d before", attachments(ino), att0);
	exp_drop(&e);
	if (have_bufinfo())
		ck_assert_msg(!dmabuf_alive(ino, false), "dma-buf leaked by a "
			      "closed file's import");
	nm_assert_global_now(obs, &base);
	close(obs);
}
END_TEST

/* ------------------------------------------------------------------ */
/* npu-mem's own dma-bufs                                              */

static void self_import(uint64_t size, uint32_t policy)
{
	struct npu_mem_dmabuf_import d1, d2, d3;
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	struct nm_counters base, base2, live;
	uint8_t *ma, *m1, *m2;
	uint64_t seed;
	int fd, fd2, obs, dfd, dfd2;

	obs = nm_open();
	fd = nm_open();
	fd2 = nm_open();
	nm_counters(obs, &base);
	nm_counters(fd2, &base2);
	nm_alloc_ok(fd, size, policy, 0, &a);
	size = a.buf.size;
	seed = 0x5e1f ^ size;
	ma = nm_map_ok(fd, &a, RW);
	nm_fill(ma, size, seed);
	dfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	dfd2 = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	nm_counters(fd, &live);

	/* into the same file and into another one */
	import_ok(fd, dfd, &d1);
	import_ok(fd2, dfd, &d2);
	printf("%s %llu: original handle %u flags %#x dev %#llx; imports %u "
	       "flags %#x dev %#llx, %u (other file) flags %#x dev %#llx\n",
	       nm_policy_name(policy), (unsigned long long)size, a.handle,
	       a.buf.flags, (unsigned long long)a.buf.dev_addr, d1.handle,
	       d1.buf.flags, (unsigned long long)d1.buf.dev_addr, d2.handle,
	       d2.buf.flags, (unsigned long long)d2.buf.dev_addr);
	for (int i = 0; i < 2; i++) {
		const struct npu_mem_buffer *b = i ? &d2.buf : &d1.buf;

		ck_assert_msg((b->flags & NPU_MEM_BUF_IMPORTED) &&
			      !(b->flags & NPU_MEM_BUF_FOREIGN),
			      "import of npu-mem's own dma-buf: flags %#x, want "
			      "IMPORTED without FOREIGN", b->flags);
		ck_assert_uint_eq(b->flags & ~NPU_MEM_BUF_IMPORTED, a.buf.flags);
		ck_assert_uint_eq(b->size, a.buf.size);
		ck_assert_uint_eq(b->policy, a.buf.policy);
		ck_assert_uint_eq(b->huge_pages, a.buf.huge_pages);
		ck_assert_uint_eq(b->normal_pages, a.buf.normal_pages);
		ck_assert_uint_eq(b->giant_pages, a.buf.giant_pages);
		ck_assert_uint_eq(b->dev_segments, a.buf.dev_segments);
		if (dev_visible())
			ck_assert_msg(b->dev_addr == a.buf.dev_addr && b->dev_addr,
				      "same buffer, dev_addr %#llx, the "
				      "original's %#llx",
				      (unsigned long long)b->dev_addr,
				      (unsigned long long)a.buf.dev_addr);
		ck_assert(b->mmap_offset && b->mmap_offset % NM_4K == 0);
	}
	ck_assert_uint_ne(d1.handle, a.handle);
	ck_assert_uint_ne(d1.buf.mmap_offset, a.buf.mmap_offset);
	nm_assert_ok(nm_query(fd, d1.handle, &q));
	nm_assert_buf_eq(&d1.buf, &q);
	nm_assert_ok(nm_query(fd2, d2.handle, &q));
	nm_assert_buf_eq(&d2.buf, &q);
	/* one buffer, two more handles */
	{
		struct nm_counters now, want = live;

		want.client_buffers++;
		nm_counters(fd, &now);
		want.client_bytes = now.client_bytes;
		nm_assert_counters_eq(&want, &now);
		nm_counters(fd2, &now);
		ck_assert_uint_eq(now.client_buffers, base2.client_buffers + 1);
		nm_assert_global_eq(&live, &now);
	}

	m1 = nm_mmap(fd, d1.buf.mmap_offset, size, RW);
	m2 = nm_mmap(fd2, d2.buf.mmap_offset, size, RW);
	ck_assert_msg(m1 != MAP_FAILED && m2 != MAP_FAILED, "mmap imports: %s",
		      nm_errname(errno));
	nm_assert_pattern(m1, size, seed, 0);
	nm_assert_pattern(m2, size, seed, 0);
	nm_fill(m2, size, seed + 1);
	nm_assert_pattern(ma, size, seed + 1, 0);
	nm_assert_pattern(m1, size, seed + 1, 0);
	nm_fill(ma, size, seed + 2);
	nm_assert_pattern(m2, size, seed + 2, 0);
	nm_sync_ok(fd, d1.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, size);
	nm_sync_ok(fd2, d2.handle, NPU_MEM_SYNC_TO_DEVICE, NM_4K, 10);
	nm_assert_ret(nm_sync(fd2, d2.handle, NPU_MEM_SYNC_TO_DEVICE, 0,
			      size + 1), -EINVAL);

	/* the original handle, its mapping and the dma-buf go: still alive */
	close(dfd);
	munmap(ma, size);
	nm_free_ok(fd, a.handle);
	nm_assert_global_now(obs, &live);
	nm_assert_pattern(m1, size, seed + 2, 0);
	/* a buffer whose handle is gone but whose dma-buf lives imports too */
	nm_free_ok(fd, d1.handle);
	munmap(m1, size);
	import_ok(fd, dfd2, &d3);
	close(dfd2);
	ck_assert_uint_eq(d3.buf.size, size);
	m1 = nm_mmap(fd, d3.buf.mmap_offset, size, RW);
	ck_assert(m1 != MAP_FAILED);
	nm_assert_pattern(m1, size, seed + 2, 0);
	munmap(m1, size);
	nm_free_ok(fd, d3.handle);
	/* the file that made the buffer goes: fd2's import keeps it */
	close(fd);
	nm_assert_global_now(obs, &live);
	nm_assert_pattern(m2, size, seed + 2, 0);
	nm_fill(m2, size, seed + 3);
	nm_free_ok(fd2, d2.handle);
	nm_assert_global_now(obs, &live);
	nm_assert_pattern(m2, size, seed + 3, 0);
	munmap(m2, size);
	/* the last holder went */
	nm_assert_global_now(obs, &base);
	nm_assert_counters_now(fd2, &base2);
	close(fd2);
	close(obs);
}

START_TEST(self_import_normal)
{
	self_import(64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(self_import_huge)
{
	self_import(4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(self_import_mixed)
{
	self_import(NM_2M + 12 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

/* The same buffer: a READONLY one stays READONLY through its import. */
START_TEST(self_import_readonly)
{
	struct npu_mem_dmabuf_import d;
	struct npu_mem_alloc a;
	uint8_t *m;
	int fd = nm_open(), dfd;

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
		    NPU_MEM_ALLOC_READONLY, &a);
	dfd = nm_export_ok(fd, a.handle, O_CLOEXEC);
	import_ok(fd, dfd, &d);
	ck_assert_msg((d.buf.flags & (NPU_MEM_BUF_READONLY |
				      NPU_MEM_BUF_IMPORTED |
				      NPU_MEM_BUF_FOREIGN)) ==
		      (NPU_MEM_BUF_READONLY | NPU_MEM_BUF_IMPORTED),
		      "import of a READONLY buffer: flags %#x", d.buf.flags);
	/* the buffer's one device mapping, its owner's */
	ck_assert_msg(d.buf.dev_addr == a.buf.dev_addr &&
		      d.buf.dev_segments == a.buf.dev_segments,
		      "read-only import: dev_addr %#llx (%u segments), the "
		      "buffer's %#llx (%u)", (unsigned long long)d.buf.dev_addr,
		      d.buf.dev_segments, (unsigned long long)a.buf.dev_addr,
		      a.buf.dev_segments);
	nm_assert_mmap_errno(nm_mmap(fd, d.buf.mmap_offset, d.buf.size, RW),
			     EACCES);
	m = nm_mmap(fd, d.buf.mmap_offset, d.buf.size, PROT_READ);
	ck_assert(m != MAP_FAILED);
	ck_assert_uint_eq(nm_nonzero(m, d.buf.size), SIZE_MAX);
	munmap(m, d.buf.size);
	close(dfd);
	nm_free_ok(fd, d.handle);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Refused imports                                                     */

START_TEST(import_errors)
{
	struct npu_mem_dmabuf_import d;
	struct npu_mem_alloc a;
	struct npu_mem_info info;
	struct nm_sentinel s;
	int fd, dfd, p[2], devnull, memfd, dir, closed, ret;
	unsigned long cmd;
	struct {
		struct npu_mem_dmabuf_import d;
		uint64_t tail;
	} big;

	fd = nm_open();
	nm_sentinel_init(&s, fd);
	/* a real dma-buf, so that only the field under test is wrong */
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	dfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	nm_sentinel_resnap(&s);

	nm_assert_sys(pipe2(p, O_CLOEXEC));
	devnull = nm_assert_sys(open("/dev/null", O_RDWR | O_CLOEXEC));
	memfd = nm_assert_sys(memfd_create("nmtest-notdmabuf", MFD_CLOEXEC));
	nm_assert_sys(ftruncate(memfd, 64 * NM_KiB));
	dir = nm_assert_sys(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	closed = nm_assert_sys(dup(devnull));
	close(closed);

	/* not a file */
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)-1, 0, 0, &d), -EBADF);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)closed, 0, 0, &d), -EBADF);
	nm_assert_ret(nm_dmabuf_import(fd, 1U << 30, 0, 0, &d), -EBADF);
	nm_assert_ret(nm_dmabuf_import(fd, 0x80000000U, 0, 0, &d), -EBADF);
	NM_SENTINEL_CHECK(&s);
	/* a file, not a dma-buf */
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)p[0], 0, 0, &d), -EINVAL);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)p[1], 0, 0, &d), -EINVAL);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)devnull, 0, 0, &d),
		      -EINVAL);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)memfd, 0, 0, &d), -EINVAL);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)dir, 0, 0, &d), -EINVAL);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)fd, 0, 0, &d), -EINVAL);
	NM_SENTINEL_CHECK(&s);
	/* a dma-buf, with bad flags or a device that is not there */
	for (int bit = 0; bit < 32; bit++) {
		ret = nm_dmabuf_import(fd, (uint32_t)dfd, 1U << bit, 0, &d);
		ck_assert_msg(ret == -EINVAL, "flags %#x: %s, want -EINVAL",
			      1U << bit, nm_retname(ret));
	}
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)dfd, O_CLOEXEC, 0, &d),
		      -EINVAL);
	nm_get_info_ok(fd, &info);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)dfd, 0, info.device_count,
				       &d), -EINVAL);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)dfd, 0, 0x80000000U, &d),
		      -EINVAL);
	/* a bad fd and bad flags: either error is documented; none imports */
	ret = nm_dmabuf_import(fd, (uint32_t)closed, 1, 0, &d);
	ck_assert_msg(ret == -EINVAL || ret == -EBADF, "%s", nm_retname(ret));
	NM_SENTINEL_CHECK(&s);
	/* the argument itself */
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, NULL), -EFAULT);
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT,
			       nm_unmapped_addr()), -EFAULT);
	cmd = NM_IOC(NM_IOC_RW, _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT),
		     sizeof(d) - 8);
	memset(&d, 0, sizeof(d));
	d.fd = (uint32_t)dfd;
	nm_assert_ret(nm_ioctl(fd, cmd, &d), -EINVAL);
	cmd = NM_IOC(NM_IOC_RW, _IOC_NR(NPU_MEM_IOCTL_DMABUF_IMPORT),
		     sizeof(big));
	memset(&big, 0, sizeof(big));
	big.d.fd = (uint32_t)dfd;
	big.tail = 1;
	nm_assert_ret(nm_ioctl(fd, cmd, &big), -EINVAL);
	NM_SENTINEL_CHECK(&s);
	/* a larger struct with a zero tail is a newer caller's: accepted */
	big.tail = 0;
	nm_assert_ok(nm_ioctl(fd, cmd, &big));
	ck_assert_uint_ne(big.d.handle, 0);
	ck_assert(big.d.buf.flags & NPU_MEM_BUF_IMPORTED);
	ck_assert_uint_eq(big.tail, 0);
	nm_free_ok(fd, big.d.handle);
	NM_SENTINEL_CHECK(&s);

	close(p[0]);
	close(p[1]);
	close(devnull);
	close(memfd);
	close(dir);
	close(dfd);
	nm_free_ok(fd, a.handle);
	nm_sentinel_resnap(&s);
	nm_sentinel_fini(&s);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Many rounds leave nothing behind                                     */

START_TEST(import_free_rounds)
{
	enum { ROUNDS = 300 };
	struct npu_mem_dmabuf_import d;
	struct npu_mem_alloc a;
	struct nm_counters base, live;
	struct exp e;
	int fd, nfd, att0, sdfd, n = 0;
	bool vgem = g_have[E_VGEM];
	double t0;

	fd = nm_open();
	nm_counters(fd, &base);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	sdfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	nm_counters(fd, &live);
	if (vgem) {
		exp_new(&e, E_VGEM, 64 * NM_KiB);
		exp_fill(&e, 5);
	}
	att0 = vgem ? attachments(e.ino) : -1;
	nfd = nm_fd_count();
	t0 = nm_now();
	for (int i = 0; i < ROUNDS; i++) {
		int r, r2;

		if (vgem) {
			r = nm_dmabuf_import(fd, (uint32_t)e.dfd, 0, 0, &d);
			NM_REQUIRE(r == 0 && (d.buf.flags & NPU_MEM_BUF_FOREIGN),
				   "round %d: vgem import %s flags %#x", i,
				   nm_retname(r), d.buf.flags);
			r2 = nm_free(fd, d.handle);
			NM_REQUIRE(r2 == 0, "round %d: FREE %s", i,
				   nm_retname(r2));
			n++;
		}
		r = nm_dmabuf_import(fd, (uint32_t)sdfd, 0, 0, &d);
		NM_REQUIRE(r == 0 && !(d.buf.flags & NPU_MEM_BUF_FOREIGN),
			   "round %d: self import %s flags %#x", i,
			   nm_retname(r), d.buf.flags);
		r2 = nm_free(fd, d.handle);
		NM_REQUIRE(r2 == 0, "round %d: FREE %s", i, nm_retname(r2));
		n++;
	}
	printf("%d imports and FREEs in %.2f s (%s)\n", n, nm_now() - t0,
	       vgem ? "vgem and npu-mem dma-bufs" : "npu-mem dma-bufs only: "
	       "no vgem");
	nm_assert_counters_now(fd, &live);
	ck_assert_int_eq(nm_fd_count(), nfd);
	if (att0 >= 0)
		ck_assert_int_eq(attachments(e.ino), att0);
	if (vgem)
		exp_drop(&e);
	close(sdfd);
	nm_free_ok(fd, a.handle);
	nm_assert_counters_now(fd, &base);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Race: import / FREE / map on one fd number whose dma-buf changes      */

/* At least RACE_SECONDS, then until the minimums are met, up to the
 * ceiling of nm_span (a slow guest takes longer, it does not fail). */
#define RACE_SECONDS	3.0
#define MIN_IMPORTS	50
#define MIN_MAPS	20
#define MIN_SWAPS	20

struct race {
	int fd;			/* the npu-mem file */
	int slot;		/* the fd number whose dma-buf the swapper changes */
	int alt[2];		/* the two dma-bufs it puts there */
	uint64_t size, seed;
	_Atomic uint32_t latest;	/* the newest handle an importer made */
	atomic_int stop;
	atomic_uint imports[2], maps, map_gone, swaps;
	char bad[256];
	atomic_int nbad;
};

static void race_bad(struct race *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void race_bad(struct race *r, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&r->nbad, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(r->bad, sizeof(r->bad), fmt, ap);
	va_end(ap);
}

struct racer {
	struct race *r;
	int idx;
	pthread_t th;
};

static void *importer(void *p)
{
	struct racer *me = p;
	struct race *r = me->r;
	struct npu_mem_dmabuf_import d;
	struct npu_mem_buffer q;

	while (!atomic_load(&r->stop)) {
		int ret = nm_dmabuf_import(r->fd, (uint32_t)r->slot, 0, 0, &d);

		if (ret || !(d.buf.flags & NPU_MEM_BUF_FOREIGN) ||
		    d.buf.size != r->size) {
			race_bad(r, "import: %s flags %#x size %llu",
				 nm_retname(ret), d.buf.flags,
				 (unsigned long long)d.buf.size);
			break;
		}
		atomic_store(&r->latest, d.handle);
		ret = nm_query(r->fd, d.handle, &q);
		if (ret || memcmp(&q, &d.buf, sizeof(q))) {
			race_bad(r, "QUERY of own import %u: %s", d.handle,
				 nm_retname(ret));
			break;
		}
		ret = nm_free(r->fd, d.handle);
		if (ret) {
			race_bad(r, "FREE of own import %u: %s", d.handle,
				 nm_retname(ret));
			break;
		}
		atomic_fetch_add(&r->imports[me->idx], 1);
	}
	return NULL;
}

/* Map whatever handle was made last: it may be freed at any moment. */
static void *mapper(void *p)
{
	struct race *r = ((struct racer *)p)->r;
	struct npu_mem_buffer q;

	while (!atomic_load(&r->stop)) {
		uint32_t h = atomic_load(&r->latest);
		uint8_t *m;
		int ret;

		if (!h) {
			sched_yield();
			continue;
		}
		ret = nm_query(r->fd, h, &q);
		if (ret == -ENOENT) {
			atomic_fetch_add(&r->map_gone, 1);
			continue;
		}
		if (ret) {
			race_bad(r, "QUERY %u: %s", h, nm_retname(ret));
			break;
		}
		m = nm_mmap(r->fd, q.mmap_offset, r->size, PROT_READ);
		if (m == MAP_FAILED) {
			/* freed between QUERY and mmap: its offset is no one's */
			if (errno != EINVAL) {
				race_bad(r, "mmap of import %u: %s", h,
					 nm_errname(errno));
				break;
			}
			atomic_fetch_add(&r->map_gone, 1);
			continue;
		}
		/* both dma-bufs hold the same pattern: either is right */
		if (nm_verify_at(m, NM_4K, r->seed, 0) != SIZE_MAX ||
		    nm_verify_at(m + r->size - NM_4K, NM_4K, r->seed,
				 r->size - NM_4K) != SIZE_MAX) {
			race_bad(r, "mapping of import %u: wrong bytes", h);
			munmap(m, r->size);
			break;
		}
		munmap(m, r->size);
		atomic_fetch_add(&r->maps, 1);
	}
	return NULL;
}

/* Replace the dma-buf behind the slot: an import takes one or the other. */
static void *swapper(void *p)
{
	struct race *r = ((struct racer *)p)->r;
	unsigned int i = 0;

	while (!atomic_load(&r->stop)) {
		if (dup3(r->alt[++i & 1], r->slot, O_CLOEXEC) != r->slot) {
			race_bad(r, "dup3: %s", nm_errname(errno));
			break;
		}
		atomic_fetch_add(&r->swaps, 1);
		usleep(200);
	}
	return NULL;
}

START_TEST(import_race)
{
	struct racer t[4];
	struct race r;
	struct exp a, b;
	struct nm_counters base;
	int atta, attb, nfd;
	struct nm_span span;
	bool enough = false;

	need_exporter(E_VGEM);
	memset(&r, 0, sizeof(r));
	r.fd = nm_open();
	nm_counters(r.fd, &base);
	exp_new(&a, E_VGEM, 64 * NM_KiB);
	exp_new(&b, E_VGEM, 64 * NM_KiB);
	r.size = a.size;
	r.seed = 0x7ace;
	exp_fill(&a, r.seed);
	exp_fill(&b, r.seed);
	atta = attachments(a.ino);
	attb = attachments(b.ino);
	r.alt[0] = a.dfd;
	r.alt[1] = b.dfd;
	r.slot = nm_assert_sys(fcntl(a.dfd, F_DUPFD_CLOEXEC, 0));
	nfd = nm_fd_count();

	for (int i = 0; i < 4; i++) {
		t[i].r = &r;
		t[i].idx = i;
		ck_assert_int_eq(pthread_create(&t[i].th, NULL,
						i < 2 ? importer :
						i == 2 ? mapper : swapper,
						&t[i]), 0);
	}
	nm_span_start(&span, RACE_SECONDS);
	do {
		usleep(100000);
		enough = atomic_load(&r.imports[0]) >= MIN_IMPORTS &&
			 atomic_load(&r.imports[1]) >= MIN_IMPORTS &&
			 atomic_load(&r.maps) >= MIN_MAPS &&
			 atomic_load(&r.swaps) >= MIN_SWAPS;
	} while (!atomic_load(&r.nbad) && nm_span_more(&span, enough));
	atomic_store(&r.stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i].th, NULL);
	printf("%.1f s: imports+FREEs %u and %u, maps %u (%u found freed), "
	       "dma-buf swaps %u\n", nm_span_secs(&span),
	       atomic_load(&r.imports[0]),
	       atomic_load(&r.imports[1]), atomic_load(&r.maps),
	       atomic_load(&r.map_gone), atomic_load(&r.swaps));
	ck_assert_msg(!atomic_load(&r.nbad), "%s", r.bad);
	ck_assert_msg(enough, "too little progress in %.0f s, the ceiling (want "
		      "%d imports per thread, %d maps, %d swaps)",
		      nm_span_secs(&span), MIN_IMPORTS, MIN_MAPS, MIN_SWAPS);

	/* nothing left: handles, attachments, files */
	nm_assert_counters_now(r.fd, &base);
	ck_assert_int_eq(nm_fd_count(), nfd);
	if (atta >= 0) {
		ck_assert_int_eq(attachments(a.ino), atta);
		ck_assert_int_eq(attachments(b.ino), attb);
	}
	close(r.slot);
	exp_drop(&a);
	exp_drop(&b);
	close(r.fd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The device reaches imported memory (edu DMA engine behind an IOMMU)  */

static void edu_copy(enum ekind k)
{
	struct npu_mem_dmabuf_import d;
	struct npu_mem_alloc a;
	struct exp e;
	uint8_t *ma, *mi, *want;
	uint64_t size, seed = 0xed5;
	size_t bad;
	int fd;

	if (access(NM_DMA_COPY, W_OK))
		nm_skip("no edu DMA engine (%s: %s): run in the "
			"x86_64-iommu-edu guest", NM_DMA_COPY,
			nm_errname(errno));
	fd = nm_open();
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ma = nm_map_ok(fd, &a, RW);
	nm_fill(ma, a.buf.size, seed);
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, a.buf.size);
	exp_new(&e, k, 64 * NM_KiB);
	size = e.size;
	exp_fill(&e, seed + 1);
	import_ok(fd, e.dfd, &d);
	assert_foreign(&d.buf, &e);
	ck_assert_msg(d.buf.flags & NPU_MEM_BUF_DEV_CONTIG, "offsets into the "
		      "import need one device range: flags %#x, %u segments",
		      d.buf.flags, d.buf.dev_segments);
	mi = nm_mmap(fd, d.buf.mmap_offset, size, RW);
	ck_assert(mi != MAP_FAILED);
	want = malloc(size);
	ck_assert(want);

	/* npu-mem buffer -> import: seen through both of the import's views */
	memcpy(want, e.cpu, size);
	memcpy(want + 5000, ma + 100, 3000);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_TO_DEVICE, 5000, 3000);
	nm_assert_ok(nm_dma_copy(a.buf.dev_addr + 100, d.buf.dev_addr + 5000,
			      3000));
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_FROM_DEVICE, 5000, 3000);
	printf("%s: edu copied 3000 bytes from %#llx into the import at "
	       "%#llx\n", ekind_name[k], (unsigned long long)a.buf.dev_addr,
	       (unsigned long long)d.buf.dev_addr);
	bad = nm_cmp(mi, want, size);
	ck_assert_msg(bad == SIZE_MAX, "import's npu-mem mapping differs at %zu"
		      " after the device wrote [5000, 8000)", bad);
	nm_dmabuf_sync_ok(e.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	bad = nm_cmp(e.cpu, want, size);
	nm_dmabuf_sync_ok(e.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	ck_assert_msg(bad == SIZE_MAX, "%s's own mapping differs at %zu after "
		      "the device wrote [5000, 8000)", ekind_name[k], bad);

	/* import -> npu-mem buffer: what the exporter's mapping wrote */
	nm_dmabuf_sync_ok(e.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	nm_fill_at(e.cpu + 20000, 6000, seed + 2, 20000);
	nm_dmabuf_sync_ok(e.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	memcpy(want, ma, a.buf.size);
	memcpy(want + 30000, e.cpu + 20000, 6000);
	nm_sync_ok(fd, d.handle, NPU_MEM_SYNC_TO_DEVICE, 20000, 6000);
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 30000, 6000);
	nm_assert_ok(nm_dma_copy(d.buf.dev_addr + 20000, a.buf.dev_addr + 30000,
			      6000));
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_FROM_DEVICE, 30000, 6000);
	bad = nm_cmp(ma, want, a.buf.size);
	ck_assert_msg(bad == SIZE_MAX, "npu-mem buffer differs at %zu after "
		      "the device copied the import's [20000, 26000) to "
		      "[30000, 36000)", bad);
	/* the import's range ends at its end */
	nm_assert_ret(nm_dma_copy(d.buf.dev_addr + size - 64, a.buf.dev_addr, 128),
		      -EINVAL);
	/* freed: its device range is no one's */
	munmap(mi, size);
	nm_free_ok(fd, d.handle);
	nm_assert_ret(nm_dma_copy(d.buf.dev_addr, a.buf.dev_addr, 64), -EINVAL);
	free(want);
	exp_drop(&e);
	munmap(ma, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}

START_TEST(edu_copy_vgem)
{
	need_exporter(E_VGEM);
	edu_copy(E_VGEM);
}
END_TEST

START_TEST(edu_copy_udmabuf)
{
	need_exporter(E_UDMABUF);
	edu_copy(E_UDMABUF);
}
END_TEST

START_TEST(edu_copy_heap)
{
	need_exporter(E_HEAP);
	edu_copy(E_HEAP);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Several NPUs                                                        */

static int query_dev(int fd, uint32_t handle, struct npu_mem_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = handle;
	return nm_ioctl(fd, NPU_MEM_IOCTL_QUERY, q);
}

static char g_removed[NM_BDF_LEN];	/* a removed NPU, until restored */

static void give_back_removed(void)
{
	nm_pci_give_back(g_removed, OP_TIMEOUT);
}

/* Remove NPU dev: e's import for it goes, device 0's import d0 stays. */
static void remove_detaches_its_import(int fd, uint32_t dev, struct exp *e,
				       const struct npu_mem_dmabuf_import *d0,
				       const struct npu_mem_dmabuf_import *d2)
{
	struct npu_mem_dmabuf_import x;
	struct npu_mem_alloc a0;
	struct npu_mem_info di;
	struct npu_mem_query q;
	uint8_t *m;

	nm_assert_ok(nm_info_of(fd, dev, &di));
	nm_bdf_of(&di, g_removed, sizeof(g_removed));
	printf("removing device %u (%s)\n", dev, g_removed);
	nm_assert_ok(nm_pci_remove(g_removed));
	nm_assert_ok(query_dev(fd, d2->handle, &q));
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
	ck_assert_uint_eq(q.device, dev);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)e->dfd, 0, dev, &x),
		      -ENODEV);
	nm_assert_ok(query_dev(fd, d0->handle, &q));
	ck_assert_uint_eq(q.buf.flags & NPU_MEM_BUF_DEV_UNMAPPED, 0);
	ck_assert_uint_eq(q.buf.dev_addr, d0->buf.dev_addr);

	nm_assert_ok(nm_alloc_on(fd, 0, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
				 &a0));
	m = nm_map_ok(fd, &a0, RW);
	nm_fill(m, NM_4K, 0x2d4);
	nm_sync_ok(fd, a0.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
	nm_sync_ok(fd, d0->handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
	nm_assert_ok(nm_dma_copy_on(0, a0.buf.dev_addr, d0->buf.dev_addr,
				    NM_4K));
	nm_sync_ok(fd, d0->handle, NPU_MEM_SYNC_FROM_DEVICE, 0, NM_4K);
	nm_dmabuf_sync_ok(e->dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	ck_assert_msg(nm_verify(e->cpu, NM_4K, 0x2d4) == SIZE_MAX,
		      "device 0's write did not reach its import");
	nm_dmabuf_sync_ok(e->dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	munmap(m, a0.buf.size);
	nm_free_ok(fd, a0.handle);

	nm_assert_ok(nm_pci_restore(g_removed, OP_TIMEOUT));
	g_removed[0] = 0;
}

START_TEST(import_per_device)
{
	const enum ekind order[] = { E_UDMABUF, E_HEAP, E_VGEM };
	struct npu_mem_dmabuf_import d0, d2, d2b, ds;
	struct npu_mem_alloc a;
	struct npu_mem_info info;
	struct npu_mem_query q;
	enum ekind k = E_N;
	struct exp e;
	uint8_t *ma;
	uint32_t dev;
	int fd = nm_open(), att0, sdfd;

	nm_get_info_ok(fd, &info);
	if (info.device_count < 2 || access(NM_DMA_COPY, W_OK)) {
		close(fd);
		nm_skip("%u NPU(s), edu engine %s: run in x86_64-multi-edu",
			info.device_count, access(NM_DMA_COPY, W_OK) ? "no" :
			"yes");
	}
	for (size_t i = 0; i < NM_ARRAY_SIZE(order) && k == E_N; i++)
		if (g_have[order[i]])
			k = order[i];
	if (k == E_N) {
		close(fd);
		nm_skip("no exporter of dma-bufs");
	}
	dev = info.device_count > 2 ? 2 : info.device_count - 1;
	exp_new(&e, k, 64 * NM_KiB);
	exp_fill(&e, 0x2d2);
	att0 = attachments(e.ino);
	nm_assert_ok(nm_dmabuf_import(fd, (uint32_t)e.dfd, 0, dev, &d2));
	nm_assert_ok(nm_dmabuf_import(fd, (uint32_t)e.dfd, 0, dev, &d2b));
	nm_assert_ok(nm_dmabuf_import(fd, (uint32_t)e.dfd, 0, 0, &d0));
	nm_assert_ok(query_dev(fd, d2.handle, &q));
	ck_assert_uint_eq(q.device, dev);
	ck_assert_uint_ne(q.buf.flags & NPU_MEM_BUF_FOREIGN, 0);
	nm_assert_ok(query_dev(fd, d2b.handle, &q));
	ck_assert_uint_eq(q.device, dev);
	nm_assert_ok(query_dev(fd, d0.handle, &q));
	ck_assert_uint_eq(q.device, 0);
	if (att0 >= 0)
		ck_assert_msg(attachments(e.ino) == att0 + 2, "%d attachments, "
			      "want one per NPU (%d)", attachments(e.ino),
			      att0 + 2);
	if (dev_visible())
		ck_assert_uint_eq(d2b.buf.dev_addr, d2.buf.dev_addr);

	/* device dev's engine writes into the import made for it */
	nm_assert_ok(nm_alloc_on(fd, dev, 64 * NM_KiB,
				 NPU_MEM_POLICY_NORMAL_ONLY, &a));
	ma = nm_map_ok(fd, &a, RW);
	nm_fill(ma, NM_4K, 0x2d3);
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
	nm_sync_ok(fd, d2.handle, NPU_MEM_SYNC_TO_DEVICE, 0, NM_4K);
	nm_assert_ok(nm_dma_copy_on(dev, a.buf.dev_addr, d2.buf.dev_addr,
				    NM_4K));
	nm_sync_ok(fd, d2.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, NM_4K);
	nm_dmabuf_sync_ok(e.dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	ck_assert_msg(nm_verify(e.cpu, NM_4K, 0x2d3) == SIZE_MAX,
		      "device %u's write did not reach the %s dma-buf", dev,
		      ekind_name[k]);
	nm_dmabuf_sync_ok(e.dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	/*
	 * Device 0, with its own import gone, has nothing mapped in this
	 * process: the addresses are another domain's.
	 */
	nm_free_ok(fd, d0.handle);
	nm_assert_ret(nm_dma_copy_on(0, a.buf.dev_addr, d2.buf.dev_addr,
				     NM_4K), -EINVAL);
	nm_free_ok(fd, d2.handle);
	nm_free_ok(fd, d2b.handle);
	if (att0 >= 0)
		ck_assert_int_eq(attachments(e.ino), att0);

	/* npu-mem's own dma-buf: the same buffer, still its own NPU's */
	sdfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	nm_assert_ok(nm_dmabuf_import(fd, (uint32_t)sdfd, 0, 0, &ds));
	nm_assert_ok(query_dev(fd, ds.handle, &q));
	ck_assert_uint_eq(q.device, dev);
	ck_assert_uint_eq(q.buf.flags & NPU_MEM_BUF_FOREIGN, 0);
	ck_assert_uint_eq(ds.buf.dev_addr, a.buf.dev_addr);
	ck_assert_uint_eq(ds.buf.size, a.buf.size);
	nm_free_ok(fd, ds.handle);
	close(sdfd);
	munmap(ma, a.buf.size);
	nm_free_ok(fd, a.handle);

	if (geteuid() == 0) {
		nm_assert_ok(nm_dmabuf_import(fd, (uint32_t)e.dfd, 0, dev, &d2));
		nm_assert_ok(nm_dmabuf_import(fd, (uint32_t)e.dfd, 0, 0, &d0));
		remove_detaches_its_import(fd, dev, &e, &d0, &d2);
		nm_free_ok(fd, d2.handle);
		nm_free_ok(fd, d0.handle);
	}
	exp_drop(&e);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Device removal                                                      */

static char g_bdf[NM_BDF_LEN];	/* the PCI function npu_mem has, or "" */

static int unbind_fn(void *arg)
{
	return *(bool *)arg ? nm_pci_bind(g_bdf) : nm_pci_unbind(g_bdf);
}

/* sysfs unbind/bind in a thread, so a driver hang is a failure, not a
 * guest that runs out of time */
static void dev_op(bool bind)
{
	struct nm_bg bg;
	double t0 = nm_now();

	fflush(stdout);
	nm_bg_start(&bg, unbind_fn, &bind);
	ck_assert_msg(nm_bg_wait(&bg, OP_TIMEOUT), "%s of %s: no return after "
		      "%d s", bind ? "bind" : "unbind", g_bdf, OP_TIMEOUT);
	nm_bg_join(&bg);
	printf("%s %s: %s in %.2f s\n", bind ? "bind" : "unbind", g_bdf,
	       nm_retname(bg.ret), nm_now() - t0);
	nm_assert_ok(bg.ret);
	ck_assert(nm_pci_wait_bound(g_bdf, bind, OP_TIMEOUT));
}

/* Check's parent process, after the test whatever its result */
static void restore_device(void)
{
	nm_pci_give_back(g_bdf, OP_TIMEOUT);
}

#define assert_unmapped(fd, h, was) _assert_unmapped((fd), (h), (was), \
						     __FILE__, __LINE__)
static void _assert_unmapped(int fd, uint32_t h, const struct npu_mem_buffer *was,
			     const char *f, int l)
{
	struct npu_mem_buffer q, want = *was;
	int ret = nm_query(fd, h, &q);

	if (ret)
		_ck_assert_failed(f, l, "removal", "QUERY %u after unbind: %s",
				  h, nm_retname(ret));
	printf("handle %u after unbind: flags %#x dev_addr %#llx segments %u "
	       "(before: flags %#x dev_addr %#llx)\n", h, q.flags,
	       (unsigned long long)q.dev_addr, q.dev_segments, was->flags,
	       (unsigned long long)was->dev_addr);
	/*
	 * What the memory is (FOREIGN, READONLY) and how the handle came
	 * (IMPORTED) stay; what described the device's mapping goes.
	 */
	want.flags = (was->flags & ~(NPU_MEM_BUF_DEV_CONTIG |
				     NPU_MEM_BUF_DEV_HIDDEN |
				     NPU_MEM_BUF_BOUNCED)) |
		     NPU_MEM_BUF_DEV_UNMAPPED;
	want.dev_addr = 0;
	want.dev_segments = 0;
	if (memcmp(&q, &want, sizeof(q)))
		_ck_assert_failed(f, l, "removal", "handle %u after unbind: "
				  "flags %#x dev_addr %#llx segments %u size "
				  "%llu offset %#llx; want flags %#x (UNMAPPED, "
				  "no DEV_CONTIG, the rest kept), no device "
				  "address, the rest unchanged", h, q.flags,
				  (unsigned long long)q.dev_addr, q.dev_segments,
				  (unsigned long long)q.size,
				  (unsigned long long)q.mmap_offset, want.flags);
}

START_TEST(import_dev_removed)
{
	struct npu_mem_dmabuf_import d1, d2, d3, d4;
	struct npu_mem_alloc a;
	struct npu_mem_info info;
	struct nm_counters base;
	struct exp e1, e2;
	uint8_t *m1, *m2, *m3, *ma;
	int fd, obs, sdfd, att1, att2;

	if (!g_bdf[0])
		nm_skip("no PCI function bound to npu_mem (dev_flags %#x) or "
			"not root: nothing to unbind; run in the "
			"x86_64-iommu-edu guest", g_dev_flags);
	need_exporter(E_VGEM);
	obs = nm_open();
	fd = nm_open();
	nm_counters(obs, &base);
	/* a vgem import mapped, one not mapped, one of npu-mem's own */
	exp_new(&e1, E_VGEM, 64 * NM_KiB);
	exp_fill(&e1, 11);
	exp_new(&e2, E_VGEM, NM_2M + 8 * NM_KiB);
	exp_fill(&e2, 12);
	att1 = attachments(e1.ino);
	att2 = attachments(e2.ino);
	import_ok(fd, e1.dfd, &d1);
	import_ok(fd, e2.dfd, &d2);
	assert_foreign(&d1.buf, &e1);
	assert_foreign(&d2.buf, &e2);
	m1 = nm_mmap(fd, d1.buf.mmap_offset, e1.size, RW);
	ck_assert(m1 != MAP_FAILED);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ma = nm_map_ok(fd, &a, RW);
	nm_fill(ma, a.buf.size, 13);
	sdfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	import_ok(fd, sdfd, &d3);
	ck_assert(d3.buf.dev_addr == a.buf.dev_addr && d3.buf.dev_addr);

	dev_op(false);
	nm_get_info_ok(fd, &info);
	ck_assert_msg(info.dev_flags & NPU_MEM_DEV_REMOVED, "dev_flags %#x "
		      "after unbind", info.dev_flags);
	assert_unmapped(fd, d1.handle, &d1.buf);
	assert_unmapped(fd, d2.handle, &d2.buf);
	assert_unmapped(fd, d3.handle, &d3.buf);
	/* memory as before: the old mapping, new mappings, both ways */
	nm_assert_pattern(m1, e1.size, 11, 0);
	nm_fill(m1, e1.size, 21);
	exp_check(&e1, 21);
	m2 = nm_mmap(fd, d2.buf.mmap_offset, e2.size, RW);
	ck_assert_msg(m2 != MAP_FAILED, "mmap of an import after unbind: %s",
		      nm_errname(errno));
	nm_assert_pattern(m2, e2.size, 12, 0);
	m3 = nm_mmap(fd, d3.buf.mmap_offset, a.buf.size, RW);
	ck_assert_msg(m3 != MAP_FAILED, "mmap of a self-import after unbind: "
		      "%s", nm_errname(errno));
	nm_assert_pattern(m3, a.buf.size, 13, 0);
	/* no device: no maintenance for it, no new imports */
	nm_assert_ret(nm_sync(fd, d1.handle, NPU_MEM_SYNC_TO_DEVICE, 0,
			      e1.size), -ENODEV);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)e1.dfd, 0, 0, &d4),
		      -ENODEV);
	nm_assert_ret(nm_dmabuf_import(fd, (uint32_t)sdfd, 0, 0, &d4), -ENODEV);
	/* npu-mem let go of the device's mappings of the dma-bufs */
	if (att1 >= 0) {
		printf("bufinfo attachments after unbind: %d and %d (%d and %d "
		       "before the imports)\n", attachments(e1.ino),
		       attachments(e2.ino), att1, att2);
		ck_assert_int_eq(attachments(e1.ino), att1);
		ck_assert_int_eq(attachments(e2.ino), att2);
	}
	/* FREE works, mapped or not */
	nm_free_ok(fd, d2.handle);
	nm_assert_pattern(m2, e2.size, 12, 0);
	munmap(m2, e2.size);
	nm_free_ok(fd, d3.handle);
	munmap(m3, a.buf.size);

	dev_op(true);
	nm_get_info_ok(fd, &info);
	ck_assert_msg(!(info.dev_flags & NPU_MEM_DEV_REMOVED), "dev_flags %#x "
		      "after bind", info.dev_flags);
	/* a new import of the same dma-buf is mapped for the new device */
	import_ok(fd, e1.dfd, &d4);
	assert_foreign(&d4.buf, &e1);
	nm_free_ok(fd, d4.handle);
	{
		struct npu_mem_buffer q;

		nm_assert_ok(nm_query(fd, d1.handle, &q));
		printf("import made before the unbind, after bind: flags %#x "
		       "dev_addr %#llx\n", q.flags,
		       (unsigned long long)q.dev_addr);
	}
	nm_assert_pattern(m1, e1.size, 21, 0);
	munmap(m1, e1.size);
	nm_free_ok(fd, d1.handle);
	if (att1 >= 0) {
		ck_assert_int_eq(attachments(e1.ino), att1);
		ck_assert_int_eq(attachments(e2.ino), att2);
	}
	close(sdfd);
	munmap(ma, a.buf.size);
	nm_free_ok(fd, a.handle);
	exp_drop(&e1);
	exp_drop(&e2);
	close(fd);
	nm_assert_global_now(obs, &base);
	close(obs);
}
END_TEST

/* ------------------------------------------------------------------ */

/* In Check's own process, after the test, passed or failed: gives the
 * device back so that later programs in the guest have it. */
static const struct nm_fixture restore_fx = {
	.teardown = restore_device, .unchecked = true,
};

static const struct nm_fixture give_back_removed_fx = {
	.teardown = give_back_removed, .unchecked = true,
};

int main(void)
{
	Suite *s = nm_suite("dmabuf_import");
	struct npu_mem_info info;
	int fd;

	nm_require_device();
	fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 || nm_get_info(fd, &info)) {
		printf("FAIL: open/GET_INFO of %s: %s\n", NM_DEV_PATH,
		       strerror(errno));
		return 1;
	}
	close(fd);
	g_dev_flags = info.dev_flags;
	for (int k = 0; k < E_N; k++) {
		g_have[k] = exporter_probe(k);
		printf("%s: %s\n", ekind_name[k], g_have[k] ? "yes" : g_why[k]);
	}
	if (geteuid() == 0 && (g_dev_flags & NPU_MEM_DEV_PCI) &&
	    nm_pci_bound(g_bdf, sizeof(g_bdf)))
		g_bdf[0] = 0;
	printf("dev_flags %#x, PCI function %s\n", g_dev_flags,
	       g_bdf[0] ? g_bdf : "none");

	nm_add(s, vgem_foreign, 60);
	nm_add(s, vgem_import_twice_one_attachment, 30);
	nm_add(s, udmabuf_foreign, 60);
	nm_add(s, heap_foreign, 60);
	nm_add(s, vgem_fresh, 30);
	nm_add(s, udmabuf_fresh, 30);
	nm_add(s, heap_fresh, 30);
	nm_add(s, vgem_outlives_exporter, 30);
	nm_add(s, udmabuf_outlives_exporter, 30);
	nm_add(s, heap_outlives_exporter, 30);
	nm_add(s, foreign_file_close_releases, 30);
	nm_add(s, self_import_normal, 30);
	nm_add(s, self_import_huge, 30);
	nm_add(s, self_import_mixed, 30);
	nm_add(s, self_import_readonly, 30);
	nm_add(s, import_errors, 30);
	nm_add(s, import_free_rounds, 120);
	nm_add(s, import_race, nm_span_ceiling(RACE_SECONDS) + 120);
	nm_add(s, edu_copy_vgem, 60);
	nm_add(s, edu_copy_udmabuf, 60);
	nm_add(s, edu_copy_heap, 60);
	nm_add_fx(s, import_per_device, 240, &give_back_removed_fx);
	nm_add_fx(s, import_dev_removed, 180, &restore_fx);
	return nm_run(s, NM_NEEDS_DEVICE);
}
