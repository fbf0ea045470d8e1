// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live-buffers section: is the cost of a 4 KiB ALLOC+FREE (and of the
 * full cycle) flat in the number of buffers an fd holds?
 *
 * At each point, the fd under test holds N live buffers and a reference fd
 * holds 10; short blocks of cycles alternate between the two in random
 * order, so both see the same load on the host and the ratio is fair.
 * Every live buffer of both fds exists throughout: what differs is the
 * per-fd tables (handles, mmap offsets); the global registry is the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "bench.h"

const char *const live_ops[NLIVE_OPS] = {
	"alloc_free", "alloc_mmap_touch_unmap_free",
};

struct live_result live_res[20];
unsigned int nlive;

/* 100001 and 100064: the cost depends on the exact count (see the README). */
unsigned long live_points[MAX_LIVE_POINTS] = {
	10, 1000, 10000, 100000, 100001, 100064,
};
unsigned int nlive_points = 6;

/* Samples of one point: [0] the fd under test, [1] the reference fd. */
struct live_samples {
	uint64_t *t[2][NLIVE_OPS];
	unsigned int blocks, per;
};

static int live_cycle(int fd, bool full, uint64_t *ns)
{
	struct npu_mem_alloc a;
	uint64_t t0 = now_ns();
	void *p;
	int ret;

	ret = npu_alloc(fd, PAGE, NPU_MEM_POLICY_HUGE_FIRST, &a);
	if (ret)
		return ret;
	if (full) {
		p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, a.buf.mmap_offset);
		if (p == MAP_FAILED) {
			ret = -errno;
			npu_free(fd, a.handle);
			return ret;
		}
		touch(p, PAGE);
		munmap(p, a.buf.size);
	}
	ret = npu_free(fd, a.handle);
	*ns = now_ns() - t0;
	return ret;
}

/* Block @b on side @sd: @per cycles of each op, the first few traced. */
static int live_block(struct live_samples *ls, const int fds[2],
		      unsigned int b, unsigned int sd, unsigned long live)
{
	unsigned int i, o;
	int ret = 0;

	for (i = 0; i < ls->per && !ret; i++) {
		for (o = 0; o < NLIVE_OPS && !ret; o++) {
			bool tr = !b && i < 5 && !sd;

			if (tr)
				trace_begin("bench: live %lu %s", live,
					    live_ops[o]);
			ret = live_cycle(fds[sd], o,
					 &ls->t[sd][o][b * ls->per + i]);
			if (tr)
				trace_end();
		}
	}
	return ret;
}

/* A warm-up, then the blocks, alternating sides in a random order. */
static int live_measure(struct live_samples *ls, const int fds[2],
			unsigned long live)
{
	unsigned int b, i, o, side, sides[2] = { 0, 1 };
	uint64_t ns;
	int ret = 0;

	for (i = 0; i < 20 && !ret; i++)	/* warm-up */
		for (o = 0; o < 2 * NLIVE_OPS && !ret; o++)
			ret = live_cycle(fds[o & 1], o >> 1, &ns);
	for (b = 0; b < ls->blocks && !ret; b++) {
		shuffle(sides, 2);
		for (side = 0; side < 2 && !ret; side++)
			ret = live_block(ls, fds, b, sides[side], live);
	}
	return ret;
}

static void live_point(int fd, int ref_fd, unsigned long live)
{
	struct live_samples ls = {
		.blocks = opt.budget_ns < 100e6 ? 10 : 40, .per = 25,
	};
	struct live_result *r = &live_res[nlive++];
	unsigned int n = ls.blocks * ls.per, o, side;
	int fds[2] = { fd, ref_fd }, ret = 0;

	r->live = live;
	for (side = 0; side < 2; side++)
		for (o = 0; o < NLIVE_OPS; o++)
			ls.t[side][o] = calloc(n, sizeof(uint64_t));
	for (side = 0; side < 2; side++)
		for (o = 0; o < NLIVE_OPS; o++)
			if (!ls.t[side][o])
				ret = -ENOMEM;
	if (!ret)
		ret = live_measure(&ls, fds, live);
	if (ret) {
		r->status = ret;
		note("live %lu: %s", live, strerror(-ret));
	} else {
		r->n = n;
		for (o = 0; o < NLIVE_OPS; o++) {
			r->med_ns[o] = median_u64(ls.t[0][o], n);
			r->ref_ns[o] = median_u64(ls.t[1][o], n);
		}
		note("live %7lu: alloc+free %.2f us (10 live: %.2f), full cycle %.2f us (%.2f)",
		     live, r->med_ns[0] / 1e3, r->ref_ns[0] / 1e3,
		     r->med_ns[1] / 1e3, r->ref_ns[1] / 1e3);
	}
	for (side = 0; side < 2; side++)
		for (o = 0; o < NLIVE_OPS; o++)
			free(ls.t[side][o]);
}

static int live_fill(int fd, unsigned long *have, unsigned long want)
{
	struct npu_mem_alloc a;

	while (*have < want) {
		if (npu_alloc(fd, PAGE, NPU_MEM_POLICY_HUGE_FIRST, &a)) {
			note("live: stopped at %lu buffers: %s", *have,
			     strerror(errno));
			return -errno;
		}
		(*have)++;
	}
	return 0;
}

void run_live(void)
{
	unsigned long have = 0, ref_have = 0, k;
	int fd, ref_fd;

	if (npu_fd < 0)
		return;
	/* Clients of their own, so their tables hold exactly these buffers. */
	fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	ref_fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ref_fd < 0 || live_fill(ref_fd, &ref_have, 10))
		goto out;
	for (k = 0; k < nlive_points && live_points[k] <= opt.max_live; k++) {
		if (live_fill(fd, &have, live_points[k]))
			break;
		live_point(fd, ref_fd, have);
	}
out:
	if (fd >= 0)
		close(fd);
	if (ref_fd >= 0)
		close(ref_fd);
}
