// SPDX-License-Identifier: GPL-2.0-only
/*
 * sync_trace: every DMA sync call the module makes for a SYNC ioctl or a
 * dma-buf CPU-access bracket maintains exactly the memory asked for.
 *
 * Why a trace: on x86 the device is cache-coherent, so a sync of the wrong
 * memory changes no byte a test could read.  Under an IOMMU the buffer's
 * pages are one device (IOVA) range, and dma-iommu's sync_single_for_cpu()
 * translates only the first IOVA of the range it is given and maintains
 * `size` bytes physically contiguous from there: a call spanning two CPU
 * chunks maintains memory that is not the buffer's on a non-coherent
 * machine, and never the second chunk.  So each call must cover one
 * physically contiguous piece of one chunk.
 *
 * A kprobe (tracefs kprobe_events, root) records each call with its device
 * address, length, direction and whether it is for the CPU or the device:
 *  - the module's npu_mem_sync_piece(dev, addr, len, dir, for_cpu), through
 *    which all of its DMA syncs for its own device go;
 *  - a module without that function: the kernel's dma_sync_single_for_cpu()
 *    and dma_sync_single_for_device() where they are real functions (6.1);
 *    where they are inline (6.10 and later) there is nothing to probe: 77.
 * The probe only counts calls made by the test's own process.
 *
 * Buffers: HUGE_FIRST 6 MiB + 140 KiB (2 MiB chunks, then 64 KiB blocks,
 * then 4 KiB pages), NORMAL_ONLY (4 KiB pages), HUGE_ONLY (2 MiB chunks).
 * Their pages' PFNs come from /proc/self/pagemap and their chunks from
 * /proc/kpageflags (a chunk is a compound head and its tails, or a lone
 * page), cross-checked with the buffer's huge/normal page counts.
 *
 * For each SYNC (every direction; whole buffer, ranges across chunk
 * boundaries and across several chunks, single bytes, unaligned ranges) and
 * each DMA_BUF_IOCTL_SYNC START/END with READ, WRITE and RW, every recorded
 * call is mapped back to buffer offsets (under an IOMMU the buffer is one
 * device range: offset = addr - dev_addr; without one the device address
 * is physical, found among the buffer's PFNs) and:
 *  (i)   each call's range is physically contiguous and inside one chunk;
 *  (ii)  per pass (direction and CPU/device) the ranges are disjoint and
 *        their union is exactly the requested range (the whole buffer for
 *        dma-buf sync);
 *  (iii) the passes are the ones asked for: TO_DEVICE -> for the device
 *        with DMA_TO_DEVICE; FROM_DEVICE -> for the CPU with
 *        DMA_FROM_DEVICE; BIDIRECTIONAL -> both, with DMA_BIDIRECTIONAL;
 *        dma-buf START -> for the CPU, END -> for the device, READ
 *        DMA_FROM_DEVICE, WRITE DMA_TO_DEVICE, RW DMA_BIDIRECTIONAL;
 *  (iv)  every call for the device comes before every call for the CPU:
 *        what the CPU wrote is written back before lines are dropped.
 * A reader (a read-only handle of a buffer its owner may write, here a
 * DMABUF_IMPORT of the buffer's read-only dma-buf) may not discard the
 * owner's writes: its FROM_DEVICE must be traced as BIDIRECTIONAL's two
 * passes, and START with READ on the read-only dma-buf as a write-back for
 * the device, then FROM_DEVICE for the CPU; never an invalidation alone.
 * A bounced buffer (NPU_MEM_BUF_BOUNCED) is synced through its swiotlb
 * slots, and each slot's sync copies physically contiguous bytes from its
 * piece's start, so the same rules hold: when the slots form one device
 * range (DEV_CONTIG) offsets are addr - dev_addr as under an IOMMU; when
 * they are scattered only the passes, the total length and the
 * disjointness of device ranges are checked (edu_dma checks the copies).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"
#include "nmtest_trace.h"

#define GROUP			"npumem_st"
#define INSTANCE		"npumem_sync_trace"

/* enum dma_data_direction */
#define DMA_BIDI	0
#define DMA_TODEV	1
#define DMA_FROMDEV	2

static const char *dma_dir_name(int d)
{
	switch (d) {
	case DMA_BIDI: return "BIDIRECTIONAL";
	case DMA_TODEV: return "TO_DEVICE";
	case DMA_FROMDEV: return "FROM_DEVICE";
	}
	return "?";
}

/* ---- tracefs ----------------------------------------------------------- */

enum probe_mode {
	PROBE_NONE,
	PROBE_PIECE,	/* the module's npu_mem_sync_piece() */
	PROBE_KERNEL,	/* the kernel's exported dma_sync_single_for_*() */
};

#define tfs_write nm_tracefs_write

#define tfs_write_ok(rel, text, flags) do {				\
	int _r = tfs_write((rel), (text), (flags));			\
	ck_assert_msg(_r == 0, "write '%s' to %s/%s: %s", (text),	\
		      nm_tracefs_dir(), (rel), nm_retname(_r));			\
} while (0)

/* Is sym a symbol in /proc/kallsyms (module symbols end in "\t[mod]")? */
static bool kallsyms_has(const char *sym, const char *mod)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], want[160];
	bool found = false;

	if (!f)
		return false;
	if (mod)
		snprintf(want, sizeof(want), " %s\t[%s]", sym, mod);
	else
		snprintf(want, sizeof(want), " %s\n", sym);
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ' ');

		/* "ADDR T name" or "ADDR t name\t[mod]" */
		if (p && p[1] && p[2] == ' ' && strchr("Tt", p[1]) &&
		    strstr(p + 2, want))
			found = true;
	}
	fclose(f);
	return found;
}

