// SPDX-License-Identifier: GPL-2.0-only
/*
 * The NUMA section: a buffer on the calling thread's node against one on
 * the other node, in the same run.  The thread is pinned to the CPUs of
 * NPU 0's node; NPU 0's buffers come from that node (local), those of an
 * NPU on another node from there (remote), since ALLOC takes its pages
 * from the device's node.  Two rows, local and remote side by side:
 *  - ALLOC + mmap + first touch (HUGE_FIRST), ns per GiB, interleaved
 *    rounds in a random order, with where the pages went: bytes per node
 *    by QUERY (node, off_node_pages) and by move_pages(2) over the CPU
 *    mapping, which asks the page tables, not the driver;
 *  - memcpy from a buffer on the thread's node into a buffer of each NPU
 *    (CPU copy: the benchmark does not drive a DMA engine).
 * Under TCG every guest access costs the same wherever its page is: QEMU
 * models no NUMA latency, so the times say what the two paths cost in
 * code, and the placement columns are what emulation can show.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "bench.h"

struct numa_run numa;

static int npu_info(uint32_t device, struct npu_mem_info *i)
{
	memset(i, 0, sizeof(*i));
	i->device = device;
	return ioctl(npu_fd, NPU_MEM_IOCTL_GET_INFO, i) ? -errno : 0;
}

/*
 * NPU 0 and the first NPU on another known node: the two sides.  Without
 * them (one node, one NPU, devices without a node) the section is n/a.
 */
static int pick_devices(void)
{
	struct npu_mem_info i;
	uint32_t d, count;
	int ret;

	if (npu_fd < 0) {
		snprintf(numa.why, sizeof(numa.why), "no /dev/npu-mem");
		return -ENODEV;
	}
	ret = npu_info(0, &i);
	if (ret) {
		snprintf(numa.why, sizeof(numa.why), "GET_INFO: %s", strerror(-ret));
		return ret;
	}
	if (i.dev_node == NPU_MEM_NODE_NONE) {
		snprintf(numa.why, sizeof(numa.why), "NPU 0 is on no known node");
		return -ENODEV;
	}
	count = i.device_count;
	numa.dev[0] = 0;
	numa.node[0] = i.dev_node;
	for (d = 1; d < count; d++) {
		if (npu_info(d, &i) || i.dev_node == NPU_MEM_NODE_NONE ||
		    i.dev_node == numa.node[0] || (i.dev_flags & NPU_MEM_DEV_REMOVED))
			continue;
		numa.dev[1] = d;
		numa.node[1] = i.dev_node;
		return 0;
	}
	snprintf(numa.why, sizeof(numa.why),
		 "%u NPU(s), none on a node other than %u (make bench's guest has two)",
		 count, numa.node[0]);
	return -ENODEV;
}

/* The thread onto the CPUs of @node. */
static int pin_to_node(unsigned int node)
{
	char path[96];
	cpu_set_t set;
	int ret;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", node);
	ret = read_sysfs_list(path, &set);
	if (ret)
		return ret;
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Bytes of [p, p + len) on each side's node, by move_pages(2), no move. */
static int pages_per_node(void *p, uint64_t len, uint64_t bytes[2])
{
	uint64_t n = len / PAGE, k;
	void **pages = malloc(n * sizeof(*pages));
	int *status = malloc(n * sizeof(*status)), ret = 0;

	bytes[0] = bytes[1] = 0;
	if (!pages || !status) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < n; k++)
		pages[k] = (char *)p + k * PAGE;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		ret = -errno;
		goto out;
	}
	for (k = 0; k < n; k++) {
		if (status[k] == (int)numa.node[0])
			bytes[0] += PAGE;
		else if (status[k] == (int)numa.node[1])
			bytes[1] += PAGE;
	}
out:
	free(pages);
	free(status);
	return ret;
}

/* Where QUERY says a buffer's pages are, as bytes per side's node. */
static void query_per_node(uint32_t handle, uint64_t size, uint64_t bytes[2])
{
	struct npu_mem_query q = { .handle = handle };
	uint64_t off;

	bytes[0] = bytes[1] = 0;
	if (ioctl(npu_fd, NPU_MEM_IOCTL_QUERY, &q))
		return;
	off = (uint64_t)q.off_node_pages * PAGE;
	if (off > size)
		off = size;
	/* Two nodes: what is not on @node is on the other one. */
	if (q.node == numa.node[0]) {
		bytes[0] = size - off;
		bytes[1] = off;
	} else if (q.node == numa.node[1]) {
		bytes[1] = size - off;
		bytes[0] = off;
	}
}

/* ALLOC (HUGE_FIRST) for side @s's NPU: 0 or -errno. */
static int numa_alloc(unsigned int s, uint64_t size, struct npu_mem_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
	a->policy = NPU_MEM_POLICY_HUGE_FIRST;
	a->device = numa.dev[s];
	return ioctl(npu_fd, NPU_MEM_IOCTL_ALLOC, a) ? -errno : 0;
}

/*
 * One cycle on side @s: ALLOC for its NPU + mmap + first touch, timed;
 * with @place, where the pages went; then munmap + FREE, untimed.
 */
static int numa_cycle(unsigned int s, uint64_t size, uint64_t *ns,
		      struct numa_cell *c, bool place)
{
	struct npu_mem_alloc a;
	uint64_t t0;
	void *p;
	int ret;

