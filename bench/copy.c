// SPDX-License-Identifier: GPL-2.0-only
/*
 * The library's copies: aclrtMemcpy and aclrtMemcpyAsync host to device,
 * device to host and device to device, and aclrtMemset, each against
 * memcpy/memset over the same buffers, in interleaved rounds of every
 * (row, variant) pair in a random order; then the per-call time of small
 * asynchronous copies on one stream against a memcpy call of the same
 * size.
 *
 * The host side is ordinary malloc'd memory, which the library tests
 * before it touches it (lib/copy.c), and, in the "pinned" rows, an
 * aclrtMallocHost buffer, which it only looks up.  The copies are the
 * same memmove either way, so the gap between the two rows' ratios to
 * memcpy is what the test of ordinary host memory costs.
 *
 * libaclmem is loaded here, in the benchmark's own process (the
 * allocation section's children are gone by then), with its default pool.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/*
 * Bytes each timed sample moves at least: small sizes loop, and an
 * asynchronous sample queues that much before it synchronises once, so
 * that it measures the stream's throughput; the cost of one
 * synchronisation is the small copies' round trip.
 */
#define SAMPLE_BYTES	(16 * MiB)
#define COPY_NMIN	7
#define SMALL_CALLS	2000

const char *const copy_rows[NCOPY_ROWS] = {
	"H2D malloc->dev", "H2D pinned->dev", "D2H dev->malloc",
	"D2H dev->pinned", "D2D dev->dev", "memset dev", "memset malloc",
};
const char *const copy_variants[NCOPY_VARIANTS] = {
	"memcpy", "aclrtMemcpy", "aclrtMemcpyAsync",
};
const char *const set_variants[NCOPY_VARIANTS] = {
	"memset", "aclrtMemset", "aclrtMemsetAsync",
};
const uint64_t small_sizes[NSMALL] = { 64, 256, 1024, 4096 };

struct copy_cell copy_cells[NCOPY_ROWS][MAX_SIZES];
struct small_copy small_copies[NSMALL];
unsigned int ncopy_sizes;
char copy_why[160];

/* The buffers every row works on, each of the largest size. */
static struct {
	char *host, *pinned, *dev, *dev2;
	aclrtStream stream;
	int errors;
} cb;

