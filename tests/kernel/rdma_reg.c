// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdma_reg: npu-mem buffers registered as RDMA memory regions, used by
 * another process.
 *
 * RDMA registration (ibv_reg_mr -> ib_umem_get()) pins the pages of a user
 * range long-term (FOLL_LONGTERM | FOLL_WRITE), through whatever maps it:
 * for npu-mem the PMDs of 2 MiB chunks, the PTEs of 4 KiB pages and tails.
 * The RDMA engine then reads and writes those pages for a peer.  Here the
 * engine is soft-RoCE (rdma_rxe, which copies through the pinned pages with
 * the CPU) on one device, and the peer is another process: the test process
 * owns the npu-mem buffer and its MR, a forked peer opens its own device
 * context, PD, CQ and RC QP, learns the owner's QP, address and rkey over a
 * socketpair and runs RDMA WRITEs and READs against it (rxe's loopback path
 * carries them: nmtest_rdma.h says why one device).  Both sides keep a
 * model of what the MR must hold and check every byte.  Checked:
 *  - HUGE_FIRST (8 MiB + 12 KiB tail), HUGE_ONLY (8 MiB), NORMAL_ONLY
 *    (1 MiB + 4 KiB): the whole mapping registered, a WRITE at odd offsets
 *    across the 2 MiB boundaries and into the tail, a READ of everything,
 *    and the chunks still mapped by PMD (FilePmdMapped) afterwards;
 *  - the MR outliving its buffer's handle and mapping: FREE then munmap,
 *    close() of the npu-mem file, exit of the process that registered it.
 *    The MR's pins keep the pages, so RDMA through it still moves the right
 *    bytes; the memory stays counted (GET_INFO's allocated_bytes and
 *    retained_bytes) until the MR is gone (on 5.10, until the QP that
 *    used it goes too), then GET_INFO and /proc/meminfo FilePmdMapped are
 *    back at their baseline;
 *  - dma-bufs: rxe has no dma-buf MRs (ibv_reg_dmabuf_mr, and the kernel's
 *    uverbs method under it, refuse with the errno each kernel gives), and
 *    the address path - ibv_reg_mr of the dma-buf's own mmap - works.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef NM_HAVE_IBVERBS
#include "nmtest_rdma.h"
#endif
#include "nmtest_dmabuf.h"
#include "nmtest_util.h"

#define RW		(PROT_READ | PROT_WRITE)

/* Everything up to the #else needs libibverbs (not in the arm64 sysroot). */
#ifdef NM_HAVE_IBVERBS

/* FilePmdMapped of /proc/self/smaps over [addr, addr + len), kB; no asserts */
static uint64_t pmd_kb(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, e = a + len;
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	uint64_t sum = 0;
	bool in = false;

	if (!f)
		return UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, t;
		unsigned long long v;
		char *sp = strchr(line, ' '), *dash = strchr(line, '-');

		if (sp && dash && dash < sp &&
		    sscanf(line, "%lx-%lx ", &s, &t) == 2)
			in = s < e && t > a;
		else if (in && sscanf(line, "FilePmdMapped: %llu", &v) == 1)
			sum += v;
	}
	fclose(f);
	return sum;
}

static uint64_t meminfo_pmd_kb(void)
{
	uint64_t v = 0;
	int ret = nm_meminfo_kb("FilePmdMapped", &v);

	ck_assert_msg(ret == 0, "FilePmdMapped in /proc/meminfo: %s",
		      nm_retname(ret));
	return v;
}

/*
 * Byte o of pattern `seed` is byte o % 8 of a word that depends on o / 8:
 * any byte range of it can be recreated from (seed, offset) alone, so both
 * processes can know what an RDMA transfer must have put where.
 */
