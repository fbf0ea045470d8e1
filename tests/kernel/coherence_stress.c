// SPDX-License-Identifier: GPL-2.0-only
/*
 * coherence_stress: threads mixing, in random order and on shared buffers,
 * ALLOC, FREE, EXPORT, import into vgem (when vgem can be loaded), vgem
 * re-export and GEM_CLOSE, SYNC, DMA_BUF_IOCTL_SYNC, mmap/munmap of
 * /dev/npu-mem and of dma-bufs, close() of dma-buf fds, and private
 * lifecycles whose holders (handle, /dev/npu-mem file, dma-buf, mappings)
 * are released in random order; for NPU_MEM_STRESS_SECONDS (default 8),
 * then on until every call that must make progress succeeded MIN_PROGRESS
 * times, up to the common ceiling (nm_span: slow is not a failure).
 *  - every call either succeeds or fails the way a race with another
 *    thread allows (ENOENT for a handle freed meanwhile, EINVAL for the
 *    mmap offset of a freed buffer); nothing else;
 *  - every mapping, however obtained, shows the identity stamped into its
 *    buffer (first and last 8 bytes) when the buffer was made;
 *  - at the end, with everything closed, the GET_INFO counters are back to
 *    where they started and no npu_mem dma-buf is left (debugfs bufinfo).
 * Kernel warnings, lockdep reports and leaks fail the vm-run guest.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_vgem.h"

#define RW		(PROT_READ | PROT_WRITE)
#define NSLOTS		12
#define NTHREADS	4
#define POOL		24

static const uint64_t sizes[] = {
	4 * NM_KiB, 12 * NM_KiB, 64 * NM_KiB, NM_2M, NM_2M + 8 * NM_KiB,
};

struct slot {
	pthread_mutex_t lock;
	bool live;
	uint32_t handle;
	uint64_t size, mmap_offset, id;
};

struct dfd_ent { int fd; uint64_t id, size; };
struct map_ent { uint8_t *p; uint64_t id, size; };
struct gem_ent { uint32_t handle; uint64_t id, size; };

static struct {
	int npu, card;			/* card -1: no vgem */
	struct slot slot[NSLOTS];
	pthread_mutex_t lock;		/* the pools */
	struct dfd_ent dfd[POOL];
	int ndfd;
	struct map_ent map[POOL];
	int nmap;
	pthread_mutex_t gem_lock;	/* vgem handles: import/close atomic */
	struct gem_ent gem[POOL];
	int ngem;
	atomic_bool stop;
	atomic_uint_fast64_t next_id;
	atomic_int failures;
	char first_failure[512];
	atomic_uint_fast64_t ops[16];
} S;

static const char *const op_name[] = {
	"alloc", "free", "export", "sync", "mmap-npu", "mmap-dmabuf",
	"dmabuf-sync", "close-dmabuf", "munmap", "vgem-import",
	"vgem-export", "gem-close", "lifecycle", "bad-sync",
};
#define NOPS ((int)NM_ARRAY_SIZE(op_name))

static void stress_fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&S.failures, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(S.first_failure, sizeof(S.first_failure), fmt, ap);
		va_end(ap);
	}
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

/* ret is 0 or one of the allowed -errnos, else a failure */
/*
 * Calls that must succeed many times for the run to mean anything: a
 * driver refusing them all with an allowed errno would otherwise pass.
 */
static const char *const must_progress[] = {
	"ALLOC", "FREE", "EXPORT", "SYNC", "DMA_BUF_IOCTL_SYNC start",
	"DMA_BUF_IOCTL_SYNC end",
};
#define MIN_PROGRESS	20
static atomic_uint_fast64_t progress[NM_ARRAY_SIZE(must_progress)];

static bool allowed(const char *what, int ret, int ok1, int ok2)
{
	if (ret == 0) {
		for (size_t i = 0; i < NM_ARRAY_SIZE(must_progress); i++)
			if (!strcmp(what, must_progress[i]))
				atomic_fetch_add(&progress[i], 1);
		return true;
	}
	if (ret != ok1 && ret != ok2)
		stress_fail("%s: %s", what, nm_retname(ret));
	return false;
}

static void check_stamp(const char *how, const uint8_t *p, uint64_t size,
			uint64_t id)
{
	uint64_t a, b;

	memcpy(&a, p, 8);
	memcpy(&b, p + size - 8, 8);
	if (a != id || b != ~id)
		stress_fail("%s mapping of buffer %llu shows stamps %#llx/%#llx",
		     how, (unsigned long long)id, (unsigned long long)a,
		     (unsigned long long)~b);
}

