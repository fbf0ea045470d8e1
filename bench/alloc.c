// SPDX-License-Identifier: GPL-2.0-only
/*
 * The allocation section: every method's full cycle (get memory, first
 * touch, release) at every size, into cells[method][size].
 *
 * One size: prepare every method, one warm-up cycle each (it also tells
 * the cost), then N rounds, each running every method once in a random
 * order, so a change of load on the host hits all methods alike.  N comes
 * from the time budget: many for small sizes, few for large.
 *
 * A method whose cycle is short runs an untimed cycle right before each
 * timed one.  Under TCG the switch to and from the libaclmem children
 * flushes the emulated TLB, and the first cycle after it costs up to 2x
 * more at small sizes; an application allocating in a loop does not pay
 * that.  Long cycles (large sizes) do not notice, and skip it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

#define WARM_BELOW_NS	20000000ULL

/* The table's rows, in the order they are printed. */
struct method *const methods[NMETHODS] = {
	[M_FLOOR] = &method_floor,
	[M_KCLEAR] = &method_kclear,
	[M_NPU_HF] = &method_npu_hf,
	[M_NPU_HF_POP] = &method_npu_hf_pop,
	[M_NPU_HO] = &method_npu_ho,
	[M_NPU_NO] = &method_npu_no,
	[M_NPU_WARM] = &method_npu_warm,
	[M_NPU_COLD] = &method_npu_cold,
	[M_NPU_LOOP] = &method_npu_loop,
	[M_ACL_OFF] = &method_acl_off,
	[M_ACL_ON] = &method_acl_on,
	[M_ANON] = &method_anon,
	[M_ANON4K] = &method_anon4k,
	[M_HUGETLB] = &method_hugetlb,
	[M_THP] = &method_thp,
	[M_VGEM] = &method_vgem,
	[M_HEAP] = &method_heap,
	[M_UDMABUF] = &method_udmabuf,
};

struct cell cells[NMETHODS][MAX_SIZES];

void *floor_buf;
static uint64_t floor_len;

/* One size's run: who takes part, and every sample of every round. */
struct size_run {
	unsigned int j;			/* index into sizes[] */
	uint64_t size;
	char sz[24];
	unsigned int n;			/* rounds */
	unsigned int live;		/* methods taking part */
	unsigned int order[NMETHODS];
	bool on[NMETHODS], prepared[NMETHODS];
	uint64_t *tot[NMETHODS], *get[NMETHODS], *rel[NMETHODS];
	uint64_t *ph_all;		/* [method][phase][round] */
};

bool method_on(const struct method *m)
{
	return !opt.methods || strstr(opt.methods, m->key);
}

bool is_npu(unsigned int i)
{
	return i == M_NPU_HF || i == M_NPU_HF_POP || i == M_NPU_HO ||
	       i == M_NPU_NO || i == M_NPU_WARM || i == M_NPU_COLD ||
	       i == M_NPU_LOOP;
}

bool cell_ok(const struct cell *c)
{
	return !c->status && c->n;
}

static void cell_fail(struct cell *c, int ret, const char *why)
{
	c->status = ret;
	snprintf(c->note, sizeof(c->note), "%s", why);
}

/* Per-size state, so only what one size needs is held at a time. */
static int prepare_size(uint64_t size)
{
	drop_caches();
	floor_len = size;
	floor_buf = map_anon_advised(size, MADV_HUGEPAGE);
	if (!floor_buf)
		return -ENOMEM;
	memset(floor_buf, 1, size);
	return 0;
}

static void finish_size(void)
{
	if (floor_buf)
		munmap(floor_buf, floor_len);
	floor_buf = NULL;
}

/*
 * Prepare method @i for this size and run its warm-up; on success it takes
 * part in the rounds.  Returns the cost of one round's cycles of it, or 0.
 */
