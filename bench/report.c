// SPDX-License-Identifier: GPL-2.0-only
/*
 * The report: each section's table on stdout and in summary.txt (out()),
 * its CSV file beside them (doc/benchmark.md lists them; bench/plot.py
 * reads alloc.csv), and meta.txt.  The column layouts are what those
 * readers parse: change them together.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>

#include "bench.h"

static void ratio_str(char *buf, size_t len, const struct cell *c,
		      const struct cell *ref)
{
	if (cell_ok(ref))
		snprintf(buf, len, "%.2f", c->med / ref->med);
	else
		snprintf(buf, len, "-");
}

/* Method @i at size @j: a table row and an alloc.csv row. */
static void report_alloc_row(unsigned int i, unsigned int j, FILE *csv)
{
	const struct cell *c = &cells[i][j], *hf = &cells[M_NPU_HF][j];
	const struct cell *fl = &cells[M_FLOOR][j], *kc = &cells[M_KCLEAR][j];
	const struct method *m = methods[i];
	char sz[24], mark[160], r1[16], r2[16], r3[16];

	size_str(sizes[j], sz, sizeof(sz));
	if (!cell_ok(c)) {
		out("%-5s %-31s %4s %11s %10s %10s %7s %7s %7s  %s\n",
		    sz, m->label, "-", "n/a", "", "", "", "", "", c->note);
		if (csv)
			fprintf(csv, "%s,\"%s\",%" PRIu64 ",0,,,,,,,,,,,\"%s\"\n",
				m->key, m->label, sizes[j], c->note);
		return;
	}
	ratio_str(r1, sizeof(r1), c, hf);
	ratio_str(r2, sizeof(r2), c, fl);
	ratio_str(r3, sizeof(r3), c, kc);
	out("%-5s %-31s %4u %11.1f %10.1f %10.1f %7s %7s %7s  %s\n",
	    sz, m->label, c->n, c->med / 1e3, c->get / 1e3, c->rel / 1e3,
	    r1, r2, r3, alloc_mark(i, j, mark, sizeof(mark)));
	if (!csv)
		return;
	fprintf(csv, "%s,\"%s\",%" PRIu64 ",%u,%.0f,%.0f,%.0f,%.0f,%.0f,%s,%s,%s,",
		m->key, m->label, sizes[j], c->n, c->med, c->min, c->max,
		c->get, c->rel, cell_ok(hf) ? r1 : "", cell_ok(fl) ? r2 : "",
		cell_ok(kc) ? r3 : "");
	if (is_npu(i))
		fprintf(csv, "%u,%u,ok\n", c->huge_min, c->normal_max);
	else
		fprintf(csv, ",,ok\n");
}

/* The same medians as a matrix, for reading across sizes. */
static void report_alloc_matrix(void)
{
	unsigned int i, j;
	char sz[24];

	out("== Allocation matrix: median us per cycle ==\n%-31s", "method");
	for (j = 0; j < nsizes; j++)
		out(" %9s", size_str(sizes[j], sz, sizeof(sz)));
	out("\n");
	for (i = 0; i < NMETHODS; i++) {
		if (!method_on(methods[i]))
			continue;
		out("%-31s", methods[i]->label);
		for (j = 0; j < nsizes; j++) {
			const struct cell *c = &cells[i][j];

			if (cell_ok(c))
				out(" %9.*f", c->med < 1e7 ? 1 : 0, c->med / 1e3);
			else
				out(" %9s", "n/a");
		}
		out("\n");
	}
}

void report_alloc(void)
{
	FILE *csv = open_out("alloc.csv");
	unsigned int i, j;

	out("\n== Allocation: get + first touch + release, median of N interleaved rounds ==\n");
	out("%-5s %-31s %4s %11s %10s %10s %7s %7s %7s  %s\n", "size", "method",
	    "n", "median_us", "get_us", "rel_us", "x_npu", "x_floor", "x_kclr",
	    "target / notes");
	if (csv)
		fprintf(csv, "method,label,size,n,median_ns,min_ns,max_ns,get_ns,"
			"release_ns,ratio_npu,ratio_floor,ratio_kclear,huge_pages,"
			"normal_pages,status\n");
	for (j = 0; j < nsizes; j++) {
		for (i = 0; i < NMETHODS; i++)
			if (method_on(methods[i]))
				report_alloc_row(i, j, csv);
		out("\n");
	}
	if (csv)
		fclose(csv);
	report_alloc_matrix();
}

