// SPDX-License-Identifier: GPL-2.0-only
/*
 * ipc_mem: sharing a buffer between processes by key (IPC_EXPORT,
 * IPC_SET_PIDS, IPC_IMPORT, IPC_REVOKE), against the rules of the UAPI
 * header.  Every process opens /dev/npu-mem itself, as real programs do,
 * and keys travel over a socket, as they would over any channel:
 *  - a process of the same user imports without a list: it maps the same
 *    pages (writes are seen both ways), QUERY shows NPU_MEM_BUF_IMPORTED,
 *    the size, backing and device address of the exporter's buffer, and
 *    the global usage does not grow; a read-only buffer stays read-only;
 *  - an allow-list admits exactly the listed processes (not even the
 *    exporter's own), NPU_MEM_IPC_ANY_PID ignores it; SET_PIDS errors:
 *    -ESRCH (reaped child, pid 0), -EINVAL (count 0, count over the max,
 *    flags), -ENOSPC (list full over several calls, the refused call adding
 *    nothing), -EFAULT, -EPERM from any file but the exporter's (another
 *    open of the same process too), -ENOENT for a key that names nothing;
 *  - the exporter's user is the process's that calls IPC_EXPORT, and an
 *    importer is judged by its own process, not by who opened the file
 *    (uid 65534 with a file root opened); one file holds at most
 *    NPU_MEM_IPC_MAX_KEYS live keys (-ENOSPC beyond, places given back by
 *    REVOKE and FREE); a key lives while its closed file is still mapped;
 *    SET_PIDS checks pids before the key, duplicates each take a place;
 *  - an importer is its process: a worker thread of a listed process
 *    imports, one of an unlisted process gets -EACCES; a thread's own id
 *    is no process to list (-ESRCH);
 *  - a listed pid that exits and is reused by a new process grants the new
 *    process nothing; pids are those of the caller's pid namespace;
 *  - another user (uid 65534), a process whose real or effective uid alone
 *    differs, and a process in another user namespace (root mapped to
 *    root) are refused without a list, even with ANY_PID, and admitted
 *    when listed; an unprivileged importer sees no physical address;
 *  - NPU_MEM_IPC_KEY64: 64 bits in key[0], only listed processes; with
 *    ANY_PID any process of the same user, whatever the list, and no
 *    other user;
 *  - -ENOENT for random keys, a key one bit off, and keys revoked, of a
 *    freed handle (also one still mapped), of a closed file or of an exited
 *    exporter; imports already made live on;
 *  - lifetime: the exporter exiting first leaves the importer's memory
 *    intact and usage counted until the importer frees and unmaps; the
 *    importer freeing first leaves the exporter untouched; the pages stay
 *    charged to the exporter's user (RLIMIT_MEMLOCK), never the importer's;
 *  - argument checks of the four ioctls, a new key for every export;
 *  - races (threads): IPC_IMPORT against IPC_REVOKE, FREE of the exported
 *    handle, close of the exporter's file and the exporter being killed;
 *    an import begun after any of these returned must fail, and everything
 *    is given back afterwards;
 *  - keys do not survive a module reload, and a reloaded module does not
 *    issue the keys it issued when loaded before (the last test: it
 *    reloads).
 * Needs root in a test guest (to change uid, pid_max, reload the module).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "nmtest_cred.h"
#include "nmtest_util.h"

/* Whether uid 65534 may open the node (nm_node_open_to_all in main). */
static bool node_open_to_all;

/* ------------------------------------------------------------------ */
/* The four ioctls                                                     */

static int ipc_export(int fd, uint32_t handle, uint32_t flags, uint64_t *key)
{
	struct npu_mem_ipc_export e = { .handle = handle, .flags = flags };
	int r = nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, &e);

	if (r == 0 && key) {
		key[0] = e.key[0];
		key[1] = e.key[1];
	}
	return r;
}

#define ipc_export_ok(fd, handle, flags, key) do {			\
	int _r = ipc_export((fd), (handle), (flags), (key));		\
	ck_assert_msg(_r == 0, "IPC_EXPORT handle %u flags %#x: %s",	\
		      (unsigned)(handle), (unsigned)(flags),		\
		      nm_retname(_r));					\
} while (0)

static int ipc_set_pids(int fd, const uint64_t *key, const pid_t *pids,
			uint32_t count)
{
	struct npu_mem_ipc_set_pids s = {
		.key = { key[0], key[1] },
		.pids = (uintptr_t)pids,
		.count = count,
	};

	return nm_ioctl(fd, NPU_MEM_IOCTL_IPC_SET_PIDS, &s);
}

static int ipc_import(int fd, const uint64_t *key,
		      struct npu_mem_ipc_import *out)
{
	struct npu_mem_ipc_import im = { .key = { key[0], key[1] } };
	int r = nm_ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, &im);

	if (out)
		*out = im;
	return r;
}

static int ipc_revoke(int fd, const uint64_t *key)
{
	struct npu_mem_ipc_revoke v = { .key = { key[0], key[1] } };

	return nm_ioctl(fd, NPU_MEM_IOCTL_IPC_REVOKE, &v);
}

/* Import and free at once: 0 or -errno, for "may this file import?" */
static int ipc_try(int fd, const uint64_t *key)
{
	struct npu_mem_ipc_import im;
	int r = ipc_import(fd, key, &im);

	if (r == 0)
		nm_free_ok(fd, im.handle);
	return r;
}

static void key_str(const uint64_t *key, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx%016llx", (unsigned long long)key[0],
		 (unsigned long long)key[1]);
}

/* A key nobody issued (with 2^-128 odds of being wrong) */
static void random_key(uint64_t *key)
{
	static uint64_t state;

	if (!state)
		state = (uint64_t)nm_now() * 1000003 ^ (uint64_t)getpid() << 32;
	key[0] = nm_rand64(&state);
	key[1] = nm_rand64(&state);
}

/* ------------------------------------------------------------------ */
/* Processes                                                           */

/*
 * In a forked child: close every descriptor of /dev/npu-mem it inherited.
 * Each process then uses only files it opened itself, and a parent's
 * close() really releases the parent's file (a child's copy would keep it
 * open, and its keys alive).  Sockets too, but keep: the parent's ends of
 * its other children's sockets would keep those children from seeing end
 * of file when the parent closes its end.
 */
static void drop_inherited_files(int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	ck_assert_msg(d, "/proc/self/fd: %s", nm_errname(errno));
	while ((e = readdir(d))) {
		char path[64], target[64];
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] == '.' || fd == dirfd(d) || fd == keep)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		if (!strcmp(target, NM_DEV_PATH) ||
		    !strncmp(target, "socket:", 7))
			close(fd);
	}
	closedir(d);
}

/*
 * Bytes over a socket: 0, or -EPIPE when the peer is gone (MSG_NOSIGNAL:
 * no SIGPIPE then; nm_read_full() reads the other way).
 */
static int xsend(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EPIPE;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

#define send_ok(fd, p, n) ck_assert_msg(xsend((fd), (p), (n)) == 0,	\
					"send to the other process: it is gone")
#define recv_ok(fd, p, n)						\
	ck_assert_msg(nm_read_full((fd), (p), (n)) == 0,		\
					"receive from the other process: "	\
					"it is gone (failed or exited early)")

/*
 * Fork a child that runs fn(sock, arg) and exits 0; sock is its end of a
 * socket pair whose other end is returned in *sock.  Whichever side dies,
 * the other reads end of file instead of hanging.
 */
