// SPDX-License-Identifier: GPL-2.0-only
/*
 * io_paths: the kernel's own I/O paths work on buffer mappings, for each
 * policy, with ranges that start mid-page and cross 2 MiB chunk boundaries.
 * Paths that pin or look up the user pages (GUP) are the ones PFN-map
 * drivers break; they are:
 *  - process_vm_readv / process_vm_writev, from this process and another;
 *  - /proc/<pid>/mem reads and writes (access_remote_vm);
 *  - vmsplice() of the mapping into a pipe;
 *  - O_DIRECT read() into / write() from the mapping on a tmpfs file (tmpfs
 *    takes O_DIRECT since Linux 6.6: on older kernels open() gives EINVAL and
 *    that one test says so and checks nothing);
 *  - read()/write() of a 9p file with cache=none (the guest's results share
 *    $VM_OUTDIR under tests/vm/vm-run): virtio-9p pins the user pages for
 *    zero-copy, like O_DIRECT on a block device;
 * and the copying paths: read()/write() of pipes and regular files.
 * A READONLY buffer's mapping can be a source but never a destination
 * (EFAULT), and a mapping whose buffer was freed still works for I/O.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>

#include "nmtest_util.h"

static const uint32_t policies[] = { NPU_MEM_POLICY_NORMAL_ONLY,
				     NPU_MEM_POLICY_HUGE_ONLY,
				     NPU_MEM_POLICY_HUGE_FIRST };

struct bm {
	int fd;
	struct npu_mem_alloc a;
	uint8_t *p;
	size_t size;
};

static void bm_open(struct bm *b, uint32_t policy, uint32_t flags)
{
	b->fd = nm_open();
	nm_alloc_ok(b->fd, 4 * NM_MiB + 2 * NM_4K, policy, flags, &b->a);
	b->size = b->a.buf.size;
	b->p = nm_map_ok(b->fd, &b->a,
			 flags & NPU_MEM_ALLOC_READONLY ?
			 PROT_READ : PROT_READ | PROT_WRITE);
}

static void bm_close(struct bm *b)
{
	munmap(b->p, b->size);
	nm_free_ok(b->fd, b->a.handle);
	close(b->fd);
}

/* The ranges every test moves: [off, off+len) of the buffer */
static const struct {
	size_t off, len;
} ranges[] = {
	{ 0, NM_4K },
	{ 100, 3 * NM_4K },			/* mid-page start */
	{ NM_2M - 3 * NM_4K - 7, 6 * NM_4K + 13 },	/* across 2 MiB */
	{ 0, 4 * NM_MiB + 2 * NM_4K },		/* everything */
};

#define FOR_RANGES(b, r) \
	for (size_t r = 0; r < NM_ARRAY_SIZE(ranges); r++) \
		if (ranges[r].off + ranges[r].len <= (b)->size)

static uint8_t *scratch(size_t len)
{
	uint8_t *s = malloc(len);

	ck_assert(s);
	return s;
}

/* ---------------------------------------------------------------- */