/* Where an npu-mem cycle spends its time: medians of each step. */
void report_phases(void)
{
	static const unsigned int which[] = { M_NPU_HF, M_NPU_HF_POP, M_NPU_HO,
					      M_NPU_NO };
	FILE *csv = open_out("npu_phases.csv");
	unsigned int w, j, k;
	char sz[24];

	out("\n== npu-mem cycle by step, median us (x_kclr: ALLOC / kernel clear_page floor) ==\n");
	out("%-5s %-26s", "size", "policy");
	for (k = 0; k < NPHASES; k++)
		out(" %11s", phase_names[k]);
	out(" %7s\n", "x_kclr");
	if (csv)
		fprintf(csv, "method,size,alloc_ns,mmap_ns,touch_ns,munmap_ns,free_ns,kclear_ns\n");
	for (j = 0; j < nsizes; j++) {
		const struct cell *kc = &cells[M_KCLEAR][j];

		size_str(sizes[j], sz, sizeof(sz));
		for (w = 0; w < ARRAY_SIZE(which); w++) {
			const struct cell *c = &cells[which[w]][j];

			if (!cell_ok(c))
				continue;
			out("%-5s %-26s", sz, methods[which[w]]->label);
			for (k = 0; k < NPHASES; k++)
				out(" %11.1f", c->phase[k] / 1e3);
			if (cell_ok(kc))
				out(" %7.2f\n", c->phase[PH_ALLOC] / kc->med);
			else
				out(" %7s\n", "-");
			if (csv)
				fprintf(csv, "%s,%" PRIu64 ",%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
					methods[which[w]]->key, sizes[j],
					c->phase[0], c->phase[1], c->phase[2],
					c->phase[3], c->phase[4],
					cell_ok(kc) ? kc->med : 0);
		}
	}
	if (csv)
		fclose(csv);
}

/* Buffer @b, op @o against malloc's (@ref, NULL if it has none). */
static void report_bw_row(const struct bw_buf *b, unsigned int o,
			  const struct bw_buf *ref, FILE *csv)
{
	double bytes = o == 2 ? opt.bw_bytes / 2.0 : opt.bw_bytes, v;
	char ratio[16] = "-", best[16] = "-", mark[64] = "", row[80];

	if (!b->n) {
		out("%-16s %-13s %3s %10s %8s %8s %8s  %s\n", b->name,
		    bw_ops[o], "-", "n/a", "", "", "", b->why);
		if (csv)
			fprintf(csv, "%s,%s,%llu,0,,,,,,,\"%s\"\n", b->name,
				bw_ops[o], (unsigned long long)opt.bw_bytes,
				b->why);
		return;
	}
	v = ref ? ref->med_ns[o] / b->med_ns[o] : 0;
	if (ref) {
		snprintf(ratio, sizeof(ratio), "%.3f", v);
		snprintf(best, sizeof(best), "%.3f",
			 ref->best_ns[o] / b->best_ns[o]);
	}
	if (ref && !strcmp(b->name, "npu_huge_first")) {
		snprintf(row, sizeof(row), "%s %s / malloc", b->name, bw_ops[o]);
		add_target("bandwidth >= 0.95x malloc", row, v, 0.95, true,
			   true, NULL);
		snprintf(mark, sizeof(mark), "%s %.3fx malloc (>=0.95)",
			 v >= 0.95 ? "PASS" : "MISS", v);
	}
	out("%-16s %-13s %3u %10.2f %8.3f %8s %8s  %-26s %s\n",
	    b->name, bw_ops[o], b->n, b->med_ns[o] / 1e6,
	    bytes / b->med_ns[o], ratio, best, b->pages, mark);
	if (csv)
		fprintf(csv, "%s,%s,%llu,%u,%.0f,%.0f,%.4f,%s,%s,\"%s\",ok\n",
			b->name, bw_ops[o], (unsigned long long)opt.bw_bytes,
			b->n, b->med_ns[o], b->best_ns[o],
			bytes / b->med_ns[o], ref ? ratio : "",
			ref ? best : "", b->pages);
}