/* Undo whatever a previous run (or a failed test's child) left behind. */
static void trace_teardown(void)
{
	if (!nm_tracefs_dir()[0] && nm_tracefs_find())
		return;
	tfs_write("instances/" INSTANCE "/events/" GROUP "/enable", "0", 0);
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/instances/" INSTANCE, nm_tracefs_dir());
		rmdir(path);
	}
	tfs_write("events/" GROUP "/enable", "0", 0);
	tfs_write("kprobe_events", "-:" GROUP "/piece", O_APPEND);
	tfs_write("kprobe_events", "-:" GROUP "/tocpu", O_APPEND);
	tfs_write("kprobe_events", "-:" GROUP "/todev", O_APPEND);
}

/* Which probe point sees the module's sync calls; PROBE_NONE: none. */
static enum probe_mode probe_mode_detect(void)
{
	if (kallsyms_has("npu_mem_sync_piece", "npu_mem"))
		return PROBE_PIECE;
	if (kallsyms_has("dma_sync_single_for_cpu", NULL) &&
	    kallsyms_has("dma_sync_single_for_device", NULL))
		return PROBE_KERNEL;
	return PROBE_NONE;
}

/*
 * Define the probes, make our own trace instance and follow only this
 * process in it: 0 or -errno (with *what naming the step that failed).
 */
static int trace_setup(enum probe_mode mode, const char **what)
{
	char text[256], path[256];
	int ret;

	trace_teardown();
	*what = "kprobe_events";
	if (mode == PROBE_PIECE) {
		ret = tfs_write("kprobe_events", "p:" GROUP "/piece "
				"npu_mem:npu_mem_sync_piece dev=$arg1:x64 "
				"addr=$arg2:x64 len=$arg3:u64 dir=$arg4:s32 "
				"cpu=$arg5:u8", O_APPEND);
	} else {
		ret = tfs_write("kprobe_events", "p:" GROUP "/tocpu "
				"dma_sync_single_for_cpu dev=$arg1:x64 "
				"addr=$arg2:x64 len=$arg3:u64 dir=$arg4:s32",
				O_APPEND);
		if (!ret)
			ret = tfs_write("kprobe_events", "p:" GROUP "/todev "
					"dma_sync_single_for_device "
					"dev=$arg1:x64 addr=$arg2:x64 "
					"len=$arg3:u64 dir=$arg4:s32", O_APPEND);
	}
	if (ret)
		return ret;
	*what = "mkdir instance";
	snprintf(path, sizeof(path), "%s/instances/" INSTANCE, nm_tracefs_dir());
	if (mkdir(path, 0700))
		return -errno;
	/* room for every call of the largest request, both CPUs */
	*what = "buffer_size_kb";
	ret = tfs_write("instances/" INSTANCE "/buffer_size_kb", "2048", 0);
	if (ret)
		return ret;
	*what = "filter";
	snprintf(text, sizeof(text), "common_pid == %d", (int)getpid());
	ret = tfs_write("instances/" INSTANCE "/events/" GROUP "/filter", text,
			0);
	if (ret)
		return ret;
	*what = "enable";
	return tfs_write("instances/" INSTANCE "/events/" GROUP "/enable", "1",
			 0);
}

struct event {
	uint64_t dev;
	uint64_t addr;
	uint64_t len;
	int dir;
	int cpu;		/* 1: for the CPU, 0: for the device */
};

struct trace {
	struct event *ev;
	size_t n;
	size_t cap;
};

static void trace_clear(void)
{
	tfs_write_ok("instances/" INSTANCE "/trace", "", O_TRUNC);
}

static uint64_t field(const char *line, const char *key, bool *ok)
{
	const char *p = strstr(line, key);
	char *end;
	uint64_t v;

	if (!p) {
		*ok = false;
		return 0;
	}
	p += strlen(key);
	errno = 0;
	v = *p == '-' ? (uint64_t)strtoll(p, &end, 0) : strtoull(p, &end, 0);
	if (end == p || errno)
		*ok = false;
	return v;
}

/* Read the instance's trace: every event since trace_clear(). */
static void trace_read(struct trace *t)
{
	char path[256], *text, *line, *save = NULL;
	unsigned long in_buf = 0, written = 0;
	bool counted = false;

	snprintf(path, sizeof(path), "%s/instances/" INSTANCE "/trace", nm_tracefs_dir());
	text = nm_read_file(path);
	ck_assert_msg(text, "read %s: %s", path, nm_errname(errno));
	t->n = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct event e = { 0 };
		const char *p;
		bool ok = true;

		if (sscanf(line, "# entries-in-buffer/entries-written: %lu/%lu",
			   &in_buf, &written) == 2)
			counted = true;
		if (line[0] == '#')
			continue;
		if ((p = strstr(line, ": piece: (")))
			e.cpu = (int)field(p, " cpu=", &ok);
		else if ((p = strstr(line, ": tocpu: (")))
			e.cpu = 1;
		else if ((p = strstr(line, ": todev: (")))
			e.cpu = 0;
		else
			ck_abort_msg("unexpected trace line: %s", line);
		e.dev = field(p, " dev=", &ok);
		e.addr = field(p, " addr=", &ok);
		e.len = field(p, " len=", &ok);
		e.dir = (int)field(p, " dir=", &ok);
		ck_assert_msg(ok, "cannot parse trace line: %s", line);
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 256;
			t->ev = realloc(t->ev, t->cap * sizeof(*t->ev));
			ck_assert(t->ev);
		}
		t->ev[t->n++] = e;
	}
	free(text);
	ck_assert_msg(counted, "no entries-in-buffer line in %s", path);
	/* a full ring buffer drops events: then the union check means nothing */
	ck_assert_msg(in_buf == written && in_buf == t->n,
		      "trace lost events: %lu in buffer, %lu written, %zu read",
		      in_buf, written, t->n);
}

