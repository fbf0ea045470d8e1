// SPDX-License-Identifier: GPL-2.0-only
/*
 * The targets npu-mem is held to, each a PASS/MISS verdict on a ratio
 * from this run: large buffers near the floor and faster than every
 * alternative, the pool far faster than the ioctl for small ones,
 * bandwidth as good as malloc'd memory's, cost flat in live buffers.  The
 * allocation targets are judged here; report.c adds the others as it
 * prints their tables.  Verdicts use medians; the best-of (minimum) ratios
 * next to them are a cross-check: preemption of the emulator by other load
 * on the host only ever adds time, so minima are the least disturbed
 * samples.
 */
#include <string.h>

#include "bench.h"

struct target {
	char name[48];
	char row[80];
	double value, limit;
	bool higher_better;
	bool known;
	char detail[160];
};

static struct target targets[256];
static unsigned int ntargets;

void add_target(const char *name, const char *row, double value, double limit,
		bool higher_better, bool known, const char *detail)
{
	struct target *t;

	if (ntargets >= ARRAY_SIZE(targets))
		return;
	t = &targets[ntargets++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->row, sizeof(t->row), "%s", row);
	snprintf(t->detail, sizeof(t->detail), "%s", detail ? detail : "");
	t->value = value;
	t->limit = limit;
	t->higher_better = higher_better;
	t->known = known;
}

static const char *verdict(const struct target *t)
{
	if (!t->known)
		return "n/a";
	if (t->higher_better)
		return t->value >= t->limit ? "PASS" : "MISS";
	return t->value <= t->limit ? "PASS" : "MISS";
}

/* The target verdict printed next to an allocation row, or "". */
const char *alloc_mark(unsigned int i, unsigned int j, char *buf, size_t len)
{
	const struct cell *c = &cells[i][j], *hf = &cells[M_NPU_HF][j];
	const struct cell *fl = &cells[M_FLOOR][j];
	unsigned int k, lost = 0;
	double r;

	buf[0] = 0;
	if (i == M_NPU_HF && sizes[j] >= 64 * MiB && cell_ok(c) && cell_ok(fl)) {
		r = c->med / fl->med;
		for (k = 0; k < NMETHODS; k++)
			if (methods[k]->alternative && cell_ok(&cells[k][j]) &&
			    cells[k][j].med < c->med)
				lost++;
		snprintf(buf, len, "%s %.2fx floor (<=1.3); %s: %u faster; 2M x%u + 4K x%u",
			 r <= 1.3 ? "PASS" : "MISS", r, lost ? "MISS" : "PASS",
			 lost, c->huge_min, c->normal_max);
	} else if (i == M_ACL_ON && sizes[j] <= MiB && cell_ok(c) && cell_ok(hf)) {
		r = hf->med / c->med;
		snprintf(buf, len, "%s %.1fx faster than ioctl (>=20)",
			 r >= 20 ? "PASS" : "MISS", r);
	} else if (is_npu(i) && cell_ok(c)) {
		snprintf(buf, len, "pages: 2M x%u + 4K x%u", c->huge_min,
			 c->normal_max);
	}
	return buf;
}

/*
 * From 64 MiB, the zero reserve's: from a warm reserve, ALLOC and first
 * touch at most 0.3x the kernel's clear_page floor, the cost of clearing
 * the same bytes, which is what the reserve takes off the critical path
 * (the release is not part of it: it is the same with the reserve off);
 * from a cold one, no slower than with the reserve off (the HUGE_FIRST
 * row), whole cycles.
 */
static void reserve_targets(unsigned int j, const char *sz)
{
	const struct cell *hf = &cells[M_NPU_HF][j];
	const struct cell *kc = &cells[M_KCLEAR][j];
	const struct cell *fl = &cells[M_FLOOR][j];
	const struct cell *w = &cells[M_NPU_WARM][j];
	const struct cell *c = &cells[M_NPU_COLD][j];
	char row[80], det[160];
	bool known;

	known = cell_ok(w) && cell_ok(kc) && cell_ok(fl);
	snprintf(row, sizeof(row), "npu_hf_reserve_warm %s get / floor_kclear", sz);
	snprintf(det, sizeof(det),
		 "whole cycle %.2fx clear_page floor, %.2fx memset floor",
		 known ? w->med / kc->med : 0, known ? w->med / fl->med : 0);
	add_target("reserve warm: <= 0.3x clear_page", row,
		   known ? w->get / kc->med : 0, 0.3, false, known, det);
	known = cell_ok(c) && cell_ok(hf);
	snprintf(row, sizeof(row), "npu_hf_reserve_cold %s / npu_huge_first", sz);
	snprintf(det, sizeof(det), "best-of %.2f", known ? c->min / hf->min : 0);
	add_target("reserve cold: <= reserve off", row,
		   known ? c->med / hf->med : 0, 1.0, false, known, det);
}