static uint64_t rnd(uint64_t *st, uint64_t n)
{
	return n ? nm_rand64(st) % n : 0;
}

/* ---- pools -------------------------------------------------------------- */

static bool take_dfd(uint64_t *st, struct dfd_ent *e)
{
	bool got = false;

	pthread_mutex_lock(&S.lock);
	if (S.ndfd) {
		int i = rnd(st, S.ndfd);

		*e = S.dfd[i];
		S.dfd[i] = S.dfd[--S.ndfd];
		got = true;
	}
	pthread_mutex_unlock(&S.lock);
	return got;
}

static void put_dfd(const struct dfd_ent *e)
{
	bool full;

	pthread_mutex_lock(&S.lock);
	full = S.ndfd == POOL;
	if (!full)
		S.dfd[S.ndfd++] = *e;
	pthread_mutex_unlock(&S.lock);
	if (full)
		close(e->fd);
}

static bool take_map(uint64_t *st, struct map_ent *e)
{
	bool got = false;

	pthread_mutex_lock(&S.lock);
	if (S.nmap) {
		int i = rnd(st, S.nmap);

		*e = S.map[i];
		S.map[i] = S.map[--S.nmap];
		got = true;
	}
	pthread_mutex_unlock(&S.lock);
	return got;
}

static void put_map(const struct map_ent *e)
{
	bool full;

	pthread_mutex_lock(&S.lock);
	full = S.nmap == POOL;
	if (!full)
		S.map[S.nmap++] = *e;
	pthread_mutex_unlock(&S.lock);
	if (full)
		munmap(e->p, e->size);
}

static bool slot_info(struct slot *s, struct slot *copy)
{
	bool live;

	pthread_mutex_lock(&s->lock);
	live = s->live;
	*copy = *s;
	pthread_mutex_unlock(&s->lock);
	return live;
}

/* ---- operations ------------------------------------------------------- */

static void op_alloc(uint64_t *st)
{
	struct slot *s = &S.slot[rnd(st, NSLOTS)];
	static const uint32_t pol[] = {
		NPU_MEM_POLICY_NORMAL_ONLY, NPU_MEM_POLICY_HUGE_FIRST,
		NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_POLICY_HUGE_ONLY,
	};
	struct npu_mem_alloc a;
	uint32_t policy = pol[rnd(st, 4)];
	uint64_t size = sizes[rnd(st, NM_ARRAY_SIZE(sizes))];
	uint8_t *p;
	int ret;

	pthread_mutex_lock(&s->lock);
	if (s->live)
		goto out;
	ret = nm_alloc(S.npu, size, policy, 0, &a);
	/* HUGE_ONLY may find no 2 MiB page free */
	if (!allowed("ALLOC", ret, policy == NPU_MEM_POLICY_HUGE_ONLY ?
		     -ENOMEM : 0, 0))
		goto out;
	p = nm_mmap(S.npu, a.buf.mmap_offset, a.buf.size, RW);
	if (p == MAP_FAILED) {
		stress_fail("mmap of a new buffer: %s", nm_errname(errno));
		nm_free(S.npu, a.handle);
		goto out;
	}
	s->id = atomic_fetch_add(&S.next_id, 1);
	memcpy(p, &s->id, 8);
	{
		uint64_t inv = ~s->id;

		memcpy(p + a.buf.size - 8, &inv, 8);
	}
	munmap(p, a.buf.size);
	s->handle = a.handle;
	s->size = a.buf.size;
	s->mmap_offset = a.buf.mmap_offset;
	s->live = true;
out:
	pthread_mutex_unlock(&s->lock);
}

static void op_free(uint64_t *st)
{
	struct slot *s = &S.slot[rnd(st, NSLOTS)];

	pthread_mutex_lock(&s->lock);
	if (s->live) {
		allowed("FREE", nm_free(S.npu, s->handle), 1, 1);
		s->live = false;
	}
	pthread_mutex_unlock(&s->lock);
}

static void op_export(uint64_t *st)
{
	struct slot c;
	struct dfd_ent e;
	int ret;

	if (!slot_info(&S.slot[rnd(st, NSLOTS)], &c))
		return;
	ret = nm_export(S.npu, c.handle, rnd(st, 2) ? O_RDWR | O_CLOEXEC :
			O_RDWR, &e.fd);
	if (!allowed("EXPORT", ret, -ENOENT, 0))
		return;
	e.id = c.id;
	e.size = c.size;
	put_dfd(&e);
}