	t0 = now_ns();
	ret = numa_alloc(s, size, &a);
	if (ret)
		return ret;
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, npu_fd,
		 a.buf.mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		npu_free(npu_fd, a.handle);
		return ret;
	}
	touch(p, size);
	*ns = now_ns() - t0;
	if (place) {
		query_per_node(a.handle, a.buf.size, c->query[s]);
		c->pages_status[s] = pages_per_node(p, a.buf.size, c->pages[s]);
		c->huge[s] = a.buf.huge_pages;
	}
	munmap(p, a.buf.size);
	npu_free(npu_fd, a.handle);
	return 0;
}

static void numa_alloc_size(struct numa_cell *c)
{
	uint64_t est = 0, ns = 0, *t[2];
	unsigned int s, r, n, order[2] = { 0, 1 };

	for (s = 0; s < 2; s++) {
		c->status[s] = numa_cycle(s, c->size, &ns, c, true);	/* warm */
		est += ns;
	}
	if (c->status[0] || c->status[1])
		return;
	n = repeats_for(opt.budget_ns * 2, est, opt.nmin, 50);
	t[0] = calloc(n, sizeof(uint64_t));
	t[1] = calloc(n, sizeof(uint64_t));
	if (!t[0] || !t[1]) {
		c->status[0] = c->status[1] = -ENOMEM;
		goto out;
	}
	for (r = 0; r < n; r++) {
		shuffle(order, 2);
		for (s = 0; s < 2; s++) {
			int ret = numa_cycle(order[s], c->size, &t[order[s]][r],
					     c, false);

			if (ret && !c->status[order[s]])
				c->status[order[s]] = ret;
		}
	}
	for (s = 0; s < 2; s++)
		if (!c->status[s])
			c->med_ns[s] = median_u64(t[s], n);
	c->n = n;
	note("numa alloc %llu MiB: local %.0f ns/GiB, remote %.0f ns/GiB",
	     (unsigned long long)(c->size / MiB),
	     c->med_ns[0] * GiB / c->size, c->med_ns[1] * GiB / c->size);
out:
	free(t[0]);
	free(t[1]);
}

/* memcpy from the thread's node into a buffer of each NPU, interleaved. */
static void numa_copy(void)
{
	uint64_t size = opt.bw_bytes, est = 0, t0, *t[2] = { NULL, NULL }, len[2];
	struct npu_mem_alloc a;
	void *dst[2] = { NULL, NULL }, *src;
	unsigned int s, r, n, order[2] = { 0, 1 };

	numa.copy_bytes = size;
	src = map_anon_aligned(size);
	if (!src) {
		numa.copy_status = -ENOMEM;
		return;
	}
	memset(src, 1, size);	/* first touch, pinned: on the thread's node */
	pages_per_node(src, size, numa.copy_src);
	for (s = 0; s < 2; s++) {
		numa.copy_status = numa_alloc(s, size, &a);
		if (numa.copy_status)
			goto out;
		dst[s] = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE,
			      MAP_SHARED, npu_fd, a.buf.mmap_offset);
		len[s] = a.buf.size;
		query_per_node(a.handle, a.buf.size, numa.copy_dst[s]);
		npu_free(npu_fd, a.handle);
		if (dst[s] == MAP_FAILED) {
			dst[s] = NULL;
			numa.copy_status = -ENOMEM;
			goto out;
		}
		t0 = now_ns();
		memcpy(dst[s], src, size);	/* warm-up */
		est += now_ns() - t0;
	}
	n = repeats_for(opt.budget_ns * 4, est, opt.nmin > 3 ? 11 : 5, 64);
	t[0] = calloc(n, sizeof(uint64_t));
	t[1] = calloc(n, sizeof(uint64_t));
	if (!t[0] || !t[1]) {
		numa.copy_status = -ENOMEM;
		goto out;
	}
	for (r = 0; r < n; r++) {
		shuffle(order, 2);
		for (s = 0; s < 2; s++) {
			t0 = now_ns();
			memcpy(dst[order[s]], src, size);
			__asm__ __volatile__("" : : "r"(dst[order[s]]) : "memory");
			t[order[s]][r] = now_ns() - t0;
		}
	}
	for (s = 0; s < 2; s++)
		numa.copy_ns[s] = median_u64(t[s], n);
	numa.copy_n = n;
	note("numa copy %llu MiB: local %.3f GB/s, remote %.3f GB/s",
	     (unsigned long long)(size / MiB), size / numa.copy_ns[0],
	     size / numa.copy_ns[1]);
out:
	for (s = 0; s < 2; s++)
		if (dst[s])
			munmap(dst[s], len[s]);
	munmap(src, size);
	free(t[0]);
	free(t[1]);
}

void run_numa(void)
{
	cpu_set_t saved;
	uint64_t s;
	int ret;

	numa.ran = true;
	if (pick_devices())
		return;
	sched_getaffinity(0, sizeof(saved), &saved);
	ret = pin_to_node(numa.node[0]);
	if (ret) {
		snprintf(numa.why, sizeof(numa.why), "cannot pin to node %u: %s",
			 numa.node[0], strerror(-ret));
		return;
	}
	numa.ok = true;
	drop_caches();
	/* Three sizes up to the largest: 64 MiB .. 1 GiB, 4 .. 64 MiB with -q. */
	for (s = opt.max_size / 16; s <= opt.max_size && numa.ncells < MAX_NUMA;
	     s *= 4)
		if (s >= HUGE)
			numa.cells[numa.ncells++].size = s;
	for (s = 0; s < numa.ncells; s++)
		numa_alloc_size(&numa.cells[s]);
	numa_copy();
	sched_setaffinity(0, sizeof(saved), &saved);
}
