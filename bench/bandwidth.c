// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CPU bandwidth section: one buffer of each backing (npu-mem
 * HUGE_FIRST and NORMAL_ONLY, malloc, 4 KiB anonymous memory) written,
 * read and copied, in interleaved rounds of every (buffer, op) pair in a
 * random order; the median and the best of each go into bw[].
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

const char *const bw_ops[NBW_OPS] = { "write_memset", "read_sum", "copy_memcpy" };

struct bw_buf bw[MAX_BW];
unsigned int nbw;

static uint64_t bw_pass(void *p, uint64_t size, unsigned int op, unsigned int r)
{
	uint64_t t0 = now_ns();

	switch (op) {
	case 0:
		memset(p, (int)(r & 0x7f), size);
		break;
	case 1:
		sink += sum_read(p, size);
		break;
	default:
		memcpy((char *)p + size / 2, p, size / 2);
		break;
	}
	__asm__ __volatile__("" : : "r"(p) : "memory");
	return now_ns() - t0;
}

static void bw_add_npu(const char *name, uint32_t policy, uint64_t size)
{
	struct bw_buf *b = &bw[nbw++];
	struct npu_mem_buffer kb;

	b->name = name;
	b->npu = true;
	b->p = npu_map_buffer(size, policy, &b->len, &kb);
	if (!b->p)
		snprintf(b->why, sizeof(b->why), "npu-mem allocation failed");
	else
		snprintf(b->pages, sizeof(b->pages), "2M x%u, 4K x%u",
			 kb.huge_pages, kb.normal_pages);
}

static void bw_add_host(uint64_t size)
{
	struct bw_buf *b;

	/* malloc'd memory as a program gets it: THP as the system says. */
	b = &bw[nbw++];
	b->name = "malloc";
	b->p = malloc(size);
	snprintf(b->pages, sizeof(b->pages), "THP %s", thp_mode);
	/* And with 4 KiB pages, the mapping npu-mem has now. */
	b = &bw[nbw++];
	b->name = "anon_4k";
	b->munmap = true;
	b->len = size;
	b->p = map_anon_advised(size, MADV_NOHUGEPAGE);
	snprintf(b->pages, sizeof(b->pages), "MADV_NOHUGEPAGE");
}

/* Fill each buffer, one untimed pass of each op; returns their cost. */
static uint64_t bw_warm_up(uint64_t size, unsigned int *order,
			   unsigned int *nord)
{
	uint64_t est = 0;
	unsigned int i, o;
	struct bw_buf *b;

	for (i = 0; i < nbw; i++) {
		b = &bw[i];
		if (!b->p) {
			if (!b->why[0])
				snprintf(b->why, sizeof(b->why), "no memory");
			continue;
		}
		memset(b->p, 1, size);
		for (o = 0; o < NBW_OPS; o++) {
			est += bw_pass(b->p, size, o, 0);	/* warm-up */
			order[(*nord)++] = i * NBW_OPS + o;
		}
	}
	return est;
}

/* Medians and bests into bw[]; the buffers go. */
static void bw_collect(uint64_t *t[MAX_BW][NBW_OPS], unsigned int n,
		       uint64_t size)
{
	unsigned int i, o;
	struct bw_buf *b;

	for (i = 0; i < nbw; i++) {
		b = &bw[i];
		for (o = 0; o < NBW_OPS; o++) {
			if (b->p && t[i][o]) {
				b->med_ns[o] = median_u64(t[i][o], n);
				b->best_ns[o] = (double)t[i][o][0];
				b->n = n;
			}
			free(t[i][o]);
		}
		if (b->p && (b->npu || b->munmap))
			munmap(b->p, b->len);
		else
			free(b->p);
		b->p = NULL;
		if (b->n)
			note("bandwidth %-16s write %.3f read %.3f copy %.3f GB/s",
			     b->name, size / b->med_ns[0], size / b->med_ns[1],
			     size / 2 / b->med_ns[2]);
	}
}

void run_bandwidth(void)
{
	uint64_t size = opt.bw_bytes, est, *t[MAX_BW][NBW_OPS];
	unsigned int order[MAX_BW * NBW_OPS], nord = 0;
	unsigned int i, o, r, k, n;

	drop_caches();
	bw_add_npu("npu_huge_first", NPU_MEM_POLICY_HUGE_FIRST, size);
	bw_add_npu("npu_normal_only", NPU_MEM_POLICY_NORMAL_ONLY, size);
	bw_add_host(size);
	est = bw_warm_up(size, order, &nord);
	n = repeats_for(opt.budget_ns * 2 * nord, est, opt.nmin > 3 ? 11 : 5, 64);
	for (i = 0; i < nbw; i++)
		for (o = 0; o < NBW_OPS; o++)
			t[i][o] = calloc(n, sizeof(uint64_t));
	for (r = 0; r < n; r++) {
		shuffle(order, nord);
		for (k = 0; k < nord; k++) {
			i = order[k] / NBW_OPS;
			o = order[k] % NBW_OPS;
			if (t[i][o])
				t[i][o][r] = bw_pass(bw[i].p, size, o, r + 1);
		}
	}
	bw_collect(t, n, size);
}