static void op_sync(uint64_t *st, bool bad)
{
	struct slot c;
	uint64_t off, len;
	int ret;

	if (!slot_info(&S.slot[rnd(st, NSLOTS)], &c))
		return;
	off = rnd(st, c.size);
	len = 1 + rnd(st, c.size - off);
	if (bad)
		len = c.size - off + 1 + rnd(st, NM_4K);
	ret = nm_sync(S.npu, c.handle, 1 + rnd(st, 3), off, len);
	if (!bad)
		allowed("SYNC", ret, -ENOENT, 0);
	else if (ret != -EINVAL && ret != -ENOENT)	/* ENOENT: raced FREE */
		stress_fail("SYNC past the end: %s, want -EINVAL", nm_retname(ret));
}

static void op_mmap_npu(uint64_t *st)
{
	struct slot c;
	struct map_ent m;

	if (!slot_info(&S.slot[rnd(st, NSLOTS)], &c))
		return;
	m.p = nm_mmap(S.npu, c.mmap_offset, c.size, RW);
	if (m.p == MAP_FAILED) {
		allowed("mmap /dev/npu-mem", -errno, -EINVAL, 0);
		return;
	}
	check_stamp("npu-mem", m.p, c.size, c.id);
	m.id = c.id;
	m.size = c.size;
	put_map(&m);
}

static void op_mmap_dmabuf(uint64_t *st)
{
	struct dfd_ent e;
	struct map_ent m;

	if (!take_dfd(st, &e))
		return;
	m.p = mmap(NULL, e.size, RW, MAP_SHARED, e.fd, 0);
	if (m.p == MAP_FAILED) {
		stress_fail("mmap dma-buf of buffer %llu: %s",
		     (unsigned long long)e.id, nm_errname(errno));
	} else {
		check_stamp("dma-buf", m.p, e.size, e.id);
		m.id = e.id;
		m.size = e.size;
		put_map(&m);
	}
	put_dfd(&e);
}

static void op_dmabuf_sync(uint64_t *st)
{
	static const uint64_t dir[] = {
		DMA_BUF_SYNC_READ, DMA_BUF_SYNC_WRITE, DMA_BUF_SYNC_RW,
	};
	struct dfd_ent e;
	uint64_t d = dir[rnd(st, 3)];

	if (!take_dfd(st, &e))
		return;
	allowed("DMA_BUF_IOCTL_SYNC start",
		nm_dmabuf_sync(e.fd, DMA_BUF_SYNC_START | d), 1, 1);
	allowed("DMA_BUF_IOCTL_SYNC end",
		nm_dmabuf_sync(e.fd, DMA_BUF_SYNC_END | d), 1, 1);
	put_dfd(&e);
}

static void op_close_dmabuf(uint64_t *st)
{
	struct dfd_ent e;

	if (take_dfd(st, &e) && close(e.fd))
		stress_fail("close dma-buf: %s", nm_errname(errno));
}

static void op_munmap(uint64_t *st)
{
	struct map_ent m;

	if (!take_map(st, &m))
		return;
	check_stamp("pooled", m.p, m.size, m.id);
	/* scribble between the stamps: nobody checks those bytes */
	if (m.size > 16)
		memset(m.p + 8 + rnd(st, m.size - 16), 0x5a, 1);
	if (rnd(st, 4))
		munmap(m.p, m.size);
	else
		put_map(&m);
}

static void op_vgem_import(uint64_t *st)
{
	struct dfd_ent e;
	uint32_t h;
	bool dup = false;
	int ret;

	if (S.card < 0 || !take_dfd(st, &e))
		return;
	pthread_mutex_lock(&S.gem_lock);
	ret = nm_vgem_import(S.card, e.fd, &h);
	if (allowed("drmPrimeFDToHandle", ret, 1, 1)) {
		for (int i = 0; i < S.ngem; i++)
			dup |= S.gem[i].handle == h;
		if (dup) {
			/* the prime cache: same dma-buf, same object */
		} else if (S.ngem < POOL) {
			S.gem[S.ngem++] = (struct gem_ent){ h, e.id, e.size };
		} else {
			allowed("GEM_CLOSE", nm_gem_close(S.card, h), 1, 1);
		}
	}
	pthread_mutex_unlock(&S.gem_lock);
	put_dfd(&e);
}

