// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu-mem's own rows: NPU_MEM_IOCTL_ALLOC with a policy, mmap, first touch,
 * munmap, NPU_MEM_IOCTL_FREE, each step timed (the phases table) and the
 * page mix the driver chose kept (the "pages" notes).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

const char *const phase_names[NPHASES] = {
	"ALLOC ioctl", "mmap", "touch", "munmap", "FREE ioctl",
};

/* What one npu-mem row asks of the driver. */
struct npu_method {
	uint32_t policy;
	int map_flags;		/* mmap flags besides MAP_SHARED */
};

static int npu_setup(struct method *m)
{
	if (npu_fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/npu-mem");
		return -ENODEV;
	}
	return 0;
}

static int npu_once(struct method *m, uint64_t size, struct sample *s)
{
	uint64_t t[NPHASES + 1];
	struct npu_method *nm = m->priv;
	struct npu_mem_alloc a;
	unsigned int i;
	void *p;
	int ret;

	if (m->trace)
		trace_begin("bench: %s cycle of %llu bytes", m->key,
			    (unsigned long long)size);
	t[0] = now_ns();
	ret = npu_alloc(npu_fd, size, nm->policy, &a);
	if (ret) {
		trace_end();
		return ret;
	}
	t[1] = now_ns();
	p = mmap(NULL, a.buf.size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | nm->map_flags, npu_fd, a.buf.mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		npu_free(npu_fd, a.handle);
		return ret;
	}
	t[2] = now_ns();
	touch(p, size);
	t[3] = now_ns();
	munmap(p, a.buf.size);
	t[4] = now_ns();
	npu_free(npu_fd, a.handle);
	t[5] = now_ns();
	if (m->trace)
		trace_end();
	s->get = t[3] - t[0];
	s->rel = t[5] - t[3];
	for (i = 0; i < NPHASES; i++)
		s->phase[i] = t[i + 1] - t[i];
	s->huge = a.buf.huge_pages;
	s->normal = a.buf.normal_pages;
	return 0;
}

static struct npu_method npu_hf = { .policy = NPU_MEM_POLICY_HUGE_FIRST };
static struct npu_method npu_hf_pop = {
	.policy = NPU_MEM_POLICY_HUGE_FIRST, .map_flags = MAP_POPULATE,
};
static struct npu_method npu_ho = { .policy = NPU_MEM_POLICY_HUGE_ONLY };
static struct npu_method npu_no = { .policy = NPU_MEM_POLICY_NORMAL_ONLY };

struct method method_npu_hf = {
	.key = "npu_huge_first",
	.label = "npu-mem ioctl HUGE_FIRST",
	.setup = npu_setup,
	.once = npu_once,
	.priv = &npu_hf,
};

/* The same with the mapping made at mmap rather than at first touch. */
struct method method_npu_hf_pop = {
	.key = "npu_huge_first_populate",
	.label = "npu-mem HUGE_FIRST, populate",
	.setup = npu_setup,
	.once = npu_once,
	.priv = &npu_hf_pop,
};

struct method method_npu_ho = {
	.key = "npu_huge_only",
	.label = "npu-mem ioctl HUGE_ONLY",
	.setup = npu_setup,
	.once = npu_once,
	.priv = &npu_ho,
};

struct method method_npu_no = {
	.key = "npu_normal_only",
	.label = "npu-mem ioctl NORMAL_ONLY",
	.setup = npu_setup,
	.once = npu_once,
	.priv = &npu_no,
};
