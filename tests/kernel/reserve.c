// SPDX-License-Identifier: GPL-2.0-only
/*
 * reserve: the zero reserve (kernel/reserve.c), 2 MiB chunks zeroed ahead
 * of ALLOC, set by the module parameters zero_reserve_low_mb and
 * zero_reserve_high_mb (per node).  Checked here:
 *  - it fills to the high watermark and no further, once set; lowering the
 *    watermark drains it to the new one, and 0 empties it; while it is
 *    full, it is charged to no one: allocated_bytes, retained_bytes and
 *    VmPin do not move, and GET_INFO shows it and the watermarks;
 *  - ALLOC (HUGE_FIRST) takes its chunks (debugfs counters), charges them
 *    to the caller as any page, and the reserve refills behind it;
 *  - FREE recycles a 2 MiB chunk no one else holds, and only such: not
 *    while a dma-buf of the buffer is open, nor while a pipe holds a page
 *    of the chunk (retained), and once they let go, it is;
 *  - every byte it hands out is zero, recycled chunks that held a pattern
 *    and new ones alike (run in the init_on_alloc=0 guest, where nothing
 *    but the module clears);
 *  - a caller in a memory cgroup other than the root is not served from
 *    it (a module cannot charge a cgroup for pages made earlier): its
 *    pages are charged to its cgroup as before;
 *  - a memory hog bigger than what is available without the reserve runs
 *    to its end: the shrinker gives the reserve back, nobody is
 *    OOM-killed;
 *  - with two nodes (x86_64-multi-edu), a hog bound to one node takes
 *    back that node's reserve and leaves the other's full;
 *  - an NPU's removal leaves a full reserve alone (its chunks are mapped
 *    for no device), and it serves ALLOC once the NPU is back (in a guest
 *    whose NPU is a PCI function: x86_64-iommu-edu);
 *  - the module unloads with a full reserve and the memory comes back.
 * Every wait polls GET_INFO or debugfs up to a generous ceiling.  Needs
 * root (module parameters, debugfs, cgroups).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_cgroup.h"
#include "nmtest_dmabuf.h"
#include "nmtest_pci.h"
#include "nmtest_util.h"

#define CEILING		180.0	/* seconds any fill or drain may take */
#define HOLD		3.0	/* seconds a "does not happen" is watched */

static const char *cg_unusable;

static void set_reserve(uint64_t low_mb, uint64_t high_mb)
{
	/* Low first when lowering, so high is never taken as the old low. */
	nm_assert_ok(nm_param_set("zero_reserve_low_mb", 0));
	nm_assert_ok(nm_param_set("zero_reserve_high_mb", high_mb));
	nm_assert_ok(nm_param_set("zero_reserve_low_mb", low_mb));
}

/*
 * Nodes with memory: each has a reserve of its own.  Their number, and
 * the first and the last of them in *first and *last when not NULL.
 */
static unsigned int mem_node_span(int *first, int *last)
{
	char *s = nm_read_file("/sys/devices/system/node/has_memory");
	unsigned long lo = 0, hi = 0;
	unsigned int n = 0;
	char *p = s;

	while (p && *p && *p != '\n') {
		unsigned long a = strtoul(p, &p, 10), b = a;

		if (*p == '-')
			b = strtoul(p + 1, &p, 10);
		if (!n)
			lo = a;
		hi = b;
		n += b - a + 1;
		if (*p == ',')
			p++;
	}
	free(s);
	if (first)
		*first = (int)lo;
	if (last)
		*last = (int)hi;
	return n ? n : 1;
}

static unsigned int mem_nodes(void)
{
	return mem_node_span(NULL, NULL);
}

static uint64_t held(int fd)
{
	struct npu_mem_info info;

	nm_get_info_ok(fd, &info);
	return info.zero_reserve_bytes;
}

static uint64_t dbg(const char *key)
{
	uint64_t v = 0;
	int r = nm_kv_file(NM_DEBUGFS "/usage", key, &v);

	ck_assert_msg(r == 0, NM_DEBUGFS "/usage: %s: %s", key, nm_retname(r));
	return v;
}

/* Poll until the reserve holds @want bytes (and all ready), or fail. */
static void await_held(int fd, uint64_t want, const char *what)
{
	double t0 = nm_now();
	uint64_t now = held(fd), ready = dbg("zero_reserve_ready_bytes");

	while ((now != want || ready != want) && nm_now() - t0 < CEILING) {
		usleep(50 * 1000);
		now = held(fd);
		ready = dbg("zero_reserve_ready_bytes");
	}
	ck_assert_msg(now == want && ready == want,
		      "%s: reserve %llu MiB (%llu ready) after %.0f s, want %llu",
		      what, (unsigned long long)(now / NM_MiB),
		      (unsigned long long)(ready / NM_MiB), nm_now() - t0,
		      (unsigned long long)(want / NM_MiB));
	printf("%s: %llu MiB after %.2f s\n", what,
	       (unsigned long long)(want / NM_MiB), nm_now() - t0);
}