static pid_t spawn(void (*fn)(int, void *), void *arg, int *sock)
{
	int sv[2];
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				    sv), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", nm_errname(errno));
	if (pid == 0) {
		close(sv[0]);
		drop_inherited_files(sv[1]);
		fn(sv[1], arg);
		_exit(0);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

/* ------------------------------------------------------------------ */
/* Probe: a process that tries the keys it is sent                     */

enum probe_kind {
	PROBE_PLAIN,		/* root, like the test */
	PROBE_UID,		/* uid 65534 (real and effective) */
	PROBE_RUID,		/* real uid 65534, effective 0 */
	PROBE_EUID,		/* real uid 0, effective 65534 */
	PROBE_USERNS,		/* a new user namespace, root mapped to root */
	PROBE_THREAD,		/* root, importing from a thread that is not
				 * its main thread, as worker threads do */
};

struct probe {
	pid_t pid;
	int sock;
	enum probe_kind kind;
};

struct probe_reply {
	int32_t ret;
	uint32_t pad;
	struct npu_mem_buffer buf;	/* as IPC_IMPORT gave it, ret == 0 */
};

/*
 * unshare(CLONE_NEWUSER), also from inside a chroot, which the kernel
 * refuses (EPERM) and vm-run's guests run every test in: leave it for the
 * root of the mount namespace (init's, /proc/1/root) for the call, then
 * chroot back, which the new namespace's capabilities allow.
 */
static int unshare_userns(void)
{
	int oldroot, r = 0;

	if (unshare(CLONE_NEWUSER) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	oldroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (oldroot < 0)
		return -errno;
	if (chroot("/proc/1/root") || chdir("/")) {
		r = -errno;
		close(oldroot);
		return r;
	}
	if (unshare(CLONE_NEWUSER))
		r = -errno;
	if (fchdir(oldroot) || chroot(".") || chdir("/"))
		r = r ? r : -errno;
	close(oldroot);
	return r;
}

static int probe_setup(enum probe_kind kind)
{
	char map[32];

	switch (kind) {
	case PROBE_PLAIN:
	case PROBE_THREAD:
		return 0;
	case PROBE_UID:
		return nm_become(NM_UID_NOBODY, NM_MEMLOCK_INF);
	case PROBE_RUID:
		if (setresuid(NM_UID_NOBODY, 0, 0))
			return -errno;
		return 0;
	case PROBE_EUID:
		if (setresuid(0, NM_UID_NOBODY, 0))
			return -errno;
		return 0;
	case PROBE_USERNS: {
		int r;

		r = unshare_userns();
		if (r)
			return r;
		/* the same uid and gid, seen from a new namespace */
		snprintf(map, sizeof(map), "0 0 1\n");
		r = nm_write_file("/proc/self/setgroups", "deny");
		if (!r)
			r = nm_write_file("/proc/self/uid_map", map);
		if (!r)
			r = nm_write_file("/proc/self/gid_map", map);
		return r;
	}
	}
	return -EINVAL;
}

struct probe_job {
	int fd;
	const uint64_t *key;
	struct probe_reply rep;
};

static pid_t thread_id(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* One import, and a free of what it gave: the answer goes in job->rep. */
static void probe_import(struct probe_job *job)
{
	struct npu_mem_ipc_import im;

	memset(&job->rep, 0, sizeof(job->rep));
	job->rep.ret = ipc_import(job->fd, job->key, &im);
	if (job->rep.ret == 0) {
		struct npu_mem_buffer q;

		job->rep.buf = im.buf;
		/* the handle works like one of its own */
		nm_assert_ok(nm_query(job->fd, im.handle, &q));
		nm_assert_buf_eq(&q, &im.buf);
		nm_free_ok(job->fd, im.handle);
	}
}

/* PROBE_THREAD's importer: a thread whose id is not the process's. */
static void *probe_worker(void *arg)
{
	ck_assert_msg(thread_id() != getpid(), "the worker thread has the "
		      "process's id %d", (int)getpid());
	probe_import(arg);
	return NULL;
}

/*
 * The probe: set itself up, open /dev/npu-mem (after the change, so that
 * the file's credentials are the process's), report 0 or why it could not,
 * then import every key it receives (PROBE_THREAD: each from a new thread), answering with the result (and the
 * buffer description), and free what it imported.
 */
static void probe_main(int sock, void *arg)
{
	enum probe_kind kind = *(enum probe_kind *)arg;
	int32_t st = probe_setup(kind);
	uint64_t key[2];
	int fd = -1;

	if (st == 0) {
		fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			st = -errno;
	}
	send_ok(sock, &st, sizeof(st));
	if (st)
		return;
	while (nm_read_full(sock, key, sizeof(key)) == 0) {
		struct probe_job job = { .fd = fd, .key = key };
		pthread_t th;

		if (kind == PROBE_THREAD) {
			ck_assert_int_eq(pthread_create(&th, NULL,
							probe_worker, &job), 0);
			ck_assert_int_eq(pthread_join(th, NULL), 0);
		} else {
			probe_import(&job);
		}
		send_ok(sock, &job.rep, sizeof(job.rep));
	}
	close(fd);
}

/* Start a probe: 0, or -errno of its setup (it has exited then) */
static int probe_start(struct probe *p, enum probe_kind kind)
{
	int32_t st;

	p->kind = kind;
	p->pid = spawn(probe_main, &kind, &p->sock);
	recv_ok(p->sock, &st, sizeof(st));
	if (st) {
		close(p->sock);
		nm_wait_ok(p->pid, "probe that could not set up");
		p->pid = 0;
	}
	return st;
}

static int probe_try(struct probe *p, const uint64_t *key,
		     struct npu_mem_buffer *buf)
{
	struct probe_reply rep;

	send_ok(p->sock, key, 2 * sizeof(uint64_t));
	recv_ok(p->sock, &rep, sizeof(rep));
	if (buf)
		*buf = rep.buf;
	return rep.ret;
}

static void probe_stop(struct probe *p)
{
	close(p->sock);
	nm_wait_ok(p->pid, "probe");
}

#define probe_expect(p, key, want, why) do {				\
	int _r = probe_try((p), (key), NULL);				\
	ck_assert_msg(_r == (want), "IPC_IMPORT by %s (pid %d): %s, "	\
		      "want %s", (why), (int)(p)->pid, nm_retname(_r),	\
		      nm_retname(want));				\
} while (0)

/* ------------------------------------------------------------------ */

struct share_arg {
	struct npu_mem_buffer ebuf;	/* the exporter's view */
};

/* Messages between exporter and importer in import_shares_memory */
enum { MSG_WROTE_B = 1, MSG_WROTE_C = 2 };

static void importer_share(int sock, void *varg)
{
	const struct share_arg *a = varg;
	const struct npu_mem_buffer *e = &a->ebuf;
	struct npu_mem_ipc_import im;
	struct npu_mem_buffer q;
	struct nm_counters c0, c1;
	struct npu_mem_sync s = { 0 };
	uint64_t key[2], half = e->size / 2;
	uint32_t msg;
	uint8_t *p;
	int fd = nm_open();

	recv_ok(sock, key, sizeof(key));
	nm_counters(fd, &c0);
	nm_assert_ok(ipc_import(fd, key, &im));
	ck_assert_uint_ne(im.handle, 0);
	ck_assert_msg(im.buf.flags & NPU_MEM_BUF_IMPORTED, "import flags %#x: "
		      "no NPU_MEM_BUF_IMPORTED", im.buf.flags);
	/* the same buffer: size, backing, policy, device mapping */
	ck_assert_uint_eq(im.buf.size, e->size);
	ck_assert_uint_eq(im.buf.huge_pages, e->huge_pages);
	ck_assert_uint_eq(im.buf.normal_pages, e->normal_pages);
	ck_assert_uint_eq(im.buf.giant_pages, e->giant_pages);
	ck_assert_uint_eq(im.buf.policy, e->policy);
	/* both opened by root: the same visibility, so the same flags */
	ck_assert_uint_eq(im.buf.flags & ~NPU_MEM_BUF_IMPORTED, e->flags);
	ck_assert_uint_eq(im.buf.dev_segments, e->dev_segments);
	ck_assert_msg(im.buf.dev_addr == e->dev_addr, "import dev_addr %#llx, "
		      "exporter's %#llx", (unsigned long long)im.buf.dev_addr,
		      (unsigned long long)e->dev_addr);
	nm_assert_ok(nm_query(fd, im.handle, &q));
	nm_assert_buf_eq(&q, &im.buf);
	/* a handle of this file; no new memory anywhere */
	nm_counters(fd, &c1);
	ck_assert_uint_eq(c1.client_buffers, c0.client_buffers + 1);
	ck_assert_uint_eq(c1.client_bytes, c0.client_bytes + e->size);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes);
	ck_assert_uint_eq(c1.huge_pages, c0.huge_pages);
	ck_assert_uint_eq(c1.normal_pages, c0.normal_pages);
	ck_assert_uint_eq(c1.buffers, c0.buffers);

	p = nm_mmap(fd, im.buf.mmap_offset, im.buf.size,
		    PROT_READ | PROT_WRITE);
	ck_assert_msg(p != MAP_FAILED, "mmap of the import: %s",
		      nm_errname(errno));
	ck_assert_uint_eq(nm_verify_at(p, e->size, 0xA, 0), SIZE_MAX);
	/* SYNC works on an import like on a buffer of its own */
	s.handle = im.handle;
	s.direction = NPU_MEM_SYNC_BIDIRECTIONAL;
	s.length = im.buf.size;
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_SYNC, &s));
	nm_fill_at(p + half, e->size - half, 0xB, half);
	msg = MSG_WROTE_B;
	send_ok(sock, &msg, sizeof(msg));
	recv_ok(sock, &msg, sizeof(msg));
	ck_assert_uint_eq(msg, MSG_WROTE_C);
	ck_assert_uint_eq(nm_verify_at(p, half, 0xC, 0), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(p + half, e->size - half, 0xB, half),
			  SIZE_MAX);
	munmap(p, im.buf.size);
	nm_free_ok(fd, im.handle);
	nm_assert_ret(nm_free(fd, im.handle), -ENOENT);
	nm_assert_counters_now(fd, &c0);
	close(fd);
}