static uint64_t pat_word(uint64_t seed, uint64_t idx)
{
	uint64_t z = seed + (idx + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	return z ^ (z >> 31);
}

static void pat_fill(uint8_t *p, size_t len, uint64_t seed, uint64_t base)
{
	uint64_t w = pat_word(seed, base / 8);

	for (size_t i = 0; i < len; i++) {
		uint64_t o = base + i;

		if (o % 8 == 0)
			w = pat_word(seed, o / 8);
		p[i] = w >> (8 * (o % 8));
	}
}

/* ---------------------------------------------------------------- */

#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define ANON		UINT32_MAX	/* "policy" of plain anonymous memory */
#define OP_TIMEOUT	120.0

/*
 * One process's end: its verbs objects, its registered buffer and what
 * that must hold (self), and a model of the peer's MR (remote) as its own
 * WRITEs changed it.  Used by the test process and by the forked peer, so
 * nothing here asserts: 0 or -errno, with the reason in why.
 */
struct side {
	struct nm_rdma r;
	struct ibv_qp *qp;
	int fd;				/* npu-mem, or -1 */
	struct npu_mem_alloc a;
	uint8_t *p;			/* the registered range */
	size_t size;
	struct ibv_mr *mr;
	uint8_t *self;
	uint8_t *remote;
	uint64_t rbase;
	size_t rsize;
	uint32_t rkey;
	char why[256];
};

static int side_fail(struct side *s, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int side_fail(struct side *s, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	return ret;
}

static int side_rdma(struct side *s)
{
	const char *what;
	int ret = nm_rdma_open(&s->r, 16, &what);

	if (ret)
		return side_fail(s, ret, "%s: %s", what, nm_retname(ret));
	s->qp = nm_rdma_qp(&s->r);
	if (!s->qp)
		return side_fail(s, -errno, "ibv_create_qp: %s",
				 nm_errname(errno));
	return 0;
}

static int side_connect(struct side *s, uint32_t qpn, const uint8_t gid[16])
{
	union ibv_gid g;
	int ret;

	memcpy(g.raw, gid, 16);
	ret = nm_rdma_connect(&s->r, s->qp, qpn, &g);
	if (ret)
		return side_fail(s, ret, "QP %u to RTS towards QP %u: %s",
				 s->qp->qp_num, qpn, nm_retname(ret));
	return 0;
}

/*
 * A buffer of `size` (npu-mem of `policy`, or anonymous memory), mapped
 * with mmap(NULL), filled with pattern `seed`, registered whole.
 */
static int side_buf(struct side *s, size_t size, uint32_t policy,
		    uint64_t seed)
{
	int ret;

	s->fd = -1;
	if (policy == ANON) {
		s->size = size;
		s->p = mmap(NULL, size, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			    0);
	} else {
		s->fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (s->fd < 0)
			return side_fail(s, -errno, "open: %s",
					 nm_errname(errno));
		ret = nm_alloc(s->fd, size, policy, 0, &s->a);
		if (ret)
			return side_fail(s, ret, "ALLOC %zu %s: %s", size,
					 nm_policy_name(policy),
					 nm_retname(ret));
		s->size = s->a.buf.size;
		s->p = mmap(NULL, s->size, RW, MAP_SHARED, s->fd,
			    s->a.buf.mmap_offset);
	}
	if (s->p == MAP_FAILED) {
		s->p = NULL;
		return side_fail(s, -errno, "mmap: %s", nm_errname(errno));
	}
	s->self = malloc(s->size);
	if (!s->self)
		return side_fail(s, -ENOMEM, "malloc");
	pat_fill(s->self, s->size, seed, 0);
	memcpy(s->p, s->self, s->size);
	s->mr = ibv_reg_mr(s->r.pd, s->p, s->size, ACCESS);
	if (!s->mr)
		return side_fail(s, -errno, "ibv_reg_mr of %zu bytes (%s) at "
				 "%p: %s", s->size, policy == ANON ? "anon" :
				 nm_policy_name(policy), s->p,
				 nm_errname(errno));
	return 0;
}

/* The peer's MR at rbase: size bytes of pattern seed, key rkey */
static int side_model(struct side *s, uint64_t rbase, size_t size,
		      uint64_t seed, uint32_t rkey)
{
	free(s->remote);
	s->remote = malloc(size);
	if (!s->remote)
		return side_fail(s, -ENOMEM, "malloc");
	pat_fill(s->remote, size, seed, 0);
	s->rbase = rbase;
	s->rsize = size;
	s->rkey = rkey;
	return 0;
}

/* First offset where p and want differ, or SIZE_MAX */
static size_t first_diff(const uint8_t *p, const uint8_t *want, size_t len)
{
	if (!memcmp(p, want, len))
		return SIZE_MAX;
	for (size_t i = 0; i < len; i++)
		if (p[i] != want[i])
			return i;
	return SIZE_MAX;
}

/*
 * RDMA WRITE of our [lo, lo + len), filled with pattern seed (at its own
 * offsets) first, to the peer's MR at offset ro; the model follows.
 */
static int side_write(struct side *s, uint64_t seed, size_t lo, size_t ro,
		      size_t len)
{
	enum ibv_wc_status st;
	int ret;

	if (lo + len > s->size || ro + len > s->rsize)
		return side_fail(s, -EINVAL, "WRITE out of range");
	pat_fill(s->p + lo, len, seed, lo);
	ret = nm_rdma_op(&s->r, s->qp, IBV_WR_RDMA_WRITE, s->p + lo,
			 s->mr->lkey, s->rbase + ro, s->rkey, len, OP_TIMEOUT,
			 &st);
	if (ret)
		return side_fail(s, ret, "RDMA WRITE of %zu bytes to +%#zx: "
				 "%s (%s)", len, ro, nm_retname(ret),
				 ibv_wc_status_str(st));
	memcpy(s->remote + ro, s->p + lo, len);
	/* what we sent must still be what we wrote: nothing wrote into it */
	pat_fill(s->self + lo, len, seed, lo);
	return 0;
}

/*
 * RDMA READ of the peer's MR at ro into our [lo, lo + len), zeroed first,
 * checked byte for byte against the model.
 */
static int side_read(struct side *s, size_t lo, size_t ro, size_t len)
{
	enum ibv_wc_status st;
	size_t bad;
	int ret;

	if (lo + len > s->size || ro + len > s->rsize)
		return side_fail(s, -EINVAL, "READ out of range");
	memset(s->p + lo, 0, len);
	ret = nm_rdma_op(&s->r, s->qp, IBV_WR_RDMA_READ, s->p + lo,
			 s->mr->lkey, s->rbase + ro, s->rkey, len, OP_TIMEOUT,
			 &st);
	if (ret)
		return side_fail(s, ret, "RDMA READ of %zu bytes from +%#zx: "
				 "%s (%s)", len, ro, nm_retname(ret),
				 ibv_wc_status_str(st));
	memcpy(s->self + lo, s->remote + ro, len);
	bad = first_diff(s->p + lo, s->remote + ro, len);
	if (bad != SIZE_MAX)
		return side_fail(s, -EBADMSG, "RDMA READ of %zu bytes from "
				 "the peer's MR +%#zx: byte +%#zx is %#x, the "
				 "peer's MR holds %#x there", len, ro,
				 ro + bad, s->p[lo + bad],
				 s->remote[ro + bad]);
	return 0;
}

/* The peer wrote pattern seed (its offsets from lo) into us at ro */
static void side_written(struct side *s, uint64_t seed, size_t lo, size_t ro,
			 size_t len)
{
	pat_fill(s->self + ro, len, seed, lo);
}

/* Our buffer holds, byte for byte, what it must (mapped ranges only) */
static int side_check(struct side *s)
{
	size_t bad = first_diff(s->p, s->self, s->size);

	if (bad != SIZE_MAX)
		return side_fail(s, -EBADMSG, "byte +%#zx of the registered "
				 "buffer is %#x, want %#x", bad, s->p[bad],
				 s->self[bad]);
	return 0;
}

/* Everything, in order: MR, mapping, handle, file, verbs objects */
static int side_close(struct side *s)
{
	int ret = 0, e;

	if (s->mr && (e = ibv_dereg_mr(s->mr)))
		ret = side_fail(s, -e, "ibv_dereg_mr: %s", nm_errname(e));
	s->mr = NULL;
	if (s->p && munmap(s->p, s->size) && !ret)
		ret = side_fail(s, -errno, "munmap: %s", nm_errname(errno));
	s->p = NULL;
	if (s->fd >= 0) {
		e = s->a.handle ? nm_free(s->fd, s->a.handle) : 0;
		if (e && !ret)
			ret = side_fail(s, e, "FREE: %s", nm_retname(e));
		close(s->fd);
	}
	s->fd = -1;
	if (s->qp && (e = ibv_destroy_qp(s->qp)) && !ret)
		ret = side_fail(s, -e, "ibv_destroy_qp: %s", nm_errname(e));
	s->qp = NULL;
	e = nm_rdma_close(&s->r);
	if (e && !ret)
		ret = side_fail(s, e, "closing the verbs device: %s",
				nm_retname(e));
	free(s->self);
	free(s->remote);
	s->self = s->remote = NULL;
	return ret;
}

/* ---- the peer process: does what the test process asks ---------- */

enum peer_cmd {
	P_HELLO,	/* -> a: QP number, gid */
	P_CONNECT,	/* a: the test process's QP number */
	P_BUF,		/* a: size, b: policy or ANON, c: seed
			 * -> a: address, b: rkey, c: huge_pages,
			 *    d: FilePmdMapped kB of the mapping, e: size */
	P_MODEL,	/* a: address, b: size, c: seed, d: rkey */
	P_WRITE,	/* a: seed, b: local offset, c: remote offset, d: len */
	P_READ,		/* b: local offset, c: remote offset, d: len */
	P_WRITTEN,	/* like P_WRITE, done by the test process to us */
	P_CHECK,	/* our buffer against what it must hold */
	P_PMD,		/* -> a: FilePmdMapped kB of our mapping */
	P_CLOSE,	/* close everything, answer, exit 0 */
	P_EXIT,		/* exit 0 at once, everything live; no answer */
};

struct msg {
	uint32_t cmd;
	int32_t ret;
	uint64_t a, b, c, d, e;
	uint8_t gid[16];
	char why[256];
};

static void __attribute__((noreturn)) peer_main(int sock)
{
	struct side s = { .fd = -1 };
	struct msg m;

	for (;;) {
		ssize_t n = recv(sock, &m, sizeof(m), 0);

		if (n != sizeof(m))
			_exit(n == 0 ? 3 : 4);	/* the test process is gone */
		m.ret = 0;
		s.why[0] = 0;
		switch (m.cmd) {
		case P_HELLO:
			m.ret = side_rdma(&s);
			if (!m.ret) {
				m.a = s.qp->qp_num;
				memcpy(m.gid, s.r.gid.raw, 16);
			}
			break;
		case P_CONNECT:
			m.ret = side_connect(&s, m.a, s.r.gid.raw);
			break;
		case P_BUF:
			m.ret = side_buf(&s, m.a, m.b, m.c);
			if (!m.ret) {
				m.a = (uintptr_t)s.p;
				m.b = s.mr->rkey;
				m.c = s.fd >= 0 ? s.a.buf.huge_pages : 0;
				m.d = pmd_kb(s.p, s.size);
				m.e = s.size;
			}
			break;
		case P_MODEL:
			m.ret = side_model(&s, m.a, m.b, m.c, m.d);
			break;
		case P_WRITE:
			m.ret = side_write(&s, m.a, m.b, m.c, m.d);
			break;
		case P_READ:
			m.ret = side_read(&s, m.b, m.c, m.d);
			break;
		case P_WRITTEN:
			side_written(&s, m.a, m.b, m.c, m.d);
			break;
		case P_CHECK:
			m.ret = side_check(&s);
			break;
		case P_PMD:
			m.a = pmd_kb(s.p, s.size);
			break;
		case P_CLOSE:
			m.ret = side_close(&s);
			break;
		case P_EXIT:
			_exit(0);
		default:
			m.ret = -EINVAL;
		}
		snprintf(m.why, sizeof(m.why), "%s", s.why);
		if (send(sock, &m, sizeof(m), 0) != sizeof(m))
			_exit(5);
		if (m.cmd == P_CLOSE)
			_exit(m.ret ? 6 : 0);
	}
}

/* ---- the test process -------------------------------------------- */

struct base {
	int obs;			/* an fd of its own, for GET_INFO */
	struct nm_counters c;
	uint64_t pmd_kb;
};

struct world {
	struct base b;
	struct side t;			/* the test process's end */
	pid_t peer;
	int sock;
};

/* GET_INFO buffers / allocated_bytes are base + nbuf / + bytes, and
 * meminfo's FilePmdMapped base + pmd kB */
#define expect_counts(w, nbuf, bytes, pmd, when) \
	_expect_counts((w), (nbuf), (bytes), (pmd), (when), __FILE__, __LINE__)
static void _expect_counts(struct world *w, uint64_t nbuf, uint64_t bytes,
			   uint64_t pmd, const char *when, const char *f,
			   int l)
{
	struct nm_counters now;
	uint64_t mpmd = meminfo_pmd_kb();

	nm_counters(w->b.obs, &now);
	printf("%s: GET_INFO buffers %+lld, allocated_bytes %+lld; "
	       "FilePmdMapped %+lld kB (against the baseline)\n", when,
	       (long long)(now.buffers - w->b.c.buffers),
	       (long long)(now.allocated_bytes - w->b.c.allocated_bytes),
	       (long long)(mpmd - w->b.pmd_kb));
	if (now.buffers != w->b.c.buffers + nbuf ||
	    now.allocated_bytes != w->b.c.allocated_bytes + bytes ||
	    mpmd != w->b.pmd_kb + pmd)
		_ck_assert_failed(f, l, "counts", "%s: buffers %llu, want "
				  "%llu; allocated_bytes %llu, want %llu; "
				  "FilePmdMapped %llu kB, want %llu", when,
				  (unsigned long long)now.buffers,
				  (unsigned long long)(w->b.c.buffers + nbuf),
				  (unsigned long long)now.allocated_bytes,
				  (unsigned long long)(w->b.c.allocated_bytes +
						       bytes),
				  (unsigned long long)mpmd,
				  (unsigned long long)(w->b.pmd_kb + pmd));
}

/* Ask the peer; its failure is the test's, with its reason */
#define peer_do(w, m) _peer_do((w), (m), __FILE__, __LINE__)
static void _peer_do(struct world *w, struct msg *m, const char *f, int l)
{
	uint32_t cmd = m->cmd;
	struct pollfd pfd = { .fd = w->sock, .events = POLLIN };
	ssize_t n;

	if (send(w->sock, m, sizeof(*m), 0) != sizeof(*m))
		_ck_assert_failed(f, l, "peer", "send to the peer: %s",
				  nm_errname(errno));
	if (cmd == P_EXIT)
		return;
	n = poll(&pfd, 1, 120 * 1000) == 1 ?
		recv(w->sock, m, sizeof(*m), 0) : -1;
	if (n != sizeof(*m)) {
		int st = nm_wait_timeout(w->peer, 5);

		w->peer = 0;
		_ck_assert_failed(f, l, "peer", "no answer from the peer to "
				  "command %u (recv %zd); its wait status %#x",
				  cmd, n, st);
	}
	if (m->ret)
		_ck_assert_failed(f, l, "peer", "the peer, command %u: %s: %s",
				  cmd, nm_retname(m->ret), m->why);
}

#define side_ok(s, expr) do {						\
	int _r = (expr);						\
	ck_assert_msg(_r == 0, "%s: %s: %s", #expr, nm_retname(_r),	\
		      (s)->why);					\
} while (0)

/*
 * The rxe device is made once for the whole program (main()): each test
 * opens it afresh, and a test's process takes its contexts, QPs and MRs
 * with it when it ends.  NULL, or why soft-RoCE cannot be had here.
 */
static char *rxe_why;

static void rxe_start(void)
{
	rxe_why = nm_rxe_setup();
}

static void rxe_stop(void)
{
	if (!rxe_why)
		nm_rxe_teardown();
	free(rxe_why);
}

/*
 * The baseline, the peer process, and an RC connection between the test
 * process's QP and the peer's.  Returns false (the test must skip) when
 * soft-RoCE cannot be had here.
 */
static bool world_start(struct world *w)
{
	struct msg m = { .cmd = P_HELLO };
	int sv[2];

	memset(w, 0, sizeof(*w));
	w->t.fd = -1;
	if (rxe_why) {
		nm_skip_note("soft-RoCE (rdma_rxe over a veth) cannot be set "
			     "up here: %s", rxe_why);
		return false;
	}
	w->b.obs = nm_open();
	nm_counters(w->b.obs, &w->b.c);
	w->b.pmd_kb = meminfo_pmd_kb();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				    sv), 0);
	fflush(stdout);
	w->peer = fork();
	ck_assert_int_ge(w->peer, 0);
	if (w->peer == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		close(w->b.obs);
		peer_main(sv[1]);
	}
	close(sv[1]);
	w->sock = sv[0];
	side_ok(&w->t, side_rdma(&w->t));
	peer_do(w, &m);
	side_ok(&w->t, side_connect(&w->t, m.a, m.gid));
	m = (struct msg){ .cmd = P_CONNECT, .a = w->t.qp->qp_num };
	peer_do(w, &m);
	return true;
}

