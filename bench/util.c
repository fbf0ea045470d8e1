// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu_mem_bench's plumbing: output (the summary goes to stdout and to
 * summary.txt, progress to stderr, result files to the output directory),
 * time, sizes, whole-file and pipe I/O, kernel tracing around chosen
 * cycles, the random order of the rounds and the statistics over them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

FILE *summary;
/* Where read results go so that the compiler keeps the reads. */
uint64_t sink;

/* Print to stdout and to summary.txt. */
void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (summary) {
		va_start(ap, fmt);
		vfprintf(summary, fmt, ap);
		va_end(ap);
	}
}

/* Progress, to stderr only. */
void note(const char *fmt, ...)
{
	va_list ap;

	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A result file in the output directory, or NULL (no directory, or it
 * cannot be written: said on stderr): the report's files and the
 * verdicts' go through it.
 */
FILE *open_out(const char *name)
{
	char path[4096];
	FILE *f;

	if (!opt.outdir)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", opt.outdir, name);
	f = fopen(path, "w");
	if (!f)
		note("cannot write %s: %s", path, strerror(errno));
	return f;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *size_str(uint64_t s, char *buf, size_t len)
{
	if (s >= GiB && !(s % GiB))
		snprintf(buf, len, "%lluG", (unsigned long long)(s / GiB));
	else if (s >= MiB && !(s % MiB))
		snprintf(buf, len, "%lluM", (unsigned long long)(s / MiB));
	else if (s >= KiB && !(s % KiB))
		snprintf(buf, len, "%lluK", (unsigned long long)(s / KiB));
	else
		snprintf(buf, len, "%llu", (unsigned long long)s);
	return buf;
}

uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K':
		return v << 10;
	case 'm': case 'M':
		return v << 20;
	case 'g': case 'G':
		return v << 30;
	}
	return v;
}

bool section_on(const char *name)
{
	return strstr(opt.sections, name) != NULL;
}

/* A sysfs list of CPUs or nodes ("0-3,8") into @set: 0, or -errno. */
int read_sysfs_list(const char *path, cpu_set_t *set)
{
	char *list = nm_read_file(path), *tok, *save = NULL;
	unsigned int a, b;

	if (!list)
		return -errno;
	CPU_ZERO(set);
	for (tok = strtok_r(list, ",\n", &save); tok;
	     tok = strtok_r(NULL, ",\n", &save)) {
		if (sscanf(tok, "%u-%u", &a, &b) != 2)
			b = a = (unsigned int)atoi(tok);
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, set);
	}
	free(list);
	return CPU_COUNT(set) ? 0 : -ENOENT;
}

/*
 * Kernel tracing around chosen npu-mem cycles (bench/trace.sh sets up the
 * function_graph tracer, NPU_MEM_BENCH_TRACE=1 asks for this): tracing is
 * switched on only for those cycles, each announced in the trace.
 */
static int trace_on_fd = -1, trace_marker_fd = -1;

void trace_init(void)
{
	if (!getenv("NPU_MEM_BENCH_TRACE"))
		return;
	trace_on_fd = open("/sys/kernel/tracing/tracing_on", O_WRONLY | O_CLOEXEC);
	trace_marker_fd = open("/sys/kernel/tracing/trace_marker",
			       O_WRONLY | O_CLOEXEC);
	if (trace_on_fd < 0 || trace_marker_fd < 0)
		note("tracing requested but /sys/kernel/tracing is not usable");
}

void trace_begin(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	if (trace_on_fd < 0 || trace_marker_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(trace_on_fd, "1", 1) == 1 && n > 0)
		write(trace_marker_fd, buf, strlen(buf));
}

void trace_end(void)
{
	if (trace_on_fd >= 0 && write(trace_on_fd, "0", 1) != 1)
		trace_on_fd = -1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

void shuffle(unsigned int *v, unsigned int n)
{
	unsigned int i, j, t;

	for (i = n; i > 1; i--) {
		j = (unsigned int)(rng() % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v. */
double median_u64(uint64_t *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n & 1 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

unsigned int repeats_for(double budget_ns, uint64_t est_ns, unsigned int nmin,
			 unsigned int nmax)
{
	double n;

	if (opt.fixed_n)
		return opt.fixed_n;
	n = budget_ns / (est_ns ? (double)est_ns : 1.0);
	if (n < nmin)
		return nmin;
	if (n > nmax)
		return nmax;
	return (unsigned int)n;
}