/* The reserve stays at @want for HOLD seconds. */
static void assert_stays(int fd, uint64_t want, const char *what)
{
	double t0 = nm_now();

	while (nm_now() - t0 < HOLD) {
		uint64_t now = held(fd);

		ck_assert_msg(now == want, "%s: reserve %llu MiB, want %llu",
			      what, (unsigned long long)(now / NM_MiB),
			      (unsigned long long)(want / NM_MiB));
		usleep(100 * 1000);
	}
}

static uint64_t node_held(int nid)
{
	char key[48];

	snprintf(key, sizeof(key), "zero_reserve_node%d_bytes", nid);
	return dbg(key);
}

static void empty_reserve(int fd)
{
	set_reserve(0, 0);
	await_held(fd, 0, "emptied");
}

static void reserve_off(void)
{
	nm_param_set("zero_reserve_low_mb", 0);
	nm_param_set("zero_reserve_high_mb", 0);
}

static const struct nm_fixture off_fx = {
	.setup = reserve_off, .teardown = reserve_off, .unchecked = true,
};

static void assert_zero(const struct npu_mem_alloc *a, const char *what,
			int fd)
{
	uint8_t *p = nm_map_ok(fd, a, PROT_READ);
	size_t nz = nm_nonzero(p, a->buf.size);

	ck_assert_msg(nz == SIZE_MAX, "%s: byte %#x at offset %zu (chunk %zu)",
		      what, p[nz], nz, nz / (size_t)NM_2M);
	ck_assert_int_eq(munmap(p, a->buf.size), 0);
}

START_TEST(fills_drains_charges_no_one)
{
	uint64_t nodes = mem_nodes(), pin0 = nm_vmpin_bytes();
	struct npu_mem_info i0, i;
	int fd = nm_open();

	empty_reserve(fd);
	nm_get_info_ok(fd, &i0);
	set_reserve(8, 16);
	await_held(fd, nodes * 16 * NM_MiB, "filled to high");
	assert_stays(fd, nodes * 16 * NM_MiB, "full");
	nm_get_info_ok(fd, &i);
	ck_assert_uint_eq(i.zero_reserve_low, 8 * NM_MiB);
	ck_assert_uint_eq(i.zero_reserve_high, 16 * NM_MiB);
	ck_assert_uint_eq(i.allocated_bytes, i0.allocated_bytes);
	ck_assert_uint_eq(i.retained_bytes, i0.retained_bytes);
	ck_assert_uint_eq(i.buffers, i0.buffers);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);

	set_reserve(0, 4);
	await_held(fd, nodes * 4 * NM_MiB, "drained to a lower high");
	set_reserve(0, 0);
	await_held(fd, 0, "drained to 0");
	close(fd);
}
END_TEST

START_TEST(alloc_takes_then_refills)
{
	uint64_t nodes = mem_nodes(), pin0 = nm_vmpin_bytes(), taken, refilled;
	const uint64_t size = 8 * NM_MiB + 12 * NM_KiB;
	struct npu_mem_info i0, i;
	struct npu_mem_alloc a;
	int fd = nm_open();

	empty_reserve(fd);
	nm_get_info_ok(fd, &i0);
	set_reserve(16, 16);
	await_held(fd, nodes * 16 * NM_MiB, "filled");
	taken = dbg("zero_reserve_taken");
	refilled = dbg("zero_reserve_refilled");

	nm_alloc_ok(fd, size, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	ck_assert_uint_eq(a.buf.huge_pages, 4);
	ck_assert_msg(dbg("zero_reserve_taken") == taken + 4,
		      "ALLOC of 4 chunks took %llu from a full reserve",
		      (unsigned long long)(dbg("zero_reserve_taken") - taken));
	/* Handed out: the caller's now, as any page. */
	nm_get_info_ok(fd, &i);
	ck_assert_uint_eq(i.allocated_bytes, i0.allocated_bytes + a.buf.size);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0 + a.buf.size);
	assert_zero(&a, "taken from the reserve", fd);

	await_held(fd, nodes * 16 * NM_MiB, "refilled after ALLOC");
	ck_assert_uint_ge(dbg("zero_reserve_refilled"), refilled + 4);
	/* Full: the freed chunks go back to the kernel, not to the reserve. */
	nm_free_ok(fd, a.handle);
	assert_stays(fd, nodes * 16 * NM_MiB, "full, after FREE");
	nm_get_info_ok(fd, &i);
	ck_assert_uint_eq(i.allocated_bytes, i0.allocated_bytes);
	ck_assert_uint_eq(nm_vmpin_bytes(), pin0);
	empty_reserve(fd);
	close(fd);
}
END_TEST