START_TEST(import_shares_memory)
{
	struct share_arg arg;
	struct npu_mem_alloc a;
	struct nm_counters c0;
	uint64_t key[2], half;
	uint32_t msg;
	uint8_t *p;
	int fd = nm_open(), sock;
	pid_t pid;

	/* a 2 MiB chunk and 4 KiB pages: both kinds of backing are shared */
	nm_alloc_ok(fd, NM_2M + 64 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	half = a.buf.size / 2;
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill_at(p, a.buf.size, 0xA, 0);
	nm_counters(fd, &c0);
	ipc_export_ok(fd, a.handle, 0, key);
	ck_assert_msg(key[0] || key[1], "IPC_EXPORT gave the all-zero key");
	/* exporting adds no memory and no handle */
	nm_assert_counters_now(fd, &c0);
	printf("exported %llu bytes (%u huge, %u normal), dev_addr %#llx "
	       "flags %#x\n", (unsigned long long)a.buf.size,
	       a.buf.huge_pages, a.buf.normal_pages,
	       (unsigned long long)a.buf.dev_addr, a.buf.flags);
	arg.ebuf = a.buf;
	pid = spawn(importer_share, &arg, &sock);
	send_ok(sock, key, sizeof(key));
	recv_ok(sock, &msg, sizeof(msg));
	ck_assert_uint_eq(msg, MSG_WROTE_B);
	/* the importer's writes, through the exporter's own mapping */
	ck_assert_uint_eq(nm_verify_at(p, half, 0xA, 0), SIZE_MAX);
	ck_assert_uint_eq(nm_verify_at(p + half, a.buf.size - half, 0xB, half),
			  SIZE_MAX);
	nm_fill_at(p, half, 0xC, 0);
	msg = MSG_WROTE_C;
	send_ok(sock, &msg, sizeof(msg));
	nm_wait_ok(pid, "importer");
	close(sock);
	nm_assert_counters_now(fd, &c0);
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

/* A read-only buffer is read-only in every importer too. */
START_TEST(import_keeps_readonly)
{
	struct npu_mem_ipc_import im;
	struct npu_mem_alloc a;
	uint64_t key[2];
	int fd = nm_open(), fd2 = nm_open();
	uint8_t *p;

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
		    NPU_MEM_ALLOC_READONLY, &a);
	ipc_export_ok(fd, a.handle, 0, key);
	nm_assert_ok(ipc_import(fd2, key, &im));
	ck_assert_msg(im.buf.flags & NPU_MEM_BUF_READONLY, "import of a "
		      "read-only buffer: flags %#x", im.buf.flags);
	nm_assert_mmap_errno(nm_mmap(fd2, im.buf.mmap_offset, im.buf.size,
				     PROT_READ | PROT_WRITE), EACCES);
	p = nm_mmap(fd2, im.buf.mmap_offset, im.buf.size, PROT_READ);
	ck_assert_msg(p != MAP_FAILED, "read-only mmap of the import: %s",
		      nm_errname(errno));
	ck_assert_uint_eq(nm_nonzero(p, im.buf.size), SIZE_MAX);
	nm_assert_errno(mprotect(p, NM_4K, PROT_READ | PROT_WRITE), EACCES);
	munmap(p, im.buf.size);
	nm_free_ok(fd2, im.handle);
	nm_free_ok(fd, a.handle);
	close(fd2);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(allow_list_admits_only_listed)
{
	struct probe pa, pb;
	struct npu_mem_alloc a;
	uint64_t klist[2], kany[2], kfree[2];
	int fd = nm_open(), fd2 = nm_open();

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, klist);
	ipc_export_ok(fd, a.handle, NPU_MEM_IPC_ANY_PID, kany);
	ipc_export_ok(fd, a.handle, 0, kfree);
	nm_assert_ok(probe_start(&pa, PROBE_PLAIN));
	nm_assert_ok(probe_start(&pb, PROBE_PLAIN));
	nm_assert_ok(ipc_set_pids(fd, klist, &pa.pid, 1));
	nm_assert_ok(ipc_set_pids(fd, kany, &pa.pid, 1));

	probe_expect(&pa, klist, 0, "the listed process");
	probe_expect(&pb, klist, -EACCES, "a process of the same user, not "
		     "listed");
	/* not even the exporting process itself, through another file */
	nm_assert_ret(ipc_try(fd2, klist), -EACCES);
	/* ANY_PID: the list is ignored, the user decides */
	probe_expect(&pa, kany, 0, "the listed process, ANY_PID");
	probe_expect(&pb, kany, 0, "an unlisted process of the user, ANY_PID");
	nm_assert_ok(ipc_try(fd2, kany));
	/* without a list: every process of the user (B could import at all) */
	probe_expect(&pb, kfree, 0, "a process of the same user, no list");
	nm_assert_ok(ipc_try(fd2, kfree));
	/* adding B later admits it too, A stays admitted */
	nm_assert_ok(ipc_set_pids(fd, klist, &pb.pid, 1));
	probe_expect(&pb, klist, 0, "B, listed now");
	probe_expect(&pa, klist, 0, "A, listed first");
	nm_assert_ret(ipc_try(fd2, klist), -EACCES);
	probe_stop(&pa);
	probe_stop(&pb);
	nm_free_ok(fd, a.handle);
	close(fd2);
	close(fd);
}
END_TEST

/* A thread of this process that waits until unparked. */
struct parked {
	pthread_t th;
	int id[2];	/* the thread sends its thread id through this pipe */
	int go[2];	/* and waits for this one's end of file */
};

static void *parked_main(void *arg)
{
	struct parked *pk = arg;
	pid_t tid = thread_id();
	char c;

	ck_assert_int_eq(write(pk->id[1], &tid, sizeof(tid)), sizeof(tid));
	while (read(pk->go[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Start a parked thread: its thread id, not the process's. */
static pid_t park_thread(struct parked *pk)
{
	pid_t tid;

	ck_assert_int_eq(pipe2(pk->id, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(pk->go, O_CLOEXEC), 0);
	ck_assert_int_eq(pthread_create(&pk->th, NULL, parked_main, pk), 0);
	recv_ok(pk->id[0], &tid, sizeof(tid));
	return tid;
}

static void unpark_thread(struct parked *pk)
{
	close(pk->go[1]);
	ck_assert_int_eq(pthread_join(pk->th, NULL), 0);
	close(pk->go[0]);
	close(pk->id[0]);
	close(pk->id[1]);
}

/*
 * An importer is judged by its process, whichever of its threads calls:
 * a worker thread of a listed process imports, one of an unlisted process
 * of the same user is refused, and a thread's own id names no process to
 * list (-ESRCH).
 */
START_TEST(threads_import_as_their_process)
{
	struct probe pa, pb;
	struct npu_mem_alloc a;
	struct parked pk;
	uint64_t key[2], k64[2];
	int fd = nm_open(), ret;
	pid_t tid;

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, key);
	ipc_export_ok(fd, a.handle, NPU_MEM_IPC_KEY64, k64);

	/* judged once the thread is gone: a failure leaves nothing waiting */
	tid = park_thread(&pk);
	ck_assert_int_ne(tid, getpid());
	ret = ipc_set_pids(fd, key, &tid, 1);
	unpark_thread(&pk);
	ck_assert_msg(ret == -ESRCH, "IPC_SET_PIDS of thread %d of process "
		      "%d: %s, want -ESRCH", (int)tid, (int)getpid(),
		      nm_retname(ret));

	nm_assert_ok(probe_start(&pa, PROBE_THREAD));
	nm_assert_ok(probe_start(&pb, PROBE_THREAD));
	nm_assert_ok(ipc_set_pids(fd, key, &pa.pid, 1));
	nm_assert_ok(ipc_set_pids(fd, k64, &pa.pid, 1));
	probe_expect(&pa, key, 0, "a worker thread of the listed process");
	probe_expect(&pa, k64, 0, "a worker thread of the listed process, "
		     "KEY64");
	probe_expect(&pb, key, -EACCES, "a worker thread of an unlisted "
		     "process");
	probe_expect(&pb, k64, -EACCES, "a worker thread of an unlisted "
		     "process, KEY64");
	probe_stop(&pa);
	probe_stop(&pb);
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

/* A pid that names no process now: a child's, after it was reaped. */
static pid_t reaped_pid(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	nm_wait_ok(pid, "short-lived child");
	return pid;
}

struct foreign_res {
	int32_t set_pids, revoke;
};

/* Another process, with a file of its own, tries to manage the key. */
static void foreign_admin(int sock, void *arg)
{
	struct foreign_res res;
	uint64_t key[2];
	pid_t self = getpid();
	int fd = nm_open();

	(void)arg;
	recv_ok(sock, key, sizeof(key));
	res.set_pids = ipc_set_pids(fd, key, &self, 1);
	res.revoke = ipc_revoke(fd, key);
	send_ok(sock, &res, sizeof(res));
	close(fd);
}

START_TEST(set_pids_errors)
{
	struct npu_mem_ipc_set_pids s;
	struct foreign_res fres;
	struct npu_mem_alloc a;
	struct nm_guard g;
	struct probe p;
	uint64_t key[2], other[2];
	pid_t self = getpid(), dead, bad[2], *many, *gp;
	int fd = nm_open(), fd2 = nm_open(), sock;
	pid_t pid;

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, key);

	dead = reaped_pid();
	nm_assert_ret(ipc_set_pids(fd, key, &dead, 1), -ESRCH);
	bad[0] = 0;
	nm_assert_ret(ipc_set_pids(fd, key, bad, 1), -ESRCH);
	nm_assert_ret(ipc_set_pids(fd, key, &self, 0), -EINVAL);
	many = calloc(NPU_MEM_IPC_MAX_PIDS + 1, sizeof(*many));
	ck_assert_ptr_nonnull(many);
	for (int i = 0; i <= NPU_MEM_IPC_MAX_PIDS; i++)
		many[i] = self;
	nm_assert_ret(ipc_set_pids(fd, key, many, NPU_MEM_IPC_MAX_PIDS + 1),
		      -EINVAL);
	nm_assert_ret(ipc_set_pids(fd, key, many, UINT32_MAX), -EINVAL);
	free(many);
	memset(&s, 0, sizeof(s));
	s.key[0] = key[0];
	s.key[1] = key[1];
	s.pids = (uintptr_t)&self;
	s.count = 1;
	s.flags = 1;
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_SET_PIDS, &s), -EINVAL);
	nm_assert_ret(ipc_set_pids(fd, key, nm_unmapped_addr(), 1), -EFAULT);
	nm_assert_ret(ipc_set_pids(fd, key, NULL, 1), -EFAULT);
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_SET_PIDS,
			       nm_unmapped_addr()), -EFAULT);
	random_key(other);
	nm_assert_ret(ipc_set_pids(fd, other, &self, 1), -ENOENT);
	/* pids are checked before the key */
	nm_assert_ret(ipc_set_pids(fd, other, &dead, 1), -ESRCH);
	nm_assert_ret(ipc_revoke(fd, other), -ENOENT);
	/* another open file, even of this process: not the exporter's */
	nm_assert_ret(ipc_set_pids(fd2, key, &self, 1), -EPERM);
	nm_assert_ret(ipc_revoke(fd2, key), -EPERM);
	/* another process with its own file */
	pid = spawn(foreign_admin, NULL, &sock);
	send_ok(sock, key, sizeof(key));
	recv_ok(sock, &fres, sizeof(fres));
	nm_wait_ok(pid, "another process managing the key");
	close(sock);
	nm_assert_ret(fres.set_pids, -EPERM);
	nm_assert_ret(fres.revoke, -EPERM);

	/* none of the refused calls made a list: any process of the user
	 * still imports */
	nm_assert_ok(probe_start(&p, PROBE_PLAIN));
	probe_expect(&p, key, 0, "an unlisted process, after refused "
		     "SET_PIDS calls");
	nm_assert_ok(ipc_try(fd2, key));

	/* a pids array running into an unmapped page */
	gp = nm_guard_place(&g, 2 * sizeof(pid_t), sizeof(pid_t));
	gp[0] = self;
	nm_assert_ret(ipc_set_pids(fd, key, gp, 2), -EFAULT);
	nm_guard_release(&g);

	/* the same file through another descriptor is the exporter's */
	{
		int dupfd = dup(fd);

		ck_assert_int_ge(dupfd, 0);
		nm_assert_ok(ipc_set_pids(dupfd, key, &p.pid, 1));
		probe_expect(&p, key, 0, "listed through a dup()ed descriptor");
		nm_assert_ok(ipc_revoke(dupfd, key));
		close(dupfd);
	}
	probe_expect(&p, key, -ENOENT, "after REVOKE");
	nm_assert_ret(ipc_revoke(fd, key), -ENOENT);
	nm_assert_ret(ipc_set_pids(fd, key, &self, 1), -ENOENT);
	probe_stop(&p);
	nm_free_ok(fd, a.handle);
	close(fd2);
	close(fd);
}
END_TEST

/*
 * One file holds at most NPU_MEM_IPC_MAX_KEYS live keys: one more export is
 * -ENOSPC and makes nothing; a revoked key's place is free again, FREE of
 * the handle gives every place back, and another file counts its own.
 */
START_TEST(keys_per_file_limit)
{
	uint64_t (*keys)[2] = calloc(NPU_MEM_IPC_MAX_KEYS, sizeof(*keys));
	struct npu_mem_alloc a, b;
	uint64_t k[2];
	int fd = nm_open(), fd2 = nm_open();

	ck_assert_ptr_nonnull(keys);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_alloc_ok(fd2, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &b);
	for (int i = 0; i < NPU_MEM_IPC_MAX_KEYS; i++)
		ipc_export_ok(fd, a.handle, i % 3 == 2 ? NPU_MEM_IPC_KEY64 : 0,
			      keys[i]);
	nm_assert_ret(ipc_export(fd, a.handle, 0, NULL), -ENOSPC);
	nm_assert_ret(ipc_export(fd, a.handle, NPU_MEM_IPC_ANY_PID, NULL),
		      -ENOSPC);
	/* the other file has its own count */
	ipc_export_ok(fd2, b.handle, 0, k);
	nm_assert_ok(ipc_try(fd, k));
	/* the first and the last still import */
	nm_assert_ok(ipc_try(fd2, keys[1]));
	nm_assert_ok(ipc_try(fd2, keys[NPU_MEM_IPC_MAX_KEYS - 1]));
	/* a revoked key's place is free, once */
	nm_assert_ok(ipc_revoke(fd, keys[1]));
	ipc_export_ok(fd, a.handle, 0, keys[1]);
	nm_assert_ret(ipc_export(fd, a.handle, 0, NULL), -ENOSPC);
	/* FREE of the handle takes its keys and their places */
	nm_free_ok(fd, a.handle);
	nm_assert_ret(ipc_try(fd2, keys[1]), -ENOENT);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	for (int i = 0; i < NPU_MEM_IPC_MAX_KEYS; i++)
		ipc_export_ok(fd, a.handle, 0, keys[i]);
	nm_assert_ret(ipc_export(fd, a.handle, 0, NULL), -ENOSPC);
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd2, b.handle);
	free(keys);
	close(fd2);
	close(fd);
}
END_TEST

struct caller_res {
	int32_t become, import, alloc, export;
	uint64_t key[2];
};

/*
 * A file root opened, used after the process became uid 65534: it tries
 * root's key (sent first) and exports a buffer of its own, then keeps the
 * file until the other end closes.
 */
static void roots_file_as_nobody(int sock, void *arg)
{
	struct caller_res res = { 0 };
	struct npu_mem_alloc a;
	uint64_t key[2];
	int fd = nm_open();
	char c;

	(void)arg;
	recv_ok(sock, key, sizeof(key));
	res.become = nm_become(NM_UID_NOBODY, NM_MEMLOCK_INF);
	if (!res.become) {
		res.import = ipc_try(fd, key);
		res.alloc = nm_alloc(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
				     0, &a);
		if (!res.alloc)
			res.export = ipc_export(fd, a.handle, 0, res.key);
	}
	send_ok(sock, &res, sizeof(res));
	while (nm_read_full(sock, &c, 1) == 0)
		;
	close(fd);
}