static int copy_buffers(uint64_t size)
{
	void *p;

	cb.host = malloc(size);
	if (!cb.host || acl.malloc_host(&p, size) != ACL_SUCCESS)
		return -1;
	cb.pinned = p;
	if (acl.malloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return -1;
	cb.dev = p;
	if (acl.malloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		return -1;
	cb.dev2 = p;
	if (acl.create_stream(&cb.stream) != ACL_SUCCESS)
		return -1;
	memset(cb.host, 1, size);
	memset(cb.pinned, 2, size);
	memset(cb.dev, 3, size);
	memset(cb.dev2, 4, size);
	return 0;
}

static void copy_release(void)
{
	if (cb.stream)
		acl.destroy_stream(cb.stream);
	if (cb.dev2)
		acl.free(cb.dev2);
	if (cb.dev)
		acl.free(cb.dev);
	if (cb.pinned)
		acl.free_host(cb.pinned);
	free(cb.host);
	memset(&cb, 0, sizeof(cb));
	acl_unload();
}

/* Destination and source of a row; a fill has no source. */
static void row_bufs(unsigned int row, char **dst, const char **src)
{
	static const struct { int d, s; } map[NCOPY_ROWS] = {
		[CP_H2D] = { 2, 0 }, [CP_H2D_PIN] = { 2, 1 },
		[CP_D2H] = { 0, 2 }, [CP_D2H_PIN] = { 1, 2 },
		[CP_D2D] = { 3, 2 }, [CP_SET_DEV] = { 2, -1 },
		[CP_SET_HOST] = { 0, -1 },
	};
	char *b[4] = { cb.host, cb.pinned, cb.dev, cb.dev2 };

	*dst = b[map[row].d];
	*src = map[row].s < 0 ? NULL : b[map[row].s];
}

static void tally(aclError e)
{
	if (e != ACL_SUCCESS)
		cb.errors++;
}

/* One timed sample: @reps operations of @size; ns per operation. */
static uint64_t copy_pass(unsigned int row, unsigned int v, uint64_t size,
			  unsigned int reps)
{
	aclrtMemcpyKind kind = row <= CP_H2D_PIN ? ACL_MEMCPY_HOST_TO_DEVICE :
			       row <= CP_D2H_PIN ? ACL_MEMCPY_DEVICE_TO_HOST :
			       ACL_MEMCPY_DEVICE_TO_DEVICE;
	const char *src;
	uint64_t t0;
	unsigned int i;
	char *dst;

	row_bufs(row, &dst, &src);
	t0 = now_ns();
	for (i = 0; i < reps; i++) {
		if (!src && v == CV_CPU)
			memset(dst, (int)(i & 0x7f), size);
		else if (!src && v == CV_SYNC)
			tally(acl.memset(dst, size, (int)(i & 0x7f), size));
		else if (!src)
			tally(acl.memset_async(dst, size, (int)(i & 0x7f), size,
					       cb.stream));
		else if (v == CV_CPU)
			memcpy(dst, src, size);
		else if (v == CV_SYNC)
			tally(acl.memcpy(dst, size, src, size, kind));
		else
			tally(acl.memcpy_async(dst, size, src, size, kind,
					       cb.stream));
	}
	if (v == CV_ASYNC)
		tally(acl.sync(cb.stream));
	__asm__ __volatile__("" : : "r"(dst) : "memory");
	return (now_ns() - t0) / reps;
}

static void copy_size(unsigned int j, uint64_t size)
{
	unsigned int order[NCOPY_ROWS * NCOPY_VARIANTS], nord = 0;
	unsigned int reps = size < SAMPLE_BYTES ? SAMPLE_BYTES / size : 1;
	uint64_t *t[NCOPY_ROWS * NCOPY_VARIANTS], est = 0;
	unsigned int k, r, n;

	for (k = 0; k < NCOPY_ROWS * NCOPY_VARIANTS; k++) {
		est += copy_pass(k / NCOPY_VARIANTS, k % NCOPY_VARIANTS, size,
				 reps) * reps;	/* warm-up */
		order[nord++] = k;
	}
	n = repeats_for(opt.budget_ns * nord, est, COPY_NMIN, 101);
	for (k = 0; k < nord; k++)
		t[k] = calloc(n, sizeof(uint64_t));
	for (r = 0; r < n; r++) {
		shuffle(order, nord);
		for (k = 0; k < nord; k++)
			if (t[order[k]])
				t[order[k]][r] = copy_pass(order[k] / NCOPY_VARIANTS,
							   order[k] % NCOPY_VARIANTS,
							   size, reps);
	}
	for (k = 0; k < nord; k++) {
		struct copy_cell *c = &copy_cells[k / NCOPY_VARIANTS][j];

		if (t[k]) {
			c->med_ns[k % NCOPY_VARIANTS] = median_u64(t[k], n);
			c->n = n;
		}
		free(t[k]);
	}
	note("copy %llu KiB: H2D %.3f / %.3f GB/s (memcpy / aclrtMemcpy), %u rounds",
	     (unsigned long long)(size / KiB),
	     size / copy_cells[CP_H2D][j].med_ns[CV_CPU],
	     size / copy_cells[CP_H2D][j].med_ns[CV_SYNC], n);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void pctl(uint64_t *v, unsigned int n, double *med, double *p99)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	*med = (double)v[n / 2];
	*p99 = (double)v[n * 99 / 100];
}

/*
 * Small copies from malloc'd memory into a device buffer, @n calls each:
 * memcpy, aclrtMemcpy, and aclrtMemcpyAsync on one stream, each call timed
 * alone; the asynchronous ones also as the whole batch through its
 * synchronisation (the mean per call) and as one copy plus a
 * synchronisation (the round trip).
 */
static void small_one(struct small_copy *s, uint64_t *v, unsigned int n)
{
	uint64_t size = s->size, t0, t1;
	unsigned int i;

	for (i = 0; i < n; i++) {
		t0 = now_ns();
		memcpy(cb.dev + i * size % MiB, cb.host, size);
		v[i] = now_ns() - t0;
	}
	pctl(v, n, &s->cpu_med, &s->cpu_p99);
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		tally(acl.memcpy(cb.dev + i * size % MiB, size, cb.host, size,
				 ACL_MEMCPY_HOST_TO_DEVICE));
		v[i] = now_ns() - t0;
	}
	pctl(v, n, &s->sync_med, &s->sync_p99);
	t1 = now_ns();
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		tally(acl.memcpy_async(cb.dev + i * size % MiB, size, cb.host,
				       size, ACL_MEMCPY_HOST_TO_DEVICE,
				       cb.stream));
		v[i] = now_ns() - t0;
	}
	tally(acl.sync(cb.stream));
	s->async_mean = (double)(now_ns() - t1) / n;
	pctl(v, n, &s->async_med, &s->async_p99);
	for (i = 0; i < n / 10; i++) {
		t0 = now_ns();
		tally(acl.memcpy_async(cb.dev, size, cb.host, size,
				       ACL_MEMCPY_HOST_TO_DEVICE, cb.stream));
		tally(acl.sync(cb.stream));
		v[i] = now_ns() - t0;
	}
	pctl(v, n / 10, &s->rt_med, &s->rt_p99);
	s->n = n;
}

static void small_copies_run(void)
{
	uint64_t *v = calloc(SMALL_CALLS, sizeof(uint64_t));
	unsigned int i;

	if (!v)
		return;
	for (i = 0; i < NSMALL; i++) {
		small_copies[i].size = small_sizes[i];
		small_one(&small_copies[i], v, SMALL_CALLS / 4);   /* warm-up */
		small_one(&small_copies[i], v, SMALL_CALLS);
	}
	free(v);
}

/*
 * Four buffers of the largest size are held at once (malloc, pinned, two
 * device buffers), plus the library's pool: the largest size is the one
 * whose four fit in 3/4 of MemAvailable.
 */
static uint64_t copy_max(void)
{
	uint64_t avail = meminfo("MemAvailable"), s = opt.max_size;

	while (avail && s > PAGE && 4 * s > avail / 4 * 3)
		s /= 4;
	if (s < opt.max_size)
		snprintf(copy_why, sizeof(copy_why),
			 "largest copy %llu MiB, not %llu: four buffers must fit in 3/4 of MemAvailable (%llu MiB)",
			 (unsigned long long)(s / MiB),
			 (unsigned long long)(opt.max_size / MiB),
			 (unsigned long long)(avail / MiB));
	return s;
}

void run_copy(void)
{
	uint64_t max = copy_max();
	unsigned int j;

	if (acl_load(copy_why, sizeof(copy_why)))
		return;
	if (copy_buffers(max)) {
		snprintf(copy_why, sizeof(copy_why),
			 "cannot allocate four %llu MiB buffers",
			 (unsigned long long)(max / MiB));
		copy_release();
		return;
	}
	for (j = 0; j < nsizes && sizes[j] <= max; j++)
		copy_size(j, sizes[j]);
	ncopy_sizes = j;
	small_copies_run();
	if (cb.errors)
		snprintf(copy_why, sizeof(copy_why),
			 "%d library calls failed: the numbers are not valid",
			 cb.errors);
	copy_release();
}
