// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the pieces of npu_mem_bench share (npu_mem_bench.c says what the
 * program measures and how it is run).
 *
 * The pieces:
 *  - util.c, mem.c: output, time, statistics, files, system knobs, and the
 *    memory primitives every section uses; acl.c: libaclmem, loaded at
 *    run time;
 *  - method_*.c: the allocation methods, one file per family; each fills
 *    in struct method objects and keeps its own state behind m->priv;
 *  - alloc.c, bandwidth.c, latency.c, live.c, copy.c, numa.c: the sections,
 *    each of which measures and leaves its results in the structs below;
 *  - targets.c: the PASS/MISS verdicts; report.c: the tables and CSV files,
 *    with the verdicts beside them (report.c calls targets.c, never the
 *    other way round).
 *
 * Everything runs in one thread (numa.c pins it to one node's CPUs for its
 * section); the only other processes are libaclmem's children
 * (method_acl.c).
 */
#ifndef NPU_MEM_BENCH_H
#define NPU_MEM_BENCH_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/npu_mem.h>

#include "acl/acl.h"

/* Files, pipes, parameters: the tests' Check-free helpers. */
#include "nmtest_sys.h"

#define KiB		(1ULL << 10)
#define MiB		(1ULL << 20)
#define GiB		(1ULL << 30)
#define PAGE		4096UL
#define HUGE		(2 * MiB)
#define MAX_SIZES	32
#define LINE		64

#ifndef MAP_HUGETLB
#define MAP_HUGETLB	0x40000
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE	14
#define MADV_NOHUGEPAGE	15
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* libaclmem's pool switch: a cap in bytes, or "off" (lib/pool.h). */
#define POOL_ENV	"NPU_MEM_POOL_MAX"

/* ---- options and environment (npu_mem_bench.c) -------------------------- */

struct bench_opt {
	const char *outdir;
	uint64_t max_size;
	double budget_ns;
	unsigned int fixed_n;
	unsigned int nmin, nmax;
	bool pow2;
	uint64_t bw_bytes;
	uint64_t lat_bytes;
	unsigned long max_live;
	const char *sections;
	const char *methods;
	bool force;
};

extern struct bench_opt opt;
extern int npu_fd;
extern uint64_t sizes[MAX_SIZES];
extern unsigned int nsizes;

/* ---- util.c --------------------------------------------------------------- */

extern FILE *summary;
extern uint64_t sink;

void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
FILE *open_out(const char *name);
uint64_t now_ns(void);
const char *size_str(uint64_t s, char *buf, size_t len);
uint64_t parse_size(const char *s);
bool section_on(const char *name);
int read_sysfs_list(const char *path, cpu_set_t *set);
void trace_init(void);
void trace_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void trace_end(void);
uint64_t rng(void);
void shuffle(unsigned int *v, unsigned int n);
double median_u64(uint64_t *v, unsigned int n);
unsigned int repeats_for(double budget_ns, uint64_t est_ns, unsigned int nmin,
			 unsigned int nmax);

/* ---- mem.c ---------------------------------------------------------------- */

extern char thp_mode[32];
extern char clocksource[32];

uint64_t meminfo(const char *key);
void read_thp_mode(void);
void read_clocksource(void);
long hugetlb_count(void);
long hugetlb_reserve(long n);
void drop_caches(void);
void touch(void *p, uint64_t size);
uint64_t sum_read(const void *p, uint64_t size);
void *map_anon(uint64_t size, int extra_flags);
void *map_anon_aligned(uint64_t size);
void *map_anon_advised(uint64_t size, int advice);
int npu_alloc(int fd, uint64_t size, uint32_t policy, struct npu_mem_alloc *a);
int npu_free(int fd, uint32_t handle);
void *npu_map_buffer(uint64_t size, uint32_t policy, uint64_t *maplen,
		     struct npu_mem_buffer *kb);

/* ---- acl.c: libaclmem, loaded at run time -------------------------------- */

struct acl_calls {
	void *dl;
	__typeof__(aclInit) *init;
	__typeof__(aclFinalize) *finalize;
	__typeof__(aclrtSetDevice) *set_device;
	__typeof__(aclrtResetDevice) *reset_device;
	__typeof__(aclrtMalloc) *malloc;
	__typeof__(aclrtMallocCached) *malloc_cached;
	__typeof__(aclrtMallocHost) *malloc_host;
	__typeof__(aclrtFree) *free;
	__typeof__(aclrtFreeHost) *free_host;
	__typeof__(aclrtMemcpy) *memcpy;
	__typeof__(aclrtMemcpyAsync) *memcpy_async;
	__typeof__(aclrtMemset) *memset;
	__typeof__(aclrtMemsetAsync) *memset_async;
	__typeof__(aclrtCreateStream) *create_stream;
	__typeof__(aclrtDestroyStream) *destroy_stream;
	__typeof__(aclrtSynchronizeStream) *sync;
};

