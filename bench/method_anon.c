// SPDX-License-Identifier: GPL-2.0-only
/*
 * Anonymous memory, as a program pins it without a driver: MAP_POPULATE +
 * mlock with the system's THP mode and with THP off, hugetlb pages
 * reserved beforehand, and THP on request (MADV_HUGEPAGE).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "bench.h"

/* The first row's label names the system's THP mode. */
static char anon_label[64];

static int anon_setup(struct method *m)
{
	(void)m;
	snprintf(anon_label, sizeof(anon_label), "mmap POPULATE+mlock, THP %s",
		 thp_mode);
	return 0;
}

/*
 * mmap(MAP_ANONYMOUS | MAP_POPULATE | @flags) + mlock of @len bytes, @size
 * of them touched: the usual pinned host memory.
 */
static int pinned_cycle(uint64_t len, uint64_t size, int flags,
			struct sample *s)
{
	uint64_t t0, t1, t2;
	void *p;

	t0 = now_ns();
	p = map_anon(len, MAP_POPULATE | flags);
	if (!p)
		return -errno;
	if (mlock(p, len)) {
		int ret = -errno;

		munmap(p, len);
		return ret;
	}
	touch(p, size);
	t1 = now_ns();
	munmap(p, len);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

static int anon_cycle(uint64_t size, struct sample *s)
{
	return pinned_cycle(size, size, 0, s);
}

static int anon_once(struct method *m, uint64_t size, struct sample *s)
{
	(void)m;
	return anon_cycle(size, s);
}

/* The same with THP off for this process, whatever the system setting. */
static int anon4k_once(struct method *m, uint64_t size, struct sample *s)
{
	int ret;

	(void)m;
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		return -errno;
	ret = anon_cycle(size, s);
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	return ret;
}

struct hugetlb_method {
	long saved;		/* huge pages reserved before the run */
};

static int hugetlb_setup(struct method *m)
{
	struct hugetlb_method *hm = m->priv;

	hm->saved = hugetlb_count();
	if (hm->saved < 0) {
		snprintf(m->na, sizeof(m->na), "no hugetlb");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Reserve the huge pages for this size (untimed), as a user would. */
static int hugetlb_prepare(struct method *m, uint64_t size)
{
	struct hugetlb_method *hm = m->priv;
	long want = hm->saved + (long)((size + HUGE - 1) / HUGE);

	if (hugetlb_reserve(want) < want) {
		snprintf(m->na, sizeof(m->na), "cannot reserve %ld huge pages",
			 want);
		return -ENOMEM;
	}
	return 0;
}

static void hugetlb_finish(struct method *m)
{
	struct hugetlb_method *hm = m->priv;

	hugetlb_reserve(hm->saved);
}

static int hugetlb_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t len = (size + HUGE - 1) & ~(HUGE - 1);

	(void)m;
	return pinned_cycle(len, size, MAP_HUGETLB, s);
}

static int thp_setup(struct method *m)
{
	if (!strcmp(thp_mode, "never") || !strcmp(thp_mode, "unknown")) {
		snprintf(m->na, sizeof(m->na), "THP %s", thp_mode);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* THP on request: madvise(MADV_HUGEPAGE), fault in by touching, mlock. */
static int thp_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t0, t1, t2;
	void *p;
	int ret;

	(void)m;
	t0 = now_ns();
	p = map_anon_aligned(size);
	if (!p)
		return -errno;
	if (madvise(p, size, MADV_HUGEPAGE))
		goto fail;
	touch(p, size);
	if (mlock(p, size))
		goto fail;
	t1 = now_ns();
	munmap(p, size);
	t2 = now_ns();
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
fail:
	ret = -errno;
	munmap(p, size);
	return ret;
}

struct method method_anon = {
	.key = "anon_populate_mlock",
	.label = anon_label,
	.setup = anon_setup,
	.once = anon_once,
	.alternative = true,
};

struct method method_anon4k = {
	.key = "anon_populate_mlock_4k",
	.label = "mmap POPULATE+mlock, THP off",
	.once = anon4k_once,
	.alternative = true,
};

static struct hugetlb_method hugetlb;

struct method method_hugetlb = {
	.key = "hugetlb",
	.label = "mmap HUGETLB POPULATE+mlock",
	.setup = hugetlb_setup,
	.prepare = hugetlb_prepare,
	.once = hugetlb_once,
	.finish = hugetlb_finish,
	.priv = &hugetlb,
	.alternative = true,
};

struct method method_thp = {
	.key = "thp_madvise",
	.label = "THP madvise+touch+mlock",
	.setup = thp_setup,
	.once = thp_once,
	.alternative = true,
};
