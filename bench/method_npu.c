// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu-mem's own rows: NPU_MEM_IOCTL_ALLOC with a policy, mmap, first touch,
 * munmap, NPU_MEM_IOCTL_FREE, each step timed (the phases table) and the
 * page mix the driver chose kept (the "pages" notes).
 *
 * The zero reserve's rows (kernel/reserve.c, doc/reserve.md) are the same
 * HUGE_FIRST cycle with the reserve set up, untimed, before it: warm (full
 * with the buffer's chunks, and no refill behind the ALLOC), cold (on, but
 * empty: FREE recycles into it) and a loop (a cycle right after another of
 * the same size, as a runtime allocates: whatever the thread zeroed of the
 * first one's chunks meanwhile).  Every cycle leaves the reserve off and
 * empty, so the other rows, in the same rounds, run without it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

const char *const phase_names[NPHASES] = {
	"ALLOC ioctl", "mmap", "touch", "munmap", "FREE ioctl",
};

enum reserve_use { RES_NONE, RES_WARM, RES_COLD, RES_LOOP };

/* What one npu-mem row asks of the driver. */
struct npu_method {
	uint32_t policy;
	int map_flags;		/* mmap flags besides MAP_SHARED */
	enum reserve_use reserve;
};

/* The reserve's rows start here: below, a few chunks say little. */
#define RESERVE_MIN	(16 * MiB)
#define RESERVE_WAIT_NS	300000000000ULL

/* The watermarks, MiB per node, low set last (a high under it is low). */
static int reserve_set(uint64_t low_mb, uint64_t high_mb)
{
	int ret = nm_param_set("zero_reserve_low_mb", 0);

	if (!ret)
		ret = nm_param_set("zero_reserve_high_mb", high_mb);
	if (!ret)
		ret = nm_param_set("zero_reserve_low_mb", low_mb);
	return ret;
}

/*
 * Does the reserve hold @want bytes, all zeroed?  GET_INFO counts chunks
 * being zeroed too, debugfs (where mounted) only those that are ready:
 * until both agree, the thread may still be zeroing beside the cycle.
 */
static bool reserve_at(uint64_t want)
{
	struct npu_mem_info info;
	uint64_t ready;

	memset(&info, 0, sizeof(info));
	if (ioctl(npu_fd, NPU_MEM_IOCTL_GET_INFO, &info) ||
	    info.zero_reserve_bytes != want)
		return false;
	return nm_kv_file("/sys/kernel/debug/npu_mem/usage",
			  "zero_reserve_ready_bytes", &ready) || ready == want;
}

static int reserve_await(uint64_t want)
{
	uint64_t t0 = now_ns();

	while (!reserve_at(want)) {
		if (now_ns() - t0 > RESERVE_WAIT_NS)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

/*
 * The watermarks hold per node, and the thread fills every node with
 * memory: a reserve set to @bytes holds that many times the nodes.
 */
static uint64_t reserve_full(uint64_t bytes)
{
	cpu_set_t nodes;

	if (read_sysfs_list("/sys/devices/system/node/has_memory", &nodes))
		return bytes;
	return bytes * CPU_COUNT(&nodes);
}

static int reserve_off(void)
{
	int ret = reserve_set(0, 0);

	return ret ? ret : reserve_await(0);
}

static int npu_cycle(struct method *m, uint64_t size, struct sample *s);

/* The reserve as the row wants it before the timed cycle. */
static int reserve_before(struct method *m, enum reserve_use use,
			  uint64_t size)
{
	uint64_t mb = (size + HUGE - 1) / HUGE * HUGE / MiB;
	int ret = reserve_off();

	if (ret)
		return ret;
	switch (use) {
	case RES_WARM:
		ret = reserve_set(mb, mb);
		if (!ret)
			ret = reserve_await(reserve_full(size / HUGE * HUGE));
		/* Full: now no refill may run beside the timed cycle. */
		if (!ret)
			ret = reserve_set(0, mb);
		return ret;
	case RES_COLD:
		return reserve_set(0, mb);
	case RES_LOOP: {
		struct sample first;

		ret = reserve_set(0, mb);
		return ret ? ret : npu_cycle(m, size, &first);
	}
	default:
		return 0;
	}
}

/* The watermarks' parameters exist and may be written (root). */
static int reserve_setup(struct method *m)
{
	if (npu_fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/npu-mem");
		return -ENODEV;
	}
	if (reserve_off()) {
		snprintf(m->na, sizeof(m->na),
			 "no zero reserve to set (module or permissions)");
		return -ENOTSUP;
	}
	return 0;
}

static int reserve_prepare(struct method *m, uint64_t size)
{
	if (size < RESERVE_MIN) {
		snprintf(m->na, sizeof(m->na), "reserve rows from 16 MiB");
		return -ENOTSUP;
	}
	return 0;
}

static int npu_setup(struct method *m)
{
	if (npu_fd < 0) {
		snprintf(m->na, sizeof(m->na), "no /dev/npu-mem");
		return -ENODEV;
	}
	return 0;
}

static int npu_cycle(struct method *m, uint64_t size, struct sample *s)
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

static int npu_once(struct method *m, uint64_t size, struct sample *s)
{
	struct npu_method *nm = m->priv;
	int ret;

	if (nm->reserve == RES_NONE)
		return npu_cycle(m, size, s);
	ret = reserve_before(m, nm->reserve, size);
	if (!ret)
		ret = npu_cycle(m, size, s);
	if (!ret)
		ret = reserve_off();
	else
		reserve_off();
	return ret;
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

static struct npu_method npu_warm = {
	.policy = NPU_MEM_POLICY_HUGE_FIRST, .reserve = RES_WARM,
};
static struct npu_method npu_cold = {
	.policy = NPU_MEM_POLICY_HUGE_FIRST, .reserve = RES_COLD,
};
static struct npu_method npu_loop = {
	.policy = NPU_MEM_POLICY_HUGE_FIRST, .reserve = RES_LOOP,
};

struct method method_npu_warm = {
	.key = "npu_hf_reserve_warm",
	.label = "npu-mem HUGE_FIRST, warm reserve",
	.setup = reserve_setup,
	.prepare = reserve_prepare,
	.once = npu_once,
	.priv = &npu_warm,
};

struct method method_npu_cold = {
	.key = "npu_hf_reserve_cold",
	.label = "npu-mem HUGE_FIRST, cold reserve",
	.setup = reserve_setup,
	.prepare = reserve_prepare,
	.once = npu_once,
	.priv = &npu_cold,
};

struct method method_npu_loop = {
	.key = "npu_hf_reserve_loop",
	.label = "npu-mem HUGE_FIRST, alloc-free loop",
	.setup = reserve_setup,
	.prepare = reserve_prepare,
	.once = npu_once,
	.priv = &npu_loop,
};

/* The refill thread's CPU time so far, ns (0 when not found). */
static uint64_t zero_thread_cpu_ns(void)
{
	DIR *d = opendir("/proc");
	uint64_t ns = 0;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		unsigned long ut, st;
		char path[300], *text, *p;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		text = nm_read_file(path);
		p = text ? strrchr(text, ')') : NULL;
		if (text && strstr(text, "(npu_mem_zero)") && p &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			   &ut, &st) == 2)
			ns = (uint64_t)(ut + st) * 1000000000ULL /
			     (uint64_t)sysconf(_SC_CLK_TCK);
		free(text);
		if (ns)
			break;
	}
	if (d)
		closedir(d);
	return ns;
}

/*
 * How fast the thread fills an empty reserve of @size, all nodes together
 * (each node's share of it), and its CPU time for it: 0, or -errno with
 * the reserve left off.
 */
int reserve_refill_rate(uint64_t size, double *gib_s, double *cpu_s)
{
	uint64_t t0, c0, node;
	int ret;

	node = size / reserve_full(1) / HUGE * HUGE;
	ret = reserve_off();
	if (ret)
		return ret;
	c0 = zero_thread_cpu_ns();
	t0 = now_ns();
	ret = reserve_set(node / MiB, node / MiB);
	if (!ret)
		ret = reserve_await(reserve_full(node));
	*gib_s = (double)reserve_full(node) / GiB / ((now_ns() - t0) / 1e9);
	*cpu_s = (zero_thread_cpu_ns() - c0) / 1e9;
	reserve_off();
	return ret;
}