void report_bw(void)
{
	const struct bw_buf *ref = NULL;
	unsigned int i, o;
	FILE *csv;

	if (!nbw)
		return;
	csv = open_out("bandwidth.csv");
	for (i = 0; i < nbw; i++)
		if (!strcmp(bw[i].name, "malloc") && bw[i].n)
			ref = &bw[i];
	out("\n== CPU bandwidth over a %llu MiB buffer, median of N interleaved rounds ==\n",
	    (unsigned long long)(opt.bw_bytes / MiB));
	out("%-16s %-13s %3s %10s %8s %8s %8s  %-26s %s\n", "memory", "op", "n",
	    "median_ms", "GB/s", "x_malloc", "best_x", "backing",
	    "target (on medians)");
	if (csv)
		fprintf(csv, "memory,op,bytes,n,median_ns,best_ns,gbps,ratio_malloc,ratio_malloc_best,backing,status\n");
	for (i = 0; i < nbw; i++)
		for (o = 0; o < NBW_OPS; o++)
			report_bw_row(&bw[i], o, ref, csv);
	if (csv)
		fclose(csv);
}

void report_lat(void)
{
	const struct lat_buf *ref = NULL;
	unsigned int i;
	FILE *csv;

	if (!nlat)
		return;
	csv = open_out("latency.csv");
	for (i = 0; i < nlat; i++)
		if (!strcmp(lat[i].name, "npu_huge_first") && lat[i].n)
			ref = &lat[i];
	out("\n== Random access: pointer chase over %llu MiB, 64 B lines, median ==\n",
	    (unsigned long long)(opt.lat_bytes / MiB));
	out("%-16s %3s %10s %7s  %s\n", "backing", "n", "ns/access", "x_npu",
	    "pages");
	if (csv)
		fprintf(csv, "backing,bytes,n,ns_per_access,ratio_npu,pages,status\n");
	for (i = 0; i < nlat; i++) {
		const struct lat_buf *b = &lat[i];
		char ratio[16] = "-";

		if (!b->n) {
			out("%-16s %3s %10s %7s  %s\n", b->name, "-", "n/a", "",
			    b->why);
			if (csv)
				fprintf(csv, "%s,%llu,0,,,,\"%s\"\n", b->name,
					(unsigned long long)opt.lat_bytes, b->why);
			continue;
		}
		if (ref)
			snprintf(ratio, sizeof(ratio), "%.2f", b->ns / ref->ns);
		out("%-16s %3u %10.1f %7s  %s\n", b->name, b->n, b->ns, ratio,
		    b->pages);
		if (csv)
			fprintf(csv, "%s,%llu,%u,%.2f,%s,\"%s\",ok\n", b->name,
				(unsigned long long)opt.lat_bytes, b->n, b->ns,
				ref ? ratio : "", b->pages);
	}
	if (csv)
		fclose(csv);
}