static void pvm(bool write_to_buf, bool other_process)
{
	for (size_t pi = 0; pi < NM_ARRAY_SIZE(policies); pi++) {
		struct bm b;

		bm_open(&b, policies[pi], 0);
		FOR_RANGES(&b, r) {
			size_t off = ranges[r].off, len = ranges[r].len;
			uint64_t seed = pi * 100 + r + (write_to_buf ? 50 : 0);
			uint8_t *s = scratch(len);
			pid_t pid = 0, target = getpid();

			memset(b.p, 0, b.size);
			if (write_to_buf)
				nm_fill(s, len, seed);
			else
				nm_fill_at(b.p + off, len, seed, 0);
			if (other_process) {
				pid = fork();
				ck_assert_int_ge(pid, 0);
			}
			if (pid == 0) {
				/* two remote pieces to also split iovecs */
				size_t h = len / 2;
				struct iovec local = { s, len };
				struct iovec remote[2] = {
					{ b.p + off, h },
					{ b.p + off + h, len - h },
				};
				ssize_t n = write_to_buf ?
					process_vm_writev(target, &local, 1,
							  remote, 2, 0) :
					process_vm_readv(target, &local, 1,
							 remote, 2, 0);

				if (other_process) {
					if (n != (ssize_t)len)
						_exit(1);
					if (!write_to_buf &&
					    nm_verify(s, len, seed) != SIZE_MAX)
						_exit(2);
					_exit(0);
				}
				ck_assert_msg(n == (ssize_t)len,
					      "%s %s range %zu: %zd (%s)",
					      write_to_buf ?
					      "process_vm_writev" :
					      "process_vm_readv",
					      nm_policy_name(policies[pi]), r,
					      n, nm_errname(errno));
			}
			if (other_process)
				nm_wait_ok(pid, "process_vm_* of the parent");
			if (write_to_buf || !other_process) {
				uint8_t *chk = write_to_buf ? b.p + off : s;

				ck_assert_msg(nm_verify(chk, len, seed) ==
					      SIZE_MAX, "%s range %zu: wrong "
					      "bytes", nm_policy_name(
						      policies[pi]), r);
			}
			if (write_to_buf) {
				/* nothing outside the range moved */
				ck_assert_uint_eq(nm_nonzero(b.p, off),
						  SIZE_MAX);
				ck_assert_uint_eq(nm_nonzero(b.p + off + len,
							     b.size - off -
							     len), SIZE_MAX);
			}
			free(s);
		}
		bm_close(&b);
	}
}

START_TEST(process_vm_readv_self)
{
	pvm(false, false);
}
END_TEST

START_TEST(process_vm_writev_self)
{
	pvm(true, false);
}
END_TEST

START_TEST(process_vm_readv_other_process)
{
	pvm(false, true);
}
END_TEST

START_TEST(process_vm_writev_other_process)
{
	pvm(true, true);
}
END_TEST

START_TEST(proc_pid_mem)
{
	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

	ck_assert_int_ge(mem, 0);
	for (size_t pi = 0; pi < NM_ARRAY_SIZE(policies); pi++) {
		struct bm b;

		bm_open(&b, policies[pi], 0);
		FOR_RANGES(&b, r) {
			size_t off = ranges[r].off, len = ranges[r].len;
			uint8_t *s = scratch(len);

			nm_fill(s, len, r + 1);
			ck_assert_int_eq(pwrite(mem, s, len,
						(off_t)(uintptr_t)(b.p + off)),
					 (ssize_t)len);
			ck_assert_uint_eq(nm_verify(b.p + off, len, r + 1),
					  SIZE_MAX);
			nm_fill(b.p + off, len, r + 2);
			ck_assert_int_eq(pread(mem, s, len,
					       (off_t)(uintptr_t)(b.p + off)),
					 (ssize_t)len);
			ck_assert_uint_eq(nm_verify(s, len, r + 2), SIZE_MAX);
			free(s);
		}
		bm_close(&b);
	}
	close(mem);
}
END_TEST

/* vmsplice the range into a pipe (the pipe holds references to the
 * mapping's pages) while a thread drains it */
struct drain {
	int rfd;
	uint8_t *dst;
	size_t len;
	ssize_t got;
};

static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	size_t done = 0;

	while (done < d->len) {
		ssize_t n = read(d->rfd, d->dst + done, d->len - done);

		if (n <= 0)
			break;
		done += n;
	}
	d->got = done;
	return NULL;
}