/*
 * Sharing is between processes, whoever opened the file: the exporter's
 * user is that of the process calling IPC_EXPORT, and an importer is
 * judged by the calling process.  A process of uid 65534 using a file
 * root opened is refused root's key (no list), and the key it exports
 * admits uid 65534's processes, not root's.
 */
START_TEST(the_calling_process_decides)
{
	struct caller_res res;
	struct npu_mem_alloc a;
	struct probe p;
	uint64_t key[2];
	int fd, sock, r;
	pid_t pid;

	if (!node_open_to_all)
		nm_skip("uid 65534 cannot open " NM_DEV_PATH " (needs root in "
			"a test guest)");
	fd = nm_open();
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, key);
	pid = spawn(roots_file_as_nobody, NULL, &sock);
	send_ok(sock, key, sizeof(key));
	recv_ok(sock, &res, sizeof(res));
	nm_assert_ok(res.become);
	ck_assert_msg(res.import == -EACCES, "IPC_IMPORT of root's key by uid "
		      "65534 through a file root opened: %s, want -EACCES",
		      nm_retname(res.import));
	nm_assert_ok(res.alloc);
	nm_assert_ok(res.export);
	r = ipc_try(fd, res.key);
	ck_assert_msg(r == -EACCES, "root imports the key uid 65534 exported "
		      "through a file root opened: %s, want -EACCES",
		      nm_retname(r));
	nm_assert_ok(probe_start(&p, PROBE_UID));
	probe_expect(&p, res.key, 0, "uid 65534, the exporting process's user");
	probe_stop(&p);
	close(sock);
	nm_wait_ok(pid, "uid 65534 with root's file");
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

/*
 * A key lives until its file is released: closed while a mapping of it
 * remains, the file still exports; its last munmap releases it.
 */
START_TEST(key_lives_while_the_file_is_mapped)
{
	struct npu_mem_alloc a;
	struct nm_counters c0;
	uint64_t key[2];
	int fd = nm_open(), fd2 = nm_open();
	uint8_t *p;

	nm_counters(fd2, &c0);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	ipc_export_ok(fd, a.handle, 0, key);
	close(fd);
	nm_assert_ok(ipc_try(fd2, key));
	munmap(p, a.buf.size);
	nm_assert_ret(ipc_try(fd2, key), -ENOENT);
	/* and the buffer with it */
	nm_assert_counters_now(fd2, &c0);
	close(fd2);
}
END_TEST

/* ------------------------------------------------------------------ */

/* n processes that do nothing until *release is closed (or we die). */
static pid_t *sleepers_start(int n, int *release)
{
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	int pfd[2];

	ck_assert_ptr_nonnull(pids);
	ck_assert_int_eq(pipe(pfd), 0);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			ck_abort_msg("fork of sleeper %d: %s", i,
				     nm_errname(errno));
		}
		if (pids[i] == 0) {
			char c;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(pfd[1]);
			while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(pfd[0]);
	*release = pfd[1];
	return pids;
}

static void sleepers_stop(pid_t *pids, int n, int release)
{
	close(release);
	for (int i = 0; i < n; i++) {
		int st;

		NM_REQUIRE(waitpid(pids[i], &st, 0) == pids[i],
			   "waitpid sleeper %d: %s", i, nm_errname(errno));
	}
	free(pids);
}

START_TEST(set_pids_list_full)
{
	enum { N = NPU_MEM_IPC_MAX_PIDS + 1, FIRST = 600 };
	struct npu_mem_alloc a;
	uint64_t key[2], key2[2];
	double t0 = nm_now();
	int fd, release;
	pid_t *pids, *same;

	/* distinct live processes: a list holds processes, not numbers */
	pids = sleepers_start(N, &release);
	printf("%d processes started in %.1f s\n", N, nm_now() - t0);
	fd = nm_open();
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, key);
	ipc_export_ok(fd, a.handle, 0, key2);
	nm_assert_ok(ipc_set_pids(fd, key, pids, FIRST));
	/* FIRST + (N - FIRST) is one over the max: refused, adding nothing */
	nm_assert_ret(ipc_set_pids(fd, key, pids + FIRST, N - FIRST), -ENOSPC);
	/* so the max is still reachable */
	nm_assert_ok(ipc_set_pids(fd, key, pids + FIRST, N - FIRST - 1));
	nm_assert_ret(ipc_set_pids(fd, key, pids + N - 1, 1), -ENOSPC);
	/* every key has a list of its own */
	nm_assert_ok(ipc_set_pids(fd, key2, pids + N - 1, 1));
	nm_assert_ok(ipc_set_pids(fd, key2, pids, NPU_MEM_IPC_MAX_PIDS - 1));
	nm_assert_ret(ipc_set_pids(fd, key2, pids + 5, 1), -ENOSPC);
	/* duplicates each take a place */
	nm_assert_ok(ipc_revoke(fd, key2));
	ipc_export_ok(fd, a.handle, 0, key2);
	same = calloc(NPU_MEM_IPC_MAX_PIDS, sizeof(*same));
	ck_assert_ptr_nonnull(same);
	for (int i = 0; i < NPU_MEM_IPC_MAX_PIDS; i++)
		same[i] = pids[0];
	nm_assert_ok(ipc_set_pids(fd, key2, same, NPU_MEM_IPC_MAX_PIDS));
	nm_assert_ret(ipc_set_pids(fd, key2, same, 1), -ENOSPC);
	free(same);
	nm_free_ok(fd, a.handle);
	close(fd);
	sleepers_stop(pids, N, release);
	printf("done in %.1f s\n", nm_now() - t0);
}
END_TEST

/* ------------------------------------------------------------------ */

/*
 * Make the next fork() likely to get pid `want`: through ns_last_pid when
 * the kernel has it, else by lowering pid_max to want + 1 so that pid
 * allocation wraps around soon.  Returns 0 or -errno.
 */
static char saved_pid_max[32];

static void save_pid_max(void)
{
	char *s = nm_read_file("/proc/sys/kernel/pid_max");

	saved_pid_max[0] = 0;
	if (s) {
		snprintf(saved_pid_max, sizeof(saved_pid_max), "%s", s);
		free(s);
	}
}

static void restore_pid_max(void)
{
	if (saved_pid_max[0])
		nm_write_file("/proc/sys/kernel/pid_max", saved_pid_max);
}

START_TEST(reused_pid_grants_nothing)
{
	struct npu_mem_alloc a;
	struct probe c;
	uint64_t key[2];
	int fd = nm_open(), tries = 0, result = -1, st;
	bool via_last = true, pid_max_lowered = false;
	char buf[32];
	double t0;
	pid_t want;

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, key);
	nm_assert_ok(probe_start(&c, PROBE_PLAIN));
	nm_assert_ok(ipc_set_pids(fd, key, &c.pid, 1));
	probe_expect(&c, key, 0, "the listed child");
	want = c.pid;
	probe_stop(&c);
	/* gone and reaped: listing it now is refused */
	nm_assert_ret(ipc_set_pids(fd, key, &want, 1), -ESRCH);

	t0 = nm_now();
	for (tries = 0; tries < 4000 && nm_now() - t0 < 60; tries++) {
		pid_t pid;

		if (via_last) {
			snprintf(buf, sizeof(buf), "%d", want - 1);
			if (nm_write_file("/proc/sys/kernel/ns_last_pid",
					  buf)) {
				/* no ns_last_pid: wrap around pid_max */
				via_last = false;
				if (want <= 301)
					break;
				snprintf(buf, sizeof(buf), "%d", want + 1);
				if (nm_write_file("/proc/sys/kernel/pid_max",
						  buf))
					break;
				pid_max_lowered = true;
			}
		}
		fflush(stdout);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int nfd;

			if (getpid() != want)
				_exit(100);
			drop_inherited_files(-1);
			nfd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
			if (nfd < 0)
				_exit(101);
			st = ipc_import(nfd, key, NULL);
			_exit(st == -EACCES ? 0 : st == 0 ? 1 : 2);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (pid != want)
			continue;
		ck_assert_msg(WIFEXITED(st), "process with the reused pid: %s",
			      nm_status_str(st));
		result = WEXITSTATUS(st);
		break;
	}
	if (pid_max_lowered)
		restore_pid_max();
	nm_free_ok(fd, a.handle);
	close(fd);
	if (result < 0) {
		nm_skip("pid %d was not given to a new process within %d "
			"forks (%s)", (int)want, tries,
			via_last ? "ns_last_pid" : "pid_max lowered");
	}
	printf("pid %d reused after %d forks (%s)\n", (int)want, tries + 1,
	       via_last ? "ns_last_pid" : "pid_max lowered");
	ck_assert_msg(result == 0, "a new process with the listed (dead) "
		      "process's pid %d: IPC_IMPORT %s, want -EACCES",
		      (int)want, result == 1 ? "succeeded" :
		      result == 2 ? "failed otherwise" : "could not run");
}
END_TEST

/* ------------------------------------------------------------------ */

/* Exit codes of the processes in pids_resolved_in_callers_namespace */
enum {
	NS_OK = 0, NS_NO_PIDNS = 3, NS_SETUP = 4, NS_NOT_PID2 = 5,
	NS_SET_PIDS = 6, NS_IMPORT_REFUSED = 7, NS_IMPORT_OTHER = 8,
	NS_IMPORT_UNLISTED = 9, NS_CHILD = 10,
};

/*
 * Pid 1 of a new pid namespace: export, list "2" (the importer, as this
 * namespace numbers it), and see that the importer is admitted; list "1"
 * (itself) on a second key, which the importer must not pass.
 */
static int ns_exporter(void)
{
	struct npu_mem_alloc a;
	uint64_t k[2], k2[2];
	int go[2], fd, st, r;
	pid_t two = 2, one = 1, pid;

	fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 || pipe(go) ||
	    nm_alloc(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a) ||
	    ipc_export(fd, a.handle, 0, k) || ipc_export(fd, a.handle, 0, k2))
		return NS_SETUP;
	pid = fork();
	if (pid < 0)
		return NS_SETUP;
	if (pid == 0) {
		char c;
		int ifd;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(NS_SETUP);
		ifd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (ifd < 0)
			_exit(NS_SETUP);
		r = ipc_try(ifd, k);
		if (r)
			_exit(r == -EACCES ? NS_IMPORT_REFUSED :
					     NS_IMPORT_OTHER);
		_exit(ipc_try(ifd, k2) == -EACCES ? NS_OK : NS_IMPORT_UNLISTED);
	}
	close(go[0]);
	if (pid != 2)
		return NS_NOT_PID2;
	if (ipc_set_pids(fd, k, &two, 1) || ipc_set_pids(fd, k2, &one, 1))
		return NS_SET_PIDS;
	if (write(go[1], "g", 1) != 1 || waitpid(pid, &st, 0) != pid)
		return NS_SETUP;
	return WIFEXITED(st) ? WEXITSTATUS(st) : NS_CHILD;
}