/* The peer closes everything and exits 0 */
static void peer_close(struct world *w)
{
	struct msg m = { .cmd = P_CLOSE };

	peer_do(w, &m);
	nm_wait_ok(w->peer, "peer");
	w->peer = 0;
}

/*
 * Every verbs object is gone: whatever the RDMA driver still pinned is let
 * go now, and the module's rescan notices within seconds.
 */
static void await_unpinned(struct world *w, const char *when)
{
	double t0 = nm_now();
	uint64_t left;
	int r = nm_await_no_retained(w->b.obs, 60, &left);

	ck_assert_msg(r == 0, "%s: %s, %llu bytes still retained", when,
		      nm_retname(r), (unsigned long long)left);
	printf("%s: nothing retained after %.3f s\n", when, nm_now() - t0);
}

static void world_end(struct world *w)
{
	side_ok(&w->t, side_close(&w->t));
	close(w->sock);
	await_unpinned(w, "at the end");
	expect_counts(w, 0, 0, 0, "at the end");
	close(w->b.obs);
}

/* The test process's MR (w->t.p..) as the peer's model: pattern seed */
static void peer_model(struct world *w, uint64_t seed)
{
	struct msg m = {
		.cmd = P_MODEL, .a = (uintptr_t)w->t.p, .b = w->t.size,
		.c = seed, .d = w->t.mr->rkey,
	};

	peer_do(w, &m);
}