extern struct acl_calls acl;

int acl_load(char *why, size_t len);
void acl_unload(void);

/* ---- allocation methods (method_*.c) -------------------------------------- */

/* npu-mem cycles also time each step. */
enum { PH_ALLOC, PH_MMAP, PH_TOUCH, PH_MUNMAP, PH_FREE, NPHASES };
extern const char *const phase_names[NPHASES];

struct sample {
	uint64_t get;		/* ns: allocate + map + first touch */
	uint64_t rel;		/* ns: unmap + free */
	uint64_t phase[NPHASES];
	uint32_t huge, normal;	/* npu-mem: the buffer's page mix */
};

/*
 * One row of the allocation table.  The hooks are the family's; what a
 * family needs per method (a policy, a pipe to a child, an fd) is behind
 * priv, and only its own file looks there.
 */
struct method {
	const char *key;	/* CSV and plot name */
	const char *label;	/* table name */
	int (*setup)(struct method *m);			/* per run: 0 or n/a */
	int (*prepare)(struct method *m, uint64_t size);	/* per size, untimed */
	int (*once)(struct method *m, uint64_t size, struct sample *s);
	void (*finish)(struct method *m);		/* per size */
	void (*teardown)(struct method *m);		/* per run */
	void *priv;
	bool alternative;	/* counts in "faster than every alternative" */
	bool active;
	bool warm;		/* untimed cycle before each timed one */
	bool trace;		/* trace the next cycle (npu-mem rows) */
	bool warms_itself;	/* once() does the warm cycle (child) */
	char na[96];		/* why the method is n/a */
};

/* The rows, in table order; alloc.c maps them to the objects below. */
enum {
	M_FLOOR, M_KCLEAR, M_NPU_HF, M_NPU_HF_POP, M_NPU_HO, M_NPU_NO,
	M_NPU_WARM, M_NPU_COLD, M_NPU_LOOP, M_ACL_OFF, M_ACL_ON,
	M_ANON, M_ANON4K, M_HUGETLB, M_THP, M_VGEM, M_HEAP, M_UDMABUF,
	NMETHODS
};

/* method_floor.c: the floors, and the kernel's clear_page() in use */
extern struct method method_floor, method_kclear;
extern const char *kclear_name;
void pick_kclear(void);
/* method_npu.c */
extern struct method method_npu_hf, method_npu_hf_pop, method_npu_ho,
	method_npu_no, method_npu_warm, method_npu_cold, method_npu_loop;
/* The zero reserve's fill: GiB/s and the thread's CPU seconds; 0 or -errno */
int reserve_refill_rate(uint64_t size, double *gib_s, double *cpu_s);
/* method_acl.c */
extern struct method method_acl_off, method_acl_on;
/* method_anon.c: anonymous memory, THP and hugetlb */
extern struct method method_anon, method_anon4k, method_hugetlb, method_thp;
/* method_dmabuf.c: the other dma-buf exporters */
extern struct method method_vgem, method_heap, method_udmabuf;

/* ---- the allocation section (alloc.c) ------------------------------------- */

struct cell {
	int status;		/* 0 ok, else -errno of the first failure */
	unsigned int n;
	double med, min, max, get, rel;
	double phase[NPHASES];		/* npu-mem rows: median per step */
	uint32_t huge_min, normal_max;	/* npu-mem rows: worst page mix seen */
	char note[160];
};

extern struct method *const methods[NMETHODS];
extern struct cell cells[NMETHODS][MAX_SIZES];
/* Memory the floors write over: mapped and touched before each size. */
extern void *floor_buf;

bool method_on(const struct method *m);
bool is_npu(unsigned int i);
bool cell_ok(const struct cell *c);
void run_alloc(void);

/* ---- bandwidth.c ---------------------------------------------------------- */

#define NBW_OPS	3
extern const char *const bw_ops[NBW_OPS];

struct bw_buf {
	const char *name;
	void *p;
	uint64_t len;		/* mapping length */
	bool npu, munmap;
	char why[96];
	char pages[48];
	double med_ns[NBW_OPS];
	double best_ns[NBW_OPS];
	unsigned int n;
};