static void splice_or_write(bool use_vmsplice, uint32_t flags)
{
	for (size_t pi = 0; pi < NM_ARRAY_SIZE(policies); pi++) {
		struct bm b;

		bm_open(&b, policies[pi], flags);
		FOR_RANGES(&b, r) {
			size_t off = ranges[r].off, len = ranges[r].len, done = 0;
			struct drain d = { .dst = scratch(len), .len = len };
			pthread_t t;
			int pfd[2];

			if (!(flags & NPU_MEM_ALLOC_READONLY))
				nm_fill(b.p + off, len, r + 7);
			ck_assert_int_eq(pipe(pfd), 0);
			d.rfd = pfd[0];
			ck_assert_int_eq(pthread_create(&t, NULL, drain_thread,
							&d), 0);
			while (done < len) {
				struct iovec iov = { b.p + off + done,
						     len - done };
				ssize_t n = use_vmsplice ?
					vmsplice(pfd[1], &iov, 1, 0) :
					write(pfd[1], iov.iov_base, iov.iov_len);

				ck_assert_msg(n > 0, "%s from %s mapping: %s",
					      use_vmsplice ? "vmsplice" :
					      "write", nm_policy_name(
						      policies[pi]),
					      nm_errname(errno));
				done += n;
			}
			close(pfd[1]);
			pthread_join(t, NULL);
			close(pfd[0]);
			ck_assert_uint_eq(d.got, len);
			if (flags & NPU_MEM_ALLOC_READONLY)
				ck_assert_uint_eq(nm_nonzero(d.dst, len),
						  SIZE_MAX);
			else
				ck_assert_uint_eq(nm_verify(d.dst, len, r + 7),
						  SIZE_MAX);
			free(d.dst);
		}
		bm_close(&b);
	}
}

START_TEST(vmsplice_from_mapping)
{
	splice_or_write(true, 0);
}
END_TEST

START_TEST(pipe_write_from_mapping)
{
	splice_or_write(false, 0);
}
END_TEST

START_TEST(pipe_read_into_mapping)
{
	for (size_t pi = 0; pi < NM_ARRAY_SIZE(policies); pi++) {
		struct bm b;

		bm_open(&b, policies[pi], 0);
		FOR_RANGES(&b, r) {
			size_t off = ranges[r].off, len = ranges[r].len, done = 0;
			uint8_t *s = scratch(len);
			int pfd[2];
			pid_t pid;

			nm_fill(s, len, r + 9);
			ck_assert_int_eq(pipe(pfd), 0);
			pid = fork();
			ck_assert_int_ge(pid, 0);
			if (pid == 0) {
				close(pfd[0]);
				_exit(write(pfd[1], s, len) == (ssize_t)len ?
				      0 : 1);
			}
			close(pfd[1]);
			while (done < len) {
				ssize_t n = read(pfd[0], b.p + off + done,
						 len - done);

				ck_assert_msg(n > 0, "read(pipe) into the "
					      "mapping: %s", nm_errname(errno));
				done += n;
			}
			close(pfd[0]);
			nm_wait_ok(pid, "pipe writer");
			ck_assert_uint_eq(nm_verify(b.p + off, len, r + 9),
					  SIZE_MAX);
			free(s);
		}
		bm_close(&b);
	}
}
END_TEST