/* ALLOC @size HUGE_ONLY, fill it with 0xa5, unmap it; the handle stays. */
static void alloc_dirty(int fd, uint64_t size, struct npu_mem_alloc *a)
{
	uint8_t *p;

	nm_alloc_ok(fd, size, NPU_MEM_POLICY_HUGE_ONLY, 0, a);
	p = nm_map_ok(fd, a, PROT_READ | PROT_WRITE);
	memset(p, 0xa5, size);
	ck_assert_int_eq(munmap(p, size), 0);
}

START_TEST(recycles_only_unreferenced)
{
	struct npu_mem_alloc a;
	struct iovec iov;
	uint64_t recycled;
	int fd = nm_open(), dfd, pp[2];
	char *p;

	empty_reserve(fd);
	set_reserve(0, 32);	/* recycling only: nothing is made */
	assert_stays(fd, 0, "recycling only, nothing freed");

	alloc_dirty(fd, 8 * NM_MiB, &a);
	nm_free_ok(fd, a.handle);
	await_held(fd, 8 * NM_MiB, "freed chunks recycled");

	/* A dma-buf of the buffer keeps it alive: nothing is recycled. */
	alloc_dirty(fd, 8 * NM_MiB, &a);
	ck_assert_uint_eq(held(fd), 0);
	recycled = dbg("zero_reserve_recycled");
	dfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	nm_free_ok(fd, a.handle);
	assert_stays(fd, 0, "handle freed, dma-buf open");
	ck_assert_uint_eq(dbg("zero_reserve_recycled"), recycled);
	close(dfd);
	await_held(fd, 8 * NM_MiB, "dma-buf closed");

	/* A pipe holds one page of a chunk: retained, not recycled. */
	empty_reserve(fd);
	set_reserve(0, 32);
	nm_alloc_ok(fd, 2 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	p[NM_4K] = 1;
	ck_assert_int_eq(pipe(pp), 0);
	iov.iov_base = p + NM_4K;
	iov.iov_len = NM_4K;
	ck_assert_int_eq(vmsplice(pp[1], &iov, 1, 0), NM_4K);
	close(pp[1]);
	ck_assert_int_eq(munmap(p, a.buf.size), 0);
	nm_free_ok(fd, a.handle);
	assert_stays(fd, 0, "chunk held by a pipe");
	close(pp[0]);
	await_held(fd, 2 * NM_MiB, "pipe closed, chunk let go");
	empty_reserve(fd);
	close(fd);
}
END_TEST

/* 16 MiB HUGE_ONLY, all 8 chunks from the reserve, all zero. */
static void take_16_zero(int fd, const char *what)
{
	uint64_t taken = dbg("zero_reserve_taken");
	struct npu_mem_alloc a;

	nm_alloc_ok(fd, 16 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	ck_assert_uint_eq(dbg("zero_reserve_taken"), taken + 8);
	assert_zero(&a, what, fd);
	nm_free_ok(fd, a.handle);
}

START_TEST(hands_out_zero_only)
{
	uint64_t nodes = mem_nodes();
	struct npu_mem_alloc a;
	int fd = nm_open();

	/* Recycled chunks that held a pattern. */
	empty_reserve(fd);
	set_reserve(0, 16);
	alloc_dirty(fd, 16 * NM_MiB, &a);
	nm_free_ok(fd, a.handle);
	await_held(fd, 16 * NM_MiB, "recycled");
	take_16_zero(fd, "recycled chunks");

	/* New chunks, made by the refill (memory that held the pattern). */
	empty_reserve(fd);
	alloc_dirty(fd, 16 * NM_MiB, &a);
	nm_free_ok(fd, a.handle);
	set_reserve(16, 16);
	await_held(fd, nodes * 16 * NM_MiB, "filled");
	take_16_zero(fd, "new chunks");
	empty_reserve(fd);
	close(fd);
}
END_TEST

START_TEST(other_memcg_not_served)
{
	uint64_t nodes = mem_nodes(), taken, base, after;
	struct npu_mem_alloc a;
	int fd;

	if (cg_unusable)
		nm_skip("%s", cg_unusable);
	fd = nm_open();
	empty_reserve(fd);
	set_reserve(16, 16);
	await_held(fd, nodes * 16 * NM_MiB, "filled");
	nm_cgroup_enter();
	taken = dbg("zero_reserve_taken");
	base = nm_cgroup_value("memory.current", NULL);
	nm_alloc_ok(fd, 8 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	after = nm_cgroup_value("memory.current", NULL);
	printf("cgroup charge %llu KiB before, %llu KiB after 8 MiB\n",
	       (unsigned long long)(base / NM_KiB),
	       (unsigned long long)(after / NM_KiB));
	ck_assert_uint_eq(dbg("zero_reserve_taken"), taken);
	ck_assert_uint_ge(after, base + 8 * NM_MiB);
	ck_assert_uint_eq(held(fd), nodes * 16 * NM_MiB);
	assert_zero(&a, "a cgroup's own pages", fd);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

static uint64_t meminfo(const char *key)
{
	uint64_t kb = 0;

	nm_assert_ok(nm_meminfo_kb(key, &kb));
	return kb * NM_KiB;
}

/* Nobody was OOM-killed since this test program started. */
static void assert_no_oom_kill(void)
{
	char *out = NULL;
	int st = nm_shell("dmesg | sed -n '/vm-run: ---- test start/,$p' | "
			  "grep -i -e 'out of memory' -e 'oom-kill'", &out);

	ck_assert_msg(st == 1, "the OOM killer ran:\n%s", out ? out : "");
	free(out);
}

START_TEST(shrinks_under_a_hog)
{
	struct npu_mem_info info;
	uint64_t want, avail, hog, peak = UINT64_MAX;
	int fd = nm_open(), pp[2], st, r;
	pid_t pid;

	nm_get_info_ok(fd, &info);
	want = info.total_ram / 8 / (2 * NM_MiB) * (2 * NM_MiB);
	empty_reserve(fd);
	set_reserve(want / NM_MiB, want / NM_MiB);
	await_held(fd, want * mem_nodes(), "filled for the hog");
	avail = meminfo("MemAvailable");
	hog = avail + want / 2;
	printf("MemAvailable %llu MiB, reserve %llu MiB: hog of %llu MiB\n",
	       (unsigned long long)(avail / NM_MiB),
	       (unsigned long long)(want / NM_MiB),
	       (unsigned long long)(hog / NM_MiB));
	ck_assert_int_eq(pipe(pp), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		struct npu_mem_info peak_info;
		char *m = malloc(hog);

		if (!m)
			_exit(2);
		for (uint64_t off = 0; off < hog; off += NM_4K)
			m[off] = 1;
		if (nm_get_info(fd, &peak_info) ||
		    write(pp[1], &peak_info.zero_reserve_bytes, sizeof(peak)) !=
		    sizeof(peak))
			_exit(3);
		_exit(0);
	}
	close(pp[1]);
	r = nm_read_full(pp[0], &peak, sizeof(peak));
	close(pp[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the hog did not run to its end: status %#x", st);
	ck_assert_int_eq(r, 0);
	printf("reserve at the hog's peak: %llu MiB\n",
	       (unsigned long long)(peak / NM_MiB));
	/* MemAvailable is an estimate: the reserve must have shrunk, at least. */
	ck_assert_uint_lt(peak, want);
	assert_no_oom_kill();
	empty_reserve(fd);
	close(fd);
}
END_TEST

/*
 * A hog bound to the last node, which the reserve used to give back from
 * only after the first node's chunks (one shrinker for all nodes): it
 * touches memory until either node's reserve moves, then stops.
 */
START_TEST(shrinks_the_pressed_node_only)
{
	const uint64_t full = 64 * NM_MiB;
	uint64_t seen[2] = { 0, 0 };
	struct npu_mem_info info;
	int fd, pp[2], st, first, last;
	pid_t pid;

	if (mem_node_span(&first, &last) < 2)
		nm_skip("one node with memory: run in the x86_64-multi-edu guest");
	fd = nm_open();
	nm_get_info_ok(fd, &info);
	empty_reserve(fd);
	/* Low at one chunk: a node's reserve refills only once it is empty. */
	set_reserve(2, full / NM_MiB);
	await_held(fd, mem_nodes() * full, "filled on every node");
	ck_assert_int_eq(pipe(pp), 0);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		unsigned long mask = 1UL << last;
		uint64_t v[2];
		char *m;

		if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask,
			    sizeof(mask) * 8))
			_exit(2);
		/* The whole guest's RAM: the node runs short long before. */
		m = mmap(NULL, info.total_ram, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			_exit(3);
		for (uint64_t off = 0; off < info.total_ram; off += NM_4K) {
			m[off] = 1;
			if ((off + NM_4K) % (2 * NM_MiB))
				continue;
			v[0] = node_held(first);
			v[1] = node_held(last);
			if (v[0] != full || v[1] != full) {
				if (write(pp[1], v, sizeof(v)) != sizeof(v))
					_exit(4);
				_exit(0);
			}
		}
		_exit(5);
	}
	close(pp[1]);
	st = nm_read_full(pp[0], seen, sizeof(seen));
	close(pp[0]);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the hog on node %d: status %#x", last, st);
	printf("at the first move: node %d %llu MiB, node %d %llu MiB\n",
	       first, (unsigned long long)(seen[0] / NM_MiB), last,
	       (unsigned long long)(seen[1] / NM_MiB));
	ck_assert_msg(seen[0] == full,
		      "pressure on node %d took node %d's reserve: %llu MiB left",
		      last, first, (unsigned long long)(seen[0] / NM_MiB));
	ck_assert_uint_lt(seen[1], full);
	assert_no_oom_kill();
	empty_reserve(fd);
	close(fd);
}
END_TEST

START_TEST(device_removal_leaves_it_alone)
{
	uint64_t nodes = mem_nodes();
	char bdf[NM_BDF_LEN];
	int fd;

	if (nm_pci_bound(bdf, sizeof(bdf)))
		nm_skip("no PCI function bound to npu_mem: run in the "
			"x86_64-iommu-edu guest");
	fd = nm_open();
	empty_reserve(fd);
	set_reserve(16, 16);
	await_held(fd, nodes * 16 * NM_MiB, "filled");
	nm_assert_ok(nm_pci_unbind(bdf));
	ck_assert(nm_pci_wait_bound(bdf, false, 60));
	assert_stays(fd, nodes * 16 * NM_MiB, "NPU unbound");
	nm_assert_ok(nm_pci_restore(bdf, 60));
	close(fd);
	fd = nm_open();
	take_16_zero(fd, "after the NPU came back");
	empty_reserve(fd);
	close(fd);
}
END_TEST

START_TEST(unloads_with_a_full_reserve)
{
	uint64_t nodes = mem_nodes(), want, before, after;
	struct npu_mem_info info;
	char why[256];
	int fd = nm_open();

	/* Large enough to stand out of what loading the module costs. */
	nm_get_info_ok(fd, &info);
	want = info.total_ram / 8 / (2 * NM_MiB) * (2 * NM_MiB);
	empty_reserve(fd);
	set_reserve(want / NM_MiB, want / NM_MiB);
	await_held(fd, nodes * want, "filled");
	close(fd);
	before = meminfo("MemFree");
	if (nm_reload_module(why, sizeof(why)))
		nm_skip("%s", why);
	after = meminfo("MemFree");
	printf("MemFree %llu MiB before unload, %llu MiB after\n",
	       (unsigned long long)(before / NM_MiB),
	       (unsigned long long)(after / NM_MiB));
	ck_assert_uint_ge(after, before + nodes * want / 2);
	fd = nm_open();
	ck_assert_uint_eq(held(fd), 0);
	close(fd);
	nm_assert_dmesg_clean();
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("reserve");
	int ret;

	nm_require_device();
	if (geteuid() != 0) {
		printf("SKIP: the reserve's parameters need root in a test guest\n");
		return 77;
	}
	if (nm_debugfs_mount()) {
		printf("SKIP: no debugfs for the reserve's counters\n");
		return 77;
	}
	cg_unusable = nm_cgroup_setup("reserve");
	nm_add_fx(s, fills_drains_charges_no_one, 300, &off_fx);
	nm_add_fx(s, alloc_takes_then_refills, 300, &off_fx);
	nm_add_fx(s, recycles_only_unreferenced, 300, &off_fx);
	nm_add_fx(s, hands_out_zero_only, 300, &off_fx);
	nm_add_fx(s, other_memcg_not_served, 300, &off_fx);
	nm_add_fx(s, shrinks_under_a_hog, 600, &off_fx);
	nm_add_fx(s, shrinks_the_pressed_node_only, 600, &off_fx);
	nm_add_fx(s, device_removal_leaves_it_alone, 300, &off_fx);
	nm_add_fx(s, unloads_with_a_full_reserve, 300, &off_fx);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_cgroup_remove();
	return ret;
}