#define MAX_BW	4
extern struct bw_buf bw[MAX_BW];
extern unsigned int nbw;

void run_bandwidth(void);

/* ---- latency.c ------------------------------------------------------------ */

struct lat_buf {
	const char *name;
	void *p;
	uint64_t len;
	bool hugetlb;
	char why[96];
	char pages[48];
	double ns;
	unsigned int n;
};

#define MAX_LAT	5
extern struct lat_buf lat[MAX_LAT];
extern unsigned int nlat;

void run_latency(void);

/* ---- live.c --------------------------------------------------------------- */

#define NLIVE_OPS	2
extern const char *const live_ops[NLIVE_OPS];

struct live_result {
	unsigned long live;
	double med_ns[NLIVE_OPS];	/* fd with N live */
	double ref_ns[NLIVE_OPS];	/* reference fd, 10 live */
	unsigned int n;
	int status;
};

#define MAX_LIVE_POINTS	16
extern struct live_result live_res[20];
extern unsigned int nlive;
extern unsigned long live_points[MAX_LIVE_POINTS];
extern unsigned int nlive_points;

void run_live(void);

/* ---- copy.c -------------------------------------------------------------- */

enum { CP_H2D, CP_H2D_PIN, CP_D2H, CP_D2H_PIN, CP_D2D, CP_SET_DEV, CP_SET_HOST,
       NCOPY_ROWS };
enum { CV_CPU, CV_SYNC, CV_ASYNC, NCOPY_VARIANTS };
extern const char *const copy_rows[NCOPY_ROWS];
extern const char *const copy_variants[NCOPY_VARIANTS];
extern const char *const set_variants[NCOPY_VARIANTS];

/* One row at one size: median ns per operation of each variant. */
struct copy_cell {
	double med_ns[NCOPY_VARIANTS];
	unsigned int n;
};

/* Small asynchronous copies: ns per call, median and 99th percentile. */
struct small_copy {
	uint64_t size;
	double cpu_med, cpu_p99;	/* memcpy */
	double sync_med, sync_p99;	/* aclrtMemcpy */
	double async_med, async_p99;	/* aclrtMemcpyAsync, the call */
	double async_mean;		/* n calls + one synchronisation, / n */
	double rt_med, rt_p99;		/* one call + aclrtSynchronizeStream */
	unsigned int n;
};

#define NSMALL	4
extern struct copy_cell copy_cells[NCOPY_ROWS][MAX_SIZES];
extern struct small_copy small_copies[NSMALL];
extern unsigned int ncopy_sizes;
extern char copy_why[160];

void run_copy(void);

/* ---- numa.c: a buffer on the thread's node against one on the other ------ */

/* One size of the allocation row; [0] local (NPU 0), [1] remote. */
struct numa_cell {
	uint64_t size;
	int status[2];
	unsigned int n;
	double med_ns[2];	/* ALLOC + mmap + first touch, median */
	uint32_t huge[2];	/* 2 MiB chunks of the first buffer */
	uint64_t query[2][2];	/* bytes on node[0], node[1] by QUERY */
	uint64_t pages[2][2];	/* the same by move_pages(2) */
	int pages_status[2];
};

#define MAX_NUMA	4
struct numa_run {
	bool ran, ok;
	char why[160];
	uint32_t dev[2], node[2];	/* the NPUs and their nodes */
	struct numa_cell cells[MAX_NUMA];
	unsigned int ncells;
	/* memcpy from the thread's node into a buffer of each NPU */
	uint64_t copy_bytes;
	int copy_status;
	unsigned int copy_n;
	double copy_ns[2];
	uint64_t copy_src[2];		/* the source's bytes per node */
	uint64_t copy_dst[2][2];	/* each destination's, by QUERY */
};

extern struct numa_run numa;

void run_numa(void);

/* ---- targets.c ------------------------------------------------------------ */

void add_target(const char *name, const char *row, double value, double limit,
		bool higher_better, bool known, const char *detail);
const char *alloc_mark(unsigned int i, unsigned int j, char *buf, size_t len);
void alloc_targets(void);
void report_targets(void);

/* ---- report.c ------------------------------------------------------------- */

void report_alloc(void);
void report_phases(void);
void report_bw(void);
void report_lat(void);
void report_live(void);
void report_copy(void);
void report_numa(void);
void write_meta(double secs);

#endif
