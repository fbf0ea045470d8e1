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
