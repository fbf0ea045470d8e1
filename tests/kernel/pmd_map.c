// SPDX-License-Identifier: GPL-2.0-only
/*
 * pmd_map: CPU mappings of 2 MiB chunks are PMD mappings, and every kernel
 * path that splits, zaps, moves, copies or pins such a mapping stays correct.
 *
 * A buffer with 2 MiB chunks is mapped on demand through the core fault
 * path: a chunk whose whole span lies in the VMA at a 2 MiB-aligned address
 * becomes one PMD at its first touch (FilePmdMapped in smaps and meminfo),
 * its mmap offset is 2 MiB-aligned and mmap(NULL) picks a 2 MiB-aligned
 * address for it.  Anything else (a misaligned address or offset, the 4 KiB
 * tail of HUGE_FIRST) gets PTEs, and a buffer of small pages only is still
 * inserted whole at mmap time.  Checked here:
 *  - what gets a PMD and when: first touch at an unaligned offset, the
 *    HUGE_FIRST tail, NORMAL_ONLY, misaligned addresses and offsets,
 *    MAP_POPULATE, MADV_NOHUGEPAGE;
 *  - what splits or zaps a PMD keeps the data, which always is the
 *    buffer's own pages: partial munmap, mprotect of one page, MADV_DONTNEED
 *    and refault, mremap moves, MADV_DOFORK + fork, FREE or close() while
 *    mapped, exit with mappings; one buffer mapped twice and through its
 *    dma-buf;
 *  - get_user_pages() users on PMD-mapped chunks: O_DIRECT on a loop block
 *    device, process_vm_readv/writev, vmsplice (whose pipe keeps the pages
 *    after the buffer is gone, and the module keeps them charged as
 *    retained until then), io_uring fixed buffers, RDMA memory
 *    registration (soft-RoCE, rdma_rxe) with RDMA WRITE and READ, and a
 *    device DMA through the IOMMU (x86_64-iommu-edu only);
 *  - nothing leaks: after every test GET_INFO's buffers and allocated_bytes
 *    and /proc/meminfo's FilePmdMapped are back to where they started, and
 *    the kernel logged no bad page, BUG or WARNING.
 * Numbers (faults, FilePmdMapped, Rss) are printed for the report.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef NM_HAVE_LIBURING
#include <liburing.h>
#endif
#ifdef NM_HAVE_IBVERBS
#include "nmtest_rdma.h"
#endif

#include "nmtest_cred.h"
#include "nmtest_dmabuf.h"
#include "nmtest_util.h"

#define RW		(PROT_READ | PROT_WRITE)
#define KB(x)		((uint64_t)(x) / 1024)

/* ---------------------------------------------------------------- */
/* What the kernel reports                                          */

/*
 * Sum of "key:" (kB) over the VMAs of /proc/self/smaps that overlap
 * [addr, addr + len): a range that munmap or mprotect split is several.
 */