START_TEST(pids_resolved_in_callers_namespace)
{
	static const char *const what[] = {
		[NS_SETUP] = "setup failed", [NS_NOT_PID2] = "the importer "
		"is not pid 2", [NS_SET_PIDS] = "IPC_SET_PIDS failed",
		[NS_IMPORT_REFUSED] = "pid 2 of the exporter's namespace was "
		"refused: the pid was resolved elsewhere",
		[NS_IMPORT_OTHER] = "IPC_IMPORT failed", [NS_IMPORT_UNLISTED] =
		"the importer passed a list naming only the exporter",
		[NS_CHILD] = "the importer died",
	};
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pid_t e;

		drop_inherited_files(-1);
		if (unshare(CLONE_NEWPID))
			_exit(NS_NO_PIDNS);
		e = fork();
		if (e < 0)
			_exit(NS_SETUP);
		if (e == 0)
			_exit(ns_exporter());
		if (waitpid(e, &st, 0) != e || !WIFEXITED(st))
			_exit(NS_CHILD);
		_exit(WEXITSTATUS(st));
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "pid namespace test: %s",
		      nm_status_str(st));
	if (WEXITSTATUS(st) == NS_NO_PIDNS)
		nm_skip("unshare(CLONE_NEWPID) failed");
	ck_assert_msg(WEXITSTATUS(st) == NS_OK, "exporter as pid 1 of a new "
		      "pid namespace, the importer its pid 2: %s",
		      WEXITSTATUS(st) < NM_ARRAY_SIZE(what) &&
		      what[WEXITSTATUS(st)] ? what[WEXITSTATUS(st)] :
		      nm_status_str(st));
	printf("in a new pid namespace, IPC_SET_PIDS(2) admitted that "
	       "namespace's pid 2\n");
}
END_TEST

START_TEST(other_users_need_a_list)
{
	static const struct {
		enum probe_kind kind;
		const char *what;
	} kinds[] = {
		{ PROBE_UID, "uid 65534" },
		{ PROBE_RUID, "real uid 65534, effective 0" },
		{ PROBE_EUID, "real uid 0, effective 65534" },
		{ PROBE_USERNS, "root in another user namespace" },
	};
	struct npu_mem_info info;
	struct npu_mem_alloc a;
	int fd;

	if (!node_open_to_all)
		nm_skip("uid 65534 cannot open " NM_DEV_PATH " (needs root in "
			"a test guest)");
	fd = nm_open();
	nm_get_info_ok(fd, &info);
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	for (size_t i = 0; i < NM_ARRAY_SIZE(kinds); i++) {
		struct npu_mem_buffer b;
		uint64_t klist[2], kany[2], k64any[2], k2[2];
		struct probe p;
		int r;

		ipc_export_ok(fd, a.handle, 0, klist);
		ipc_export_ok(fd, a.handle, NPU_MEM_IPC_ANY_PID, kany);
		ipc_export_ok(fd, a.handle, NPU_MEM_IPC_ANY_PID |
			      NPU_MEM_IPC_KEY64, k64any);
		ipc_export_ok(fd, a.handle, 0, k2);
		r = probe_start(&p, kinds[i].kind);
		if (r && kinds[i].kind == PROBE_USERNS) {
			printf("NOTE: no user namespace for the probe: %s\n",
			       nm_retname(r));
			nm_free_ok(fd, a.handle);
			close(fd);
			nm_skip("unshare(CLONE_NEWUSER) as root: %s",
				nm_retname(r));
		}
		ck_assert_msg(r == 0, "probe as %s: %s", kinds[i].what,
			      nm_retname(r));
		probe_expect(&p, klist, -EACCES, kinds[i].what);
		probe_expect(&p, kany, -EACCES, kinds[i].what);
		probe_expect(&p, k64any, -EACCES, kinds[i].what);
		nm_assert_ok(ipc_set_pids(fd, klist, &p.pid, 1));
		r = probe_try(&p, klist, &b);
		ck_assert_msg(r == 0, "IPC_IMPORT by %s, listed: %s",
			      kinds[i].what, nm_retname(r));
		ck_assert_uint_eq(b.size, a.buf.size);
		ck_assert(b.flags & NPU_MEM_BUF_IMPORTED);
		/* the list of one key admits to that key only */
		probe_expect(&p, k2, -EACCES, kinds[i].what);
		/* what the importer sees follows its own file's rights:
		 * physical addresses stay hidden from the unprivileged */
		if (kinds[i].kind == PROBE_UID &&
		    !(info.dev_flags & NPU_MEM_DEV_IOMMU)) {
			ck_assert_msg(b.flags & NPU_MEM_BUF_DEV_HIDDEN,
				      "import by uid 65534 without an IOMMU: "
				      "flags %#x, dev_addr %#llx", b.flags,
				      (unsigned long long)b.dev_addr);
			ck_assert_uint_eq(b.dev_addr, 0);
			ck_assert_uint_eq(b.dev_segments, 0);
		}
		printf("%s: refused without a list and with ANY_PID, "
		       "admitted when listed\n", kinds[i].what);
		probe_stop(&p);
		nm_assert_ok(ipc_revoke(fd, klist));
		nm_assert_ok(ipc_revoke(fd, kany));
		nm_assert_ok(ipc_revoke(fd, k64any));
		nm_assert_ok(ipc_revoke(fd, k2));
	}
	nm_free_ok(fd, a.handle);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(key64)
{
	struct npu_mem_alloc a;
	struct probe p;
	uint64_t k[2], k2[2], kany[2], wrong[2];
	int fd = nm_open(), fd2 = nm_open();

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, NPU_MEM_IPC_KEY64, k);
	ipc_export_ok(fd, a.handle, NPU_MEM_IPC_KEY64, k2);
	ck_assert_msg(k[1] == 0 && k2[1] == 0, "KEY64 keys with key[1] "
		      "%#llx, %#llx", (unsigned long long)k[1],
		      (unsigned long long)k2[1]);
	ck_assert_msg(k[0] != k2[0], "two KEY64 exports gave the same key "
		      "%#llx", (unsigned long long)k[0]);
	ipc_export_ok(fd, a.handle, NPU_MEM_IPC_KEY64 | NPU_MEM_IPC_ANY_PID,
		      kany);
	ck_assert_msg(kany[1] == 0, "KEY64 | ANY_PID key with key[1] %#llx",
		      (unsigned long long)kany[1]);
	nm_assert_ok(probe_start(&p, PROBE_PLAIN));
	/* no list yet: nobody, whatever the user */
	probe_expect(&p, k, -EACCES, "a process of the same user, KEY64, no "
		     "list");
	nm_assert_ret(ipc_try(fd2, k), -EACCES);
	/* ANY_PID: the exporter's user, as a 128-bit key without a list */
	probe_expect(&p, kany, 0, "a process of the same user, KEY64 | "
		     "ANY_PID");
	nm_assert_ok(ipc_try(fd2, kany));
	nm_assert_ok(ipc_set_pids(fd, k, &p.pid, 1));
	probe_expect(&p, k, 0, "the listed process, KEY64");
	probe_expect(&p, k2, -EACCES, "the process listed for another key");
	nm_assert_ret(ipc_try(fd2, k), -EACCES);
	/* ANY_PID ignores a list: the unlisted keep their access */
	nm_assert_ok(ipc_set_pids(fd, kany, &p.pid, 1));
	nm_assert_ok(ipc_try(fd2, kany));
	nm_assert_ok(ipc_revoke(fd, kany));
	nm_assert_ret(ipc_try(fd2, kany), -ENOENT);
	/* the whole 128 bits are the key: key[1] set names nothing */
	wrong[0] = k[0];
	wrong[1] = 1;
	probe_expect(&p, wrong, -ENOENT, "the listed process, key[1] != 0");
	nm_assert_ok(ipc_revoke(fd, k));
	probe_expect(&p, k, -ENOENT, "the listed process, KEY64 revoked");
	probe_stop(&p);
	nm_free_ok(fd, a.handle);
	close(fd2);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */

static void exporter_exits(int sock, void *arg)
{
	struct npu_mem_alloc a;
	uint64_t key[2];
	int fd = nm_open();

	(void)arg;
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, key);
	send_ok(sock, key, sizeof(key));
	/* exit holding the handle, the file and the key */
}

START_TEST(stale_keys_name_nothing)
{
	struct npu_mem_ipc_import im, im2;
	struct npu_mem_alloc a;
	struct nm_counters c0;
	uint64_t k[2], k2[2], x[2];
	int fd, fd2 = nm_open(), sock;
	uint8_t *p, *q;
	pid_t pid;

	nm_counters(fd2, &c0);
	/* never issued */
	memset(x, 0, sizeof(x));
	nm_assert_ret(ipc_import(fd2, x, NULL), -ENOENT);
	memset(x, 0xff, sizeof(x));
	nm_assert_ret(ipc_import(fd2, x, NULL), -ENOENT);
	for (int i = 0; i < 64; i++) {
		random_key(x);
		nm_assert_ret(ipc_import(fd2, x, NULL), -ENOENT);
	}

	fd = nm_open();
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 7);
	ipc_export_ok(fd, a.handle, 0, k);
	ipc_export_ok(fd, a.handle, 0, k2);
	/* one bit off, in either half */
	for (int bit = 0; bit < 128; bit += 9) {
		x[0] = k[0] ^ (bit < 64 ? 1ULL << bit : 0);
		x[1] = k[1] ^ (bit >= 64 ? 1ULL << (bit - 64) : 0);
		nm_assert_ret(ipc_import(fd2, x, NULL), -ENOENT);
	}

	/* revoked: only that key, and imports made before stay */
	nm_assert_ok(ipc_import(fd2, k, &im));
	nm_assert_ok(ipc_revoke(fd, k));
	nm_assert_ret(ipc_import(fd2, k, NULL), -ENOENT);
	nm_assert_ret(ipc_revoke(fd, k), -ENOENT);
	pid = getpid();
	nm_assert_ret(ipc_set_pids(fd, k, &pid, 1), -ENOENT);
	nm_assert_ok(nm_query(fd2, im.handle, NULL));
	q = nm_mmap(fd2, im.buf.mmap_offset, im.buf.size, PROT_READ);
	ck_assert_msg(q != MAP_FAILED, "mmap of an import whose key was "
		      "revoked: %s", nm_errname(errno));
	ck_assert_uint_eq(nm_verify(q, im.buf.size, 7), SIZE_MAX);
	munmap(q, im.buf.size);
	nm_assert_ok(ipc_import(fd2, k2, &im2));
	nm_free_ok(fd2, im2.handle);

	/* the handle freed, although still mapped: the key is gone */
	nm_free_ok(fd, a.handle);
	nm_assert_ret(ipc_import(fd2, k2, NULL), -ENOENT);
	nm_assert_ret(ipc_revoke(fd, k2), -ENOENT);
	/* the exporter's mapping and the earlier import are still the memory */
	nm_fill(p, a.buf.size, 8);
	q = nm_mmap(fd2, im.buf.mmap_offset, im.buf.size, PROT_READ);
	ck_assert_msg(q != MAP_FAILED, "mmap of an import whose exporter "
		      "freed: %s", nm_errname(errno));
	ck_assert_uint_eq(nm_verify(q, im.buf.size, 8), SIZE_MAX);
	munmap(q, im.buf.size);
	munmap(p, a.buf.size);
	nm_free_ok(fd2, im.handle);

	/* the exporter's file closed (nothing mapped: released at once) */
	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ipc_export_ok(fd, a.handle, 0, k);
	ipc_export_ok(fd, a.handle, NPU_MEM_IPC_ANY_PID, k2);
	nm_assert_ok(ipc_try(fd2, k));
	close(fd);
	nm_assert_ret(ipc_import(fd2, k, NULL), -ENOENT);
	nm_assert_ret(ipc_import(fd2, k2, NULL), -ENOENT);

	/* the exporting process exited without FREE or close */
	pid = spawn(exporter_exits, NULL, &sock);
	recv_ok(sock, k, sizeof(k));
	nm_wait_ok(pid, "exporter");
	close(sock);
	nm_assert_ret(ipc_import(fd2, k, NULL), -ENOENT);

	nm_assert_counters_now(fd2, &c0);
	close(fd2);
}
END_TEST

