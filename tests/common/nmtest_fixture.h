/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_fixture: the fixture the ioctl suites share.  A test opens
 * /dev/npu-mem with a sentinel (nmtest_util.h) in it, checks bad input
 * against it, and at its end proves that what it allocated is gone again.
 * The buffers a test makes for itself (struct nm_tbuf) are mapped and
 * patterned, so that a call that corrupts them shows.
 */
#ifndef NMTEST_FIXTURE_H
#define NMTEST_FIXTURE_H

#include "nmtest_util.h"

enum nm_ctx_opts {
	/* At the end the counters are those with only the sentinel
	 * allocated: every buffer of the test was freed. */
	NM_CTX_BASE = 1 << 0,
	/* At the end as many files are open as after setup: no fd leaked. */
	NM_CTX_FDS = 1 << 1,
};

struct nm_ctx {
	int fd;
	unsigned int opts;
	struct nm_sentinel s;
	struct nm_counters base;	/* with only the sentinel allocated */
	struct npu_mem_info info;	/* GET_INFO after setup */
	int nfds;			/* open fds after setup */
};

void nm_ctx_init(struct nm_ctx *c, unsigned int opts);
/* The test's own buffers are part of what bad input must not disturb. */
void nm_ctx_resnap(struct nm_ctx *c);
#define nm_ctx_fini(c) _nm_ctx_fini((c), __FILE__, __LINE__)
void _nm_ctx_fini(struct nm_ctx *c, const char *f, int l);

/* A buffer of the test's own: mapped (read-only for READONLY buffers) and,
 * when writable, filled with nm_fill(seed); dfd is its dma-buf, if the
 * test exported one to keep with it (-1: none). */
struct nm_tbuf {
	struct npu_mem_alloc a;
	uint32_t flags;			/* as asked of ALLOC */
	uint8_t *map;
	uint64_t seed;
	int dfd;
};

/* Allocate and take the counters again (nm_ctx_resnap). */
void nm_tbuf_alloc(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		   uint32_t policy, uint32_t flags);
/* The same, as one device range where bounce buffers allow
 * (nm_alloc_dev_contig_ok): for tests that address it by offset. */
void nm_tbuf_alloc_dev(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		       uint32_t policy, uint32_t flags);
/* Map t and fill it with seed's pattern. */
void nm_tbuf_map(struct nm_tbuf *t, struct nm_ctx *c, uint64_t seed);
/* Close its dma-buf, unmap, free and take the counters again. */
void nm_tbuf_free(struct nm_tbuf *t, struct nm_ctx *c);

#endif /* NMTEST_FIXTURE_H */