/* The peer WRITEs its [lo, lo + len) (pattern seed) into ours at ro */
static void peer_write(struct world *w, uint64_t seed, size_t lo, size_t ro,
		       size_t len)
{
	struct msg m = { .cmd = P_WRITE, .a = seed, .b = lo, .c = ro,
			 .d = len };

	peer_do(w, &m);
	side_written(&w->t, seed, lo, ro, len);
}

/* The peer READs ours at ro into its [lo, lo + len) and checks it */
static void peer_read(struct world *w, size_t lo, size_t ro, size_t len)
{
	struct msg m = { .cmd = P_READ, .b = lo, .c = ro, .d = len };

	peer_do(w, &m);
}

/* ================================================================ */
/* The three policies                                                */

static void policy_case(uint32_t policy, size_t size)
{
	const uint64_t sa = 0xa11ce + policy, sb = 0xb0b + policy;
	/* odd offsets, different within their pages on both sides */
	const size_t ro = (size > 4 * NM_MiB ? NM_2M : size / 2) - 3 * NM_4K - 3;
	const size_t lo = 5 * NM_KiB + 1;
	size_t len, want_pmd;
	uint64_t mpmd, ppmd;
	struct world w;
	struct msg m;

	if (!world_start(&w))
		return;
	/* the peer's buffer: npu-mem of the same policy */
	m = (struct msg){ .cmd = P_BUF, .a = size, .b = policy, .c = sb };
	peer_do(&w, &m);
	ck_assert_uint_ge(m.e, size);
	ppmd = m.c * 2048;
	ck_assert_msg(m.d == ppmd, "the peer's mapping after writing it: "
		      "FilePmdMapped %llu kB, want %llu (%llu chunks)",
		      (unsigned long long)m.d, (unsigned long long)ppmd,
		      (unsigned long long)m.c);
	side_ok(&w.t, side_model(&w.t, m.a, m.e, sb, m.b));
	/* ours */
	side_ok(&w.t, side_buf(&w.t, size, policy, sa));
	want_pmd = (size_t)w.t.a.buf.huge_pages * 2048;
	printf("%s %zu: %u chunks of 2 MiB and %u pages of 4 KiB, mapped at "
	       "%p, registered whole (lkey %#x rkey %#x)\n",
	       nm_policy_name(policy), size, w.t.a.buf.huge_pages,
	       w.t.a.buf.normal_pages, w.t.p, w.t.mr->lkey, w.t.mr->rkey);
	if (policy != NPU_MEM_POLICY_NORMAL_ONLY && !w.t.a.buf.huge_pages)
		printf("NOTE: no 2 MiB chunk to be had: PTEs only\n");
	ck_assert_uint_eq(pmd_kb(w.t.p, w.t.size), want_pmd);
	peer_model(&w, sa);

	/* WRITE across every 2 MiB boundary and into HUGE_FIRST's tail */
	len = size - ro - 2 * NM_KiB - 7;
	peer_write(&w, sb + 1, lo, ro, len);
	side_ok(&w.t, side_check(&w.t));
	/* READ everything back into the peer's buffer */
	peer_read(&w, 0, 0, w.t.size);
	m = (struct msg){ .cmd = P_PMD };
	peer_do(&w, &m);
	mpmd = meminfo_pmd_kb() - w.b.pmd_kb;
	printf("%s: RDMA WRITE of %zu bytes at +%#zx and READ of %zu bytes "
	       "between two processes: every byte right; FilePmdMapped "
	       "%zu kB here, %llu kB in the peer, meminfo +%llu kB\n",
	       nm_policy_name(policy), len, ro, w.t.size,
	       (size_t)pmd_kb(w.t.p, w.t.size), (unsigned long long)m.a,
	       (unsigned long long)mpmd);
	ck_assert_msg(pmd_kb(w.t.p, w.t.size) == want_pmd && m.a == ppmd &&
		      mpmd == want_pmd + ppmd, "after the RDMA traffic the "
		      "chunks must still be PMD-mapped: here %llu kB (want "
		      "%zu), in the peer %llu (want %llu), meminfo +%llu",
		      (unsigned long long)pmd_kb(w.t.p, w.t.size), want_pmd,
		      (unsigned long long)m.a, (unsigned long long)ppmd,
		      (unsigned long long)mpmd);
	side_ok(&w.t, side_check(&w.t));
	peer_close(&w);
	world_end(&w);
}