/* read()/write() between the mapping and a file descriptor `file` */
static void file_io(int file, const char *what)
{
	for (size_t pi = 0; pi < NM_ARRAY_SIZE(policies); pi++) {
		struct bm b, c;
		size_t n;

		bm_open(&b, policies[pi], 0);
		bm_open(&c, policies[(pi + 1) % 3], 0);
		nm_fill(b.p, b.size, pi + 11);
		/* write() from the mapping, whole and in aligned pieces */
		ck_assert_msg(pwrite(file, b.p, b.size, 0) == (ssize_t)b.size,
			      "%s: write from %s mapping: %s", what,
			      nm_policy_name(policies[pi]), nm_errname(errno));
		/*
		 * read() into another buffer's mapping: as much as both hold
		 * (a HUGE_ONLY buffer is larger, and what lies after the
		 * smaller mapping is not ours to write).
		 */
		n = b.size < c.size ? b.size : c.size;
		ck_assert_msg(pread(file, c.p, n, 0) == (ssize_t)n,
			      "%s: read into %s mapping: %s", what,
			      nm_policy_name(policies[(pi + 1) % 3]),
			      nm_errname(errno));
		ck_assert_msg(nm_verify(c.p, n, pi + 11) == SIZE_MAX,
			      "%s: data differs after write+read", what);
		/* aligned pieces crossing 2 MiB (O_DIRECT needs alignment) */
		memset(c.p, 0, c.size);
		ck_assert_int_eq(pread(file, c.p + NM_2M - NM_4K, 2 * NM_4K,
				       NM_2M - NM_4K), (ssize_t)(2 * NM_4K));
		ck_assert_uint_eq(nm_verify_at(c.p + NM_2M - NM_4K, 2 * NM_4K,
					       pi + 11, NM_2M - NM_4K),
				  SIZE_MAX);
		bm_close(&c);
		bm_close(&b);
	}
}

START_TEST(buffered_file_read_write)
{
	int f = memfd_create("npu-mem-io", MFD_CLOEXEC);

	ck_assert_int_ge(f, 0);
	file_io(f, "memfd");
	close(f);
}
END_TEST

START_TEST(odirect_tmpfs_read_write)
{
	char path[] = "/tmp/npu-mem-odirect.XXXXXX";
	struct statfs sfs;
	struct utsname u;
	int tmp, f;

	uname(&u);
	tmp = mkstemp(path);
	ck_assert_msg(tmp >= 0, "mkstemp in /tmp: %s", nm_errname(errno));
	ck_assert_int_eq(fstatfs(tmp, &sfs), 0);
	close(tmp);
	f = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (f < 0 && errno == EINVAL) {
		unlink(path);
		nm_skip("open(O_DIRECT) on %s (%s) gives EINVAL on Linux %s: "
			"tmpfs accepts O_DIRECT only since 6.6; the GUP paths "
			"are covered by process_vm_*, vmsplice and 9p zero-copy",
			path, sfs.f_type == TMPFS_MAGIC ? "tmpfs" : "not tmpfs",
			u.release);
	}
	ck_assert_msg(f >= 0, "open(%s, O_DIRECT): %s", path,
		      nm_errname(errno));
	printf("O_DIRECT on %s (%s), Linux %s\n", path,
	       sfs.f_type == TMPFS_MAGIC ? "tmpfs" : "not tmpfs", u.release);
	file_io(f, "O_DIRECT tmpfs file");
	close(f);
	unlink(path);
}
END_TEST

/* 9p in 9p2000.L mode reports the host file system's statfs magic, so
 * look the mount up in /proc/self/mountinfo: the longest mount point that
 * is a prefix of path, and its type. */
static bool is_9p_mount(const char *path)
{
	char *text = nm_read_file("/proc/self/mountinfo"), *line, *save = NULL;
	size_t best = 0;
	bool is9p = false;

	ck_assert(text);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char mnt[512], type[64], *dash = strstr(line, " - ");
		size_t n;

		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		n = strlen(mnt);
		if (strncmp(path, mnt, n) ||
		    (path[n] != '/' && path[n] != 0 && strcmp(mnt, "/")))
			continue;
		if (n >= best) {
			best = n;
			is9p = !strcmp(type, "9p");
		}
	}
	free(text);
	return is9p;
}