/* ---- the buffer's pages ------------------------------------------------ */

#define KPF_COMPOUND_TAIL	16

struct tbuf {
	struct npu_mem_alloc a;
	uint8_t *map;
	uint64_t npages;
	uint64_t *pfn;		/* per 4 KiB page */
	uint32_t *chunk;	/* chunk index per page */
	uint64_t *chunk_start;	/* byte offset of each chunk */
	uint32_t nchunks;
	uint64_t *by_pfn;	/* page indices sorted by PFN (physical lookup) */
	bool iommu;
	bool by_dev;	/* offset = device address - dev_addr */
	bool slots;	/* scattered swiotlb slots: no offsets */
};

static int pread_u64s(const char *path, uint64_t *out, uint64_t idx,
		      uint64_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = pread(fd, out, n * sizeof(*out), (off_t)(idx * sizeof(*out)));
	close(fd);
	if (r != (ssize_t)(n * sizeof(*out)))
		return r < 0 ? -errno : -EIO;
	return 0;
}

static const uint64_t *sort_pfn;

static int cmp_by_pfn(const void *x, const void *y)
{
	uint64_t a = sort_pfn[*(const uint64_t *)x];
	uint64_t b = sort_pfn[*(const uint64_t *)y];

	return a < b ? -1 : a > b;
}

static void tbuf_new(struct tbuf *t, int fd, uint64_t size, uint32_t policy,
		     uint32_t dev_flags)
{
	uint64_t va, huge = 0, normal = 0, *ent;
	int ret;

	memset(t, 0, sizeof(*t));
	nm_alloc_ok(fd, size, policy, 0, &t->a);
	t->map = nm_map_ok(fd, &t->a, PROT_READ | PROT_WRITE);
	t->npages = t->a.buf.size / NM_4K;
	t->iommu = dev_flags & NPU_MEM_DEV_IOMMU;
	/*
	 * One device range maps the buffer in order: an IOVA range, or
	 * swiotlb slots that happen to abut (each bounce slot copies to and
	 * from physically contiguous bytes from its piece's start, so the
	 * rules are the same).  Without an IOMMU or bouncing the device
	 * address is physical.  Bounce slots scattered: offsets unknown.
	 */
	t->by_dev = t->iommu || ((t->a.buf.flags & NPU_MEM_BUF_BOUNCED) &&
				 (t->a.buf.flags & NPU_MEM_BUF_DEV_CONTIG));
	t->slots = !t->by_dev && (t->a.buf.flags & NPU_MEM_BUF_BOUNCED);
	ck_assert_msg(!(t->a.buf.flags & NPU_MEM_BUF_DEV_HIDDEN) &&
		      t->a.buf.dev_addr, "device address hidden from root");
	if (t->iommu)
		ck_assert_msg(t->a.buf.flags & NPU_MEM_BUF_DEV_CONTIG,
			      "under an IOMMU the buffer is one device range "
			      "(flags %#x)", t->a.buf.flags);
	for (uint64_t i = 0; i < t->npages; i++)
		t->map[i * NM_4K] = (uint8_t)i;	/* present, and written */

	ent = malloc(t->npages * sizeof(*ent));
	t->pfn = malloc(t->npages * sizeof(*t->pfn));
	t->chunk = malloc(t->npages * sizeof(*t->chunk));
	t->chunk_start = malloc(t->npages * sizeof(*t->chunk_start));
	t->by_pfn = malloc(t->npages * sizeof(*t->by_pfn));
	ck_assert(ent && t->pfn && t->chunk && t->chunk_start && t->by_pfn);
	va = (uint64_t)(uintptr_t)t->map;
	ret = pread_u64s("/proc/self/pagemap", ent, va / NM_4K, t->npages);
	ck_assert_msg(!ret, "pagemap: %s", nm_retname(ret));
	for (uint64_t i = 0; i < t->npages; i++) {
		t->pfn[i] = ent[i] & ((1ULL << 55) - 1);
		ck_assert_msg((ent[i] >> 63) && t->pfn[i], "page %llu: no PFN "
			      "in pagemap (%#llx)", (unsigned long long)i,
			      (unsigned long long)ent[i]);
	}
	/* chunks: a compound head and the tails after it, or a lone page */
	for (uint64_t i = 0; i < t->npages; i++) {
		uint64_t kpf;

		ret = pread_u64s("/proc/kpageflags", &kpf, t->pfn[i], 1);
		ck_assert_msg(!ret, "/proc/kpageflags: %s", nm_retname(ret));
		if ((kpf >> KPF_COMPOUND_TAIL) & 1) {
			ck_assert_msg(i > 0 && t->pfn[i] == t->pfn[i - 1] + 1,
				      "page %llu is a compound tail, but not "
				      "after its head", (unsigned long long)i);
			t->chunk[i] = t->chunk[i - 1];
			continue;
		}
		t->chunk_start[t->nchunks] = i * NM_4K;
		t->chunk[i] = t->nchunks++;
	}
	for (uint32_t c = 0; c < t->nchunks; c++) {
		uint64_t end = c + 1 < t->nchunks ? t->chunk_start[c + 1] :
			       t->a.buf.size;
		uint64_t len = end - t->chunk_start[c];

		if (len == NM_2M)
			huge++;
		else
			normal += len / NM_4K;
	}
	ck_assert_msg(huge == t->a.buf.huge_pages &&
		      normal == t->a.buf.normal_pages,
		      "kpageflags shows %llu 2 MiB chunks and %llu pages in "
		      "smaller ones; QUERY says %u huge, %u normal",
		      (unsigned long long)huge, (unsigned long long)normal,
		      t->a.buf.huge_pages, t->a.buf.normal_pages);
	for (uint64_t i = 0; i < t->npages; i++)
		t->by_pfn[i] = i;
	sort_pfn = t->pfn;
	qsort(t->by_pfn, t->npages, sizeof(*t->by_pfn), cmp_by_pfn);
	free(ent);
	printf("%s %llu: %u huge, %u normal, %u chunks, dev_addr %#llx, "
	       "%u device segments, flags %#x%s\n",
	       nm_policy_name(policy), (unsigned long long)t->a.buf.size,
	       t->a.buf.huge_pages, t->a.buf.normal_pages, t->nchunks,
	       (unsigned long long)t->a.buf.dev_addr, t->a.buf.dev_segments,
	       t->a.buf.flags, t->slots ? " (bounced: device addresses are scattered swiotlb slots)" :
	       t->a.buf.flags & NPU_MEM_BUF_BOUNCED ? " (bounced, one device range)" : "");
}