START_TEST(huge_first)
{
	policy_case(NPU_MEM_POLICY_HUGE_FIRST, 8 * NM_MiB + 3 * NM_4K);
}
END_TEST

START_TEST(huge_only)
{
	policy_case(NPU_MEM_POLICY_HUGE_ONLY, 8 * NM_MiB);
}
END_TEST

START_TEST(normal_only)
{
	policy_case(NPU_MEM_POLICY_NORMAL_ONLY, NM_MiB + NM_4K);
}
END_TEST

/* ================================================================ */
/* The MR outlives the buffer's handle, mapping, file or process     */

#define SAFE_SIZE	(8 * NM_MiB)

/* Our HUGE_ONLY buffer, registered; the peer with anonymous memory */
static bool safety_start(struct world *w, uint64_t seed)
{
	struct msg m;

	if (!world_start(w))
		return false;
	m = (struct msg){ .cmd = P_BUF, .a = SAFE_SIZE, .b = ANON,
			  .c = seed + 1 };
	peer_do(w, &m);
	side_ok(&w->t, side_buf(&w->t, SAFE_SIZE, NPU_MEM_POLICY_HUGE_ONLY,
				seed));
	peer_model(w, seed);
	expect_counts(w, 1, SAFE_SIZE, SAFE_SIZE / 1024, "registered");
	peer_write(w, seed + 2, NM_KiB + 1, NM_2M - 100, NM_2M + 200);
	side_ok(&w->t, side_check(&w->t));
	return true;
}