static uint64_t warm_up_method(struct size_run *sr, unsigned int i)
{
	struct method *m = methods[i];
	struct cell *c = &cells[i][sr->j];
	char why[160];
	struct sample s;
	uint64_t est;
	int ret;

	c->huge_min = UINT32_MAX;
	if (!m->active)
		return 0;
	m->na[0] = 0;
	ret = m->prepare ? m->prepare(m, sr->size) : 0;
	sr->prepared[i] = !ret;
	/* Warm-up; a second one if short, the first pays one-time costs. */
	if (!ret)
		ret = m->once(m, sr->size, &s);
	if (!ret && s.get + s.rel < 100000000ULL)
		ret = m->once(m, sr->size, &s);
	if (ret) {
		snprintf(why, sizeof(why), "n/a: %s",
			 !sr->prepared[i] && m->na[0] ? m->na : strerror(-ret));
		cell_fail(c, ret, why);
		note("%6s %-30s %s", sr->sz, m->label, why);
		return 0;
	}
	sr->on[i] = true;
	sr->order[sr->live++] = i;
	est = s.get + s.rel;
	m->warm = s.get + s.rel < WARM_BELOW_NS;
	if (m->warm)
		est += s.get + s.rel;
	return est;
}

/* Room for every sample; a method without it is n/a at this size. */
static void alloc_samples(struct size_run *sr)
{
	unsigned int i, n = sr->n;

	sr->ph_all = calloc((size_t)n * NPHASES * NMETHODS, sizeof(uint64_t));
	for (i = 0; i < NMETHODS; i++) {
		if (!sr->on[i])
			continue;
		if (!sr->ph_all) {
			cell_fail(&cells[i][sr->j], -ENOMEM, "n/a: out of memory");
			sr->on[i] = false;
			continue;
		}
		sr->tot[i] = calloc(n, sizeof(uint64_t));
		sr->get[i] = calloc(n, sizeof(uint64_t));
		sr->rel[i] = calloc(n, sizeof(uint64_t));
		if (!sr->tot[i] || !sr->get[i] || !sr->rel[i]) {
			cell_fail(&cells[i][sr->j], -ENOMEM, "n/a: out of memory");
			sr->on[i] = false;
		}
	}
}

static void record_sample(struct size_run *sr, unsigned int i, unsigned int r,
			  const struct sample *s)
{
	struct cell *c = &cells[i][sr->j];
	unsigned int q;

	sr->tot[i][r] = s->get + s->rel;
	sr->get[i][r] = s->get;
	sr->rel[i][r] = s->rel;
	if (!is_npu(i))
		return;
	for (q = 0; q < NPHASES; q++)
		sr->ph_all[((size_t)i * NPHASES + q) * sr->n + r] = s->phase[q];
	if (s->huge < c->huge_min)
		c->huge_min = s->huge;
	if (s->normal > c->normal_max)
		c->normal_max = s->normal;
}

/* Round @r: every method still on, once, in a fresh random order. */
static void run_round(struct size_run *sr, unsigned int r)
{
	unsigned int k, i;
	char why[160];
	struct sample s;
	int ret;

	shuffle(sr->order, sr->live);
	for (k = 0; k < sr->live; k++) {
		struct method *m;

		i = sr->order[k];
		m = methods[i];
		if (!sr->on[i])
			continue;
		ret = 0;
		if (m->warm && !m->warms_itself)
			ret = m->once(m, sr->size, &s);
		m->trace = !r && is_npu(i);
		if (!ret)
			ret = m->once(m, sr->size, &s);
		m->trace = false;
		if (ret) {
			snprintf(why, sizeof(why), "n/a: %s in round %u",
				 strerror(-ret), r);
			cell_fail(&cells[i][sr->j], ret, why);
			sr->on[i] = false;
			continue;
		}
		record_sample(sr, i, r, &s);
	}
}