/* ------------------------------------------------------------------ */

enum { MSG_IMPORTED = 1, MSG_EXIT = 2 };

/* Exports 4 MiB filled with pattern 0x5, exits when told. */
static void exporter_then_exit(int sock, void *arg)
{
	struct npu_mem_alloc a;
	uint64_t key[2];
	uint32_t msg;
	uint8_t *p;
	int fd = nm_open();

	(void)arg;
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 5);
	ipc_export_ok(fd, a.handle, 0, key);
	send_ok(sock, key, sizeof(key));
	recv_ok(sock, &msg, sizeof(msg));
	ck_assert_uint_eq(msg, MSG_IMPORTED);
	/* the importer wrote 6 over the first page */
	ck_assert_uint_eq(nm_verify(p, NM_4K, 6), SIZE_MAX);
	/* exit with everything still held: mapping, handle, file, key */
}

START_TEST(exporter_exits_first)
{
	struct npu_mem_ipc_import im;
	struct nm_counters c0, c1, c;
	uint64_t key[2];
	uint32_t msg = MSG_IMPORTED;
	int fd = nm_open(), sock;
	uint8_t *p;
	pid_t pid;

	nm_counters(fd, &c0);
	pid = spawn(exporter_then_exit, NULL, &sock);
	recv_ok(sock, key, sizeof(key));
	nm_assert_ok(ipc_import(fd, key, &im));
	p = nm_mmap(fd, im.buf.mmap_offset, im.buf.size,
		    PROT_READ | PROT_WRITE);
	ck_assert_msg(p != MAP_FAILED, "mmap of the import: %s",
		      nm_errname(errno));
	nm_counters(fd, &c1);
	ck_assert_uint_eq(c1.allocated_bytes, c0.allocated_bytes + im.buf.size);
	nm_fill(p, NM_4K, 6);
	send_ok(sock, &msg, sizeof(msg));
	nm_wait_ok(pid, "exporter");
	close(sock);

	/* the exporter is gone: its key too, not the memory */
	nm_assert_ret(ipc_import(fd, key, NULL), -ENOENT);
	ck_assert_uint_eq(nm_verify(p, NM_4K, 6), SIZE_MAX);
	{
		/* the rest of the buffer as the exporter filled it */
		uint8_t *ref = malloc(im.buf.size);

		ck_assert_ptr_nonnull(ref);
		nm_fill(ref, im.buf.size, 5);
		ck_assert_msg(!memcmp(p + NM_4K, ref + NM_4K,
				      im.buf.size - NM_4K),
			      "the import's bytes changed when the exporter "
			      "exited");
		free(ref);
	}
	nm_fill(p, im.buf.size, 9);
	ck_assert_uint_eq(nm_verify(p, im.buf.size, 9), SIZE_MAX);
	nm_assert_ok(nm_query(fd, im.handle, NULL));
	nm_counters(fd, &c);
	nm_assert_counters_eq(&c1, &c);

	/* FREE while mapped: still counted; munmap: given back */
	nm_free_ok(fd, im.handle);
	nm_counters(fd, &c);
	ck_assert_uint_eq(c.allocated_bytes, c1.allocated_bytes);
	ck_assert_uint_eq(c.client_buffers, c0.client_buffers);
	ck_assert_uint_eq(nm_verify(p, im.buf.size, 9), SIZE_MAX);
	munmap(p, im.buf.size);
	nm_assert_counters_now(fd, &c0);
	close(fd);
}
END_TEST

static void importer_frees(int sock, void *arg)
{
	struct npu_mem_ipc_import im;
	uint64_t key[2];
	uint32_t msg = MSG_IMPORTED;
	uint8_t *p;
	int fd = nm_open();

	(void)arg;
	recv_ok(sock, key, sizeof(key));
	nm_assert_ok(ipc_import(fd, key, &im));
	p = nm_mmap(fd, im.buf.mmap_offset, im.buf.size,
		    PROT_READ | PROT_WRITE);
	ck_assert_msg(p != MAP_FAILED, "mmap: %s", nm_errname(errno));
	nm_fill(p, im.buf.size, 3);
	munmap(p, im.buf.size);
	nm_free_ok(fd, im.handle);
	/* and a second import, left to close() */
	nm_assert_ok(ipc_import(fd, key, &im));
	close(fd);
	send_ok(sock, &msg, sizeof(msg));
}

