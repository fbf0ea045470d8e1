// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmabuf_share: an npu-mem dma-buf passed between processes over a UNIX
 * socket (SCM_RIGHTS).  Three processes: the test (T, which only watches
 * the driver's counters through a file of its own), the exporter (A) and
 * the receiver (B).  B is forked before A exports anything, so it never
 * inherited the dma-buf (it checks that it holds no dma-buf fd before
 * receiving one).
 *  - B maps the received dma-buf and sees A's bytes; A sees B's writes
 *    through its /dev/npu-mem mapping and the other way round;
 *  - A unmaps, FREEs, closes and exits (or is SIGKILLed): the buffer stays
 *    (counters), and B still reads and writes valid data through its old
 *    mapping and through a new mmap of the fd, DMA_BUF_IOCTL_SYNC works;
 *    the buffer goes exactly when B unmaps and closes, before B exits;
 *  - an fd still in flight (sent, not yet received) keeps the buffer alive
 *    after A has exited, and B receives and uses it afterwards;
 *  - an fd that is never received is released with the socket.
 * Counters are back to where they started at the end of every test.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"

#define RW		(PROT_READ | PROT_WRITE)
#define BUF_SIZE	(NM_2M + 8 * NM_KiB)	/* one huge chunk + pages */
#define TMO		120.0			/* seconds per message */

enum msg {
	M_FD = 1,	/* A -> B: the dma-buf (with SCM_RIGHTS) */
	M_MAPPED,	/* B -> A: mapped, saw seed, wrote seed+1 */
	M_WROTE,	/* A -> B: saw seed+1, wrote seed+2 */
	M_SAW,		/* B -> A: saw seed+2 */
	M_GONE,		/* T -> B: A has exited */
	M_USED,		/* B -> T: used it after A's exit */
	M_CLOSE,	/* T -> B: unmap and close */
	M_CLOSED,	/* B -> T: done */
	M_RECV,		/* T -> B: receive the fd now */
	M_DROP,		/* T -> B: close the socket, do not receive */
	M_EXCHANGED,	/* B -> T: the exchange with A is over */
};

/* In A and B: no Check assertions, a message and an exit status. */
#define CHILD_CHECK(cond, ...) NM_CHILD_CHECK(who, cond, __VA_ARGS__)

/* Open fds that are dma-bufs (their fdinfo names an exporter). */
static int dmabuf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *exp;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		exp = nm_dmabuf_exp_name(atoi(e->d_name));
		if (exp)
			n++;
		free(exp);
	}
	closedir(d);
	return n;
}

static uint32_t expect(const char *who, int sock, uint32_t want, int *fd)
{
	uint32_t m = 0;
	int ret = nm_recv_msg(sock, &m, fd, TMO);

	CHILD_CHECK(ret == 0 && m == want, "waiting for message %u: %s, got %u",
		    want, nm_retname(ret), m);
	return m;
}

static void say(const char *who, int sock, uint32_t m, int fd)
{
	int ret = nm_send_msg(sock, m, fd);

	CHILD_CHECK(ret == 0, "sending message %u: %s", m, nm_retname(ret));
}

enum a_mode {
	A_TALK,		/* exchange data with B, then clean up and exit */
	A_TALK_HANG,	/* exchange, then wait to be killed */
	A_SEND_EXIT,	/* send the fd and exit at once */
};

/* The exporter. */
static void __attribute__((noreturn)) run_a(int sock, enum a_mode mode,
					    uint64_t seed)
{
	const char *who = "exporter";
	struct npu_mem_alloc a;
	uint8_t *map;
	int fd, dfd;

	fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(fd >= 0, "open: %s", nm_errname(errno));
	CHILD_CHECK(nm_alloc(fd, BUF_SIZE, NPU_MEM_POLICY_HUGE_FIRST, 0, &a) == 0,
		    "ALLOC");
	map = nm_mmap(fd, a.buf.mmap_offset, a.buf.size, RW);
	CHILD_CHECK(map != MAP_FAILED, "mmap: %s", nm_errname(errno));
	nm_fill(map, a.buf.size, seed);
	CHILD_CHECK(nm_export(fd, a.handle, O_RDWR | O_CLOEXEC, &dfd) == 0,
		    "EXPORT");
	say(who, sock, M_FD, dfd);
	close(dfd);		/* only the copy in flight is left */
	if (mode != A_SEND_EXIT) {
		expect(who, sock, M_MAPPED, NULL);
		CHILD_CHECK(nm_verify(map, a.buf.size, seed + 1) == SIZE_MAX,
			    "does not see the receiver's write");
		nm_fill(map, a.buf.size, seed + 2);
		say(who, sock, M_WROTE, -1);
		expect(who, sock, M_SAW, NULL);
	}
	if (mode == A_TALK_HANG)
		for (;;)
			pause();
	munmap(map, a.buf.size);
	CHILD_CHECK(nm_free(fd, a.handle) == 0, "FREE");
	close(fd);
	close(sock);
	_exit(0);
}

