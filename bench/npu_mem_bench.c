// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu_mem_bench: npu-mem against every other way a user has to get pinned,
 * DMA-able memory, measured in one run on one kernel.
 *
 *   npu_mem_bench [-o DIR] [-m MAXSIZE] [-b BUDGET_MS] [-n REPEATS] [-2] [-q]
 *                 [-B BW_BYTES] [-L LAT_BYTES] [-N MAX_LIVE] [-s SECTIONS]
 *                 [-M METHODS] [-f]
 *
 *   -o DIR      write alloc.csv, bandwidth.csv, latency.csv, live.csv,
 *               copy.csv, small_copy.csv, numa.csv, targets.csv, meta.txt
 *               and summary.txt there
 *   -m SIZE     largest allocation (default 1G, capped at MemAvailable/4)
 *   -b MS       time budget per (method, size) cell, which sets the repeat
 *               count (default 200): small sizes get many repeats (up to
 *               1000), large ones at least 5 (3 with -q)
 *   -n N        a fixed repeat count instead
 *   -2          sizes in powers of 2 (default: powers of 4, 4 KiB upwards)
 *   -q          quick: -m 64M -b 40 -B 32M -L 32M -N 10000
 *   -B SIZE     bandwidth buffer (default 256M)
 *   -L SIZE     pointer-chase buffer (default 256M)
 *   -N COUNT    most live buffers for the "flat in live buffers" test
 *               (default 100064)
 *   -P LIST     the live-buffer counts measured, ascending (default
 *               10,1000,10000,100000,100001,100064), each against an fd
 *               with 10 live
 *   -s LIST     sections to run, comma separated: alloc,bw,lat,live,copy,numa
 *   -M LIST     only these allocation methods (keys as in alloc.csv)
 *   -f          turn system-wide knobs (nr_hugepages, drop_caches) outside
 *               a vm-run guest too (default: only where VM_RUN is set)
 *
 * The numa section needs two NPUs on two NUMA nodes (make bench's guest has
 * them); its sizes are the largest size / 16, / 4 and itself.
 *
 * Needs root in a guest with /dev/npu-mem (tests/vm/vm-run; `make bench`).
 * Methods whose kernel interface is missing are reported "n/a".
 *
 * Every allocation row is one cycle, repeated: get memory the CPU can use
 * and a device can DMA from, write one byte per 4 KiB page (first touch),
 * release it.  The median of the repeats is reported, split into "get"
 * (allocation + mapping + touch) and "release".  The floor is memset(0)
 * over memory that is already mapped and touched: clearing pages is the
 * part of handing out fresh memory that nobody can avoid.  A second floor
 * runs the guest kernel's own clear_page() instructions the same way: under
 * emulation the two differ much more than on hardware.
 *
 * Repeats are interleaved: each round runs every method once, in a new
 * random order, so a change of load on the host (other guests, builds)
 * hits all methods alike and the ratios within a run stay meaningful.
 *
 * This file holds the options and the order of the run; bench.h lists the
 * other pieces.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bench.h"

struct bench_opt opt = {
	.max_size = GiB,
	.budget_ns = 200e6,
	.nmin = 5,
	.nmax = 1000,
	.bw_bytes = 256 * MiB,
	.lat_bytes = 256 * MiB,
	.max_live = 100064,
	.sections = "alloc,bw,lat,live,copy,numa",
};

int npu_fd = -1;
uint64_t sizes[MAX_SIZES];
unsigned int nsizes;

static void usage(void)
{
	fprintf(stderr,
		"usage: npu_mem_bench [-o DIR] [-m MAXSIZE] [-b BUDGET_MS] [-n N] [-2] [-q]\n"
		"                     [-B BW_BYTES] [-L LAT_BYTES] [-N MAX_LIVE] [-P LIST]\n"
		"                     [-s alloc,bw,lat,live,copy,numa] [-M method,...] [-f]\n");
	exit(2);
}

static void set_quick(void)
{
	opt.max_size = 64 * MiB;
	opt.budget_ns = 40e6;
	opt.nmin = 3;
	opt.bw_bytes = 32 * MiB;
	opt.lat_bytes = 32 * MiB;
	opt.max_live = 10000;
}