/*
 * Nothing of the buffer is left but the MR's pins: RDMA through it still
 * moves the right bytes, and what the buffer held is still there.
 */
static void rdma_into_orphan(struct world *w, uint64_t seed)
{
	peer_write(w, seed, 3 * NM_KiB + 5, 5 * NM_MiB - 4 * NM_KiB - 1,
		   NM_2M + 9 * NM_KiB);
	peer_read(w, 0, 0, SAFE_SIZE);
}

/*
 * Handle and mapping gone, the MR alive: its pins keep the pages, the
 * buffer is gone and no longer mapped anywhere, but its chunks stay
 * charged as retained (the UAPI header's Accounting): the MR pins every
 * page of them here, so all of SAFE_SIZE.
 */
#define expect_orphan_counts(w, when) do {				\
	struct npu_mem_info _info;					\
									\
	expect_counts((w), 0, SAFE_SIZE, 0, (when));			\
	nm_get_info_ok((w)->b.obs, &_info);				\
	ck_assert_uint_eq(_info.retained_bytes, SAFE_SIZE);		\
} while (0)

/*
 * The MR goes.  Its pins may outlast ibv_dereg_mr(): 5.10's rxe keeps the
 * MR, and the pages, until the QP that last used it is destroyed.  So
 * here nothing but retained chunks may be left, and the module's rescan
 * may let them go while we look: what holds is a bound (no buffer, no
 * mapping, nothing charged beyond the SAFE_SIZE of retained chunks), not
 * an exact count.  world_end() waits for them to go.
 */
static void dereg_to_baseline(struct world *w)
{
	struct nm_counters now;
	uint64_t pmd;

	ck_assert_int_eq(ibv_dereg_mr(w->t.mr), 0);
	w->t.mr = NULL;
	nm_counters(w->b.obs, &now);
	pmd = meminfo_pmd_kb();
	printf("MR deregistered: GET_INFO buffers %+lld, allocated_bytes "
	       "%+lld (retained chunks: at most %llu); FilePmdMapped %+lld kB\n",
	       (long long)(now.buffers - w->b.c.buffers),
	       (long long)(now.allocated_bytes - w->b.c.allocated_bytes),
	       (unsigned long long)SAFE_SIZE, (long long)(pmd - w->b.pmd_kb));
	ck_assert_uint_eq(now.buffers, w->b.c.buffers);
	ck_assert_uint_ge(now.allocated_bytes, w->b.c.allocated_bytes);
	ck_assert_uint_le(now.allocated_bytes,
			  w->b.c.allocated_bytes + SAFE_SIZE);
	ck_assert_uint_eq(pmd, w->b.pmd_kb);
}

START_TEST(free_then_munmap_while_registered)
{
	struct world w;

	if (!safety_start(&w, 0x5eed10))
		return;
	nm_free_ok(w.t.fd, w.t.a.handle);
	w.t.a.handle = 0;
	/* the mapping keeps the buffer */
	expect_counts(&w, 1, SAFE_SIZE, SAFE_SIZE / 1024, "FREE, still mapped");
	peer_write(&w, 0x5eed13, 7, 4 * NM_MiB + 11, 3 * NM_MiB);
	side_ok(&w.t, side_check(&w.t));
	ck_assert_int_eq(munmap(w.t.p, w.t.size), 0);
	w.t.p = NULL;
	/* the MR's pins keep the pages and what they hold */
	rdma_into_orphan(&w, 0x5eed14);
	expect_orphan_counts(&w, "FREE + munmap, MR registered");
	dereg_to_baseline(&w);
	peer_close(&w);
	world_end(&w);
}
END_TEST

