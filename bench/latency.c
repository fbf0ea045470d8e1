// SPDX-License-Identifier: GPL-2.0-only
/*
 * The random access section: a pointer chase, one random 64-byte line per
 * step, over a buffer of each backing (npu-mem HUGE_FIRST and NORMAL_ONLY,
 * 4 KiB and THP anonymous memory, hugetlb), in interleaved rounds; the
 * median time per access goes into lat[].
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

struct lat_buf lat[MAX_LAT];
unsigned int nlat;

/* A random order of every line, from the run's generator. */
static uint32_t *lat_perm(uint64_t lines)
{
	uint32_t *perm = malloc(lines * sizeof(*perm)), tmp;
	uint64_t i, j;

	if (!perm)
		return NULL;
	for (i = 0; i < lines; i++)
		perm[i] = (uint32_t)i;
	for (i = lines - 1; i > 0; i--) {
		j = rng() % i;
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	return perm;
}

/* A random cycle through every line (Sattolo), written as pointers. */
static void lat_link(char *base, const uint32_t *perm, uint64_t lines)
{
	uint64_t i;

	for (i = 0; i < lines; i++)
		*(void **)(base + (uint64_t)perm[i] * LINE) =
			base + (uint64_t)perm[(i + 1) % lines] * LINE;
}

static uint64_t lat_chase(void *start, uint64_t steps, void **end)
{
	uint64_t i, t0 = now_ns();
	void **q = start;

	for (i = 0; i < steps; i++)
		q = *q;
	*end = q;
	return now_ns() - t0;
}

static struct lat_buf *lat_add(const char *name, uint64_t size)
{
	struct lat_buf *b = &lat[nlat++];

	b->name = name;
	b->len = size;
	return b;
}

static void lat_add_anon(const char *name, uint64_t size, int advice,
			 const char *pages)
{
	struct lat_buf *b = lat_add(name, size);

	b->p = map_anon_advised(size, advice);
	snprintf(b->pages, sizeof(b->pages), "%s", pages);
}

/* Every backing's buffer; @saved: hugetlb pages reserved before. */
static void lat_buffers(uint64_t size, long saved)
{
	long want = (long)(size / HUGE);
	struct npu_mem_buffer kb;
	struct lat_buf *b;

	b = lat_add("npu_huge_first", size);
	b->p = npu_map_buffer(size, NPU_MEM_POLICY_HUGE_FIRST, &b->len, &kb);
	if (b->p)
		snprintf(b->pages, sizeof(b->pages), "2M x%u, 4K x%u",
			 kb.huge_pages, kb.normal_pages);
	b = lat_add("npu_normal_only", size);
	b->p = npu_map_buffer(size, NPU_MEM_POLICY_NORMAL_ONLY, &b->len, &kb);
	if (b->p)
		snprintf(b->pages, sizeof(b->pages), "4K x%u", kb.normal_pages);
	lat_add_anon("anon_4k", size, MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE");
	lat_add_anon("thp_madvise", size, MADV_HUGEPAGE, "MADV_HUGEPAGE");
	b = lat_add("hugetlb_2m", size);
	b->hugetlb = true;
	if (saved >= 0 && hugetlb_reserve(saved + want) >= saved + want)
		b->p = map_anon(size, MAP_HUGETLB | MAP_POPULATE);
	else
		snprintf(b->why, sizeof(b->why), "cannot reserve huge pages");
	snprintf(b->pages, sizeof(b->pages), "hugetlb 2M");
}

/* Link each buffer's lines, one untimed chase; returns their cost. */
static uint64_t lat_warm_up(uint64_t size, const uint32_t *perm,
			    uint64_t steps, unsigned int *order,
			    unsigned int *nord)
{
	uint64_t est = 0, lines = size / LINE;
	struct lat_buf *b;
	void *end = NULL;
	unsigned int k;

	for (k = 0; k < nlat; k++) {
		b = &lat[k];
		if (!b->p) {
			if (!b->why[0])
				snprintf(b->why, sizeof(b->why), "allocation failed");
			continue;
		}
		memset(b->p, 0, size);
		lat_link(b->p, perm, lines);
		est += lat_chase((char *)b->p + (uint64_t)perm[0] * LINE, steps,
				 &end);
		sink += (uintptr_t)end;
		order[(*nord)++] = k;
	}
	return est;
}

/* Medians into lat[]; the buffers go. */
static void lat_collect(uint64_t **t, unsigned int n, uint64_t steps)
{
	struct lat_buf *b;
	unsigned int k;

	for (k = 0; k < nlat; k++) {
		b = &lat[k];
		if (b->p && t[k]) {
			b->n = n;
			b->ns = median_u64(t[k], n) / steps;
			note("latency %-16s %8.1f ns/access", b->name, b->ns);
		}
		free(t[k]);
		if (b->p)
			munmap(b->p, b->len);
		b->p = NULL;
	}
}

void run_latency(void)
{
	uint64_t size = opt.lat_bytes, lines = size / LINE, est;
	uint64_t steps = lines < (1ULL << 20) ? lines : (1ULL << 20);
	unsigned int order[MAX_LAT], nord = 0, k, r, n;
	uint64_t *t[MAX_LAT] = { 0 };
	long saved = hugetlb_count();
	void *end = NULL;
	uint32_t *perm;

	perm = lat_perm(lines);
	if (!perm) {
		note("latency: no memory for the permutation");
		return;
	}
	drop_caches();
	lat_buffers(size, saved);
	est = lat_warm_up(size, perm, steps, order, &nord);
	free(perm);
	n = repeats_for(opt.budget_ns * 2 * nord, est, opt.nmin > 3 ? 7 : 5, 15);
	for (k = 0; k < nlat; k++)
		t[k] = calloc(n, sizeof(uint64_t));
	for (r = 0; r < n; r++) {
		shuffle(order, nord);
		for (k = 0; k < nord; k++) {
			if (t[order[k]])
				t[order[k]][r] = lat_chase(lat[order[k]].p, steps,
							   &end);
			sink += (uintptr_t)end;
		}
	}
	lat_collect(t, n, steps);
	if (saved >= 0)
		hugetlb_reserve(saved);
}