static void set_live_points(char *list)
{
	char *tok, *save = NULL;

	nlive_points = 0;
	for (tok = strtok_r(list, ",", &save);
	     tok && nlive_points < MAX_LIVE_POINTS;
	     tok = strtok_r(NULL, ",", &save))
		live_points[nlive_points++] = strtoul(tok, NULL, 0);
}

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "o:m:b:n:2qB:L:N:P:s:M:fh")) != -1) {
		switch (c) {
		case 'o': opt.outdir = optarg; break;
		case 'm': opt.max_size = parse_size(optarg); break;
		case 'b': opt.budget_ns = atof(optarg) * 1e6; break;
		case 'n': opt.fixed_n = (unsigned int)atoi(optarg); break;
		case '2': opt.pow2 = true; break;
		case 'q': set_quick(); break;
		case 'B': opt.bw_bytes = parse_size(optarg); break;
		case 'L': opt.lat_bytes = parse_size(optarg); break;
		case 'N': opt.max_live = strtoul(optarg, NULL, 0); break;
		case 's': opt.sections = optarg; break;
		case 'M': opt.methods = optarg; break;
		case 'f': opt.force = true; break;
		case 'P': set_live_points(optarg); break;
		default: usage();
		}
	}
}

/*
 * At the largest size the floor's buffer, a hugetlb reservation and
 * the buffer being measured are held at once, plus the pool's cache.
 */
static void set_sizes(void)
{
	uint64_t avail = meminfo("MemAvailable"), cap = avail / 4, s;

	if (avail && opt.max_size > cap) {
		for (s = opt.max_size; s > cap && s > PAGE; s /= 2)
			;
		note("largest size %llu MiB -> %llu MiB (MemAvailable %llu MiB)",
		     (unsigned long long)(opt.max_size / MiB),
		     (unsigned long long)(s / MiB),
		     (unsigned long long)(avail / MiB));
		opt.max_size = s;
	}
	if (opt.bw_bytes > opt.max_size)
		opt.bw_bytes = opt.max_size;
	if (opt.lat_bytes > opt.max_size)
		opt.lat_bytes = opt.max_size;
	for (s = PAGE; s <= opt.max_size && nsizes < MAX_SIZES; s *= opt.pow2 ? 2 : 4)
		sizes[nsizes++] = s;
}

static void run_sections(void)
{
	if (section_on("alloc")) {
		run_alloc();
		alloc_targets();
	}
	if (section_on("bw"))
		run_bandwidth();
	if (section_on("lat"))
		run_latency();
	if (section_on("live"))
		run_live();
	if (section_on("copy"))
		run_copy();
	if (section_on("numa"))
		run_numa();
}

static void report(void)
{
	out("npu_mem_bench: kernel %s, THP %s, kernel zeroes with %s, sizes %llu KiB .. %llu MiB\n",
	    getenv("VM_KVER") ? getenv("VM_KVER") : "?", thp_mode, kclear_name,
	    (unsigned long long)(sizes[0] / KiB),
	    (unsigned long long)(opt.max_size / MiB));
	if (getenv("VM_RUN"))
		out("QEMU TCG guest: absolute times are not hardware times; compare ratios within this run.\n");
	if (strcmp(clocksource, "tsc") && strcmp(clocksource, "arch_sys_counter"))
		out("clocksource %s: every timestamp is a system call, which small sizes' times include.\n",
		    clocksource);
	if (section_on("alloc")) {
		report_alloc();
		report_phases();
	}
	report_bw();
	report_lat();
	report_live();
	report_copy();
	report_numa();
	report_targets();
}

int main(int argc, char **argv)
{
	uint64_t t_start = now_ns();

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (opt.outdir) {
		char path[4096];

		mkdir(opt.outdir, 0755);
		snprintf(path, sizeof(path), "%s/summary.txt", opt.outdir);
		summary = fopen(path, "w");
	}
	set_sizes();
	read_thp_mode();
	read_clocksource();
	pick_kclear();
	trace_init();
	npu_fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (npu_fd < 0)
		note("/dev/%s: %s: npu-mem rows are n/a", NPU_MEM_DEVICE_NAME,
		     strerror(errno));
	run_sections();
	report();
	write_meta((now_ns() - t_start) / 1e9);
	if (summary)
		fclose(summary);
	if (npu_fd >= 0)
		close(npu_fd);
	return 0;
}