static void op_vgem_export(uint64_t *st)
{
	struct dfd_ent e;
	int ret = 1;

	if (S.card < 0)
		return;
	pthread_mutex_lock(&S.gem_lock);
	if (S.ngem) {
		struct gem_ent *g = &S.gem[rnd(st, S.ngem)];

		ret = nm_vgem_export(S.card, g->handle, &e.fd);
		e.id = g->id;
		e.size = g->size;
	}
	pthread_mutex_unlock(&S.gem_lock);
	if (ret == 1 || !allowed("drmPrimeHandleToFD", ret, 1, 1))
		return;
	put_dfd(&e);
}

static void op_gem_close(uint64_t *st)
{
	if (S.card < 0)
		return;
	pthread_mutex_lock(&S.gem_lock);
	if (S.ngem) {
		int i = rnd(st, S.ngem);

		allowed("GEM_CLOSE", nm_gem_close(S.card, S.gem[i].handle),
			1, 1);
		S.gem[i] = S.gem[--S.ngem];
	}
	pthread_mutex_unlock(&S.gem_lock);
}

/* A private buffer and its holders, released in a random order. */
static void op_lifecycle(uint64_t *st)
{
	struct npu_mem_alloc a;
	uint8_t *npu, *dm;
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC), dfd, order[4] = {
		0, 1, 2, 3 };
	uint64_t id = atomic_fetch_add(&S.next_id, 1), inv = ~id;

	if (fd < 0) {
		stress_fail("open: %s", nm_errname(errno));
		return;
	}
	if (!allowed("ALLOC", nm_alloc(fd, sizes[rnd(st, NM_ARRAY_SIZE(sizes))],
				       NPU_MEM_POLICY_HUGE_FIRST, 0, &a), 1, 1))
		goto out_fd;
	npu = nm_mmap(fd, a.buf.mmap_offset, a.buf.size, RW);
	if (npu == MAP_FAILED) {
		stress_fail("lifecycle mmap: %s", nm_errname(errno));
		goto out_fd;
	}
	memcpy(npu, &id, 8);
	memcpy(npu + a.buf.size - 8, &inv, 8);
	if (!allowed("EXPORT", nm_export(fd, a.handle, O_RDWR | O_CLOEXEC,
					 &dfd), 1, 1)) {
		munmap(npu, a.buf.size);
		goto out_fd;
	}
	dm = mmap(NULL, a.buf.size, RW, MAP_SHARED, dfd, 0);
	if (dm == MAP_FAILED) {
		stress_fail("lifecycle dma-buf mmap: %s", nm_errname(errno));
		dm = NULL;
	} else {
		check_stamp("lifecycle dma-buf", dm, a.buf.size, id);
	}
	if (S.card >= 0 && rnd(st, 2)) {
		uint32_t h;

		/* vgem holds it for a moment, and lets go */
		pthread_mutex_lock(&S.gem_lock);
		if (allowed("drmPrimeFDToHandle",
			    nm_vgem_import(S.card, dfd, &h), 1, 1)) {
			bool shared = false;

			for (int i = 0; i < S.ngem; i++)
				shared |= S.gem[i].handle == h;
			if (!shared)
				allowed("GEM_CLOSE", nm_gem_close(S.card, h),
					1, 1);
		}
		pthread_mutex_unlock(&S.gem_lock);
	}
	for (int i = 3; i > 0; i--) {
		int j = rnd(st, i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (int k = 0; k < 4; k++) {
		switch (order[k]) {
		case 0:
			if (rnd(st, 2))
				allowed("FREE", nm_free(fd, a.handle), 1, 1);
			close(fd);
			fd = -1;
			break;
		case 1:
			check_stamp("lifecycle npu-mem", npu, a.buf.size, id);
			munmap(npu, a.buf.size);
			break;
		case 2:
			close(dfd);
			break;
		case 3:
			if (dm) {
				check_stamp("lifecycle dma-buf", dm, a.buf.size,
					    id);
				munmap(dm, a.buf.size);
			}
			break;
		}
	}
out_fd:
	if (fd >= 0)
		close(fd);
}

static void *worker(void *arg)
{
	uint64_t st = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL ^ getpid();

	while (!atomic_load(&S.stop)) {
		int op = rnd(&st, NOPS);

		switch (op) {
		case 0: op_alloc(&st); break;
		case 1: op_free(&st); break;
		case 2: op_export(&st); break;
		case 3: op_sync(&st, false); break;
		case 4: op_mmap_npu(&st); break;
		case 5: op_mmap_dmabuf(&st); break;
		case 6: op_dmabuf_sync(&st); break;
		case 7: op_close_dmabuf(&st); break;
		case 8: op_munmap(&st); break;
		case 9: op_vgem_import(&st); break;
		case 10: op_vgem_export(&st); break;
		case 11: op_gem_close(&st); break;
		case 12: if (!rnd(&st, 4)) op_lifecycle(&st); break;
		case 13: op_sync(&st, true); break;
		}
		atomic_fetch_add(&S.ops[op], 1);
	}
	return NULL;
}

static bool progress_enough(void)
{
	for (size_t i = 0; i < NM_ARRAY_SIZE(must_progress); i++)
		if (atomic_load(&progress[i]) < MIN_PROGRESS)
			return false;
	return true;
}

START_TEST(stress)
{
	uint64_t secs = nm_env_u64("NPU_MEM_STRESS_SECONDS", 8);
	struct nm_span span;
	struct nm_counters start, now;
	pthread_t th[NTHREADS];
	int obs = nm_open(), npu_bufs0 = nm_bufinfo_count_npu(), npu_bufs;

	memset(&S, 0, sizeof(S));
	pthread_mutex_init(&S.lock, NULL);
	pthread_mutex_init(&S.gem_lock, NULL);
	for (int i = 0; i < NSLOTS; i++)
		pthread_mutex_init(&S.slot[i].lock, NULL);
	atomic_store(&S.next_id, 1);
	nm_counters(obs, &start);
	S.npu = nm_open();
	S.card = nm_vgem_find();
	printf("%llu s, %d threads, %d buffer slots, vgem %s\n",
	       (unsigned long long)secs, NTHREADS, NSLOTS,
	       S.card >= 0 ? "imports too" : "not available");

	nm_span_start(&span, (double)secs);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		ck_assert(pthread_create(&th[i], NULL, worker,
					 (void *)(i + 1)) == 0);
	while (nm_span_more(&span, progress_enough()) &&
	       !atomic_load(&S.failures))
		usleep(50000);
	atomic_store(&S.stop, true);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);

	printf("%.1f s\n", nm_span_secs(&span));
	for (int i = 0; i < NOPS; i++)
		printf("%-12s %llu\n", op_name[i],
		       (unsigned long long)atomic_load(&S.ops[i]));
	printf("left: %d dma-buf fds, %d mappings, %d vgem handles\n", S.ndfd,
	       S.nmap, S.ngem);

	/* while things are still held, the buffers are still counted */
	nm_counters(obs, &now);
	ck_assert_uint_ge(now.buffers, start.buffers);

	/* let go of everything, in one more mixed order */
	for (int i = 0; i < S.nmap; i++) {
		check_stamp("final", S.map[i].p, S.map[i].size, S.map[i].id);
		munmap(S.map[i].p, S.map[i].size);
	}
	for (int i = 0; i < S.ngem; i++)
		allowed("GEM_CLOSE", nm_gem_close(S.card, S.gem[i].handle), 1, 1);
	for (int i = 0; i < NSLOTS; i++)
		if (S.slot[i].live)
			allowed("FREE", nm_free(S.npu, S.slot[i].handle), 1, 1);
	close(S.npu);
	if (S.card >= 0)
		close(S.card);
	for (int i = 0; i < S.ndfd; i++)
		close(S.dfd[i].fd);

	ck_assert_msg(!atomic_load(&S.failures), "%d failures; first: %s",
		      atomic_load(&S.failures), S.first_failure);
	for (size_t i = 0; i < NM_ARRAY_SIZE(must_progress); i++) {
		uint64_t n = atomic_load(&progress[i]);

		printf("%-20s %llu succeeded\n", must_progress[i],
		       (unsigned long long)n);
		ck_assert_msg(n >= MIN_PROGRESS, "only %llu successful %s "
			      "calls in %.0f s, the ceiling",
			      (unsigned long long)n, must_progress[i],
			      nm_span_secs(&span));
	}
	nm_counters(obs, &now);
	nm_assert_counters_eq(&start, &now);
	npu_bufs = nm_bufinfo_count_npu();
	if (npu_bufs0 >= 0)
		ck_assert_msg(npu_bufs == npu_bufs0, "%d npu_mem dma-bufs in "
			      "bufinfo, %d before", npu_bufs, npu_bufs0);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("coherence_stress");
	char why[512];

	nm_require_device();
	/* vgem is optional here: say so, and stress without it */
	if (nm_vgem_ensure(why, sizeof(why)))
		printf("no vgem imports: %s\n", why);
	nm_add(s, stress,
	       nm_span_ceiling((double)nm_env_u64("NPU_MEM_STRESS_SECONDS", 8)) +
	       120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