static uint64_t smaps_kb(const void *addr, size_t len, const char *key)
{
	uintptr_t a = (uintptr_t)addr, e = a + len;
	FILE *f = fopen("/proc/self/smaps", "r");
	size_t klen = strlen(key);
	char line[512];
	uint64_t sum = 0;
	bool in = false;

	ck_assert_msg(f, "/proc/self/smaps: %s", nm_errname(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, t;
		char *sp = strchr(line, ' '), *dash = strchr(line, '-');

		if (sp && dash && dash < sp &&
		    sscanf(line, "%lx-%lx ", &s, &t) == 2) {
			in = s < e && t > a;
			continue;
		}
		if (in && !strncmp(line, key, klen) && line[klen] == ':') {
			unsigned long long v;

			if (sscanf(line + klen + 1, " %llu", &v) == 1)
				sum += v;
		}
	}
	fclose(f);
	return sum;
}

#define pmd_kb(p, len)	smaps_kb((p), (len), "FilePmdMapped")
#define rss_kb(p, len)	smaps_kb((p), (len), "Rss")

/* /proc/meminfo FilePmdMapped, kB: per chunk, however many map it */
static uint64_t meminfo_pmd_kb(void)
{
	uint64_t v = 0;
	int ret = nm_meminfo_kb("FilePmdMapped", &v);

	ck_assert_msg(ret == 0, "FilePmdMapped in /proc/meminfo: %s "
		      "(a kernel without CONFIG_TRANSPARENT_HUGEPAGE?)",
		      nm_retname(ret));
	return v;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* ---------------------------------------------------------------- */
/* Baseline: nothing may be left behind                              */

struct base {
	int obs;			/* an fd of its own, for GET_INFO */
	struct nm_counters c;
	uint64_t pmd_kb;
};

static void base_take(struct base *b)
{
	b->obs = nm_open();
	nm_counters(b->obs, &b->c);
	b->pmd_kb = meminfo_pmd_kb();
}

/* Global counters (buffers, allocated_bytes, pages) and FilePmdMapped */
#define base_check(b) _base_check((b), __FILE__, __LINE__)
static void _base_check(struct base *b, const char *f, int l)
{
	struct nm_counters now;
	uint64_t pmd = meminfo_pmd_kb();

	nm_counters(b->obs, &now);
	if (now.buffers != b->c.buffers ||
	    now.allocated_bytes != b->c.allocated_bytes || pmd != b->pmd_kb)
		_ck_assert_failed(f, l, "leak", "not back to the baseline: "
				  "buffers %llu (was %llu), allocated_bytes "
				  "%llu (was %llu), FilePmdMapped %llu kB "
				  "(was %llu)",
				  (unsigned long long)now.buffers,
				  (unsigned long long)b->c.buffers,
				  (unsigned long long)now.allocated_bytes,
				  (unsigned long long)b->c.allocated_bytes,
				  (unsigned long long)pmd,
				  (unsigned long long)b->pmd_kb);
	_nm_assert_counters_eq(&b->c, &now, false, f, l);
	close(b->obs);
}

/* ---------------------------------------------------------------- */
/* Buffers and mappings                                              */

struct pm {
	int fd;
	struct npu_mem_alloc a;
	uint8_t *p;
	size_t size;
};

/*
 * ALLOC (after a 12 KiB NORMAL_ONLY buffer, so that the next free mmap
 * offset is not 2 MiB-aligned unless ALLOC makes it so) and map with
 * mmap(NULL).  The small buffer is freed again.
 */
static void pm_new(struct pm *m, uint64_t size, uint32_t policy, int flags)
{
	struct npu_mem_alloc pad;

	m->fd = nm_open();
	nm_alloc_ok(m->fd, 3 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &pad);
	/* device_dma_through_pmds addresses it by offset from dev_addr */
	nm_alloc_dev_contig_ok(m->fd, size, policy, 0, &m->a);
	nm_free_ok(m->fd, pad.handle);
	m->size = m->a.buf.size;
	m->p = mmap(NULL, m->size, RW, MAP_SHARED | flags, m->fd,
		    m->a.buf.mmap_offset);
	ck_assert_msg(m->p != MAP_FAILED, "mmap %s %zu: %s",
		      nm_policy_name(policy), m->size, nm_errname(errno));
}

static void pm_del(struct pm *m)
{
	if (m->p)
		ck_assert_int_eq(munmap(m->p, m->size), 0);
	nm_free_ok(m->fd, m->a.handle);
	close(m->fd);
}

/* HUGE_ONLY buffer of `size`, mapped, every page written with `seed` */
static void pm_huge_filled(struct pm *m, uint64_t size, uint64_t seed)
{
	pm_new(m, size, NPU_MEM_POLICY_HUGE_ONLY, 0);
	ck_assert_msg((uintptr_t)m->p % NM_2M == 0 &&
		      m->a.buf.mmap_offset % NM_2M == 0,
		      "HUGE_ONLY mapping at %p, mmap_offset %#llx: not "
		      "2 MiB-aligned", m->p,
		      (unsigned long long)m->a.buf.mmap_offset);
	nm_fill(m->p, m->size, seed);
	ck_assert_msg(pmd_kb(m->p, m->size) == KB(m->size),
		      "after writing every page: FilePmdMapped %llu kB, "
		      "want %llu (one PMD per chunk)",
		      (unsigned long long)pmd_kb(m->p, m->size),
		      (unsigned long long)KB(m->size));
}

/*
 * An address range of len bytes starting `shift` bytes after a 2 MiB
 * boundary, reserved (PROT_NONE) so MAP_FIXED can take it.
 */
static uint8_t *aligned_hole(size_t len, size_t shift)
{
	size_t span = len + shift + 2 * NM_2M;
	uint8_t *r = mmap(NULL, span, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *a;

	ck_assert(r != MAP_FAILED);
	a = (uint8_t *)NM_ALIGN((uintptr_t)r, NM_2M) + shift;
	/* keep only [a, a + len) reserved: smaps sums see nothing else */
	if (a > r)
		munmap(r, a - r);
	munmap(a + len, r + span - (a + len));
	return a;
}

static uint8_t *map_fixed(int fd, uint64_t off, size_t len, size_t shift,
			  int prot)
{
	uint8_t *want = aligned_hole(len, shift);
	uint8_t *p = mmap(want, len, prot, MAP_SHARED | MAP_FIXED, fd, off);

	ck_assert_msg(p == want, "mmap MAP_FIXED at %p: %p (%s)", want, p,
		      p == MAP_FAILED ? nm_errname(errno) : "-");
	return p;
}

/* ================================================================ */
/* What gets a PMD                                                   */

START_TEST(huge_only_pmd_on_first_touch)
{
	const size_t size = 8 * NM_MiB;
	uint64_t pmd0, pmd, mpmd, rss0, rss;
	long f0, faults, faults_all;
	struct base b;
	struct pm m;

	base_take(&b);
	pm_new(&m, size, NPU_MEM_POLICY_HUGE_ONLY, 0);
	ck_assert_uint_eq(m.a.buf.huge_pages, 4);
	rss0 = rss_kb(m.p, size);
	pmd0 = meminfo_pmd_kb();
	/* one byte per chunk, at an unaligned offset; reads and writes */
	f0 = minflt();
	for (int i = 0; i < 4; i++) {
		volatile uint8_t *q = m.p + i * NM_2M + 12345 + i * NM_4K;

		if (i & 1)
			*q = 0xa0 + i;
		else
			ck_assert_uint_eq(*q, 0);
	}
	faults = minflt() - f0;
	pmd = pmd_kb(m.p, size);
	mpmd = meminfo_pmd_kb() - pmd0;
	rss = rss_kb(m.p, size);
	/* then every page, written: a read-faulted PMD is writable already */
	f0 = minflt();
	for (size_t o = 0; o < size; o += NM_4K)
		m.p[o] = 0x5c;
	faults_all = minflt() - f0;
	printf("HUGE_ONLY 8 MiB: mmap_offset %#llx, address %p; Rss after "
	       "mmap %llu kB; after one touch per chunk: %ld faults, "
	       "FilePmdMapped %llu kB (meminfo +%llu kB), Rss %llu kB; "
	       "writing every page then: %ld faults\n",
	       (unsigned long long)m.a.buf.mmap_offset, m.p,
	       (unsigned long long)rss0, faults, (unsigned long long)pmd,
	       (unsigned long long)mpmd, (unsigned long long)rss, faults_all);
	ck_assert_msg(m.a.buf.mmap_offset % NM_2M == 0,
		      "mmap_offset %#llx is not 2 MiB-aligned",
		      (unsigned long long)m.a.buf.mmap_offset);
	ck_assert_msg((uintptr_t)m.p % NM_2M == 0,
		      "mmap(NULL) of 2 MiB chunks gave %p: not 2 MiB-aligned",
		      m.p);
	ck_assert_msg(rss0 == 0, "Rss %llu kB right after mmap: chunks must "
		      "be mapped on demand", (unsigned long long)rss0);
	ck_assert_msg(pmd == 8192 && mpmd == 8192 && rss == 8192,
		      "one touch per chunk: FilePmdMapped %llu kB (meminfo "
		      "+%llu), Rss %llu; want 8192 each",
		      (unsigned long long)pmd, (unsigned long long)mpmd,
		      (unsigned long long)rss);
	ck_assert_msg(faults <= 4, "%ld faults for 4 first touches", faults);
	ck_assert_msg(faults_all == 0, "%ld faults writing PMD-mapped chunks",
		      faults_all);
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	for (int i = 0; i < 4; i++) {
		size_t o = i * NM_2M + 12345 + i * NM_4K;

		ck_assert_uint_eq(m.p[o], i & 1 ? 0xa0 + i : 0);
		ck_assert_uint_eq(m.p[o + 1], 0);
		ck_assert_uint_eq(m.p[i * NM_2M], 0x5c);
	}
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(huge_first_tail_is_ptes)
{
	struct base b;
	struct pm m;
	uint64_t pmd, rss;

	base_take(&b);
	pm_new(&m, 4 * NM_MiB + 3 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0);
	if (m.a.buf.huge_pages != 2 || m.a.buf.normal_pages != 3) {
		pm_del(&m);
		nm_skip("HUGE_FIRST 4 MiB + 12 KiB got %u chunks and %u pages "
			"(no free 2 MiB blocks): nothing to map by PMD",
			m.a.buf.huge_pages, m.a.buf.normal_pages);
	}
	nm_fill(m.p, m.size, 3);
	pmd = pmd_kb(m.p, m.size);
	rss = rss_kb(m.p, m.size);
	printf("HUGE_FIRST 4 MiB + 12 KiB at %p (offset %#llx): Rss %llu kB, "
	       "FilePmdMapped %llu kB\n", m.p,
	       (unsigned long long)m.a.buf.mmap_offset,
	       (unsigned long long)rss, (unsigned long long)pmd);
	ck_assert_msg(m.a.buf.mmap_offset % NM_2M == 0 &&
		      (uintptr_t)m.p % NM_2M == 0, "offset %#llx, address %p "
		      "not 2 MiB-aligned",
		      (unsigned long long)m.a.buf.mmap_offset, m.p);
	ck_assert_msg(pmd == 4096 && rss - pmd == 12,
		      "chunks by PMD, tail by PTE: FilePmdMapped %llu kB (want "
		      "4096), Rss - FilePmdMapped %llu kB (want 12)",
		      (unsigned long long)pmd, (unsigned long long)(rss - pmd));
	ck_assert_uint_eq(nm_verify(m.p, m.size, 3), SIZE_MAX);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(normal_only_prefaulted)
{
	struct base b;
	struct pm m;
	uint64_t rss, pmd;
	long f0, faults;

	base_take(&b);
	pm_new(&m, 3 * NM_MiB + NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	rss = rss_kb(m.p, m.size);
	pmd = pmd_kb(m.p, m.size);
	f0 = minflt();
	nm_fill(m.p, m.size, 4);
	faults = minflt() - f0;
	printf("NORMAL_ONLY 3 MiB + 4 KiB: Rss right after mmap %llu kB, "
	       "FilePmdMapped %llu kB, faults writing every page %ld\n",
	       (unsigned long long)rss, (unsigned long long)pmd, faults);
	ck_assert_msg(rss == KB(m.size) && pmd == 0,
		      "small pages are inserted at mmap: Rss %llu kB (want "
		      "%llu), FilePmdMapped %llu", (unsigned long long)rss,
		      (unsigned long long)KB(m.size), (unsigned long long)pmd);
	ck_assert_int_eq(faults, 0);
	ck_assert_uint_eq(nm_verify(m.p, m.size, 4), SIZE_MAX);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(misaligned_address_gets_ptes)
{
	const size_t size = 4 * NM_MiB;
	struct base b;
	struct pm m;
	uint8_t *q;
	uint64_t pmd, rss;

	base_take(&b);
	pm_huge_filled(&m, size, 5);
	/* the same buffer at 2 MiB + 4 KiB: no chunk can be one PMD there */
	q = map_fixed(m.fd, m.a.buf.mmap_offset, size, NM_4K, RW);
	ck_assert_uint_eq(nm_verify(q, size, 5), SIZE_MAX);
	nm_fill(q + NM_MiB, NM_2M, 6);
	pmd = pmd_kb(q, size);
	rss = rss_kb(q, size);
	printf("MAP_FIXED at %p: FilePmdMapped %llu kB, Rss %llu kB\n", q,
	       (unsigned long long)pmd, (unsigned long long)rss);
	ck_assert_msg(pmd == 0 && rss == 4096, "misaligned mapping: "
		      "FilePmdMapped %llu kB (want 0), Rss %llu (want 4096)",
		      (unsigned long long)pmd, (unsigned long long)rss);
	/* the very pages: what went in through one shows in the other */
	ck_assert_uint_eq(nm_verify(m.p + NM_MiB, NM_2M, 6), SIZE_MAX);
	ck_assert_uint_eq(nm_verify(m.p, NM_MiB, 5), SIZE_MAX);
	ck_assert_uint_eq(pmd_kb(m.p, size), 4096);
	ck_assert_int_eq(munmap(q, size), 0);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(misaligned_offset_gets_ptes)
{
	const size_t size = 8 * NM_MiB;
	struct base b;
	struct pm m;
	uint8_t *q, *r;
	uint64_t qpmd, rpmd;

	base_take(&b);
	pm_huge_filled(&m, size, 7);
	/* from 4 KiB into the buffer, at an aligned address: PTEs */
	q = map_fixed(m.fd, m.a.buf.mmap_offset + NM_4K, 4 * NM_MiB, 0, RW);
	ck_assert_uint_eq(nm_verify_at(q, 4 * NM_MiB, 7, NM_4K), SIZE_MAX);
	/* from 2 MiB on, aligned: the chunks there are PMDs */
	r = map_fixed(m.fd, m.a.buf.mmap_offset + NM_2M, 4 * NM_MiB, 0, RW);
	ck_assert_uint_eq(nm_verify_at(r, 4 * NM_MiB, 7, NM_2M), SIZE_MAX);
	qpmd = pmd_kb(q, 4 * NM_MiB);
	rpmd = pmd_kb(r, 4 * NM_MiB);
	printf("offset +4 KiB at %p: FilePmdMapped %llu kB; offset +2 MiB at "
	       "%p: FilePmdMapped %llu kB\n", q, (unsigned long long)qpmd, r,
	       (unsigned long long)rpmd);
	ck_assert_msg(qpmd == 0, "offset 4 KiB into a chunk: FilePmdMapped "
		      "%llu kB", (unsigned long long)qpmd);
	ck_assert_msg(rpmd == 4096, "offset 2 MiB, aligned address: "
		      "FilePmdMapped %llu kB, want 4096",
		      (unsigned long long)rpmd);
	ck_assert_int_eq(munmap(q, 4 * NM_MiB), 0);
	ck_assert_int_eq(munmap(r, 4 * NM_MiB), 0);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(map_populate_maps_pmds)
{
	struct base b;
	struct pm m;
	uint64_t pmd, rss;
	long f0, faults;

	base_take(&b);
	pm_new(&m, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, MAP_POPULATE);
	pmd = pmd_kb(m.p, m.size);
	rss = rss_kb(m.p, m.size);
	f0 = minflt();
	nm_fill(m.p, m.size, 8);
	faults = minflt() - f0;
	printf("MAP_POPULATE 8 MiB: before any touch FilePmdMapped %llu kB, "
	       "Rss %llu kB; faults writing every page %ld\n",
	       (unsigned long long)pmd, (unsigned long long)rss, faults);
	ck_assert_msg(pmd == 8192, "MAP_POPULATE: FilePmdMapped %llu kB "
		      "before any touch, want 8192", (unsigned long long)pmd);
	ck_assert_int_eq(faults, 0);
	ck_assert_uint_eq(nm_verify(m.p, m.size, 8), SIZE_MAX);
	pm_del(&m);
	base_check(&b);
}
END_TEST

/*
 * MADV_NOHUGEPAGE: the kernel, not the driver, decides.  Since 6.12
 * do_set_pmd() refuses PMDs in a VMA with THP disabled (VM_NOHUGEPAGE),
 * so the chunks are mapped by PTEs; 6.1's do_set_pmd() does not look at
 * the flag and maps them by PMD as usual.  Either way the data is right.
 */
START_TEST(madv_nohugepage)
{
	struct base b;
	struct pm m;
	uint64_t pmd, rss;
	bool want_ptes = nm_kernel_version() >= 612;

	base_take(&b);
	pm_new(&m, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0);
	ck_assert_int_eq(madvise(m.p, m.size, MADV_NOHUGEPAGE), 0);
	nm_fill(m.p, m.size, 9);
	pmd = pmd_kb(m.p, m.size);
	rss = rss_kb(m.p, m.size);
	printf("MADV_NOHUGEPAGE before touch, Linux %s: FilePmdMapped %llu "
	       "kB, Rss %llu kB (%s)\n", nm_kernel_release(),
	       (unsigned long long)pmd, (unsigned long long)rss,
	       pmd ? "PMDs" : "PTEs");
	ck_assert_uint_eq(rss, 4096);
	ck_assert_msg(pmd == (want_ptes ? 0 : 4096), "MADV_NOHUGEPAGE on "
		      "Linux %s: FilePmdMapped %llu kB, want %s",
		      nm_kernel_release(), (unsigned long long)pmd,
		      want_ptes ? "0 (PTEs)" : "4096 (PMDs)");
	ck_assert_uint_eq(nm_verify(m.p, m.size, 9), SIZE_MAX);
	/* zapped and faulted again (the PTE tables stay): the same pages */
	ck_assert_int_eq(madvise(m.p, m.size, MADV_DONTNEED), 0);
	ck_assert_uint_eq(nm_verify(m.p, m.size, 9), SIZE_MAX);
	pm_del(&m);
	base_check(&b);
}
END_TEST

/*
 * The THP sysfs setting is the administrator's policy for anonymous and
 * shmem memory; a driver's buffer is already made of 2 MiB chunks, and
 * finish_fault() maps them with PMDs whatever it says, as it does the page
 * cache's large folios.  (This is why ->huge_fault with
 * vmf_insert_folio_pmd() is not used on kernels that have it: the fault
 * path calls a file VMA's ->huge_fault only when that setting allows
 * huge pages.)  An unchecked fixture puts the setting back even if the
 * test dies.
 */
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
static char saved_thp[16];

static void thp_save(void)
{
	char *s = nm_read_file(THP_ENABLED), *l, *r;

	saved_thp[0] = 0;
	if (s && (l = strchr(s, '[')) && (r = strchr(l, ']')) &&
	    r - l - 1 < (long)sizeof(saved_thp))
		snprintf(saved_thp, sizeof(saved_thp), "%.*s", (int)(r - l - 1),
			 l + 1);
	free(s);
}

static void thp_restore(void)
{
	if (saved_thp[0])
		nm_write_file(THP_ENABLED, saved_thp);
}

static const struct nm_fixture thp_fx = {
	.setup = thp_save, .teardown = thp_restore, .unchecked = true,
};

START_TEST(thp_never_still_pmds)
{
	struct base b;
	struct pm m;
	char *now;
	uint64_t pmd;

	if (!saved_thp[0])
		nm_skip("no %s to set", THP_ENABLED);
	ck_assert_int_eq(nm_write_file(THP_ENABLED, "never"), 0);
	now = nm_read_file(THP_ENABLED);
	ck_assert_msg(now && strstr(now, "[never]"), "%s: %s", THP_ENABLED,
		      now ? now : "unreadable");
	free(now);
	base_take(&b);
	pm_new(&m, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0);
	nm_fill(m.p, m.size, 11);
	pmd = pmd_kb(m.p, m.size);
	printf("THP \"never\" (was \"%s\"): FilePmdMapped %llu kB of 4096\n",
	       saved_thp, (unsigned long long)pmd);
	ck_assert_msg(pmd == 4096, "with THP \"never\": FilePmdMapped %llu "
		      "kB, want 4096 (one PMD per chunk)",
		      (unsigned long long)pmd);
	ck_assert_uint_eq(nm_verify(m.p, m.size, 11), SIZE_MAX);
	pm_del(&m);
	base_check(&b);
}
END_TEST

/* ================================================================ */
/* Splitting and zapping PMDs                                        */

START_TEST(partial_munmap_mid_chunk)
{
	const size_t size = 8 * NM_MiB, hole = NM_2M + 64 * NM_KiB;
	struct base b;
	struct pm m;
	uint8_t *q;
	uint64_t pmd, rss;

	base_take(&b);
	pm_huge_filled(&m, size, 10);
	ck_assert_int_eq(munmap(m.p + hole, NM_4K), 0);
	ck_assert_int_eq(nm_probe(m.p + hole, false), SIGSEGV);
	ck_assert_uint_eq(nm_verify(m.p, hole, 10), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(m.p + hole + NM_4K, size - hole - NM_4K,
				       10, hole + NM_4K), SIZE_MAX);
	nm_fill_at(m.p + NM_2M, NM_4K, 11, NM_2M);
	pmd = pmd_kb(m.p, size);
	rss = rss_kb(m.p, size);
	printf("munmap of 4 KiB in chunk 1: FilePmdMapped %llu kB, Rss %llu "
	       "kB\n", (unsigned long long)pmd, (unsigned long long)rss);
	ck_assert_msg(pmd == 6144 && rss == 8188, "after the hole: "
		      "FilePmdMapped %llu kB (want 6144: chunk 1 by PTEs), Rss "
		      "%llu (want 8188)", (unsigned long long)pmd,
		      (unsigned long long)rss);
	/* the unmapped page is still the buffer's, with its data */
	q = nm_map_ok(m.fd, &m.a, RW);
	ck_assert_uint_eq(nm_verify_at(q + NM_2M, NM_4K, 11, NM_2M), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(q + hole, NM_4K, 10, hole), SIZE_MAX);
	ck_assert_uint_eq(munmap(q, size), 0);
	ck_assert_int_eq(munmap(m.p, hole), 0);
	ck_assert_int_eq(munmap(m.p + hole + NM_4K, size - hole - NM_4K), 0);
	m.p = NULL;
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(mprotect_one_page)
{
	const size_t size = 8 * NM_MiB, ro = NM_2M + 8 * NM_KiB;
	struct base b;
	struct pm m;
	uint64_t pmd;
	pid_t pid;

	base_take(&b);
	pm_huge_filled(&m, size, 12);
	ck_assert_int_eq(mprotect(m.p + ro, NM_4K, PROT_READ), 0);
	/* everything else stays writable: new data, read back */
	nm_fill_at(m.p, ro, 13, 0);
	nm_fill_at(m.p + ro + NM_4K, size - ro - NM_4K, 13, ro + NM_4K);
	ck_assert_uint_eq(nm_verify_at(m.p, ro, 13, 0), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(m.p + ro + NM_4K, size - ro - NM_4K, 13,
				       ro + NM_4K), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(m.p + ro, NM_4K, 12, ro), SIZE_MAX);
	pmd = pmd_kb(m.p, size);
	printf("mprotect(PROT_READ) of 4 KiB in chunk 1: FilePmdMapped %llu "
	       "kB\n", (unsigned long long)pmd);
	ck_assert_msg(pmd == 6144, "FilePmdMapped %llu kB, want 6144 (chunk "
		      "1 by PTEs)", (unsigned long long)pmd);
	/* a child that inherits the mapping cannot write that page either */
	if (nm_dofork_refused())
		nm_skip(NM_DOFORK_REFUSED);
	ck_assert_int_eq(madvise(m.p, size, MADV_DOFORK), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (nm_probe(m.p + ro - 1, true) != 0)
			_exit(1);
		if (nm_probe(m.p + ro, true) != SIGSEGV)
			_exit(2);
		if (nm_verify_at(m.p + ro, NM_4K, 12, ro) != SIZE_MAX)
			_exit(3);
		m.p[ro + NM_4K] = 0xee;
		_exit(0);
	}
	nm_wait_ok(pid, "child writing around and into the read-only page");
	ck_assert_uint_eq(m.p[ro + NM_4K], 0xee);
	ck_assert_int_eq(nm_probe(m.p + ro, true), SIGSEGV);
	ck_assert_int_eq(mprotect(m.p + ro, NM_4K, RW), 0);
	m.p[ro] = 0xdd;
	ck_assert_uint_eq(m.p[ro], 0xdd);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(madv_dontneed_refault)
{
	const size_t size = 8 * NM_MiB;
	struct base b;
	struct pm m;
	uint64_t pmd_sub, pmd_whole, pmd_after;

	base_take(&b);
	pm_huge_filled(&m, size, 14);
	/* part of chunk 1, then all of chunk 2 */
	ck_assert_int_eq(madvise(m.p + NM_2M + NM_4K, 64 * NM_KiB,
				 MADV_DONTNEED), 0);
	pmd_sub = pmd_kb(m.p, size);
	ck_assert_int_eq(madvise(m.p + 2 * NM_2M, NM_2M, MADV_DONTNEED), 0);
	pmd_whole = pmd_kb(m.p, size);
	/* the refault sees the same bytes: they are the buffer's pages */
	ck_assert_uint_eq(nm_verify(m.p, size, 14), SIZE_MAX);
	pmd_after = pmd_kb(m.p, size);
	printf("MADV_DONTNEED: FilePmdMapped after 64 KiB of chunk 1 %llu kB, "
	       "after all of chunk 2 %llu kB, after reading everything "
	       "again %llu kB\n", (unsigned long long)pmd_sub,
	       (unsigned long long)pmd_whole, (unsigned long long)pmd_after);
	/*
	 * Splitting a PMD of a file folio zaps it whole (the page cache
	 * keeps the data; here the buffer does): the refault maps the
	 * whole chunk again.
	 */
	ck_assert_msg(pmd_sub == 6144 && pmd_whole == 4096 &&
		      pmd_after == 8192, "FilePmdMapped %llu/%llu/%llu kB, want "
		      "6144/4096/8192", (unsigned long long)pmd_sub,
		      (unsigned long long)pmd_whole,
		      (unsigned long long)pmd_after);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(mremap_move)
{
	const size_t size = 8 * NM_MiB;
	struct base b;
	struct pm m;
	uint8_t *to, *to2, *q;
	uint64_t pmd, pmd2;
	long f0, faults;

	base_take(&b);
	pm_huge_filled(&m, size, 15);
	to = aligned_hole(size, 0);
	q = mremap(m.p, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	ck_assert_msg(q == to, "mremap to %p: %p (%s)", to, q,
		      q == MAP_FAILED ? nm_errname(errno) : "-");
	m.p = q;
	pmd = pmd_kb(q, size);
	f0 = minflt();
	ck_assert_uint_eq(nm_verify(q, size, 15), SIZE_MAX);
	faults = minflt() - f0;
	/* to a misaligned address: the PMDs must go, the data stays */
	to2 = aligned_hole(size, NM_4K);
	q = mremap(m.p, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to2);
	ck_assert_msg(q == to2, "mremap to %p: %p (%s)", to2, q,
		      q == MAP_FAILED ? nm_errname(errno) : "-");
	m.p = q;
	ck_assert_uint_eq(nm_verify(q, size, 15), SIZE_MAX);
	nm_fill(q, size, 16);
	pmd2 = pmd_kb(q, size);
	printf("mremap to an aligned address: FilePmdMapped %llu kB, %ld "
	       "faults reading it all; to a misaligned one: FilePmdMapped "
	       "%llu kB\n", (unsigned long long)pmd, faults,
	       (unsigned long long)pmd2);
	ck_assert_msg(pmd == 8192 && faults == 0, "moved PMDs: FilePmdMapped "
		      "%llu kB (want 8192), %ld faults (want 0)",
		      (unsigned long long)pmd, faults);
	ck_assert_uint_eq(pmd2, 0);
	ck_assert_uint_eq(rss_kb(q, size), 8192);
	/* back through a fresh mapping: the writes went to the buffer */
	q = nm_map_ok(m.fd, &m.a, PROT_READ);
	ck_assert_uint_eq(nm_verify(q, size, 16), SIZE_MAX);
	ck_assert_int_eq(munmap(q, size), 0);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(dofork_child_shares_pages)
{
	const size_t size = 4 * NM_MiB;
	struct base b;
	struct pm m;
	uint64_t child_pmd = 0;
	int pfd[2];
	pid_t pid;

	base_take(&b);
	pm_huge_filled(&m, size, 17);
	if (nm_dofork_refused())
		nm_skip(NM_DOFORK_REFUSED);
	ck_assert_int_eq(madvise(m.p, size, MADV_DOFORK), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		uint64_t v;

		close(pfd[0]);
		if (nm_verify(m.p, size, 17) != SIZE_MAX)
			_exit(1);
		nm_fill_at(m.p + NM_2M - NM_MiB, NM_2M, 18, NM_2M - NM_MiB);
		v = smaps_kb(m.p, size, "FilePmdMapped");
		if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &child_pmd, sizeof(child_pmd)),
			 sizeof(child_pmd));
	close(pfd[0]);
	nm_wait_ok(pid, "MADV_DOFORK child");
	printf("MADV_DOFORK child: FilePmdMapped %llu kB in the child\n",
	       (unsigned long long)child_pmd);
	ck_assert_uint_eq(nm_verify_at(m.p + NM_2M - NM_MiB, NM_2M, 18,
				       NM_2M - NM_MiB), SIZE_MAX);
	ck_assert_uint_eq(nm_verify(m.p, NM_MiB, 17), SIZE_MAX);
	ck_assert_msg(child_pmd == 4096, "the child's faults: FilePmdMapped "
		      "%llu kB, want 4096", (unsigned long long)child_pmd);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(free_while_mapped)
{
	const size_t size = 8 * NM_MiB;
	struct nm_counters live;
	struct base b;
	struct pm m;

	base_take(&b);
	pm_new(&m, size, NPU_MEM_POLICY_HUGE_ONLY, 0);
	/* chunks 0-2 mapped before FREE, chunk 3 only after */
	nm_fill(m.p, 6 * NM_MiB, 19);
	nm_counters(b.obs, &live);
	nm_free_ok(m.fd, m.a.handle);
	nm_assert_global_now(b.obs, &live);
	ck_assert_uint_eq(nm_verify(m.p, 6 * NM_MiB, 19), SIZE_MAX);
	nm_fill_at(m.p + 6 * NM_MiB, NM_2M, 19, 6 * NM_MiB);
	ck_assert_uint_eq(nm_verify(m.p, size, 19), SIZE_MAX);
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	ck_assert_int_eq(munmap(m.p, size), 0);
	close(m.fd);
	base_check(&b);
}
END_TEST

START_TEST(exit_with_mappings)
{
	struct base b;
	uint64_t child_pmd = 0;
	int pfd[2];
	pid_t pid;

	base_take(&b);
	ck_assert_int_eq(pipe(pfd), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pm m;
		uint64_t v;

		close(pfd[0]);
		pm_new(&m, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0);
		nm_fill(m.p, m.size, 20);
		v = smaps_kb(m.p, m.size, "FilePmdMapped");
		if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
			_exit(2);
		/* no munmap, no FREE, no close */
		_exit(0);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &child_pmd, sizeof(child_pmd)),
			 sizeof(child_pmd));
	close(pfd[0]);
	nm_wait_ok(pid, "child exiting with its mappings");
	printf("exit with mappings: FilePmdMapped %llu kB in the child\n",
	       (unsigned long long)child_pmd);
	ck_assert_uint_eq(child_pmd, 8192);
	base_check(&b);
}
END_TEST

START_TEST(close_fd_while_mapped)
{
	const size_t size = 8 * NM_MiB;
	struct base b;
	struct pm m;

	base_take(&b);
	pm_new(&m, size, NPU_MEM_POLICY_HUGE_ONLY, 0);
	nm_fill(m.p, 4 * NM_MiB, 21);
	close(m.fd);
	/* mapped chunks, and chunks first touched after the close */
	ck_assert_uint_eq(nm_verify(m.p, 4 * NM_MiB, 21), SIZE_MAX);
	nm_fill_at(m.p + 4 * NM_MiB, 4 * NM_MiB, 21, 4 * NM_MiB);
	ck_assert_uint_eq(nm_verify(m.p, size, 21), SIZE_MAX);
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	ck_assert_int_eq(munmap(m.p, size), 0);
	base_check(&b);
}
END_TEST

/* ================================================================ */
/* More than one mapping of a buffer                                 */

START_TEST(two_vmas_one_buffer)
{
	const size_t size = 8 * NM_MiB;
	struct base b;
	struct pm m;
	uint8_t *q;
	uint64_t pa, pq, mi0, mi, mi1;

	base_take(&b);
	mi0 = meminfo_pmd_kb();
	pm_huge_filled(&m, size, 22);
	q = nm_map_ok(m.fd, &m.a, RW);
	ck_assert_uint_eq(nm_verify(q, size, 22), SIZE_MAX);
	nm_fill(q + NM_MiB, 4 * NM_MiB, 23);
	ck_assert_uint_eq(nm_verify(m.p + NM_MiB, 4 * NM_MiB, 23), SIZE_MAX);
	pa = pmd_kb(m.p, size);
	pq = pmd_kb(q, size);
	mi = meminfo_pmd_kb() - mi0;
	ck_assert_int_eq(munmap(m.p, size), 0);
	m.p = NULL;
	mi1 = meminfo_pmd_kb() - mi0;
	printf("two mappings of one buffer: FilePmdMapped %llu and %llu kB, "
	       "meminfo +%llu kB, +%llu kB after unmapping the first\n",
	       (unsigned long long)pa, (unsigned long long)pq,
	       (unsigned long long)mi, (unsigned long long)mi1);
	ck_assert_msg((uintptr_t)q % NM_2M == 0 && pa == 8192 && pq == 8192,
		      "second mapping at %p; FilePmdMapped %llu and %llu kB, "
		      "want 8192 each", q, (unsigned long long)pa,
		      (unsigned long long)pq);
	/* meminfo counts a chunk once, however many PMDs map it */
	ck_assert_uint_eq(mi, 8192);
	ck_assert_uint_eq(mi1, 8192);
	ck_assert_uint_eq(nm_verify(q + NM_MiB, 4 * NM_MiB, 23), SIZE_MAX);
	ck_assert_int_eq(munmap(q, size), 0);
	pm_del(&m);
	base_check(&b);
}
END_TEST

/*
 * The dma-buf file has no get_unmapped_area of its own, so mmap(NULL) of it
 * need not be 2 MiB-aligned: the data must be right whatever the mapping;
 * which kind it got is printed.  At a forced misaligned address it can
 * only be PTEs.
 */
START_TEST(dmabuf_mmap)
{
	const size_t size = 8 * NM_MiB;
	struct base b;
	struct pm m;
	uint8_t *d, *da, *dm;
	uint64_t pd, pda, pdm;
	int dfd;

	base_take(&b);
	pm_huge_filled(&m, size, 24);
	/*
	 * The CPU wrote: where the device sees bounce buffers (swiotlb),
	 * DMA_BUF_SYNC_START would copy theirs over it unless synced first.
	 */
	nm_sync_ok(m.fd, m.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size);
	dfd = nm_export_ok(m.fd, m.a.handle, O_RDWR | O_CLOEXEC);
	nm_free_ok(m.fd, m.a.handle);
	d = nm_dmabuf_map_ok(dfd, 0, size, RW);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	ck_assert_uint_eq(nm_verify(d, size, 24), SIZE_MAX);
	nm_fill(d + NM_2M - 3 * NM_4K, NM_2M, 25);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	ck_assert_uint_eq(nm_verify(m.p + NM_2M - 3 * NM_4K, NM_2M, 25),
			  SIZE_MAX);
	pd = pmd_kb(d, size);
	/* at an aligned address, and at a misaligned one, from 2 MiB on */
	da = aligned_hole(4 * NM_MiB, 0);
	ck_assert(mmap(da, 4 * NM_MiB, RW, MAP_SHARED | MAP_FIXED, dfd, NM_2M)
		  == da);
	dm = aligned_hole(4 * NM_MiB, NM_4K);
	ck_assert(mmap(dm, 4 * NM_MiB, RW, MAP_SHARED | MAP_FIXED, dfd, NM_2M)
		  == dm);
	ck_assert_uint_eq(nm_verify_at(da, NM_2M - 3 * NM_4K, 25,
				       3 * NM_4K), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(da + NM_2M, NM_2M, 24, 2 * NM_2M),
			  SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(dm, NM_2M - 3 * NM_4K, 25, 3 * NM_4K),
			  SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(dm + NM_2M, NM_2M, 24, 2 * NM_2M),
			  SIZE_MAX);
	nm_fill(dm + NM_2M + 5, 100, 26);
	ck_assert_uint_eq(nm_verify(m.p + 2 * NM_2M + 5, 100, 26), SIZE_MAX);
	ck_assert_uint_eq(nm_verify(da + NM_2M + 5, 100, 26), SIZE_MAX);
	pda = pmd_kb(da, 4 * NM_MiB);
	pdm = pmd_kb(dm, 4 * NM_MiB);
	printf("dma-buf: mmap(NULL) at %p (%s2 MiB-aligned): FilePmdMapped "
	       "%llu kB of %llu; MAP_FIXED aligned: %llu kB of 4096; MAP_FIXED "
	       "at +4 KiB: %llu kB\n", d, (uintptr_t)d % NM_2M ? "not " : "",
	       (unsigned long long)pd, (unsigned long long)KB(size),
	       (unsigned long long)pda,
	       (unsigned long long)pdm);
	ck_assert_uint_eq(pdm, 0);
	ck_assert_int_eq(munmap(da, 4 * NM_MiB), 0);
	ck_assert_int_eq(munmap(dm, 4 * NM_MiB), 0);
	ck_assert_int_eq(munmap(d, size), 0);
	close(dfd);
	ck_assert_int_eq(munmap(m.p, size), 0);
	close(m.fd);
	base_check(&b);
}
END_TEST

/* ================================================================ */
/* get_user_pages() users                                            */

/*
 * O_DIRECT on a block device: a loop device over a tmpfs file (tmpfs
 * itself takes O_DIRECT only since 6.6).  The block layer pins the
 * mapping's pages (bio_iov_iter_get_pages) for both directions.
 */
START_TEST(odirect_block_device)
{
	const size_t size = 8 * NM_MiB, len = NM_MiB;
	const size_t src = NM_2M - 256 * NM_KiB, dst = 3 * NM_2M - 384 * NM_KiB;
	char back[] = "/tmp/npu-mem-pmd-loop.XXXXXX", cmd[256], *out = NULL;
	char dev[64] = "";
	struct base b;
	struct pm m;
	uint8_t *chk;
	int bf, blk, rc;

	base_take(&b);
	bf = mkstemp(back);
	ck_assert_int_ge(bf, 0);
	ck_assert_int_eq(ftruncate(bf, 16 * NM_MiB), 0);
	snprintf(cmd, sizeof(cmd), "modprobe loop 2>/dev/null; "
		 "losetup -f --show %s", back);
	rc = nm_shell(cmd, &out);
	if (rc != 0 || !out || sscanf(out, "%63s", dev) != 1 ||
	    strncmp(dev, "/dev/loop", 9)) {
		unlink(back);
		nm_skip("no loop device for O_DIRECT (losetup: exit %d, %s)",
			rc, out ? out : "no output");
	}
	free(out);
	blk = open(dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	ck_assert_msg(blk >= 0, "open(%s, O_DIRECT): %s", dev,
		      nm_errname(errno));
	pm_huge_filled(&m, size, 27);
	/* from the mapping, across the chunk 0/1 boundary */
	ck_assert_msg(pwrite(blk, m.p + src, len, NM_MiB) == (ssize_t)len,
		      "O_DIRECT write from the PMD mapping: %s",
		      nm_errname(errno));
	ck_assert_int_eq(fsync(blk), 0);
	chk = malloc(len);
	ck_assert(chk);
	ck_assert_int_eq(pread(bf, chk, len, NM_MiB), (ssize_t)len);
	ck_assert_msg(nm_verify_at(chk, len, 27, src) == SIZE_MAX,
		      "the loop device's file does not hold what O_DIRECT "
		      "wrote from the mapping");
	/* into the mapping, across the chunk 2/3 boundary */
	ck_assert_msg(pread(blk, m.p + dst, len, NM_MiB) == (ssize_t)len,
		      "O_DIRECT read into the PMD mapping: %s",
		      nm_errname(errno));
	ck_assert_uint_eq(nm_verify_at(m.p + dst, len, 27, src), SIZE_MAX);
	ck_assert_uint_eq(nm_verify(m.p, dst, 27), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(m.p + dst + len, size - dst - len, 27,
				       dst + len), SIZE_MAX);
	printf("O_DIRECT on %s: 1 MiB out of and into PMD-mapped chunks; "
	       "FilePmdMapped %llu kB after\n", dev,
	       (unsigned long long)pmd_kb(m.p, size));
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	close(blk);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", dev);
	ck_assert_int_eq(nm_shell(cmd, NULL), 0);
	close(bf);
	unlink(back);
	free(chk);
	pm_del(&m);
	base_check(&b);
}
END_TEST

START_TEST(process_vm_readv_writev)
{
	const size_t size = 8 * NM_MiB, off = NM_2M - 5000, len = NM_2M + 10000;
	struct base b;
	struct pm m;
	uint8_t *s;
	pid_t pid;

	base_take(&b);
	pm_huge_filled(&m, size, 28);
	s = malloc(size);
	ck_assert(s);
	/* another process reads and writes ours (pin_user_pages_remote) */
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct iovec l = { s, len }, r[2] = {
			{ m.p + off, len / 2 },
			{ m.p + off + len / 2, len - len / 2 },
		};
		struct iovec la = { s, size }, ra = { m.p, size };

		if (process_vm_readv(getppid(), &l, 1, r, 2, 0) != (ssize_t)len)
			_exit(1);
		if (nm_verify_at(s, len, 28, off) != SIZE_MAX)
			_exit(2);
		nm_fill(s, len, 29);
		if (process_vm_writev(getppid(), &l, 1, r, 2, 0) !=
		    (ssize_t)len)
			_exit(3);
		if (process_vm_readv(getppid(), &la, 1, &ra, 1, 0) !=
		    (ssize_t)size)
			_exit(4);
		_exit(nm_verify_at(s, off, 28, 0) == SIZE_MAX ? 0 : 5);
	}
	nm_wait_ok(pid, "process_vm_readv/writev of the PMD mapping");
	ck_assert_uint_eq(nm_verify(m.p + off, len, 29), SIZE_MAX);
	ck_assert_uint_eq(nm_verify(m.p, off, 28), SIZE_MAX);
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	free(s);
	pm_del(&m);
	base_check(&b);
}
END_TEST

/*
 * vmsplice() puts references to the mapping's pages into a pipe: the pipe
 * keeps them after munmap, FREE and close, and reads the buffer's last
 * bytes.  Page refcounts that the driver got wrong show here as bad data
 * or as "Bad page state" when the pipe lets go.
 */
START_TEST(vmsplice_refs_outlive_buffer)
{
	const size_t off = NM_2M - 32 * NM_KiB, len = 64 * NM_KiB;
	struct base b;
	struct pm m;
	uint8_t *s;
	size_t done = 0;
	int pfd[2];

	base_take(&b);
	pm_huge_filled(&m, 4 * NM_MiB, 30);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_ge(fcntl(pfd[1], F_SETPIPE_SZ, (int)(2 * len)), 0);
	while (done < len) {
		struct iovec iov = { m.p + off + done, len - done };
		ssize_t n = vmsplice(pfd[1], &iov, 1, 0);

		ck_assert_msg(n > 0, "vmsplice from the PMD mapping: %s",
			      nm_errname(errno));
		done += n;
	}
	ck_assert_uint_eq(pmd_kb(m.p, m.size), 4096);
	pm_del(&m);
	/*
	 * The buffer is gone, but both chunks the pipe holds a page of stay
	 * charged (retained) until the pipe lets go of them.
	 */
	{
		struct npu_mem_info info;

		nm_get_info_ok(b.obs, &info);
		ck_assert_uint_eq(info.buffers, b.c.buffers);
		ck_assert_uint_eq(info.retained_bytes, 4 * NM_MiB);
		ck_assert_uint_eq(info.allocated_bytes,
				  b.c.allocated_bytes + 4 * NM_MiB);
	}
	s = malloc(len);
	ck_assert(s);
	for (done = 0; done < len;) {
		ssize_t n = read(pfd[0], s + done, len - done);

		ck_assert_msg(n > 0, "read(pipe): %s", nm_errname(errno));
		done += n;
	}
	ck_assert_msg(nm_verify_at(s, len, 30, off) == SIZE_MAX,
		      "the pipe's pages changed after the buffer was freed");
	close(pfd[0]);
	close(pfd[1]);
	free(s);
	{
		uint64_t left;
		int r = nm_await_no_retained(b.obs, 60, &left);

		ck_assert_msg(r == 0, "pipe closed: %s, %llu bytes still "
			      "retained", nm_retname(r),
			      (unsigned long long)left);
	}
	base_check(&b);
}
END_TEST

/*
 * io_uring fixed buffers: registration pins the range long-term.  Linux
 * before 6.5 refuses every file-backed VMA but hugetlbfs and shmem
 * (io_pin_pages(): -EOPNOTSUPP); since "io_uring: rsrc: delegate VMA
 * file-backed check to GUP" only mappings that need dirty tracking are
 * refused, which these are not (no writeback, no page_mkwrite).
 */
START_TEST(io_uring_fixed_buffers)
{
#ifdef NM_HAVE_LIBURING
	const size_t size = 8 * NM_MiB, off = NM_2M - 64 * NM_KiB;
	const size_t len = 256 * NM_KiB;
	bool refused = nm_kernel_version() < 605;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct iovec iov;
	struct base b;
	struct pm m;
	uint8_t *chk;
	int f, ret;

	base_take(&b);
	pm_huge_filled(&m, size, 31);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret == -ENOSYS || ret == -EPERM) {
		pm_del(&m);
		nm_skip("io_uring_queue_init: %s: io_uring is disabled",
			nm_retname(ret));
	}
	ck_assert_msg(ret == 0, "io_uring_queue_init: %s", nm_retname(ret));
	iov = (struct iovec){ m.p, size };
	ret = io_uring_register_buffers(&ring, &iov, 1);
	printf("io_uring_register_buffers on 8 MiB of PMD-mapped chunks, "
	       "Linux %s: %s\n", nm_kernel_release(), nm_retname(ret));
	if (refused) {
		ck_assert_msg(ret == -EOPNOTSUPP, "Linux %s refuses file-backed "
			      "fixed buffers with -EOPNOTSUPP; got %s",
			      nm_kernel_release(), nm_retname(ret));
		io_uring_queue_exit(&ring);
		ck_assert_uint_eq(nm_verify(m.p, size, 31), SIZE_MAX);
		pm_del(&m);
		base_check(&b);
		return;
	}
	ck_assert_msg(ret == 0, "io_uring_register_buffers: %s",
		      nm_retname(ret));
	f = memfd_create("npu-mem-uring", MFD_CLOEXEC);
	ck_assert_int_ge(f, 0);
	/* WRITE_FIXED from across the chunk 0/1 boundary */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write_fixed(sqe, f, m.p + off, len, 0, 0);
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	ck_assert_int_eq(io_uring_wait_cqe(&ring, &cqe), 0);
	ck_assert_msg(cqe->res == (int)len, "WRITE_FIXED: %s",
		      nm_retname(cqe->res));
	io_uring_cqe_seen(&ring, cqe);
	chk = malloc(len);
	ck_assert(chk);
	ck_assert_int_eq(pread(f, chk, len, 0), (ssize_t)len);
	ck_assert_uint_eq(nm_verify_at(chk, len, 31, off), SIZE_MAX);
	/* READ_FIXED into chunk 3 across nothing but its middle, then 2/3 */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, f, m.p + 3 * NM_2M - len / 2, len, 0, 0);
	ck_assert_int_eq(io_uring_submit(&ring), 1);
	ck_assert_int_eq(io_uring_wait_cqe(&ring, &cqe), 0);
	ck_assert_msg(cqe->res == (int)len, "READ_FIXED: %s",
		      nm_retname(cqe->res));
	io_uring_cqe_seen(&ring, cqe);
	ck_assert_uint_eq(nm_verify_at(m.p + 3 * NM_2M - len / 2, len, 31, off),
			  SIZE_MAX);
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	ck_assert_int_eq(io_uring_unregister_buffers(&ring), 0);
	io_uring_queue_exit(&ring);
	close(f);
	free(chk);
	pm_del(&m);
	base_check(&b);
#else
	nm_skip("built without liburing (liburing-dev)");
#endif
}
END_TEST


/*
 * RDMA registration pins the range long-term (ib_umem_get(): FOLL_LONGTERM
 * | FOLL_WRITE), then the RDMA engine (rxe copies through the pinned pages)
 * writes into and reads out of it.
 */
START_TEST(rdma_reg_mr)
{
#ifdef NM_HAVE_IBVERBS
	const size_t size = 8 * NM_MiB, off = NM_2M - 40 * NM_KiB;
	const size_t len = 128 * NM_KiB;
	enum ibv_wc_status st;
	struct ibv_mr *bmr, *lmr;
	struct ibv_qp *qp[2];
	struct nm_rdma r;
	const char *what;
	uint8_t *loc;
	char *why;
	int ret;
	struct base b;
	struct pm m;

	why = nm_rxe_setup();
	if (why)
		nm_skip("soft-RoCE (rdma_rxe over a veth) cannot be set up "
			"here: %s", why);
	base_take(&b);
	ret = nm_rdma_open(&r, 16, &what);
	ck_assert_msg(ret == 0, "%s: %s", what, nm_retname(ret));
	for (int i = 0; i < 2; i++) {
		qp[i] = nm_rdma_qp(&r);
		ck_assert_msg(qp[i], "ibv_create_qp: %s", nm_errname(errno));
	}
	for (int i = 0; i < 2; i++)
		nm_assert_ok(nm_rdma_connect(&r, qp[i], qp[!i]->qp_num,
					     &r.gid));

	pm_huge_filled(&m, size, 32);
	bmr = ibv_reg_mr(r.pd, m.p, size, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	printf("ibv_reg_mr on 8 MiB of PMD-mapped chunks, Linux %s: %s\n",
	       nm_kernel_release(), bmr ? "ok" : nm_errname(errno));
	ck_assert_msg(bmr, "ibv_reg_mr on the PMD mapping: %s",
		      nm_errname(errno));
	loc = aligned_alloc(NM_4K, len);
	ck_assert(loc);
	lmr = ibv_reg_mr(r.pd, loc, len, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(lmr);
	/* WRITE into the buffer across the chunk 0/1 boundary */
	nm_fill(loc, len, 33);
	ret = nm_rdma_op(&r, qp[0], IBV_WR_RDMA_WRITE, loc, lmr->lkey,
			 (uintptr_t)(m.p + off), bmr->rkey, len, 120, &st);
	ck_assert_msg(ret == 0, "RDMA WRITE: %s (%s)", nm_retname(ret),
		      ibv_wc_status_str(st));
	ck_assert_msg(nm_verify(m.p + off, len, 33) == SIZE_MAX,
		      "RDMA WRITE did not land in the buffer");
	ck_assert_uint_eq(nm_verify(m.p, off, 32), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(m.p + off + len, size - off - len, 32,
				       off + len), SIZE_MAX);
	/* READ out of it across the chunk 2/3 boundary */
	memset(loc, 0, len);
	ret = nm_rdma_op(&r, qp[0], IBV_WR_RDMA_READ, loc, lmr->lkey,
			 (uintptr_t)(m.p + 3 * NM_2M - len / 2), bmr->rkey,
			 len, 120, &st);
	ck_assert_msg(ret == 0, "RDMA READ: %s (%s)", nm_retname(ret),
		      ibv_wc_status_str(st));
	ck_assert_msg(nm_verify_at(loc, len, 32, 3 * NM_2M - len / 2) ==
		      SIZE_MAX, "RDMA READ did not read the buffer's bytes");
	printf("RDMA WRITE into and READ out of the registered PMD mapping: "
	       "ok; FilePmdMapped %llu kB\n",
	       (unsigned long long)pmd_kb(m.p, size));
	ck_assert_uint_eq(pmd_kb(m.p, size), 8192);
	ck_assert_int_eq(ibv_dereg_mr(lmr), 0);
	ck_assert_int_eq(ibv_dereg_mr(bmr), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp[0]), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp[1]), 0);
	nm_assert_ok(nm_rdma_close(&r));
	free(loc);
	pm_del(&m);
	base_check(&b);
	nm_rxe_teardown();
#else
	nm_skip("built without libibverbs (libibverbs-dev)");
#endif
}
END_TEST

/*
 * The device's DMA (edu: behind the IOMMU in x86_64-iommu-edu, through
 * bounce buffers in x86_64-swiotlb-edu) into and out of PMD-mapped
 * chunks, across a chunk boundary, seen through the PMDs.
 */
START_TEST(device_dma_through_pmds)
{
	const size_t size = 4 * NM_MiB, len = 4 * NM_4K;
	const size_t so = NM_2M - 2 * NM_4K - 96, dof = NM_2M - NM_4K - 296;
	struct npu_mem_info info;
	struct base b;
	struct pm s, d;
	int ret;

	if (access(NM_DMA_COPY, W_OK))
		nm_skip("%s: %s: no DMA engine (the edu rows only)",
			NM_DMA_COPY, nm_errname(errno));
	base_take(&b);
	nm_get_info_ok(b.obs, &info);
	pm_huge_filled(&s, size, 34);
	pm_huge_filled(&d, size, 35);
	ck_assert_msg(s.a.buf.dev_addr && d.a.buf.dev_addr,
		      "device addresses withheld (flags %#x)", s.a.buf.flags);
	nm_sync_ok(s.fd, s.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size);
	nm_sync_ok(d.fd, d.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, size);
	ret = nm_dma_copy(s.a.buf.dev_addr + so, d.a.buf.dev_addr + dof, len);
	ck_assert_msg(ret == 0, "dma_copy: %s", nm_retname(ret));
	nm_sync_ok(d.fd, d.a.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, size);
	ck_assert_uint_eq(nm_verify_at(d.p + dof, len, 34, so), SIZE_MAX);
	ck_assert_uint_eq(nm_verify(d.p, dof, 35), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(d.p + dof + len, size - dof - len, 35,
				       dof + len), SIZE_MAX);
	printf("edu DMA (dev_flags %#x) of 16 KiB between PMD-mapped chunks, "
	       "across the 2 MiB boundary: ok; FilePmdMapped %llu + %llu kB\n",
	       info.dev_flags, (unsigned long long)pmd_kb(s.p, size),
	       (unsigned long long)pmd_kb(d.p, size));
	ck_assert_uint_eq(pmd_kb(s.p, size) + pmd_kb(d.p, size), 8192);
	pm_del(&s);
	pm_del(&d);
	base_check(&b);
}
END_TEST

/* Last: no page refcount went wrong anywhere above. */
START_TEST(dmesg_clean)
{
	nm_assert_dmesg_clean();
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("pmd_map");

	nm_add(s, huge_only_pmd_on_first_touch, 60);
	nm_add(s, huge_first_tail_is_ptes, 60);
	nm_add(s, normal_only_prefaulted, 60);
	nm_add(s, misaligned_address_gets_ptes, 60);
	nm_add(s, misaligned_offset_gets_ptes, 60);
	nm_add(s, map_populate_maps_pmds, 60);
	nm_add(s, madv_nohugepage, 60);
	nm_add_fx(s, thp_never_still_pmds, 60, &thp_fx);
	nm_add(s, partial_munmap_mid_chunk, 60);
	nm_add(s, mprotect_one_page, 60);
	nm_add(s, madv_dontneed_refault, 60);
	nm_add(s, mremap_move, 60);
	nm_add(s, dofork_child_shares_pages, 60);
	nm_add(s, free_while_mapped, 60);
	nm_add(s, exit_with_mappings, 60);
	nm_add(s, close_fd_while_mapped, 60);
	nm_add(s, two_vmas_one_buffer, 60);
	nm_add(s, dmabuf_mmap, 60);
	nm_add(s, odirect_block_device, 120);
	nm_add(s, process_vm_readv_writev, 60);
	nm_add(s, vmsplice_refs_outlive_buffer, 60);
	nm_add(s, io_uring_fixed_buffers, 60);
	nm_add(s, rdma_reg_mr, 180);
	nm_add(s, device_dma_through_pmds, 120);
	nm_add(s, dmesg_clean, 30);
	return nm_run(s, NM_NEEDS_DEVICE);
}