/* Medians into the cells; each method's per-size state goes. */
static void collect_size(struct size_run *sr)
{
	unsigned int i, k, n = sr->n;

	for (i = 0; i < NMETHODS; i++) {
		struct cell *c = &cells[i][sr->j];

		if (sr->on[i]) {
			c->status = 0;
			c->n = n;
			c->med = median_u64(sr->tot[i], n);
			c->min = (double)sr->tot[i][0];
			c->max = (double)sr->tot[i][n - 1];
			c->get = median_u64(sr->get[i], n);
			c->rel = median_u64(sr->rel[i], n);
			c->note[0] = 0;
			for (k = 0; is_npu(i) && k < NPHASES; k++)
				c->phase[k] = median_u64(sr->ph_all +
					((size_t)i * NPHASES + k) * n, n);
		}
		if (sr->prepared[i] && methods[i]->finish)
			methods[i]->finish(methods[i]);
		free(sr->tot[i]);
		free(sr->get[i]);
		free(sr->rel[i]);
	}
	free(sr->ph_all);
}

static void run_size(unsigned int j)
{
	struct size_run sr = { .j = j, .size = sizes[j] };
	uint64_t est = 0, t_start = now_ns();
	unsigned int i, r;

	size_str(sr.size, sr.sz, sizeof(sr.sz));
	if (prepare_size(sr.size)) {
		for (i = 0; i < NMETHODS; i++)
			cell_fail(&cells[i][j], -ENOMEM, "n/a: no memory for the floor");
		return;
	}
	for (i = 0; i < NMETHODS; i++)
		est += warm_up_method(&sr, i);
	sr.n = repeats_for(opt.budget_ns * sr.live, est, opt.nmin, opt.nmax);
	alloc_samples(&sr);
	for (r = 0; r < sr.n; r++)
		run_round(&sr, r);
	collect_size(&sr);
	finish_size();
	note("%6s: %u methods x %u rounds in %.1f s", sr.sz, sr.live, sr.n,
	     (now_ns() - t_start) / 1e9);
}

/* Per run: a method that is not selected or cannot run is n/a throughout. */
static void setup_method(unsigned int i)
{
	struct method *m = methods[i];
	char why[160];
	unsigned int j;
	int ret;

	if (!method_on(m)) {
		for (j = 0; j < nsizes; j++)
			cell_fail(&cells[i][j], -ENODATA, "not selected");
		return;
	}
	ret = m->setup ? m->setup(m) : 0;
	if (ret) {
		snprintf(why, sizeof(why), "n/a: %s",
			 m->na[0] ? m->na : strerror(-ret));
		for (j = 0; j < nsizes; j++)
			cell_fail(&cells[i][j], ret, why);
		note("%-30s %s", m->label, why);
		return;
	}
	m->active = true;
}

/*
 * The zero reserve's refill rate: the background zeroing of the largest
 * size (at most 1 GiB and a quarter of RAM), and the thread's CPU time.
 */
static void refill_row(void)
{
	uint64_t size = sizes[nsizes - 1], quarter = meminfo("MemTotal") / 4;
	double gib_s, cpu_s;
	FILE *csv;
	char sz[24];
	int ret;

	size = size < GiB ? size : GiB;
	size = size < quarter ? size : quarter;
	size_str(size, sz, sizeof(sz));
	ret = reserve_refill_rate(size, &gib_s, &cpu_s);
	if (ret) {
		note("zero reserve refill of %s: n/a: %s", sz, strerror(-ret));
		return;
	}
	out("\n== Zero reserve refill ==\n%s zeroed in the background at %.2f GiB/s, "
	    "%.2f s of the thread's CPU\n", sz, gib_s, cpu_s);
	csv = open_out("reserve_refill.csv");
	if (csv) {
		fprintf(csv, "size,gib_per_s,thread_cpu_s\n%llu,%.3f,%.3f\n",
			(unsigned long long)size, gib_s, cpu_s);
		fclose(csv);
	}
}

void run_alloc(void)
{
	unsigned int i, j;

	for (i = 0; i < NMETHODS; i++)
		setup_method(i);
	for (j = 0; j < nsizes; j++)
		run_size(j);
	for (i = 0; i < NMETHODS; i++)
		if (methods[i]->active && methods[i]->teardown)
			methods[i]->teardown(methods[i]);
	if (methods[M_NPU_WARM]->active)
		refill_row();
}
