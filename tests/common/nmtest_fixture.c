// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_fixture: the ioctl suites' fixture.  See nmtest_fixture.h.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"
#include "nmtest_fixture.h"

void nm_ctx_init(struct nm_ctx *c, unsigned int opts)
{
	c->opts = opts;
	c->fd = nm_open();
	nm_sentinel_init(&c->s, c->fd);
	c->base = c->s.counters;
	nm_get_info_ok(c->fd, &c->info);
	c->nfds = (opts & NM_CTX_FDS) ? nm_fd_count() : -1;
}

void nm_ctx_resnap(struct nm_ctx *c)
{
	nm_counters(c->fd, &c->s.counters);
}

void _nm_ctx_fini(struct nm_ctx *c, const char *f, int l)
{
	if (c->opts & NM_CTX_FDS) {
		int n = nm_fd_count();

		if (n != c->nfds)
			_ck_assert_failed(f, l, "fds", "%d files open, %d "
					  "after setup", n, c->nfds);
	}
	if (c->opts & NM_CTX_BASE) {
		c->s.counters = c->base;
		nm_sentinel_check(&c->s, f, l);
	}
	nm_sentinel_fini(&c->s);
	close(c->fd);
}

static void tbuf_allocated(struct nm_tbuf *t, struct nm_ctx *c,
			   uint32_t flags)
{
	t->flags = flags;
	t->dfd = -1;
	nm_ctx_resnap(c);
}

void nm_tbuf_alloc(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		   uint32_t policy, uint32_t flags)
{
	nm_alloc_ok(c->fd, size, policy, flags, &t->a);
	tbuf_allocated(t, c, flags);
}

void nm_tbuf_alloc_dev(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		       uint32_t policy, uint32_t flags)
{
	nm_alloc_dev_contig_ok(c->fd, size, policy, flags, &t->a);
	tbuf_allocated(t, c, flags);
}

void nm_tbuf_map(struct nm_tbuf *t, struct nm_ctx *c, uint64_t seed)
{
	t->seed = seed;
	if (t->flags & NPU_MEM_ALLOC_READONLY) {
		t->map = nm_map_ok(c->fd, &t->a, PROT_READ);
		return;
	}
	t->map = nm_map_ok(c->fd, &t->a, PROT_READ | PROT_WRITE);
	nm_fill(t->map, t->a.buf.size, t->seed);
}

void nm_tbuf_free(struct nm_tbuf *t, struct nm_ctx *c)
{
	if (t->dfd >= 0)
		close(t->dfd);
	munmap(t->map, t->a.buf.size);
	nm_free_ok(c->fd, t->a.handle);
	nm_ctx_resnap(c);
}