void report_live(void)
{
	unsigned int i, o;
	FILE *csv;

	if (!nlive)
		return;
	csv = open_out("live.csv");
	out("\n== A 4 KiB buffer with N others live in its fd, vs an fd with 10 live, interleaved ==\n");
	out("%-8s %-28s %5s %10s %11s %7s  %s\n", "live", "op", "n", "median_us",
	    "10-live_us", "x_10", "target");
	if (csv)
		fprintf(csv, "live,op,n,median_ns,ref10_median_ns,ratio_10,status\n");
	for (i = 0; i < nlive; i++) {
		const struct live_result *r = &live_res[i];

		for (o = 0; o < NLIVE_OPS; o++) {
			char mark[64] = "", row[80];
			double v = r->n ? r->med_ns[o] / r->ref_ns[o] : 0;

			if (!r->n) {
				out("%-8lu %-28s %5s %10s\n", r->live, live_ops[o],
				    "-", "n/a");
				continue;
			}
			if (r->live == 100000) {
				snprintf(row, sizeof(row), "%s: 100000 / 10 live",
					 live_ops[o]);
				add_target("live: 100k <= 1.5x 10", row, v, 1.5,
					   false, true, NULL);
				snprintf(mark, sizeof(mark), "%s %.2fx (<=1.5)",
					 v <= 1.5 ? "PASS" : "MISS", v);
			}
			out("%-8lu %-28s %5u %10.2f %11.2f %7.2f  %s\n", r->live,
			    live_ops[o], r->n, r->med_ns[o] / 1e3,
			    r->ref_ns[o] / 1e3, v, mark);
			if (csv)
				fprintf(csv, "%lu,%s,%u,%.0f,%.0f,%.3f,ok\n", r->live,
					live_ops[o], r->n, r->med_ns[o],
					r->ref_ns[o], v);
		}
	}
	if (csv)
		fclose(csv);
}
void write_meta(double secs)
{
	FILE *f = open_out("meta.txt");
	struct npu_mem_info info = { 0 };
	char cpu[256] = "?", *p, *text;
	struct utsname u;

	if (!f)
		return;
	uname(&u);
	text = nm_read_file("/proc/cpuinfo");
	p = text ? strstr(text, "model name") : NULL;
	p = p ? strchr(p, ':') : NULL;
	if (p) {
		snprintf(cpu, sizeof(cpu), "%s", p + 2);
		cpu[strcspn(cpu, "\n")] = 0;
	}
	free(text);
	if (npu_fd >= 0)
		ioctl(npu_fd, NPU_MEM_IOCTL_GET_INFO, &info);
	fprintf(f, "kernel=%s\nmachine=%s\ncpu=%s\ncpus=%ld\n", u.release,
		u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(f, "mem_total=%llu\nthp_enabled=%s\nkernel_clear_page=%s\n",
		(unsigned long long)meminfo("MemTotal"), thp_mode, kclear_name);
	fprintf(f, "clocksource=%s\n", clocksource);
	fprintf(f, "npu_dev_flags=%#x\n", info.dev_flags);
	fprintf(f, "pool_on=%s=%s\n", POOL_ENV,
		getenv(POOL_ENV) ? getenv(POOL_ENV) : "(unset: library default)");
	fprintf(f, "max_size=%llu\nbudget_ms=%.0f\nbw_bytes=%llu\nlat_bytes=%llu\n",
		(unsigned long long)opt.max_size, opt.budget_ns / 1e6,
		(unsigned long long)opt.bw_bytes, (unsigned long long)opt.lat_bytes);
	fprintf(f, "emulated=%s\nseconds=%.1f\n",
		getenv("VM_RUN") ? "yes (QEMU TCG guest, tests/vm/vm-run)" : "unknown",
		secs);
	fclose(f);
}

/* aclrtMemcpy variant @v's bandwidth as a fraction of memcpy's, 0 if unknown. */
static double copy_x(const struct copy_cell *c, unsigned int v)
{
	return c->n && c->med_ns[v] ? c->med_ns[CV_CPU] / c->med_ns[v] : 0;
}

/*
 * What testing ordinary host memory costs, in percent of the memcpy: the
 * library's overhead on the malloc row less its overhead on the row that
 * differs only in the host buffer being pinned (looked up, not tested).
 */
static double copy_test_pct(unsigned int row, unsigned int j, unsigned int v)
{
	static const int twin[NCOPY_ROWS] = {
		[CP_H2D] = CP_H2D_PIN, [CP_D2H] = CP_D2H_PIN,
		[CP_SET_HOST] = CP_SET_DEV, [CP_H2D_PIN] = -1,
		[CP_D2H_PIN] = -1, [CP_D2D] = -1, [CP_SET_DEV] = -1,
	};
	const struct copy_cell *c = &copy_cells[row][j], *t;

	if (twin[row] < 0)
		return -1e9;
	t = &copy_cells[twin[row]][j];
	if (!copy_x(c, v) || !copy_x(t, v))
		return -1e9;
	return (1 / copy_x(c, v) - 1 / copy_x(t, v)) * 100;
}

static void report_copy_table(FILE *csv, double worst[NCOPY_ROWS][NCOPY_VARIANTS],
			      double test[NCOPY_ROWS])
{
	unsigned int j, r, v;
	char sz[24], pct[16];

	for (j = 0; j < ncopy_sizes; j++) {
		size_str(sizes[j], sz, sizeof(sz));
		for (r = 0; r < NCOPY_ROWS; r++) {
			const struct copy_cell *c = &copy_cells[r][j];
			double p = copy_test_pct(r, j, CV_SYNC);

			if (!c->n)
				continue;
			snprintf(pct, sizeof(pct), p > -1e8 ? "%.1f" : "-", p);
			out("%-5s %-16s %3u %8.3f %8.3f %6.3f %8.3f %6.3f %7s\n",
			    sz, copy_rows[r], c->n, sizes[j] / c->med_ns[CV_CPU],
			    sizes[j] / c->med_ns[CV_SYNC], copy_x(c, CV_SYNC),
			    sizes[j] / c->med_ns[CV_ASYNC], copy_x(c, CV_ASYNC),
			    pct);
			if (csv)
				fprintf(csv, "%s,%llu,%u,%.0f,%.0f,%.0f,%.4f,%.4f,%s\n",
					copy_rows[r], (unsigned long long)sizes[j],
					c->n, c->med_ns[CV_CPU],
					c->med_ns[CV_SYNC], c->med_ns[CV_ASYNC],
					copy_x(c, CV_SYNC), copy_x(c, CV_ASYNC),
					p > -1e8 ? pct : "");
			if (p > test[r])
				test[r] = p;
			for (v = CV_SYNC; sizes[j] >= MiB && v < NCOPY_VARIANTS; v++)
				if (copy_x(c, v) < worst[r][v])
					worst[r][v] = copy_x(c, v);
		}
		out("\n");
	}
}

static void report_small_copies(void)
{
	FILE *csv = open_out("small_copy.csv");
	unsigned int i;

	out("== Small copies malloc -> device, ns per call: median / p99 of %u calls ==\n",
	    small_copies[0].n);
	out("%-6s %15s %15s %17s %10s %15s\n", "size", "memcpy",
	    "aclrtMemcpy", "MemcpyAsync call", "async_mean",
	    "async+sync");
	if (csv)
		fprintf(csv, "size,n,memcpy_med_ns,memcpy_p99_ns,sync_med_ns,sync_p99_ns,async_med_ns,async_p99_ns,async_mean_ns,roundtrip_med_ns,roundtrip_p99_ns\n");
	for (i = 0; i < NSMALL; i++) {
		const struct small_copy *s = &small_copies[i];

		if (!s->n)
			continue;
		out("%-6llu %7.0f/%-7.0f %7.0f/%-7.0f %8.0f/%-8.0f %10.0f %7.0f/%-7.0f\n",
		    (unsigned long long)s->size, s->cpu_med, s->cpu_p99,
		    s->sync_med, s->sync_p99, s->async_med, s->async_p99,
		    s->async_mean, s->rt_med, s->rt_p99);
		if (csv)
			fprintf(csv, "%llu,%u,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
				(unsigned long long)s->size, s->n, s->cpu_med,
				s->cpu_p99, s->sync_med, s->sync_p99,
				s->async_med, s->async_p99, s->async_mean,
				s->rt_med, s->rt_p99);
	}
	out("(async_mean: %u calls queued, then one aclrtSynchronizeStream, per call; async+sync: one call and its synchronisation, %u times)\n",
	    small_copies[0].n, small_copies[0].n / 10);
	if (csv)
		fclose(csv);
}

void report_copy(void)
{
	double worst[NCOPY_ROWS][NCOPY_VARIANTS], test[NCOPY_ROWS];
	unsigned int r, v;
	char row[80];
	FILE *csv;

	if (copy_why[0])
		out("\ncopy: %s\n", copy_why);
	if (!ncopy_sizes)
		return;
	for (r = 0; r < NCOPY_ROWS; r++) {
		test[r] = -1e9;
		for (v = 0; v < NCOPY_VARIANTS; v++)
			worst[r][v] = 1e9;
	}
	csv = open_out("copy.csv");
	out("\n== Library copies against memcpy/memset over the same buffers, GB/s, median of N interleaved rounds ==\n");
	out("%-5s %-16s %3s %8s %8s %6s %8s %6s %7s\n", "size", "copy", "n",
	    "memcpy", "aclrtMc", "x", "async", "x", "test_%");
	if (csv)
		fprintf(csv, "copy,bytes,n,cpu_ns,acl_ns,async_ns,x_acl,x_async,host_test_pct\n");
	report_copy_table(csv, worst, test);
	if (csv)
		fclose(csv);
	out("(async: 16 MiB or one copy queued per aclrtSynchronizeStream; memset rows: memset, aclrtMemset, aclrtMemsetAsync;\n"
	    " test_%%: the library's overhead on malloc'd memory less that on pinned/device memory, in %% of the CPU's time)\n\n");
	report_small_copies();
	for (r = 0; r < NCOPY_ROWS; r++) {
		for (v = CV_SYNC; v < NCOPY_VARIANTS; v++) {
			if (worst[r][v] > 1e8)
				continue;
			snprintf(row, sizeof(row), "%s %s, worst from 1M",
				 copy_rows[r], r >= CP_SET_DEV ?
				 set_variants[v] : copy_variants[v]);
			add_target("copy >= 0.95x memcpy", row, worst[r][v],
				   0.95, true, true, NULL);
		}
		if (test[r] > -1e8) {
			snprintf(row, sizeof(row), "%s, worst size", copy_rows[r]);
			add_target("host memory test <= 5%", row, test[r], 5,
				   false, true, "aclrtMemcpy/Memset");
		}
	}
}

static const char *const numa_sides[2] = { "local", "remote" };

/* "A/B" MiB on the two nodes, by QUERY and by move_pages(2). */
static void numa_place_str(char *buf, size_t len, const uint64_t q[2],
			   const uint64_t p[2], int p_status)
{
	if (p_status)
		snprintf(buf, len, "%llu/%llu (%s)",
			 (unsigned long long)(q[0] / MiB),
			 (unsigned long long)(q[1] / MiB), nm_errname(-p_status));
	else
		snprintf(buf, len, "%llu/%llu %s",
			 (unsigned long long)(q[0] / MiB),
			 (unsigned long long)(q[1] / MiB),
			 q[0] == p[0] && q[1] == p[1] ? "=" : "MISMATCH");
}

static void report_numa_alloc(FILE *csv)
{
	char sz[24], place[2][48];
	unsigned int j, s;

	out("%-5s %3s %12s %12s %8s  %-20s %-20s\n", "size", "n", "local_ns/GiB",
	    "remote_ns/GiB", "x_remote", "local MiB n0/n1", "remote MiB n0/n1");
	for (j = 0; j < numa.ncells; j++) {
		const struct numa_cell *c = &numa.cells[j];

		size_str(c->size, sz, sizeof(sz));
		for (s = 0; s < 2; s++)
			numa_place_str(place[s], sizeof(place[s]), c->query[s],
				       c->pages[s], c->pages_status[s]);
		if (c->status[0] || c->status[1])
			out("%-5s %3s %12s %12s %8s  local %s, remote %s\n", sz,
			    "-", "n/a", "n/a", "", nm_errname(-c->status[0]),
			    nm_errname(-c->status[1]));
		else
			out("%-5s %3u %12.0f %12.0f %8.2f  %-20s %-20s\n", sz,
			    c->n, c->med_ns[0] * GiB / c->size,
			    c->med_ns[1] * GiB / c->size,
			    c->med_ns[1] / c->med_ns[0], place[0], place[1]);
		for (s = 0; csv && s < 2; s++)
			fprintf(csv, "alloc_touch,%s,%u,%u,%llu,%u,%.0f,%.0f,%llu,%llu,%llu,%llu,%u,%s\n",
				numa_sides[s], numa.dev[s], numa.node[s],
				(unsigned long long)c->size, c->n, c->med_ns[s],
				c->status[s] ? 0 : c->med_ns[s] * GiB / c->size,
				(unsigned long long)c->query[s][0],
				(unsigned long long)c->query[s][1],
				(unsigned long long)c->pages[s][0],
				(unsigned long long)c->pages[s][1], c->huge[s],
				c->status[s] ? nm_errname(-c->status[s]) : "ok");
	}
}

static void report_numa_copy(FILE *csv)
{
	unsigned int s;

	if (numa.copy_status || !numa.copy_n) {
		out("copy: n/a (%s)\n", nm_errname(-numa.copy_status));
		return;
	}
	out("\nmemcpy of %llu MiB from node %u (source: %llu/%llu MiB on n0/n1) into a buffer of each NPU, median of %u interleaved rounds:\n",
	    (unsigned long long)(numa.copy_bytes / MiB), numa.node[0],
	    (unsigned long long)(numa.copy_src[0] / MiB),
	    (unsigned long long)(numa.copy_src[1] / MiB), numa.copy_n);
	out("%-8s %6s %5s %10s %8s %8s  %s\n", "dest", "device", "node",
	    "median_ms", "GB/s", "x_local", "dest MiB n0/n1 (QUERY)");
	for (s = 0; s < 2; s++) {
		out("%-8s %6u %5u %10.2f %8.3f %8.2f  %llu/%llu\n", numa_sides[s],
		    numa.dev[s], numa.node[s], numa.copy_ns[s] / 1e6,
		    numa.copy_bytes / numa.copy_ns[s],
		    numa.copy_ns[0] / numa.copy_ns[s],
		    (unsigned long long)(numa.copy_dst[s][0] / MiB),
		    (unsigned long long)(numa.copy_dst[s][1] / MiB));
		if (csv)
			fprintf(csv, "memcpy,%s,%u,%u,%llu,%u,%.0f,,%llu,%llu,,,,ok\n",
				numa_sides[s], numa.dev[s], numa.node[s],
				(unsigned long long)numa.copy_bytes, numa.copy_n,
				numa.copy_ns[s],
				(unsigned long long)numa.copy_dst[s][0],
				(unsigned long long)numa.copy_dst[s][1]);
	}
}

void report_numa(void)
{
	FILE *csv;

	if (!numa.ran)
		return;
	if (!numa.ok) {
		out("\nnuma: n/a: %s\n", numa.why);
		return;
	}
	csv = open_out("numa.csv");
	if (csv)
		fprintf(csv, "row,side,device,node,bytes,n,median_ns,ns_per_gib,query_node0_bytes,query_node1_bytes,pages_node0_bytes,pages_node1_bytes,huge_pages,status\n");
	out("\n== NUMA: the thread on node %u (NPU %u's); local: NPU %u's buffer, remote: NPU %u's (node %u); median of N interleaved rounds ==\n",
	    numa.node[0], numa.dev[0], numa.dev[0], numa.dev[1], numa.node[1]);
	out("ALLOC + mmap + first touch, HUGE_FIRST; placement: MiB on node %u/%u by QUERY, \"=\" when move_pages(2) agrees:\n",
	    numa.node[0], numa.node[1]);
	report_numa_alloc(csv);
	report_numa_copy(csv);
	out("(QEMU TCG models no NUMA latency: local and remote differ here only in placement, not in access cost)\n");
	if (csv)
		fclose(csv);
}