START_TEST(importer_frees_first)
{
	struct nm_counters c0, c1;
	struct npu_mem_alloc a;
	struct npu_mem_buffer q;
	uint64_t key[2];
	uint32_t msg;
	int fd = nm_open(), sock;
	uint8_t *p;
	pid_t pid;

	nm_counters(fd, &c0);
	nm_alloc_ok(fd, 3 * NM_MiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	ipc_export_ok(fd, a.handle, 0, key);
	nm_counters(fd, &c1);
	pid = spawn(importer_frees, NULL, &sock);
	send_ok(sock, key, sizeof(key));
	recv_ok(sock, &msg, sizeof(msg));
	nm_wait_ok(pid, "importer");
	close(sock);
	/* the exporter's buffer, handle, mapping and key are untouched */
	nm_assert_counters_now(fd, &c1);
	nm_assert_ok(nm_query(fd, a.handle, &q));
	nm_assert_buf_eq(&q, &a.buf);
	ck_assert_uint_eq(nm_verify(p, a.buf.size, 3), SIZE_MAX);
	nm_fill(p, a.buf.size, 4);
	{
		int fd2 = nm_open();

		nm_assert_ok(ipc_try(fd2, key));
		close(fd2);
	}
	munmap(p, a.buf.size);
	nm_free_ok(fd, a.handle);
	nm_assert_counters_now(fd, &c0);
	close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Charges: uid 65534 exports, uid 65533 imports                       */

#define ELIMIT		(8 * NM_MiB)
#define ESIZE		(6 * NM_MiB)
#define ILIMIT		(1 * NM_MiB)

/* Bytes this user may still allocate, in 256 KiB steps, in a new file. */
static uint64_t room(void)
{
	uint32_t h[256];
	uint64_t got = 0;
	int n = 0, fd = nm_open();

	while (n < (int)NM_ARRAY_SIZE(h)) {
		struct npu_mem_alloc x;
		int r = nm_alloc(fd, 256 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
				 0, &x);

		if (r == -ENOMEM)
			break;
		ck_assert_msg(r == 0, "ALLOC 256 KiB: %s", nm_retname(r));
		h[n++] = x.handle;
		got += x.buf.size;
	}
	for (int i = 0; i < n; i++)
		nm_free_ok(fd, h[i]);
	close(fd);
	return got;
}

static void charge_exporter(int sock, void *arg)
{
	struct npu_mem_alloc a;
	uint64_t key[2];
	pid_t importer;
	uint32_t msg;
	uint8_t *p;
	int fd;

	(void)arg;
	nm_become_ok(NM_UID_NOBODY, ELIMIT);
	fd = nm_open();
	nm_alloc_ok(fd, ESIZE, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 0x65534);
	munmap(p, a.buf.size);
	ipc_export_ok(fd, a.handle, 0, key);
	recv_ok(sock, &importer, sizeof(importer));
	nm_assert_ok(ipc_set_pids(fd, key, &importer, 1));
	send_ok(sock, key, sizeof(key));
	recv_ok(sock, &msg, sizeof(msg));
	ck_assert_uint_eq(msg, MSG_EXIT);
	/* exit: the file goes, the import holds the buffer */
}

struct charge_res {
	uint64_t room_before, room_after;
};

static void charge_importer(int sock, void *arg)
{
	struct npu_mem_ipc_import im;
	struct charge_res res;
	pid_t self = getpid();
	uint64_t key[2];
	uint32_t msg;
	uint8_t *p;
	int fd;

	(void)arg;
	nm_become_ok(NM_UID_OTHER, ILIMIT);
	res.room_before = room();
	send_ok(sock, &self, sizeof(self));
	recv_ok(sock, key, sizeof(key));
	fd = nm_open();
	/* 6 MiB with RLIMIT_MEMLOCK 1 MiB: nothing is charged to this user */
	nm_assert_ok(ipc_import(fd, key, &im));
	ck_assert_uint_eq(im.buf.size, ESIZE);
	res.room_after = room();
	send_ok(sock, &res, sizeof(res));
	/* hold it until told, past the exporter's exit */
	recv_ok(sock, &msg, sizeof(msg));
	ck_assert_uint_eq(msg, MSG_EXIT);
	p = nm_mmap(fd, im.buf.mmap_offset, im.buf.size, PROT_READ);
	ck_assert_msg(p != MAP_FAILED, "mmap: %s", nm_errname(errno));
	ck_assert_uint_eq(nm_verify(p, im.buf.size, 0x65534), SIZE_MAX);
	munmap(p, im.buf.size);
	nm_free_ok(fd, im.handle);
	close(fd);
	/* still nothing charged here */
	res.room_after = room();
	send_ok(sock, &res, sizeof(res));
}

struct room_arg {
	uid_t uid;
	uint64_t limit;
};

static void room_reporter(int sock, void *varg)
{
	struct room_arg *a = varg;
	uint64_t r;

	nm_become_ok(a->uid, a->limit);
	r = room();
	send_ok(sock, &r, sizeof(r));
}

static uint64_t room_of(uid_t uid, uint64_t limit)
{
	struct room_arg arg = { uid, limit };
	uint64_t r;
	int sock;
	pid_t pid = spawn(room_reporter, &arg, &sock);

	recv_ok(sock, &r, sizeof(r));
	nm_wait_ok(pid, "room reporter");
	close(sock);
	return r;
}

START_TEST(charged_to_the_exporters_user)
{
	struct charge_res res;
	struct nm_counters c0;
	uint64_t key[2], r;
	uint32_t msg = MSG_EXIT;
	int se, si, obs;
	pid_t pe, pi, ipid;

	if (!node_open_to_all)
		nm_skip("other users cannot open " NM_DEV_PATH " (needs root "
			"in a test guest)");
	obs = nm_open();
	nm_counters(obs, &c0);
	r = room_of(NM_UID_NOBODY, ELIMIT);
	ck_assert_msg(r == ELIMIT, "uid %d has %llu bytes of room at the "
		      "start, want %llu", NM_UID_NOBODY,
		      (unsigned long long)r, (unsigned long long)ELIMIT);
	pe = spawn(charge_exporter, NULL, &se);
	pi = spawn(charge_importer, NULL, &si);
	recv_ok(si, &ipid, sizeof(ipid));
	send_ok(se, &ipid, sizeof(ipid));
	recv_ok(se, key, sizeof(key));
	send_ok(si, key, sizeof(key));
	recv_ok(si, &res, sizeof(res));
	printf("importer uid %d: room %llu before, %llu holding a %llu-byte "
	       "import\n", NM_UID_OTHER, (unsigned long long)res.room_before,
	       (unsigned long long)res.room_after,
	       (unsigned long long)ESIZE);
	ck_assert_uint_eq(res.room_before, ILIMIT);
	ck_assert_msg(res.room_after == ILIMIT, "the importer's user lost "
		      "room to an import: %llu of %llu left",
		      (unsigned long long)res.room_after,
		      (unsigned long long)ILIMIT);
	r = room_of(NM_UID_NOBODY, ELIMIT);
	ck_assert_uint_eq(r, ELIMIT - ESIZE);
	/* the exporter exits; the import holds the pages, its user pays */
	send_ok(se, &msg, sizeof(msg));
	nm_wait_ok(pe, "exporter");
	close(se);
	r = room_of(NM_UID_NOBODY, ELIMIT);
	printf("exporter uid %d gone, import live: room %llu of %llu\n",
	       NM_UID_NOBODY, (unsigned long long)r,
	       (unsigned long long)ELIMIT);
	ck_assert_msg(r == ELIMIT - ESIZE, "after the exporter exited, uid "
		      "%d has %llu bytes of room while an import holds %llu "
		      "of its bytes", NM_UID_NOBODY, (unsigned long long)r,
		      (unsigned long long)ESIZE);
	send_ok(si, &msg, sizeof(msg));
	recv_ok(si, &res, sizeof(res));
	nm_wait_ok(pi, "importer");
	close(si);
	ck_assert_uint_eq(res.room_after, ILIMIT);
	r = room_of(NM_UID_NOBODY, ELIMIT);
	ck_assert_msg(r == ELIMIT, "after the import was freed, uid %d has "
		      "%llu bytes of room, want %llu", NM_UID_NOBODY,
		      (unsigned long long)r, (unsigned long long)ELIMIT);
	nm_assert_global_now(obs, &c0);
	close(obs);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(export_args)
{
	struct npu_mem_ipc_export e;
	struct npu_mem_ipc_import im;
	struct npu_mem_ipc_revoke v;
	struct npu_mem_alloc a;
	struct nm_counters c0;
	uint64_t k[8][2];
	int fd = nm_open(), fd2 = nm_open();
	char s1[40], s2[40];

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	nm_counters(fd, &c0);
	/* a new, non-zero key every time */
	for (int i = 0; i < 8; i++) {
		ipc_export_ok(fd, a.handle, i % 2 ? NPU_MEM_IPC_ANY_PID : 0,
			      k[i]);
		ck_assert_msg(k[i][0] || k[i][1], "key %d is all zero", i);
		/* 128 random bits: neither half is (almost surely) zero */
		ck_assert_msg(k[i][0] && k[i][1], "key %d has a zero half", i);
		for (int j = 0; j < i; j++) {
			key_str(k[i], s1, sizeof(s1));
			key_str(k[j], s2, sizeof(s2));
			ck_assert_msg(strcmp(s1, s2), "keys %d and %d are "
				      "both %s", j, i, s1);
		}
	}
	key_str(k[0], s1, sizeof(s1));
	key_str(k[1], s2, sizeof(s2));
	printf("keys: %s %s ...\n", s1, s2);
	nm_assert_counters_now(fd, &c0);
	/* bad flags */
	nm_assert_ret(ipc_export(fd, a.handle, 1U << 2, NULL), -EINVAL);
	nm_assert_ret(ipc_export(fd, a.handle, 1U << 31, NULL), -EINVAL);
	nm_assert_ret(ipc_export(fd, a.handle, ~0U, NULL), -EINVAL);
	/* no such handle, in this file */
	nm_assert_ret(ipc_export(fd, 0, 0, NULL), -ENOENT);
	nm_assert_ret(ipc_export(fd, a.handle + 1000, 0, NULL), -ENOENT);
	nm_assert_ret(ipc_export(fd2, a.handle, 0, NULL), -ENOENT);
	/* bad pointers */
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT,
			       nm_unmapped_addr()), -EFAULT);
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT,
			       nm_unmapped_addr()), -EFAULT);
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_REVOKE,
			       nm_unmapped_addr()), -EFAULT);
	/* IMPORT: flags must be 0, and nothing is made when refused */
	memset(&im, 0, sizeof(im));
	im.key[0] = k[0][0];
	im.key[1] = k[0][1];
	im.flags = 1;
	nm_assert_ret(nm_ioctl(fd2, NPU_MEM_IOCTL_IPC_IMPORT, &im), -EINVAL);
	im.flags = 1U << 31;
	nm_assert_ret(nm_ioctl(fd2, NPU_MEM_IOCTL_IPC_IMPORT, &im), -EINVAL);
	{
		struct nm_counters c;

		nm_counters(fd2, &c);
		ck_assert_uint_eq(c.client_buffers, 0);
	}
	/* REVOKE: flags and pad must be 0; the key survives a refusal */
	memset(&v, 0, sizeof(v));
	v.key[0] = k[0][0];
	v.key[1] = k[0][1];
	v.flags = 1;
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_REVOKE, &v), -EINVAL);
	v.flags = 0;
	v.pad = 1;
	nm_assert_ret(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_REVOKE, &v), -EINVAL);
	nm_assert_ok(ipc_try(fd2, k[0]));
	v.pad = 0;
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_REVOKE, &v));
	nm_assert_ret(ipc_try(fd2, k[0]), -ENOENT);
	/* the export struct's output does not depend on garbage in key[] */
	memset(&e, 0xa5, sizeof(e));
	e.handle = a.handle;
	e.flags = 0;
	nm_assert_ok(nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, &e));
	ck_assert_msg(e.key[0] != 0xa5a5a5a5a5a5a5a5ULL ||
		      e.key[1] != 0xa5a5a5a5a5a5a5a5ULL, "IPC_EXPORT left the "
		      "key as it was passed in");
	{
		uint64_t ek[2] = { e.key[0], e.key[1] };

		nm_assert_ok(ipc_try(fd2, ek));
	}
	nm_free_ok(fd, a.handle);
	for (int i = 1; i < 8; i++)
		nm_assert_ret(ipc_try(fd2, k[i]), -ENOENT);
	close(fd2);
	close(fd);
}
END_TEST

/*
 * Exporting an import (re-export): the header does not forbid it, and the
 * module allows it, since an importer may use the memory "like its own".
 * The new key belongs to the importer's file: it lives as long as the
 * importer's handle, whatever the first exporter does, and only the
 * importer's file may revoke it.
 */
START_TEST(reexport_of_an_import)
{
	struct npu_mem_ipc_import im, im2;
	struct npu_mem_alloc a;
	uint64_t k[2], k2[2];
	int fd = nm_open(), fd2 = nm_open(), fd3 = nm_open(), r;
	uint8_t *p, *q;

	nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_fill(p, a.buf.size, 11);
	ipc_export_ok(fd, a.handle, 0, k);
	nm_assert_ok(ipc_import(fd2, k, &im));
	r = ipc_export(fd2, im.handle, 0, k2);
	printf("IPC_EXPORT of an imported handle: %s\n", nm_retname(r));
	ck_assert_msg(r == 0, "IPC_EXPORT of an import: %s", nm_retname(r));
	/* the second key names the same memory, and lives as long as the
	 * importer's handle, not the original exporter's */
	nm_assert_ok(ipc_import(fd3, k2, &im2));
	ck_assert(im2.buf.flags & NPU_MEM_BUF_IMPORTED);
	ck_assert_uint_eq(im2.buf.size, a.buf.size);
	q = nm_mmap(fd3, im2.buf.mmap_offset, im2.buf.size, PROT_READ);
	ck_assert_msg(q != MAP_FAILED, "mmap: %s", nm_errname(errno));
	ck_assert_uint_eq(nm_verify(q, im2.buf.size, 11), SIZE_MAX);
	munmap(q, im2.buf.size);
	nm_free_ok(fd3, im2.handle);
	nm_free_ok(fd, a.handle);
	nm_assert_ret(ipc_try(fd3, k), -ENOENT);
	nm_assert_ok(ipc_try(fd3, k2));
	nm_assert_ret(ipc_revoke(fd, k2), -EPERM);
	nm_free_ok(fd2, im.handle);
	nm_assert_ret(ipc_try(fd3, k2), -ENOENT);
	munmap(p, a.buf.size);
	close(fd3);
	close(fd2);
	close(fd);
}
END_TEST

/* Registered host memory is the process's own: it cannot be exported. */
START_TEST(export_host_memory_refused)
{
	struct npu_mem_host_register h = { 0 };
	int fd = nm_open(), r;
	void *mem;

	mem = mmap(NULL, 64 * NM_KiB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mem != MAP_FAILED);
	memset(mem, 1, 64 * NM_KiB);
	h.addr = (uintptr_t)mem;
	h.size = 64 * NM_KiB;
	r = nm_ioctl(fd, NPU_MEM_IOCTL_HOST_REGISTER, &h);
	if (r == -ENOTTY) {
		close(fd);
		munmap(mem, 64 * NM_KiB);
		nm_skip("this module has no HOST_REGISTER");
	}
	ck_assert_msg(r == 0, "HOST_REGISTER: %s", nm_retname(r));
	nm_assert_ret(ipc_export(fd, h.handle, 0, NULL), -EINVAL);
	nm_assert_ret(ipc_export(fd, h.handle, NPU_MEM_IPC_KEY64, NULL),
		      -EINVAL);
	nm_free_ok(fd, h.handle);
	close(fd);
	munmap(mem, 64 * NM_KiB);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Races                                                               */

enum race_action {
	RACE_REVOKE,		/* IPC_REVOKE of the key */
	RACE_FREE,		/* FREE of the exported handle */
	RACE_CLOSE,		/* close() of the exporter's file */
	RACE_KILL,		/* the exporting process is killed */
	RACE_NACTIONS
};

static const char *const race_names[] = {
	"revoke", "free", "close", "kill",
};

#define RACE_IMPORTERS	3
/* What a run must have done to prove anything: rounds of each action,
 * and imports that succeeded while they raced. */
#define RACE_MIN_ROUNDS		5
#define RACE_MIN_IMPORTS	20

static double race_seconds(void)
{
	return (double)nm_env_u64("NPU_MEM_IPC_RACE_SECONDS", 6);
}

struct race {
	pthread_mutex_t lock;
	uint64_t key[2];
	atomic_int stop;
	atomic_ulong imports, enoent, mapped;
	atomic_int error;		/* first unexpected result */
	atomic_int error_where;
};

static void race_error(struct race *r, int err, int where)
{
	int zero = 0;

	if (atomic_compare_exchange_strong(&r->error, &zero, err ? err : -1))
		atomic_store(&r->error_where, where);
	atomic_store(&r->stop, 1);
}

static void *race_importer(void *arg)
{
	struct race *r = arg;
	unsigned long n = 0;
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		race_error(r, -errno, 0);
		return NULL;
	}
	while (!atomic_load(&r->stop)) {
		struct npu_mem_ipc_import im;
		uint64_t key[2];
		int ret;

		pthread_mutex_lock(&r->lock);
		key[0] = r->key[0];
		key[1] = r->key[1];
		pthread_mutex_unlock(&r->lock);
		ret = ipc_import(fd, key, &im);
		if (ret == -ENOENT) {
			atomic_fetch_add(&r->enoent, 1);
			sched_yield();
			continue;
		}
		if (ret) {
			race_error(r, ret, 1);
			break;
		}
		atomic_fetch_add(&r->imports, 1);
		if (++n % 4 == 0) {
			/* the memory is there, whatever the exporter did */
			volatile uint8_t *p = nm_mmap(fd, im.buf.mmap_offset,
						      NM_4K, PROT_READ |
						      PROT_WRITE);

			if (p == MAP_FAILED) {
				race_error(r, -errno, 2);
				break;
			}
			p[0] = p[1] + 1;
			munmap((void *)p, NM_4K);
			atomic_fetch_add(&r->mapped, 1);
		}
		ret = nm_free(fd, im.handle);
		if (ret) {
			race_error(r, ret, 3);
			break;
		}
	}
	close(fd);
	return NULL;
}