enum b_mode {
	B_TALK,		/* receive at once, exchange with A */
	B_LATE,		/* receive when T says so (A is gone by then) */
	B_DROP,		/* never receive: close the socket when told */
};

/* The receiver: sock to A, ctl to T. */
static void __attribute__((noreturn)) run_b(int sock, int ctl,
					    enum b_mode mode, uint64_t seed)
{
	const char *who = "receiver";
	uint64_t size = BUF_SIZE;
	uint8_t *map, *map2;
	uint32_t m;
	int dfd = -1;

	CHILD_CHECK(dmabuf_fds() == 0, "inherited %d dma-buf fds", dmabuf_fds());
	if (mode == B_DROP) {
		expect(who, ctl, M_DROP, NULL);
		close(sock);
		say(who, ctl, M_CLOSED, -1);
		_exit(0);
	}
	if (mode == B_LATE)
		expect(who, ctl, M_RECV, NULL);
	expect(who, sock, M_FD, &dfd);
	CHILD_CHECK(dfd >= 0, "no fd came with the message");
	CHILD_CHECK(dmabuf_fds() == 1, "%d dma-buf fds after receiving one",
		    dmabuf_fds());
	CHILD_CHECK(lseek(dfd, 0, SEEK_END) == (off_t)size,
		    "dma-buf size %lld", (long long)lseek(dfd, 0, SEEK_END));
	map = mmap(NULL, size, RW, MAP_SHARED, dfd, 0);
	CHILD_CHECK(map != MAP_FAILED, "mmap: %s", nm_errname(errno));
	CHILD_CHECK(nm_dmabuf_sync(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW) == 0,
		    "DMA_BUF_IOCTL_SYNC start");
	CHILD_CHECK(nm_verify(map, size, seed) == SIZE_MAX,
		    "does not see the exporter's bytes (first bad at %zu)",
		    nm_verify(map, size, seed));
	nm_fill(map, size, seed + 1);
	CHILD_CHECK(nm_dmabuf_sync(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW) == 0,
		    "DMA_BUF_IOCTL_SYNC end");
	if (mode == B_TALK) {
		say(who, sock, M_MAPPED, -1);
		expect(who, sock, M_WROTE, NULL);
		CHILD_CHECK(nm_verify(map, size, seed + 2) == SIZE_MAX,
			    "does not see the exporter's second write");
		say(who, sock, M_SAW, -1);
		say(who, ctl, M_EXCHANGED, -1);
		expect(who, ctl, M_GONE, NULL);
		/* the exporter is gone: everything still works */
		CHILD_CHECK(nm_verify(map, size, seed + 2) == SIZE_MAX,
			    "data changed when the exporter went");
	}
	nm_fill(map, size, seed + 3);
	CHILD_CHECK(nm_verify(map, size, seed + 3) == SIZE_MAX, "write/read");
	map2 = mmap(NULL, size, RW, MAP_SHARED, dfd, 0);
	CHILD_CHECK(map2 != MAP_FAILED, "new mmap after the exporter went: %s",
		    nm_errname(errno));
	CHILD_CHECK(nm_verify(map2, size, seed + 3) == SIZE_MAX,
		    "second mapping differs");
	nm_fill_at(map2 + NM_2M - 8, 16, seed + 4, NM_2M - 8);
	CHILD_CHECK(nm_verify_at(map + NM_2M - 8, 16, seed + 4, NM_2M - 8) ==
		    SIZE_MAX, "mappings disagree across the 2 MiB boundary");
	munmap(map2, size);
	say(who, ctl, M_USED, -1);
	expect(who, ctl, M_CLOSE, NULL);
	/* read once more right before letting go */
	CHILD_CHECK(nm_verify_at(map + NM_2M - 8, 16, seed + 4, NM_2M - 8) ==
		    SIZE_MAX, "data changed before close");
	munmap(map, size);
	close(dfd);
	say(who, ctl, M_CLOSED, -1);
	/* T checks the counters now, while we are still alive */
	m = 0;
	nm_recv_msg(ctl, &m, NULL, TMO);
	_exit(0);
}

struct world {
	int obs;
	struct nm_counters start;
	pid_t a, b;
	int ctl;		/* T's end of the T <-> B socket */
	uint64_t seed;
};

static void start(struct world *w, enum a_mode am, enum b_mode bm)
{
	int ab[2], tb[2];

	w->obs = nm_open();
	nm_counters(w->obs, &w->start);
	w->seed = 0x5a4e ^ ((uint64_t)getpid() << 24) ^ (am * 16 + bm);
	ck_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ab) == 0);
	ck_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tb) == 0);
	fflush(stdout);
	w->b = fork();
	ck_assert_int_ge(w->b, 0);
	if (w->b == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(w->obs);		/* B holds nothing of npu-mem */
		close(ab[0]);
		close(tb[0]);
		run_b(ab[1], tb[1], bm, w->seed);
	}
	close(ab[1]);
	close(tb[1]);
	w->ctl = tb[0];
	w->a = fork();
	ck_assert_int_ge(w->a, 0);
	if (w->a == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(w->obs);
		close(w->ctl);
		run_a(ab[0], am, w->seed);
	}
	close(ab[0]);
}