static void tbuf_free(struct tbuf *t, int fd)
{
	munmap(t->map, t->a.buf.size);
	nm_free_ok(fd, t->a.handle);
	free(t->pfn);
	free(t->chunk);
	free(t->chunk_start);
	free(t->by_pfn);
}

/* Page index whose PFN is pfn, or -1 */
static int64_t page_of_pfn(const struct tbuf *t, uint64_t pfn)
{
	uint64_t lo = 0, hi = t->npages;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (t->pfn[t->by_pfn[mid]] < pfn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->npages && t->pfn[t->by_pfn[lo]] == pfn ?
	       (int64_t)t->by_pfn[lo] : -1;
}

/* ---- checking one request ----------------------------------------------- */

struct pass {
	int dir;
	int cpu;
};

struct range {
	uint64_t off;
	uint64_t len;
};

static int cmp_range(const void *x, const void *y)
{
	const struct range *a = x, *b = y;

	return a->off < b->off ? -1 : a->off > b->off;
}

struct report {
	char text[4096];
	size_t len;
	int bad;
};

__attribute__((format(printf, 2, 3)))
static void bad(struct report *r, const char *fmt, ...)
{
	va_list ap;

	r->bad++;
	if (r->len >= sizeof(r->text) - 1)
		return;
	va_start(ap, fmt);
	r->len += vsnprintf(r->text + r->len, sizeof(r->text) - r->len, fmt, ap);
	va_end(ap);
	if (r->len >= sizeof(r->text))
		r->len = sizeof(r->text) - 1;
}

/* Buffer offset of an event's device address; false when it is none. */
static bool event_offset(const struct tbuf *t, const struct event *e,
			 uint64_t *off)
{
	int64_t page;

	if (t->by_dev) {
		if (e->addr < t->a.buf.dev_addr ||
		    e->addr - t->a.buf.dev_addr >= t->a.buf.size)
			return false;
		*off = e->addr - t->a.buf.dev_addr;
		return true;
	}
	/* no IOMMU: the device address is the physical address */
	page = page_of_pfn(t, e->addr / NM_4K);
	if (page < 0)
		return false;
	*off = (uint64_t)page * NM_4K + e->addr % NM_4K;
	return true;
}

/* (i): [off, off+len) of the buffer is one physically contiguous piece of
 * one chunk.  Without an IOMMU also: the pages the device address runs
 * over are these pages. */
static void check_piece(const struct tbuf *t, const struct event *e,
			uint64_t off, struct report *r)
{
	uint64_t first = off / NM_4K, last = (off + e->len - 1) / NM_4K;

	if (!e->len || e->len > t->a.buf.size - off) {
		bad(r, "  call addr %#llx len %llu: runs past the buffer's end "
		    "(offset %llu, size %llu)\n",
		    (unsigned long long)e->addr, (unsigned long long)e->len,
		    (unsigned long long)off,
		    (unsigned long long)t->a.buf.size);
		return;
	}
	if (t->chunk[first] != t->chunk[last])
		bad(r, "  call addr %#llx len %llu = buffer [%llu, %llu) spans "
		    "chunks %u..%u (chunk %u starts at %llu)\n",
		    (unsigned long long)e->addr, (unsigned long long)e->len,
		    (unsigned long long)off, (unsigned long long)(off + e->len),
		    t->chunk[first], t->chunk[last], t->chunk[first] + 1,
		    (unsigned long long)t->chunk_start[t->chunk[first] + 1]);
	for (uint64_t p = first + 1; p <= last; p++) {
		if (t->pfn[p] != t->pfn[first] + (p - first)) {
			bad(r, "  call addr %#llx len %llu = buffer [%llu, %llu)"
			    " is not physically contiguous: page %llu is PFN "
			    "%#llx, page %llu is PFN %#llx\n",
			    (unsigned long long)e->addr,
			    (unsigned long long)e->len,
			    (unsigned long long)off,
			    (unsigned long long)(off + e->len),
			    (unsigned long long)first,
			    (unsigned long long)t->pfn[first],
			    (unsigned long long)p,
			    (unsigned long long)t->pfn[p]);
			break;
		}
	}
}

/*
 * Check the events of one request (offset off, length len) against the
 * passes it must make.  what names the request in messages.
 */
static void check_request(const struct tbuf *t, const struct trace *tr,
			  const struct pass *want, size_t nwant, uint64_t off,
			  uint64_t len, const char *what, bool *probed)
{
	struct range *rg = malloc((tr->n + 1) * sizeof(*rg));
	struct report r = { .len = 0, .bad = 0 };
	bool *used = calloc(tr->n + 1, sizeof(*used));

	ck_assert(rg && used);
	if (tr->n)
		*probed = true;
	for (size_t w = 0; w < nwant; w++) {
		size_t n = 0;
		uint64_t total = 0;

		for (size_t i = 0; i < tr->n; i++) {
			const struct event *e = &tr->ev[i];
			uint64_t o;

			if (e->dir != want[w].dir || e->cpu != want[w].cpu)
				continue;
			used[i] = true;
			total += e->len;
			if (t->slots) {
				/* device ranges (slots) only */
				rg[n].off = e->addr;
				rg[n++].len = e->len;
				continue;
			}
			if (!event_offset(t, e, &o)) {
				bad(&r, "  call addr %#llx len %llu: not a "
				    "device address of the buffer (dev_addr "
				    "%#llx, size %llu)\n",
				    (unsigned long long)e->addr,
				    (unsigned long long)e->len,
				    (unsigned long long)t->a.buf.dev_addr,
				    (unsigned long long)t->a.buf.size);
				continue;
			}
			check_piece(t, e, o, &r);
			rg[n].off = o;
			rg[n++].len = e->len;
		}
		if (!n) {
			bad(&r, "  no call for the %s with %s\n",
			    want[w].cpu ? "CPU" : "device",
			    dma_dir_name(want[w].dir));
			continue;
		}
		qsort(rg, n, sizeof(*rg), cmp_range);
		for (size_t i = 1; i < n; i++)
			if (rg[i].off < rg[i - 1].off + rg[i - 1].len)
				bad(&r, "  %s/%s: ranges [%llu, +%llu) and "
				    "[%llu, +%llu) overlap\n",
				    want[w].cpu ? "cpu" : "device",
				    dma_dir_name(want[w].dir),
				    (unsigned long long)rg[i - 1].off,
				    (unsigned long long)rg[i - 1].len,
				    (unsigned long long)rg[i].off,
				    (unsigned long long)rg[i].len);
		if (t->slots) {
			if (total != len)
				bad(&r, "  %s/%s: %llu bytes synced, want %llu"
				    "\n", want[w].cpu ? "cpu" : "device",
				    dma_dir_name(want[w].dir),
				    (unsigned long long)total,
				    (unsigned long long)len);
			continue;
		}
		/* union exactly [off, off+len): no gap, nothing outside */
		if (rg[0].off != off)
			bad(&r, "  %s/%s: first synced byte is %llu, want %llu\n",
			    want[w].cpu ? "cpu" : "device",
			    dma_dir_name(want[w].dir),
			    (unsigned long long)rg[0].off,
			    (unsigned long long)off);
		for (size_t i = 1; i < n; i++)
			if (rg[i].off > rg[i - 1].off + rg[i - 1].len)
				bad(&r, "  %s/%s: bytes [%llu, %llu) not "
				    "synced\n", want[w].cpu ? "cpu" : "device",
				    dma_dir_name(want[w].dir),
				    (unsigned long long)(rg[i - 1].off +
							 rg[i - 1].len),
				    (unsigned long long)rg[i].off);
		if (rg[n - 1].off + rg[n - 1].len != off + len)
			bad(&r, "  %s/%s: last synced byte ends at %llu, want "
			    "%llu\n", want[w].cpu ? "cpu" : "device",
			    dma_dir_name(want[w].dir),
			    (unsigned long long)(rg[n - 1].off + rg[n - 1].len),
			    (unsigned long long)(off + len));
	}
	for (size_t i = 0; i < tr->n; i++)
		if (!used[i])
			bad(&r, "  unexpected call for the %s with %s: addr "
			    "%#llx len %llu\n", tr->ev[i].cpu ? "CPU" : "device",
			    dma_dir_name(tr->ev[i].dir),
			    (unsigned long long)tr->ev[i].addr,
			    (unsigned long long)tr->ev[i].len);
	/* (iv) written back before invalidated */
	for (size_t i = 0, last_dev = 0, first_cpu = tr->n; i < tr->n; i++) {
		if (tr->ev[i].cpu && first_cpu == tr->n)
			first_cpu = i;
		if (!tr->ev[i].cpu)
			last_dev = i;
		if (first_cpu < last_dev) {
			bad(&r, "  call %zu (for the device) comes after call "
			    "%zu (for the CPU)\n", last_dev, first_cpu);
			break;
		}
	}
	/* the same device for every call (only ours are traced) */
	for (size_t i = 1; i < tr->n; i++)
		if (tr->ev[i].dev != tr->ev[0].dev) {
			bad(&r, "  calls for two devices: %#llx and %#llx\n",
			    (unsigned long long)tr->ev[0].dev,
			    (unsigned long long)tr->ev[i].dev);
			break;
		}
	if (r.bad) {
		printf("BAD: %s %llu, %s [%llu, %llu): %zu calls\n%s",
		       nm_policy_name(t->a.buf.policy),
		       (unsigned long long)t->a.buf.size, what,
		       (unsigned long long)off, (unsigned long long)(off + len),
		       tr->n, r.text);
		for (size_t i = 0; i < tr->n && i < 24; i++)
			printf("    call %zu: %s %s addr %#llx len %llu\n", i,
			       tr->ev[i].cpu ? "cpu" : "dev",
			       dma_dir_name(tr->ev[i].dir),
			       (unsigned long long)tr->ev[i].addr,
			       (unsigned long long)tr->ev[i].len);
	}
	free(rg);
	free(used);
	ck_assert_msg(!r.bad, "%s [%llu, %llu) of %s %llu: %d violation(s), "
		      "first: %.300s", what, (unsigned long long)off,
		      (unsigned long long)(off + len),
		      nm_policy_name(t->a.buf.policy),
		      (unsigned long long)t->a.buf.size, r.bad, r.text);
}

/* ---- the tests ----------------------------------------------------------- */

struct ctx {
	int fd;
	enum probe_mode mode;
	uint32_t dev_flags;
	struct trace tr;
	bool probed;		/* some request produced calls */
	unsigned int requests;
	unsigned int calls;
};

static enum probe_mode mode;	/* found by main() */

static void ctx_init(struct ctx *c)
{
	struct npu_mem_info info;
	const char *what;
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = nm_open();
	nm_get_info_ok(c->fd, &info);
	c->dev_flags = info.dev_flags;
	if (!strcmp(nm_vm_config(), "x86_64-iommu-edu"))
		ck_assert_msg(c->dev_flags & NPU_MEM_DEV_IOMMU,
			      "IOMMU guest, dev_flags %#x", c->dev_flags);
	c->mode = mode;
	ret = trace_setup(c->mode, &what);
	ck_assert_msg(!ret, "tracing setup, %s: %s", what, nm_retname(ret));
}

static void ctx_fini(struct ctx *c)
{
	printf("%u requests, %u sync calls traced\n", c->requests, c->calls);
	trace_teardown();
	free(c->tr.ev);
	close(c->fd);
	ck_assert_msg(c->probed, "no sync call was traced at all");
}

static const uint32_t dirs[] = {
	NPU_MEM_SYNC_TO_DEVICE, NPU_MEM_SYNC_FROM_DEVICE,
	NPU_MEM_SYNC_BIDIRECTIONAL,
};

static const char *sync_dir_name(uint32_t d)
{
	return d == NPU_MEM_SYNC_TO_DEVICE ? "SYNC TO_DEVICE" :
	       d == NPU_MEM_SYNC_FROM_DEVICE ? "SYNC FROM_DEVICE" :
	       "SYNC BIDIRECTIONAL";
}

/* One SYNC ioctl of [off, off+len) in every direction, each checked. */
static void sync_checked(struct ctx *c, const struct tbuf *t, uint64_t off,
			 uint64_t len)
{
	for (size_t d = 0; d < NM_ARRAY_SIZE(dirs); d++) {
		struct pass want[2];
		size_t nwant = 0;

		/* the ioctl's contract: write back first, then invalidate */
		if (dirs[d] == NPU_MEM_SYNC_TO_DEVICE)
			want[nwant++] = (struct pass){ DMA_TODEV, 0 };
		else if (dirs[d] == NPU_MEM_SYNC_FROM_DEVICE)
			want[nwant++] = (struct pass){ DMA_FROMDEV, 1 };
		else {
			want[nwant++] = (struct pass){ DMA_BIDI, 0 };
			want[nwant++] = (struct pass){ DMA_BIDI, 1 };
		}
		trace_clear();
		nm_sync_ok(c->fd, t->a.handle, dirs[d], off, len);
		trace_read(&c->tr);
		c->requests++;
		c->calls += c->tr.n;
		check_request(t, &c->tr, want, nwant, off, len,
			      sync_dir_name(dirs[d]), &c->probed);
	}
}

/*
 * Ranges of interest: the whole buffer, its ends, single bytes on either
 * side of chunk boundaries, unaligned ranges across one boundary and
 * across several.
 */
static void sync_all_ranges(struct ctx *c, const struct tbuf *t)
{
	uint64_t size = t->a.buf.size;
	uint32_t nb = t->nchunks - 1;	/* boundaries: chunk_start[1..] */

	sync_checked(c, t, 0, size);
	sync_checked(c, t, 0, 1);
	sync_checked(c, t, size - 1, 1);
	sync_checked(c, t, 1, size - 2);
	sync_checked(c, t, 100, 5000);
	sync_checked(c, t, size / 2 + 3, 1);
	/* every boundary of a buffer with few chunks; of many, a sample */
	for (uint32_t i = 1; i <= nb; i += nb > 12 ? nb / 6 : 1) {
		uint64_t b = t->chunk_start[i];

		sync_checked(c, t, b - 1, 1);
		sync_checked(c, t, b, 1);
		sync_checked(c, t, b - 100, 200);
		if (b >= NM_4K + 1 && b + NM_4K + 3 <= size)
			sync_checked(c, t, b - NM_4K - 1, 2 * NM_4K + 4);
	}
	/* across several chunks, unaligned at both ends */
	if (nb >= 3)
		sync_checked(c, t, t->chunk_start[1] - 7,
			     t->chunk_start[nb] - t->chunk_start[1] + 16);
	if (nb >= 2)
		sync_checked(c, t, t->chunk_start[nb - 1] - 4095,
			     size - t->chunk_start[nb - 1] + 4095 - 1);
}

static void sync_shape(uint64_t size, uint32_t policy)
{
	struct ctx c;
	struct tbuf t;
	double t0 = nm_now();

	ctx_init(&c);
	tbuf_new(&t, c.fd, size, policy, c.dev_flags);
	sync_all_ranges(&c, &t);
	tbuf_free(&t, c.fd);
	printf("%s: %.1f s\n", nm_policy_name(policy), nm_now() - t0);
	ctx_fini(&c);
}

START_TEST(sync_pieces_huge_first)
{
	/* 3 x 2 MiB, then 2 x 64 KiB blocks, then 3 x 4 KiB pages */
	sync_shape(6 * NM_MiB + 140 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(sync_pieces_normal_only)
{
	sync_shape(384 * NM_KiB + 12 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(sync_pieces_huge_only)
{
	sync_shape(6 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

/* DMA_BUF_IOCTL_SYNC: begin_cpu_access and end_cpu_access, whole buffer. */
START_TEST(dmabuf_sync_pieces)
{
	static const struct {
		uint64_t flags;
		int dir;
	} rw[] = {
		{ DMA_BUF_SYNC_READ, DMA_FROMDEV },
		{ DMA_BUF_SYNC_WRITE, DMA_TODEV },
		{ DMA_BUF_SYNC_RW, DMA_BIDI },
	};
	static const struct {
		uint64_t size;
		uint32_t policy;
	} spec[] = {
		{ 6 * NM_MiB + 140 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST },
		{ 256 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY },
	};
	struct ctx c;

	ctx_init(&c);
	for (size_t s = 0; s < NM_ARRAY_SIZE(spec); s++) {
		struct tbuf t;
		int dfd;

		tbuf_new(&t, c.fd, spec[s].size, spec[s].policy, c.dev_flags);
		dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
		for (size_t i = 0; i < NM_ARRAY_SIZE(rw); i++) {
			for (int end = 0; end <= 1; end++) {
				struct pass want = { rw[i].dir, !end };
				char what[64];

				snprintf(what, sizeof(what), "dma-buf sync %s %s",
					 end ? "END" : "START",
					 dma_dir_name(rw[i].dir));
				trace_clear();
				nm_dmabuf_sync_ok(dfd, rw[i].flags |
						  (end ? DMA_BUF_SYNC_END :
						   DMA_BUF_SYNC_START));
				trace_read(&c.tr);
				c.requests++;
				c.calls += c.tr.n;
				check_request(&t, &c.tr, &want, 1, 0,
					      t.a.buf.size, what, &c.probed);
			}
		}
		close(dfd);
		tbuf_free(&t, c.fd);
	}
	ctx_fini(&c);
}
END_TEST

/* DMABUF_IMPORT of @dfd into @fd: the new handle, asserted read-only */
static uint32_t import_readonly(int fd, int dfd)
{
	struct npu_mem_dmabuf_import d = { .fd = dfd };

	ck_assert_int_eq(nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, &d), 0);
	ck_assert_msg(d.buf.flags & NPU_MEM_BUF_READONLY,
		      "import of a read-only dma-buf: flags %#x", d.buf.flags);
	return d.handle;
}

/* One traced request through the reader's handle or its dma-buf */
static void reader_checked(struct ctx *c, const struct tbuf *t, int ret,
			   const struct pass *want, size_t nwant, uint64_t off,
			   uint64_t len, const char *what)
{
	ck_assert_msg(ret == 0, "%s: %s", what, nm_retname(ret));
	trace_read(&c->tr);
	c->requests++;
	c->calls += c->tr.n;
	check_request(t, &c->tr, want, nwant, off, len, what, &c->probed);
}

START_TEST(reader_writes_back_first)
{
	static const struct pass both[] = { { DMA_BIDI, 0 }, { DMA_BIDI, 1 } };
	static const struct pass start_read[] = {
		{ DMA_BIDI, 0 }, { DMA_FROMDEV, 1 },
	};
	static const struct pass end_read = { DMA_FROMDEV, 0 };
	static const struct pass to_dev = { DMA_TODEV, 0 };
	struct ctx c;
	struct tbuf t, r;
	uint64_t size;
	int dfd;

	ctx_init(&c);
	tbuf_new(&t, c.fd, 6 * NM_MiB + 140 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST,
		 c.dev_flags);
	size = t.a.buf.size;
	dfd = nm_export_ok(c.fd, t.a.handle, O_CLOEXEC);
	r = t;
	r.a.handle = import_readonly(c.fd, dfd);
	if (t.a.buf.flags & NPU_MEM_BUF_BOUNCED) {
		/* No order keeps both copies: refused (sync.c checks bytes) */
		ck_assert_int_eq(nm_sync(c.fd, r.a.handle,
					 NPU_MEM_SYNC_FROM_DEVICE, 0, size),
				 -EACCES);
		ck_assert_int_eq(nm_dmabuf_sync(dfd, DMA_BUF_SYNC_START |
						DMA_BUF_SYNC_READ), -EACCES);
		c.probed = true;
		goto out;
	}
	/* the whole buffer, an unaligned range across chunks, one byte */
	trace_clear();
	reader_checked(&c, &r, nm_sync(c.fd, r.a.handle,
				       NPU_MEM_SYNC_FROM_DEVICE, 0, size),
		       both, 2, 0, size, "reader's SYNC FROM_DEVICE");
	trace_clear();
	reader_checked(&c, &r, nm_sync(c.fd, r.a.handle,
				       NPU_MEM_SYNC_FROM_DEVICE, 4095,
				       size - 8190),
		       both, 2, 4095, size - 8190, "reader's SYNC FROM_DEVICE");
	trace_clear();
	reader_checked(&c, &r, nm_sync(c.fd, r.a.handle,
				       NPU_MEM_SYNC_FROM_DEVICE, 2 * NM_MiB, 1),
		       both, 2, 2 * NM_MiB, 1, "reader's SYNC FROM_DEVICE");
	/* a reader's TO_DEVICE writes back only */
	trace_clear();
	reader_checked(&c, &r, nm_sync(c.fd, r.a.handle, NPU_MEM_SYNC_TO_DEVICE,
				       0, size),
		       &to_dev, 1, 0, size, "reader's SYNC TO_DEVICE");
	trace_clear();
	reader_checked(&c, &r, nm_dmabuf_sync(dfd, DMA_BUF_SYNC_START |
					      DMA_BUF_SYNC_READ),
		       start_read, 2, 0, size,
		       "read-only dma-buf sync START FROM_DEVICE");
	trace_clear();
	reader_checked(&c, &r, nm_dmabuf_sync(dfd, DMA_BUF_SYNC_END |
					      DMA_BUF_SYNC_READ),
		       &end_read, 1, 0, size,
		       "read-only dma-buf sync END FROM_DEVICE");
out:
	ck_assert_int_eq(nm_free(c.fd, r.a.handle), 0);
	close(dfd);
	tbuf_free(&t, c.fd);
	ctx_fini(&c);
}
END_TEST

/*
 * Can this guest show the module's sync calls at all?  0, or 77 with the
 * reason printed.  One SYNC of a small buffer through the probe: the
 * kernel's dma_sync_single_for_*() are always called on 6.1 (dma-direct and
 * dma-iommu alike), and a module with npu_mem_sync_piece() must be seen
 * whatever the kernel.
 */
static int preflight(void)
{
	struct npu_mem_alloc a;
	const char *what = "";
	uint64_t ent = 0, kpf;
	uint8_t *p = MAP_FAILED;
	char path[256], *text;
	int fd, ret, calls = 0;

	if (geteuid() != 0) {
		printf("SKIP: kprobes and pagemap PFNs need root\n");
		return 77;
	}
	ret = nm_tracefs_find();
	if (ret) {
		printf("SKIP: no tracefs (%s)\n", nm_retname(ret));
		return 77;
	}
	mode = probe_mode_detect();
	if (mode == PROBE_NONE) {
		printf("SKIP: the module has no npu_mem_sync_piece() and this "
		       "kernel's dma_sync_single_for_cpu/_for_device are "
		       "inline (skipped on a coherent device): no probe point "
		       "sees the module's sync calls\n");
		return 77;
	}
	if (mode == PROBE_KERNEL)
		printf("the module has no npu_mem_sync_piece(): probing the "
		       "kernel's dma_sync_single_for_cpu/_for_device\n");
	fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 || nm_alloc(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
			       &a)) {
		printf("FAIL: cannot open or allocate for the preflight\n");
		return 1;
	}
	p = nm_mmap(fd, a.buf.mmap_offset, a.buf.size, PROT_READ);
	if (p == MAP_FAILED ||
	    pread_u64s("/proc/self/pagemap", &ent,
		       (uint64_t)(uintptr_t)p / NM_4K, 1) ||
	    !(ent & ((1ULL << 55) - 1)) ||
	    pread_u64s("/proc/kpageflags", &kpf, ent & ((1ULL << 55) - 1), 1)) {
		printf("SKIP: cannot read PFNs (pagemap) or page flags "
		       "(/proc/kpageflags)\n");
		return 77;
	}
	ret = trace_setup(mode, &what);
	if (ret) {
		printf("SKIP: tracing setup, %s: %s\n", what, nm_retname(ret));
		trace_teardown();
		return 77;
	}
	ret = nm_sync(fd, a.handle, NPU_MEM_SYNC_BIDIRECTIONAL, 0, a.buf.size);
	snprintf(path, sizeof(path), "%s/instances/" INSTANCE "/trace", nm_tracefs_dir());
	text = nm_read_file(path);
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 :
							     l + strlen(l))
		calls += *l != '#' && *l != '\n';
	free(text);
	trace_teardown();
	munmap(p, a.buf.size);
	close(fd);
	if (ret) {
		printf("FAIL: preflight SYNC: %s\n", nm_retname(ret));
		return 1;
	}
	if (!calls && mode == PROBE_KERNEL) {
		printf("SKIP: no sync call of the module reached the kernel's "
		       "dma_sync_single_for_*()\n");
		return 77;
	}
	printf("preflight: %d sync call(s) traced for one SYNC\n", calls);
	return 0;
}

int main(void)
{
	Suite *s = nm_suite("sync_trace");
	int ret;

	nm_require_device();
	/* Probes patch kernel text: one CPU online for that (nmtest_trace.h) */
	nm_cpus_solo();
	ret = preflight();
	if (!ret) {
		nm_add(s, sync_pieces_huge_first, 120);
		nm_add(s, sync_pieces_normal_only, 120);
		nm_add(s, sync_pieces_huge_only, 120);
		nm_add(s, dmabuf_sync_pieces, 120);
		nm_add(s, reader_writes_back_first, 120);
		ret = nm_run(s, NM_NEEDS_DEVICE);
		/* a failed test's child leaves its probes behind */
		trace_teardown();
	}
	nm_cpus_restore();
	return ret;
}