/* From 64 MiB: near the floor, and faster than every alternative. */
static void large_targets(unsigned int j, const char *sz)
{
	const struct cell *hf = &cells[M_NPU_HF][j];
	const struct cell *fl = &cells[M_FLOOR][j];
	const struct cell *kc = &cells[M_KCLEAR][j];
	bool known = cell_ok(hf) && cell_ok(fl);
	char row[80], det[160];
	unsigned int k;

	snprintf(row, sizeof(row), "npu_huge_first %s / floor", sz);
	if (cell_ok(hf) && cell_ok(kc) && cell_ok(fl))
		snprintf(det, sizeof(det),
			 "%.2fx the kernel's clear_page floor; best-of %.2fx floor",
			 hf->med / kc->med, hf->min / fl->min);
	else
		det[0] = 0;
	add_target("large: <= 1.3x floor", row,
		   known ? hf->med / fl->med : 0, 1.3, false, known, det);
	reserve_targets(j, sz);
	for (k = 0; k < NMETHODS; k++) {
		const struct cell *c = &cells[k][j];

		if (!methods[k]->alternative || !cell_ok(c))
			continue;
		snprintf(row, sizeof(row), "npu_huge_first %s / %s", sz,
			 methods[k]->key);
		snprintf(det, sizeof(det), "best-of %.2f",
			 cell_ok(hf) ? hf->min / c->min : 0);
		add_target("large: faster than alternative", row,
			   cell_ok(hf) ? hf->med / c->med : 0, 1.0, false,
			   cell_ok(hf), det);
	}
}

/* Up to 1 MiB: the pool far faster than the ioctl. */
static void small_target(unsigned int j, const char *sz)
{
	const struct cell *hf = &cells[M_NPU_HF][j];
	const struct cell *on = &cells[M_ACL_ON][j];
	bool known = cell_ok(on) && cell_ok(hf);
	char row[80], det[160];

	snprintf(row, sizeof(row), "ioctl HUGE_FIRST %s / acl_pool_on %s", sz,
		 sz);
	if (known)
		snprintf(det, sizeof(det), "best-of %.1f", hf->min / on->min);
	else
		snprintf(det, sizeof(det), "%s", on->note[0] ?
			 on->note : "pool on: n/a (not implemented)");
	add_target("small: pool >= 20x ioctl", row,
		   known ? hf->med / on->med : 0, 20, true, known, det);
}

void alloc_targets(void)
{
	unsigned int j;
	char sz[24];

	for (j = 0; j < nsizes; j++) {
		size_str(sizes[j], sz, sizeof(sz));
		if (sizes[j] >= 64 * MiB)
			large_targets(j, sz);
		if (sizes[j] <= MiB)
			small_target(j, sz);
	}
}
void report_targets(void)
{
	FILE *csv = open_out("targets.csv");
	unsigned int i, pass = 0, miss = 0, na = 0;

	out("\n== Targets ==\n");
	out("%-5s %-30s %-44s %9s %7s  %s\n", "", "target", "row", "value",
	    "limit", "notes");
	if (csv)
		fprintf(csv, "target,row,value,limit,result,detail\n");
	for (i = 0; i < ntargets; i++) {
		const struct target *t = &targets[i];
		const char *v = verdict(t);
		char val[16] = "-", lim[16];

		if (!strcmp(v, "PASS"))
			pass++;
		else if (!strcmp(v, "MISS"))
			miss++;
		else
			na++;
		if (t->known)
			snprintf(val, sizeof(val), "%.3f", t->value);
		snprintf(lim, sizeof(lim), "%s%.2f", t->higher_better ? ">=" : "<=",
			 t->limit);
		out("%-5s %-30s %-44s %9s %7s  %s\n", v, t->name, t->row, val, lim,
		    t->detail);
		if (csv)
			fprintf(csv, "\"%s\",\"%s\",%s,%s,%s,\"%s\"\n", t->name,
				t->row, t->known ? val : "", lim, v, t->detail);
	}
	out("targets: %u PASS, %u MISS, %u n/a\n", pass, miss, na);
	if (csv)
		fclose(csv);
}