static void tell_b(struct world *w, uint32_t m)
{
	nm_assert_ok(nm_send_msg(w->ctl, m, -1));
}

static void from_b(struct world *w, uint32_t want)
{
	uint32_t m = 0;
	int ret = nm_recv_msg(w->ctl, &m, NULL, TMO);

	if (ret || m != want) {
		/* B failed: its status says where */
		int st = nm_wait_timeout(w->b, 5);

		ck_abort_msg("waiting for receiver message %u: %s, got %u; "
			     "receiver status %#x", want, nm_retname(ret), m, st);
	}
}

static void wait_exit(pid_t pid, const char *who, int want_sig)
{
	int st = nm_wait_timeout(pid, TMO);

	ck_assert_msg(st != -1, "%s did not exit", who);
	if (want_sig)
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == want_sig,
			      "%s: status %#x, want signal %d", who, st,
			      want_sig);
	else
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "%s failed: %s %d (see its output)", who,
			      WIFEXITED(st) ? "exit status" : "signal",
			      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* One buffer more than at the start, whoever holds it. */
static void assert_held(struct world *w, const char *when)
{
	struct nm_counters now;

	nm_counters(w->obs, &now);
	ck_assert_msg(now.buffers == w->start.buffers + 1 &&
		      now.allocated_bytes >= w->start.allocated_bytes + BUF_SIZE,
		      "%s: %llu buffers / %llu bytes, want %llu / +%llu", when,
		      (unsigned long long)now.buffers,
		      (unsigned long long)now.allocated_bytes,
		      (unsigned long long)w->start.buffers + 1,
		      (unsigned long long)BUF_SIZE);
}

static void assert_released(struct world *w, const char *when)
{
	struct nm_counters now;
	double end = nm_now() + 120;

	/*
	 * fds in a closed socket's queue are put by the closing task, or by
	 * the unix garbage collector, later; a loaded TCG guest can stall
	 * for many seconds
	 */
	do {
		nm_counters(w->obs, &now);
		if (now.buffers == w->start.buffers)
			break;
		usleep(10000);
	} while (nm_now() < end);
	ck_assert_msg(now.buffers == w->start.buffers, "%s: buffer still "
		      "counted", when);
	nm_assert_counters_eq(&w->start, &now);
}

static void finish(struct world *w)
{
	close(w->ctl);
	wait_exit(w->b, "receiver", 0);
	nm_assert_counters_now(w->obs, &w->start);
	close(w->obs);
}

START_TEST(share_exporter_exits)
{
	struct world w;

	start(&w, A_TALK, B_TALK);
	from_b(&w, M_EXCHANGED);
	wait_exit(w.a, "exporter", 0);
	assert_held(&w, "exporter exited, receiver holds the dma-buf");
	tell_b(&w, M_GONE);
	from_b(&w, M_USED);
	assert_held(&w, "receiver used it");
	tell_b(&w, M_CLOSE);
	from_b(&w, M_CLOSED);
	assert_released(&w, "receiver unmapped and closed (still alive)");
	finish(&w);
}
END_TEST

START_TEST(share_exporter_killed)
{
	struct world w;

	start(&w, A_TALK_HANG, B_TALK);
	from_b(&w, M_EXCHANGED);
	assert_held(&w, "both alive");
	ck_assert_int_eq(kill(w.a, SIGKILL), 0);
	wait_exit(w.a, "exporter", SIGKILL);
	assert_held(&w, "exporter killed, receiver holds the dma-buf");
	tell_b(&w, M_GONE);
	from_b(&w, M_USED);
	tell_b(&w, M_CLOSE);
	from_b(&w, M_CLOSED);
	assert_released(&w, "receiver unmapped and closed");
	finish(&w);
}
END_TEST

START_TEST(share_fd_in_flight)
{
	struct world w;

	start(&w, A_SEND_EXIT, B_LATE);
	wait_exit(w.a, "exporter", 0);
	/* nobody has the fd open: it is in the socket's queue */
	assert_held(&w, "fd in flight, exporter gone");
	tell_b(&w, M_RECV);
	from_b(&w, M_USED);
	assert_held(&w, "received and used");
	tell_b(&w, M_CLOSE);
	from_b(&w, M_CLOSED);
	assert_released(&w, "receiver closed");
	finish(&w);
}
END_TEST

START_TEST(share_fd_never_received)
{
	struct world w;

	start(&w, A_SEND_EXIT, B_DROP);
	wait_exit(w.a, "exporter", 0);
	assert_held(&w, "fd in flight, exporter gone");
	tell_b(&w, M_DROP);
	from_b(&w, M_CLOSED);
	assert_released(&w, "socket closed with the fd unreceived");
	finish(&w);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("dmabuf_share");

	nm_add(s, share_exporter_exits, 2 * TMO);
	nm_add(s, share_exporter_killed, 2 * TMO);
	nm_add(s, share_fd_in_flight, 2 * TMO);
	nm_add(s, share_fd_never_received, 2 * TMO);
	return nm_run(s, NM_NEEDS_DEVICE);
}