START_TEST(ninep_zero_copy_read_write)
{
	const char *dir = getenv("VM_OUTDIR");
	char *path;
	int f;

	if (!dir || !is_9p_mount(dir)) {
		nm_skip("$VM_OUTDIR is not a 9p mount (%s): not running "
			"under tests/vm/vm-run", dir ? dir : "unset");
	}
	ck_assert(asprintf(&path, "%s/npu-mem-9p-io.%d", dir, getpid()) > 0);
	f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(f >= 0, "open %s: %s", path, nm_errname(errno));
	file_io(f, "9p file");
	close(f);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(readonly_mapping_io)
{
	/* a source yes, a destination never */
	for (size_t pi = 0; pi < NM_ARRAY_SIZE(policies); pi++) {
		struct bm b;
		uint8_t *s = scratch(NM_2M);
		struct iovec local = { s, 2 * NM_4K };
		struct iovec remote = { 0, 2 * NM_4K };
		int f = memfd_create("ro", MFD_CLOEXEC);

		bm_open(&b, policies[pi], NPU_MEM_ALLOC_READONLY);
		remote.iov_base = b.p + NM_4K;
		memset(s, 0x77, NM_2M);
		nm_assert_errno(process_vm_writev(getpid(), &local, 1, &remote,
						  1, 0), EFAULT);
		ck_assert_int_eq(process_vm_readv(getpid(), &local, 1, &remote,
						  1, 0), (ssize_t)(2 * NM_4K));
		ck_assert_uint_eq(nm_nonzero(s, 2 * NM_4K), SIZE_MAX);
		ck_assert_int_eq(write(f, s, NM_2M), (ssize_t)NM_2M);
		nm_assert_errno(pread(f, b.p, NM_4K, 0), EFAULT);
		ck_assert_int_eq(pwrite(f, b.p, NM_2M, 0), (ssize_t)NM_2M);
		ck_assert_uint_eq(nm_nonzero(b.p, b.size), SIZE_MAX);
		close(f);
		free(s);
		bm_close(&b);
	}
	splice_or_write(true, NPU_MEM_ALLOC_READONLY);
	splice_or_write(false, NPU_MEM_ALLOC_READONLY);
}
END_TEST

START_TEST(io_after_free_while_mapped)
{
	struct nm_counters start;
	struct bm b;
	uint8_t *s = scratch(NM_2M);
	struct iovec local = { s, NM_2M }, remote;
	int obs = nm_open();

	nm_counters(obs, &start);
	bm_open(&b, NPU_MEM_POLICY_HUGE_FIRST, 0);
	nm_fill(b.p, b.size, 33);
	nm_free_ok(b.fd, b.a.handle);
	remote = (struct iovec){ b.p + NM_MiB, NM_2M };
	ck_assert_int_eq(process_vm_readv(getpid(), &local, 1, &remote, 1, 0),
			 (ssize_t)NM_2M);
	ck_assert_uint_eq(nm_verify_at(s, NM_2M, 33, NM_MiB), SIZE_MAX);
	nm_fill(s, NM_2M, 34);
	ck_assert_int_eq(process_vm_writev(getpid(), &local, 1, &remote, 1, 0),
			 (ssize_t)NM_2M);
	ck_assert_uint_eq(nm_verify(b.p + NM_MiB, NM_2M, 34), SIZE_MAX);
	munmap(b.p, b.size);
	close(b.fd);
	free(s);
	nm_assert_counters_now(obs, &start);
	close(obs);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("io_paths");

	nm_add(s, process_vm_readv_self, 120);
	nm_add(s, process_vm_writev_self, 120);
	nm_add(s, process_vm_readv_other_process, 120);
	nm_add(s, process_vm_writev_other_process, 120);
	nm_add(s, proc_pid_mem, 120);
	nm_add(s, vmsplice_from_mapping, 120);
	nm_add(s, pipe_write_from_mapping, 120);
	nm_add(s, pipe_read_into_mapping, 120);
	nm_add(s, buffered_file_read_write, 120);
	nm_add(s, odirect_tmpfs_read_write, 120);
	nm_add(s, ninep_zero_copy_read_write, 180);
	nm_add(s, readonly_mapping_io, 120);
	nm_add(s, io_after_free_while_mapped, 60);
	return nm_run(s, NM_NEEDS_DEVICE);
}