/* The exporting process of RACE_KILL: export, tell, wait to be killed. */
static void race_exporter(int sock)
{
	struct npu_mem_alloc a;
	uint64_t key[2] = { 0, 0 };
	int fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd >= 0 && nm_alloc(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
				&a) == 0)
		ipc_export(fd, a.handle, 0, key);
	xsend(sock, key, sizeof(key));
	pause();
	_exit(0);
}

START_TEST(race_import_against_revoke_free_close_kill)
{
	unsigned long done[RACE_NACTIONS] = { 0 };
	pthread_t th[RACE_IMPORTERS];
	struct nm_counters c0, c1;
	struct race r;
	uint64_t seed = (uint64_t)getpid() * 7919;
	int efd = -1, chk = nm_open(), obs = nm_open();
	unsigned long rounds = 0;
	struct nm_span span;
	bool enough = false;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.lock, NULL);
	random_key(r.key);		/* nothing until the first export */
	nm_counters(obs, &c0);
	for (int i = 0; i < RACE_IMPORTERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, race_importer,
						&r), 0);
	/* The seconds asked for, then on until every action and the imports
	 * reached their minimums: a slow guest makes the run longer, not a
	 * failure. */
	nm_span_start(&span, race_seconds());
	while (nm_span_more(&span, enough) && !atomic_load(&r.stop)) {
		enum race_action act = (enum race_action)(rounds %
							 RACE_NACTIONS);
		struct npu_mem_alloc a = { 0 };
		uint64_t key[2];
		pid_t pid = 0;
		int sv[2], ret;

		if (act == RACE_KILL) {
			NM_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM |
					      SOCK_CLOEXEC, 0, sv) == 0,
				   "socketpair: %s", nm_errname(errno));
			pid = fork();
			NM_REQUIRE(pid >= 0, "fork: %s", nm_errname(errno));
			if (pid == 0) {
				close(sv[0]);
				close(chk);
				close(obs);
				if (efd >= 0)
					close(efd);
				race_exporter(sv[1]);
			}
			close(sv[1]);
			ret = nm_read_full(sv[0], key, sizeof(key));
			close(sv[0]);
			NM_REQUIRE(ret == 0 && (key[0] || key[1]),
				   "the exporting process did not export");
		} else {
			if (efd < 0)
				efd = nm_open();
			ret = nm_alloc(efd, 64 * NM_KiB,
				       NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
			NM_REQUIRE(ret == 0, "ALLOC: %s", nm_retname(ret));
			ret = ipc_export(efd, a.handle, 0, key);
			NM_REQUIRE(ret == 0, "IPC_EXPORT: %s", nm_retname(ret));
		}
		pthread_mutex_lock(&r.lock);
		r.key[0] = key[0];
		r.key[1] = key[1];
		pthread_mutex_unlock(&r.lock);
		usleep((useconds_t)(nm_rand64(&seed) % 3000));

		switch (act) {
		case RACE_REVOKE:
			ret = ipc_revoke(efd, key);
			break;
		case RACE_FREE:
			ret = nm_free(efd, a.handle);
			break;
		case RACE_CLOSE:
			ret = close(efd) ? -errno : 0;
			efd = -1;
			break;
		default:
			ret = kill(pid, SIGKILL) ? -errno : 0;
			if (ret == 0 && waitpid(pid, NULL, 0) != pid)
				ret = -errno;
			break;
		}
		NM_REQUIRE(ret == 0, "%s: %s", race_names[act],
			   nm_retname(ret));
		/* once that returned, no import may begin to succeed */
		ret = ipc_import(chk, key, NULL);
		NM_REQUIRE(ret == -ENOENT, "IPC_IMPORT after the exporter's "
			   "%s returned: %s, want -ENOENT", race_names[act],
			   nm_retname(ret));
		if (act == RACE_REVOKE) {
			ret = nm_free(efd, a.handle);
			NM_REQUIRE(ret == 0, "FREE after revoke: %s",
				   nm_retname(ret));
		}
		done[act]++;
		rounds++;
		enough = atomic_load(&r.imports) >= RACE_MIN_IMPORTS;
		for (int i = 0; i < RACE_NACTIONS; i++)
			enough = enough && done[i] >= RACE_MIN_ROUNDS;
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < RACE_IMPORTERS; i++)
		pthread_join(th[i], NULL);
	if (efd >= 0)
		close(efd);
	close(chk);
	printf("%.1f s: %lu rounds (revoke %lu, free %lu, close %lu, kill "
	       "%lu); %lu imports (%lu mapped), %lu -ENOENT\n",
	       nm_span_secs(&span), rounds, done[RACE_REVOKE], done[RACE_FREE],
	       done[RACE_CLOSE], done[RACE_KILL],
	       (unsigned long)atomic_load(&r.imports),
	       (unsigned long)atomic_load(&r.mapped),
	       (unsigned long)atomic_load(&r.enoent));
	ck_assert_msg(atomic_load(&r.error) == 0, "importer: unexpected %s "
		      "(step %d)", nm_retname(atomic_load(&r.error)),
		      atomic_load(&r.error_where));
	/* progress: every action raced often enough, imports happened */
	for (int i = 0; i < RACE_NACTIONS; i++)
		ck_assert_msg(done[i] >= RACE_MIN_ROUNDS, "only %lu rounds of "
			      "%s in %.0f s, the ceiling", done[i],
			      race_names[i], nm_span_secs(&span));
	ck_assert_msg(atomic_load(&r.imports) >= RACE_MIN_IMPORTS, "only %lu "
		      "imports succeeded in %.0f s, the ceiling",
		      (unsigned long)atomic_load(&r.imports),
		      nm_span_secs(&span));
	/* everything given back */
	nm_counters(obs, &c1);
	nm_assert_global_eq(&c0, &c1);
	close(obs);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(keys_do_not_survive_reload)
{
	enum { N = 4 };
	struct npu_mem_alloc a[N];
	uint64_t old[N][2], fresh[N][2];
	char why[256], path[] = "/tmp/ipc_mem_key.XXXXXX";
	int fd, kf;

	/*
	 * Reload twice, so that both sets of keys are the first ones a freshly
	 * loaded module issues: keys derived from anything that starts over
	 * with the module (a counter, a seed fixed at load) would repeat.
	 */
	if (nm_reload_module(why, sizeof(why)))
		nm_skip("%s", why);
	if (node_open_to_all)
		nm_node_open_to_all();
	fd = nm_open();
	/* what a process keeps across the reload: keys, in a file */
	for (int i = 0; i < N; i++) {
		nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
			    &a[i]);
		ipc_export_ok(fd, a[i].handle, NPU_MEM_IPC_ANY_PID, old[i]);
	}
	kf = mkstemp(path);
	ck_assert_int_ge(kf, 0);
	ck_assert_int_eq(write(kf, old, sizeof(old)), (ssize_t)sizeof(old));
	close(fd);
	if (nm_reload_module(why, sizeof(why))) {
		close(kf);
		unlink(path);
		nm_skip("%s", why);
	}
	if (node_open_to_all)
		nm_node_open_to_all();
	memset(old, 0, sizeof(old));
	ck_assert_int_eq(pread(kf, old, sizeof(old), 0), (ssize_t)sizeof(old));
	close(kf);
	unlink(path);

	/* the new module makes the same buffers and exports again: none of
	 * the old keys may name them */
	fd = nm_open();
	for (int i = 0; i < N; i++) {
		nm_alloc_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
			    &a[i]);
		ipc_export_ok(fd, a[i].handle, NPU_MEM_IPC_ANY_PID, fresh[i]);
	}
	{
		int fd2 = nm_open();

		for (int i = 0; i < N; i++) {
			nm_assert_ret(ipc_import(fd2, old[i], NULL), -ENOENT);
			for (int j = 0; j < N; j++)
				ck_assert_msg(old[i][0] != fresh[j][0] ||
					      old[i][1] != fresh[j][1],
					      "key %d after the reload equals "
					      "key %d before it", j, i);
			nm_assert_ok(ipc_try(fd2, fresh[i]));
		}
		close(fd2);
	}
	close(fd);
}
END_TEST

static const struct nm_fixture pid_max_fx = {
	.setup = save_pid_max, .teardown = restore_pid_max, .unchecked = true,
};

int main(void)
{
	Suite *s = nm_suite("ipc_mem");
	int ret;

	nm_require_device();
	node_open_to_all = nm_node_open_to_all() == 0;
	if (!node_open_to_all)
		printf("NOTE: other users cannot open " NM_DEV_PATH ": their "
		       "tests skip\n");
	nm_add(s, import_shares_memory, 60);
	nm_add(s, import_keeps_readonly, 30);
	nm_add(s, allow_list_admits_only_listed, 60);
	nm_add(s, threads_import_as_their_process, 60);
	nm_add(s, keys_per_file_limit, 60);
	nm_add(s, the_calling_process_decides, 60);
	nm_add(s, key_lives_while_the_file_is_mapped, 30);
	nm_add(s, set_pids_errors, 60);
	nm_add(s, set_pids_list_full, 120);
	nm_add_fx(s, reused_pid_grants_nothing, 120, &pid_max_fx);
	nm_add(s, pids_resolved_in_callers_namespace, 30);
	nm_add(s, other_users_need_a_list, 60);
	nm_add(s, key64, 60);
	nm_add(s, stale_keys_name_nothing, 60);
	nm_add(s, exporter_exits_first, 60);
	nm_add(s, importer_frees_first, 60);
	nm_add(s, charged_to_the_exporters_user, 120);
	nm_add(s, export_args, 30);
	nm_add(s, reexport_of_an_import, 30);
	nm_add(s, export_host_memory_refused, 30);
	nm_add(s, race_import_against_revoke_free_close_kill,
	       nm_span_ceiling(race_seconds()) + 120);
	/* last: it reloads the module */
	nm_add(s, keys_do_not_survive_reload, 300);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_node_restore();
	return ret;
}