START_TEST(close_while_registered)
{
	struct world w;

	if (!safety_start(&w, 0x5eed20))
		return;
	/* close() first: the mapping holds the file, and the buffer */
	ck_assert_int_eq(close(w.t.fd), 0);
	w.t.fd = -1;
	expect_counts(&w, 1, SAFE_SIZE, SAFE_SIZE / 1024, "close, still mapped");
	peer_write(&w, 0x5eed23, 9, 6 * NM_MiB - 3, NM_2M + 1);
	side_ok(&w.t, side_check(&w.t));
	/* the last munmap releases the file and its handles */
	ck_assert_int_eq(munmap(w.t.p, w.t.size), 0);
	w.t.p = NULL;
	rdma_into_orphan(&w, 0x5eed24);
	expect_orphan_counts(&w, "close + munmap, MR registered");
	dereg_to_baseline(&w);
	peer_close(&w);
	world_end(&w);
}
END_TEST

/*
 * The process that registered the MR exits with everything live (MR,
 * mapping, handle, file): the verbs file's release takes the MR down, the
 * mm's the mapping, the file's the handle - in whatever order, the memory
 * is free afterwards.  Here the peer owns the npu-mem buffer and the test
 * process does the RDMA.
 */
START_TEST(exit_with_live_mr)
{
	const uint64_t seed = 0x5eed30;
	struct world w;
	struct msg m;
	uint64_t addr;
	int st;

	if (!world_start(&w))
		return;
	m = (struct msg){ .cmd = P_BUF, .a = SAFE_SIZE,
			  .b = NPU_MEM_POLICY_HUGE_ONLY, .c = seed };
	peer_do(&w, &m);
	ck_assert_msg(m.d == SAFE_SIZE / 1024, "the peer's mapping: "
		      "FilePmdMapped %llu kB", (unsigned long long)m.d);
	addr = m.a;
	side_ok(&w.t, side_model(&w.t, addr, m.e, seed, m.b));
	side_ok(&w.t, side_buf(&w.t, SAFE_SIZE, ANON, seed + 1));
	expect_counts(&w, 1, SAFE_SIZE, SAFE_SIZE / 1024,
		      "the peer's buffer registered");
	side_ok(&w.t, side_write(&w.t, seed + 2, 17, NM_2M - 5, 5 * NM_MiB));
	m = (struct msg){ .cmd = P_WRITTEN, .a = seed + 2, .b = 17,
			  .c = NM_2M - 5, .d = 5 * NM_MiB };
	peer_do(&w, &m);
	m = (struct msg){ .cmd = P_CHECK };
	peer_do(&w, &m);
	side_ok(&w.t, side_read(&w.t, 0, 0, SAFE_SIZE));
	m = (struct msg){ .cmd = P_EXIT };
	peer_do(&w, &m);
	st = nm_wait_timeout(w.peer, 60);
	w.peer = 0;
	ck_assert_msg(st != -1 && WIFEXITED(st) && !WEXITSTATUS(st),
		      "the peer's exit: status %#x", st);
	/*
	 * The exit may drop the mapping before the MR: the chunks are then
	 * retained until the module sees the pins go.
	 */
	{
		uint64_t left;
		int r = nm_await_no_retained(w.b.obs, 60, &left);

		ck_assert_msg(r == 0, "the registering process exited: %s, "
			      "%llu bytes still retained", nm_retname(r),
			      (unsigned long long)left);
	}
	expect_counts(&w, 0, 0, 0, "the registering process exited");
	world_end(&w);
}
END_TEST

/* ================================================================ */
/* dma-bufs                                                          */

/*
 * What the kernel itself answers for this device: rdma-core's rxe provider
 * has no dma-buf MRs, so ibv_reg_dmabuf_mr() fails in the library and never
 * asks.  ibv_cmd_reg_dmabuf_mr() is the call providers with dma-buf MRs
 * make (UVERBS_METHOD_REG_DMABUF_MR on the verbs file), private to
 * libibverbs: looked up at run time, -ENOSYS when it is not there.  0
 * (the MR is deregistered again) or -errno.
 */
static int kernel_reg_dmabuf_mr(struct nm_rdma *r, int dfd, uint64_t len)
{
	int (*cmd)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int,
		   void *, void *);
	/* struct verbs_mr and then some: the library writes the first */
	uint64_t vmr[64] = { 0 };
	int ret;

	*(void **)&cmd = dlsym(RTLD_DEFAULT, "ibv_cmd_reg_dmabuf_mr");
	if (!cmd)
		return -ENOSYS;
	ret = cmd(r->pd, 0, len, 0, dfd, IBV_ACCESS_LOCAL_WRITE, vmr, NULL);
	if (ret == 0)
		ibv_dereg_mr((struct ibv_mr *)vmr);
	return -ret;
}

START_TEST(dmabuf_mr)
{
	const size_t size = 8 * NM_MiB;
	const uint64_t seed = 0xd3ab0f;
	struct ibv_mr *dmr;
	int dfd, err, kret;
	uint8_t *np;
	struct world w;
	struct msg m;

	if (!world_start(&w))
		return;
	m = (struct msg){ .cmd = P_BUF, .a = size, .b = ANON, .c = seed + 1 };
	peer_do(&w, &m);
	/*
	 * Our buffer, registered through its own mapping first (side_buf);
	 * no SYNC anywhere: rxe moves the bytes with the CPU, the NPU device
	 * never touches them.
	 */
	side_ok(&w.t, side_buf(&w.t, size, NPU_MEM_POLICY_HUGE_ONLY, seed));
	dfd = nm_export_ok(w.t.fd, w.t.a.handle, O_RDWR | O_CLOEXEC);

	/* rxe has no dma-buf MRs: the provider library says so ... */
	errno = 0;
	dmr = ibv_reg_dmabuf_mr(w.t.r.pd, 0, size, 0, dfd, ACCESS);
	err = errno;
	/* ... and so does the kernel, each in its own words */
	kret = kernel_reg_dmabuf_mr(&w.t.r, dfd, size);
	printf("Linux %s, rxe: ibv_reg_dmabuf_mr of an npu-mem dma-buf: %s; "
	       "UVERBS_METHOD_REG_DMABUF_MR itself: %s\n", nm_kernel_release(),
	       dmr ? "registered" : nm_errname(err), nm_retname(kret));
	ck_assert_msg(!dmr && err == EOPNOTSUPP, "ibv_reg_dmabuf_mr on rxe: "
		      "%s, want EOPNOTSUPP", dmr ? "registered" :
		      nm_errname(err));
	/*
	 * 6.1 and 6.12 alike: rxe has no reg_user_mr_dmabuf; before 5.12
	 * uverbs has no such method at all, and says so for any unknown one
	 * with -EPROTONOSUPPORT.
	 */
	ck_assert_msg(kret == -EOPNOTSUPP || kret == -ENOSYS ||
		      (kret == -EPROTONOSUPPORT && nm_kernel_version() < 512),
		      "UVERBS_METHOD_REG_DMABUF_MR on rxe, Linux %s: %s, want "
		      "-EOPNOTSUPP", nm_kernel_release(), nm_retname(kret));

	/*
	 * The address path: register the dma-buf's own CPU mapping instead.
	 * The npu-mem mapping and its MR go first, so only the dma-buf's
	 * mapping can hold what the peer reads back.
	 */
	np = w.t.p;
	ck_assert_int_eq(ibv_dereg_mr(w.t.mr), 0);
	w.t.p = nm_dmabuf_map_ok(dfd, 0, size, RW);
	w.t.mr = ibv_reg_mr(w.t.r.pd, w.t.p, size, ACCESS);
	ck_assert_msg(w.t.mr, "ibv_reg_mr of the dma-buf's mapping: %s",
		      nm_errname(errno));
	ck_assert_int_eq(munmap(np, size), 0);
	side_ok(&w.t, side_check(&w.t));
	peer_model(&w, seed);
	peer_write(&w, seed + 2, 3, NM_2M - 7, 2 * NM_2M + 77);
	side_ok(&w.t, side_check(&w.t));
	peer_read(&w, 0, 0, size);
	printf("RDMA WRITE and READ through an MR of the dma-buf's mapping: "
	       "every byte right; FilePmdMapped of that mapping %llu kB\n",
	       (unsigned long long)pmd_kb(w.t.p, size));
	/* the same pages through a fresh npu-mem mapping */
	np = nm_map_ok(w.t.fd, &w.t.a, RW);
	ck_assert_uint_eq(first_diff(np, w.t.self, size), SIZE_MAX);
	ck_assert_int_eq(munmap(np, size), 0);
	close(dfd);
	peer_close(&w);
	world_end(&w);
	if (kret == -ENOSYS)
		nm_skip("libibverbs has no ibv_cmd_reg_dmabuf_mr: the "
			"kernel's own answer to a dma-buf MR on rxe went "
			"unchecked");
}
END_TEST

#else /* !NM_HAVE_IBVERBS */

#define NO_VERBS(name)							\
START_TEST(name)							\
{									\
	nm_skip("built without libibverbs (libibverbs-dev)");		\
}									\
END_TEST
NO_VERBS(huge_first)
NO_VERBS(huge_only)
NO_VERBS(normal_only)
NO_VERBS(free_then_munmap_while_registered)
NO_VERBS(close_while_registered)
NO_VERBS(exit_with_live_mr)
NO_VERBS(dmabuf_mr)

static void rxe_start(void)
{
}

static void rxe_stop(void)
{
}

#endif

/* Last: no page refcount went wrong anywhere above. */
START_TEST(dmesg_clean)
{
	nm_assert_dmesg_clean();
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("rdma_reg");
	int ret;

	nm_add(s, huge_first, 120);
	nm_add(s, huge_only, 120);
	nm_add(s, normal_only, 120);
	nm_add(s, free_then_munmap_while_registered, 120);
	nm_add(s, close_while_registered, 120);
	nm_add(s, exit_with_live_mr, 120);
	nm_add(s, dmabuf_mr, 120);
	nm_add(s, dmesg_clean, 30);
	rxe_start();
	ret = nm_run(s, NM_NEEDS_DEVICE);
	rxe_stop();
	return ret;
}
