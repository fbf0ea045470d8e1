// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmabuf: NPU_MEM_IOCTL_EXPORT and the dma-buf it returns, on its own (the
 * vgem importer is dmabuf_vgem, other processes dmabuf_share).
 *  - flags 0, O_CLOEXEC, O_RDWR, O_CLOEXEC|O_RDWR succeed; FD_CLOEXEC is
 *    set exactly when O_CLOEXEC was asked, the file is O_RDWR exactly when
 *    O_RDWR was; any other bit (each of the 30 others, and combinations) ->
 *    EINVAL; pad != 0 -> EINVAL; the fd field is output only;
 *  - handle 0, freed, never allocated, another file's -> ENOENT;
 *  - no fd and no buffer reference leaks from any refused call, nor from an
 *    EXPORT whose answer cannot be written back (EFAULT);
 *  - ioctl framing: wrong direction bits -> ENOTTY, short -> EINVAL, longer
 *    with a zero tail works, non-zero tail -> EINVAL, NULL -> EFAULT;
 *  - the dma-buf: lseek(SEEK_END) is the buffer size, fdinfo and
 *    debugfs dma_buf/bufinfo name the exporter npu_mem with that size;
 *  - mmap of the dma-buf (MAP_SHARED, R/W with O_RDWR) shows the same bytes
 *    as the /dev/npu-mem mapping, written from either side, whole or from
 *    an offset crossing 4 KiB / 2 MiB boundaries, for normal, huge and mixed
 *    buffers; a read-only export or a READONLY buffer cannot be mapped or
 *    mprotect()ed writable (EACCES), MAP_PRIVATE -> EINVAL, ranges past
 *    the end -> EINVAL;
 *  - DMA_BUF_IOCTL_SYNC start/end for read, write and both work, and the
 *    dma-buf core refuses bad flags (EINVAL);
 *  - after MADV_DONTNEED a dma-buf mapping (also one at an offset) faults
 *    the same pages back in;
 *  - FREE the handle first: the dma-buf (and a new mmap of it) still works,
 *    the handle is gone (QUERY/SYNC/EXPORT ENOENT, its mmap offset EINVAL),
 *    the global counters drop only when the dma-buf fd is closed and the
 *    last mapping is gone;
 *  - exporting twice (and 16 times) gives distinct dma-bufs of one buffer;
 *  - every order of releasing the four holders (handle by FREE or by
 *    closing /dev/npu-mem, its mapping, the dma-buf fd, the dma-buf's
 *    mapping): the data stay coherent across what is left, and the
 *    counters drop exactly at the last release.
 * After refused calls: an unrelated live buffer and the counters are
 * unchanged (NM_SENTINEL_CHECK).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"
#include "nmtest_fixture.h"

#define RW	(PROT_READ | PROT_WRITE)

static void tbuf_new(struct nm_tbuf *t, struct nm_ctx *c, uint64_t size,
		     uint32_t policy, uint32_t flags)
{
	nm_tbuf_alloc(t, c, size, policy, flags);
	nm_tbuf_map(t, c, 0xd3ab0f ^ ((uint64_t)t->a.handle << 32) ^ size);
}

/* ---- flags ------------------------------------------------------------ */

START_TEST(export_flags_valid)
{
	static const uint32_t ok[] = {
		0, O_CLOEXEC, O_RDWR, O_CLOEXEC | O_RDWR,
	};
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(ok); i++) {
		int dfd = nm_export_ok(c.fd, t.a.handle, ok[i]);
		int fdfl = fcntl(dfd, F_GETFD), fl = fcntl(dfd, F_GETFL);

		ck_assert_int_ge(fdfl, 0);
		ck_assert_int_ge(fl, 0);
		ck_assert_msg(!!(fdfl & FD_CLOEXEC) == !!(ok[i] & O_CLOEXEC),
			      "flags %#x: FD_CLOEXEC %s", ok[i],
			      fdfl & FD_CLOEXEC ? "set" : "clear");
		ck_assert_msg((fl & O_ACCMODE) ==
			      (ok[i] & O_RDWR ? O_RDWR : O_RDONLY),
			      "flags %#x: file access mode %#x", ok[i],
			      fl & O_ACCMODE);
		/* It is a dma-buf: the dma-buf ioctl works on it. */
		nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		ck_assert_int_eq(close(dfd), 0);
		NM_SENTINEL_CHECK(&c.s);
	}
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(export_flags_invalid)
{
	struct nm_ctx c;
	struct nm_tbuf t;
	int dfd = -1;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	for (int bit = 0; bit < 32; bit++) {
		uint32_t f = 1U << bit;

		if (f == O_CLOEXEC || f == O_RDWR)
			continue;
		nm_assert_ret(nm_export(c.fd, t.a.handle, f, &dfd), -EINVAL);
		nm_assert_ret(nm_export(c.fd, t.a.handle, f | O_RDWR, &dfd),
			      -EINVAL);
		nm_assert_ret(nm_export(c.fd, t.a.handle,
					f | O_RDWR | O_CLOEXEC, &dfd), -EINVAL);
		NM_SENTINEL_CHECK(&c.s);
	}
	/* the usual suspects by name */
	nm_assert_ret(nm_export(c.fd, t.a.handle, O_WRONLY, &dfd), -EINVAL);
	nm_assert_ret(nm_export(c.fd, t.a.handle, O_ACCMODE, &dfd), -EINVAL);
	nm_assert_ret(nm_export(c.fd, t.a.handle, O_RDWR | O_NONBLOCK, &dfd),
		      -EINVAL);
	nm_assert_ret(nm_export(c.fd, t.a.handle, O_RDWR | O_APPEND, &dfd),
		      -EINVAL);
	nm_assert_ret(nm_export(c.fd, t.a.handle, O_RDWR | O_SYNC, &dfd),
		      -EINVAL);
	nm_assert_ret(nm_export(c.fd, t.a.handle, ~0U, &dfd), -EINVAL);
	ck_assert_int_eq(nm_fd_count(), c.nfds);
	NM_SENTINEL_CHECK(&c.s);
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(export_pad_nonzero)
{
	static const uint32_t bad[] = { 1, 2, 0x80000000, ~0U };
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		struct npu_mem_export e = {
			.handle = t.a.handle, .flags = O_RDWR, .pad = bad[i],
		};

		nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, &e), -EINVAL);
		e.flags = 0;
		nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, &e), -EINVAL);
		ck_assert_int_eq(nm_fd_count(), c.nfds);
		NM_SENTINEL_CHECK(&c.s);
	}
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(export_fd_is_output)
{
	static const uint32_t junk[] = { 0xffffffff, 12345, 0, 1 };
	struct nm_ctx c;
	struct nm_tbuf t;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	for (size_t i = 0; i < NM_ARRAY_SIZE(junk); i++) {
		struct npu_mem_export e = {
			.handle = t.a.handle, .flags = O_CLOEXEC,
			.fd = junk[i],
		};

		nm_assert_ok(nm_ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, &e));
		ck_assert_msg(nm_fd_valid((int)e.fd) && (int)e.fd > 2 &&
			      e.handle == t.a.handle && e.flags == O_CLOEXEC &&
			      e.pad == 0, "fd %d handle %u flags %#x pad %u",
			      (int)e.fd, e.handle, e.flags, e.pad);
		ck_assert_int_eq(nm_fd_count(), c.nfds + 1);
		close((int)e.fd);
	}
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(export_unknown_handle)
{
	struct nm_ctx c;
	struct npu_mem_alloc other, gone;
	int fd2 = nm_open(), dfd = -1;
	uint32_t foreign = 0;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	for (int i = 0; i < 8 && !foreign; i++) {
		nm_alloc_ok(fd2, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &other);
		if (nm_query(c.fd, other.handle, NULL) == -ENOENT)
			foreign = other.handle;
	}
	ck_assert_msg(foreign, "no handle of fd2 is unknown in fd1");
	nm_alloc_ok(c.fd, NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &gone);
	nm_free_ok(c.fd, gone.handle);
	nm_ctx_resnap(&c);
	c.nfds = nm_fd_count();
	{
		const uint32_t bad[] = {
			0, gone.handle, foreign, 0x7fffffff, 0xffffffff,
		};
		const uint32_t flags[] = { 0, O_RDWR | O_CLOEXEC };

		for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++)
			for (size_t f = 0; f < NM_ARRAY_SIZE(flags); f++) {
				nm_assert_ret(nm_export(c.fd, bad[i], flags[f],
							&dfd), -ENOENT);
				ck_assert_int_eq(nm_fd_count(), c.nfds);
				NM_SENTINEL_CHECK(&c.s);
			}
	}
	close(fd2);
	c.nfds--;
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(export_struct_framing)
{
	struct {
		struct npu_mem_export e;
		uint64_t tail[2];
	} big;
	struct npu_mem_export *ro;
	struct nm_guard g;
	struct nm_ctx c;
	struct nm_tbuf t;
	unsigned long cmd;
	int npu_bufs;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	npu_bufs = nm_bufinfo_count_npu();
	memset(&big, 0, sizeof(big));
	big.e.handle = t.a.handle;
	big.e.flags = O_CLOEXEC;

	cmd = NM_IOC(_IOC_WRITE, 0x05, sizeof(big.e));
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -ENOTTY);
	cmd = NM_IOC(_IOC_READ, 0x05, sizeof(big.e));
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -ENOTTY);
	cmd = NM_IOC(NM_IOC_RW, 0x05, sizeof(big.e) - 4);
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -EINVAL);
	ck_assert_int_eq(nm_fd_count(), c.nfds);
	NM_SENTINEL_CHECK(&c.s);

	/* longer with a zero tail: works, and the tail stays zero */
	cmd = NM_IOC(NM_IOC_RW, 0x05, sizeof(big));
	nm_assert_ok(nm_ioctl(c.fd, cmd, &big));
	ck_assert(nm_fd_valid((int)big.e.fd));
	ck_assert(big.tail[0] == 0 && big.tail[1] == 0);
	close((int)big.e.fd);
	big.tail[0] = 1;
	nm_assert_ret(nm_ioctl(c.fd, cmd, &big), -EINVAL);
	ck_assert_int_eq(nm_fd_count(), c.nfds);
	nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, NULL), -EFAULT);
	nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, nm_unmapped_addr()),
		      -EFAULT);
	NM_SENTINEL_CHECK(&c.s);

	/*
	 * Readable but not writable: the dma-buf is made, then the fd cannot
	 * be reported.  Nothing may be left behind: no fd (not even a
	 * reserved, uninstalled number), no dma-buf, no buffer reference
	 * (tbuf_free and ctx_fini take the counters back to base below).
	 */
	{
		int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC), now;

		close(lowest);
		ro = nm_guard_place(&g, sizeof(*ro), 0);
		ro->handle = t.a.handle;
		ro->flags = O_RDWR;
		nm_guard_readonly(&g);
		nm_assert_ret(nm_ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, ro), -EFAULT);
		nm_guard_release(&g);
		ck_assert_int_eq(nm_fd_count(), c.nfds);
		if (npu_bufs >= 0)
			ck_assert_int_eq(nm_bufinfo_count_npu(), npu_bufs);
		now = open("/dev/null", O_RDONLY | O_CLOEXEC);
		close(now);
		ck_assert_msg(now == lowest, "lowest free fd was %d, is %d "
			      "after the failed EXPORT", lowest, now);
		NM_SENTINEL_CHECK(&c.s);
	}
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

/* ---- the dma-buf ------------------------------------------------------ */

START_TEST(dmabuf_identity)
{
	struct nm_ctx c;
	struct nm_tbuf t;
	char *exp, *entry;
	uint64_t ino;
	int dfd;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, NM_2M + 3 * NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0);
	dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	ck_assert_int_eq(lseek(dfd, 0, SEEK_END), (off_t)t.a.buf.size);
	ck_assert_int_eq(lseek(dfd, 0, SEEK_SET), 0);
	exp = nm_dmabuf_exp_name(dfd);
	ck_assert_msg(exp && !strcmp(exp, "npu_mem"), "fdinfo exp_name '%s'",
		      exp ? exp : "(none)");
	free(exp);
	ino = nm_ino(dfd);
	entry = nm_bufinfo_entry(ino);
	if (!entry && errno != ENOENT && !getenv("VM_RUN")) {
		printf("no %s (%s): bufinfo checks skipped\n", NM_BUFINFO,
		       nm_errname(errno));
	} else {
		unsigned long long size = 0;
		char name[64] = "";

		ck_assert_msg(entry, "dma-buf ino %llu not in %s",
			      (unsigned long long)ino, NM_BUFINFO);
		printf("bufinfo:\n%s", entry);
		ck_assert(sscanf(entry, "%llu %*x %*x %*d %63s", &size,
				 name) == 2);
		ck_assert_uint_eq(size, t.a.buf.size);
		ck_assert_str_eq(name, "npu_mem");
		ck_assert_int_eq(nm_bufinfo_attached(entry, NULL), 0);
		free(entry);
		close(dfd);
		entry = nm_bufinfo_entry(ino);
		ck_assert_msg(!entry, "dma-buf still listed after close");
		dfd = -1;
	}
	if (dfd >= 0)
		close(dfd);
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

static void both_ways(uint64_t size, uint32_t policy)
{
	const uint64_t offs[] = { NM_4K, NM_2M - NM_4K, NM_2M, 0 /* end */ };
	struct nm_ctx c;
	struct nm_tbuf t;
	uint8_t *d, *d2;
	int dfd;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, size, policy, 0);
	size = t.a.buf.size;
	printf("%s %llu: %u huge %u normal\n", nm_policy_name(policy),
	       (unsigned long long)size, t.a.buf.huge_pages,
	       t.a.buf.normal_pages);
	dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	d = nm_dmabuf_map_ok(dfd, 0, size, RW);
	/* what the CPU wrote through /dev/npu-mem before the export */
	nm_assert_pattern(d, size, t.seed, 0);

	/* dma-buf -> /dev/npu-mem */
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	nm_fill(d, size, t.seed + 1);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	nm_assert_pattern(t.map, size, t.seed + 1, 0);

	/* /dev/npu-mem -> dma-buf */
	nm_fill(t.map, size, t.seed + 2);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_assert_pattern(d, size, t.seed + 2, 0);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);

	/* mappings of part of the dma-buf, from page offsets */
	for (size_t i = 0; i < NM_ARRAY_SIZE(offs); i++) {
		uint64_t off = offs[i] ? offs[i] : size - NM_4K;
		size_t len = off + 2 * NM_4K <= size ? 2 * NM_4K : NM_4K;

		if (off + len > size)
			continue;
		d2 = nm_dmabuf_map_ok(dfd, off, len, RW);
		nm_assert_pattern(d2, len, t.seed + 2, off);
		nm_fill_at(d2, len, t.seed + 3, off);
		nm_assert_pattern(t.map + off, len, t.seed + 3, off);
		nm_assert_pattern(d + off, len, t.seed + 3, off);
		nm_fill_at(t.map + off, len, t.seed + 2, off);
		nm_assert_pattern(d2, len, t.seed + 2, off);
		munmap(d2, len);
	}
	/* two whole mappings of one dma-buf see each other's writes */
	d2 = nm_dmabuf_map_ok(dfd, 0, size, RW);
	nm_fill(d2, size, t.seed + 4);
	nm_assert_pattern(d, size, t.seed + 4, 0);
	nm_assert_pattern(t.map, size, t.seed + 4, 0);
	munmap(d2, size);
	munmap(d, size);
	close(dfd);
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}

START_TEST(mmap_same_bytes_normal)
{
	both_ways(2 * NM_MiB + 16 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

START_TEST(mmap_same_bytes_huge)
{
	both_ways(4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY);
}
END_TEST

START_TEST(mmap_same_bytes_mixed)
{
	both_ways(2 * NM_MiB + 12 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

START_TEST(mmap_access_rules)
{
	struct nm_ctx c;
	struct nm_tbuf t, ro;
	uint64_t size;
	uint8_t *p;
	int dfd;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0);
	tbuf_new(&ro, &c, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY,
		 NPU_MEM_ALLOC_READONLY);
	size = t.a.buf.size;

	/* exported without O_RDWR: readable, never writable */
	dfd = nm_export_ok(c.fd, t.a.handle, O_CLOEXEC);
	nm_assert_mmap_errno(mmap(NULL, size, RW, MAP_SHARED, dfd, 0), EACCES);
	nm_assert_mmap_errno(mmap(NULL, size, PROT_WRITE, MAP_SHARED, dfd, 0),
			     EACCES);
	p = nm_dmabuf_map_ok(dfd, 0, size, PROT_READ);
	nm_assert_pattern(p, size, t.seed, 0);
	nm_assert_errno(mprotect(p, size, RW), EACCES);
	ck_assert_int_eq(nm_probe(p, true), SIGSEGV);
	munmap(p, size);
	close(dfd);

	/* a READONLY buffer cannot become a writable dma-buf at all ... */
	{
		struct npu_mem_export e = { .handle = ro.a.handle,
					    .flags = O_RDWR | O_CLOEXEC };

		nm_assert_errno(ioctl(c.fd, NPU_MEM_IOCTL_EXPORT, &e), EACCES);
	}
	/* ... and its read-only export maps read-only */
	dfd = nm_export_ok(c.fd, ro.a.handle, O_CLOEXEC);
	nm_assert_mmap_errno(mmap(NULL, size, RW, MAP_SHARED, dfd, 0), EACCES);
	p = nm_dmabuf_map_ok(dfd, 0, size, PROT_READ);
	ck_assert_uint_eq(nm_nonzero(p, size), SIZE_MAX);
	nm_assert_errno(mprotect(p, size, RW), EACCES);
	munmap(p, size);
	close(dfd);

	/* shared mappings only, and only inside the buffer */
	dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	nm_assert_mmap_errno(mmap(NULL, size, PROT_READ, MAP_PRIVATE, dfd, 0),
			     EINVAL);
	nm_assert_mmap_errno(mmap(NULL, size, RW, MAP_PRIVATE, dfd, 0), EINVAL);
	nm_assert_mmap_errno(mmap(NULL, size + NM_4K, RW, MAP_SHARED, dfd, 0),
			     EINVAL);
	nm_assert_mmap_errno(mmap(NULL, NM_4K, RW, MAP_SHARED, dfd, size),
			     EINVAL);
	nm_assert_mmap_errno(mmap(NULL, 2 * NM_4K, RW, MAP_SHARED, dfd,
				  size - NM_4K), EINVAL);
	nm_assert_mmap_errno(mmap(NULL, NM_4K, RW, MAP_SHARED, dfd,
				  (off_t)1 << 40), EINVAL);
	/* and it still maps fine afterwards */
	p = nm_dmabuf_map_ok(dfd, size - NM_4K, NM_4K, RW);
	nm_assert_pattern(p, NM_4K, t.seed, size - NM_4K);
	munmap(p, NM_4K);
	close(dfd);
	NM_SENTINEL_CHECK(&c.s);
	nm_tbuf_free(&t, &c);
	nm_tbuf_free(&ro, &c);
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(dmabuf_sync_ioctl)
{
	static const uint64_t ok[] = {
		DMA_BUF_SYNC_READ, DMA_BUF_SYNC_WRITE, DMA_BUF_SYNC_RW,
	};
	static const uint64_t bad[] = {
		0, DMA_BUF_SYNC_START, DMA_BUF_SYNC_END, 1ULL << 3,
		DMA_BUF_SYNC_RW | (1ULL << 3), DMA_BUF_SYNC_RW | (1ULL << 63),
		~0ULL,
	};
	struct nm_ctx c;
	struct nm_tbuf t;
	uint8_t *d;
	int dfd;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, NM_2M + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, 0);
	dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	d = nm_dmabuf_map_ok(dfd, 0, t.a.buf.size, RW);
	for (size_t i = 0; i < NM_ARRAY_SIZE(ok); i++) {
		nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | ok[i]);
		if (ok[i] & DMA_BUF_SYNC_WRITE)
			nm_fill(d, t.a.buf.size, t.seed + i + 1);
		nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | ok[i]);
		nm_assert_pattern(t.map, t.a.buf.size,
			       ok[i] & DMA_BUF_SYNC_WRITE ? t.seed + i + 1 :
			       t.seed, 0);
		if (ok[i] & DMA_BUF_SYNC_WRITE)
			nm_fill(t.map, t.a.buf.size, t.seed);
	}
	/* nested and repeated sections are the caller's business */
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	for (size_t i = 0; i < NM_ARRAY_SIZE(bad); i++) {
		nm_assert_ret(nm_dmabuf_sync(dfd, bad[i]), -EINVAL);
		NM_SENTINEL_CHECK(&c.s);
	}
	nm_assert_pattern(d, t.a.buf.size, t.seed, 0);
	munmap(d, t.a.buf.size);
	close(dfd);
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

/*
 * Zapped PTEs of a dma-buf mapping (MADV_DONTNEED) fault back in as the
 * same pages, also in a mapping that starts at an offset of the dma-buf.
 */
START_TEST(dmabuf_refault_after_dontneed)
{
	struct nm_ctx c;
	struct nm_tbuf t;
	uint8_t *d, *w;
	uint64_t size, woff = NM_2M - 2 * NM_4K;
	int dfd;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, NM_2M + 16 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST, 0);
	size = t.a.buf.size;
	dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	d = nm_dmabuf_map_ok(dfd, 0, size, RW);
	w = nm_dmabuf_map_ok(dfd, woff, 4 * NM_4K, RW);
	nm_assert_sys(madvise(d, size, MADV_DONTNEED));
	nm_assert_sys(madvise(w, 4 * NM_4K, MADV_DONTNEED));
	nm_assert_pattern(d, size, t.seed, 0);
	nm_assert_pattern(w, 4 * NM_4K, t.seed, woff);
	/* writes after the refault land in the buffer */
	nm_assert_sys(madvise(w + NM_4K, 2 * NM_4K, MADV_DONTNEED));
	nm_fill_at(w + NM_4K, 2 * NM_4K, t.seed + 1, woff + NM_4K);
	nm_assert_pattern(t.map + woff + NM_4K, 2 * NM_4K, t.seed + 1,
		       woff + NM_4K);
	nm_assert_pattern(d + woff + NM_4K, 2 * NM_4K, t.seed + 1, woff + NM_4K);
	munmap(w, 4 * NM_4K);
	munmap(d, size);
	close(dfd);
	nm_tbuf_free(&t, &c);
	nm_ctx_fini(&c);
}
END_TEST

/* ---- lifetime --------------------------------------------------------- */

START_TEST(free_handle_first)
{
	struct nm_counters live, now;
	struct nm_ctx c;
	struct nm_tbuf t;
	uint8_t *d, *d2;
	uint64_t ino, size;
	char *entry;
	int dfd;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, NM_2M + 8 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST, 0);
	size = t.a.buf.size;
	live = c.s.counters;
	dfd = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
	ino = nm_ino(dfd);
	d = nm_dmabuf_map_ok(dfd, 0, size, RW);
	munmap(t.map, size);
	nm_free_ok(c.fd, t.a.handle);

	/* the handle is gone from this file ... */
	nm_counters(c.fd, &now);
	nm_assert_global_eq(&live, &now);
	ck_assert_uint_eq(now.client_buffers, c.base.client_buffers);
	ck_assert_uint_eq(now.client_bytes, c.base.client_bytes);
	nm_assert_ret(nm_query(c.fd, t.a.handle, NULL), -ENOENT);
	nm_assert_ret(nm_sync(c.fd, t.a.handle, NPU_MEM_SYNC_TO_DEVICE, 0,
			      NM_4K), -ENOENT);
	nm_assert_ret(nm_export(c.fd, t.a.handle, 0, NULL), -ENOENT);
	nm_assert_mmap_errno(nm_mmap(c.fd, t.a.buf.mmap_offset, size, RW),
			     EINVAL);
	/* ... the buffer is not: old mapping, DMA_BUF_IOCTL_SYNC, new mmap */
	nm_assert_pattern(d, size, t.seed, 0);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	nm_fill(d, size, t.seed + 1);
	nm_dmabuf_sync_ok(dfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	d2 = nm_dmabuf_map_ok(dfd, 0, size, RW);
	nm_assert_pattern(d2, size, t.seed + 1, 0);
	munmap(d2, size);

	/* fd closed, mapping left: still there, still listed */
	close(dfd);
	nm_assert_global_now(c.fd, &live);
	entry = nm_bufinfo_entry(ino);
	if (entry || getenv("VM_RUN"))
		ck_assert_msg(entry, "dma-buf with a live mapping not in "
			      "bufinfo");
	free(entry);
	nm_fill(d, size, t.seed + 2);
	nm_assert_pattern(d, size, t.seed + 2, 0);
	nm_assert_global_now(c.fd, &live);

	/* last mapping gone: so is the buffer */
	munmap(d, size);
	nm_counters(c.fd, &now);
	nm_assert_counters_eq(&c.base, &now);
	entry = nm_bufinfo_entry(ino);
	ck_assert_msg(!entry, "released dma-buf still in bufinfo");
	nm_ctx_fini(&c);
}
END_TEST

START_TEST(export_twice)
{
	enum { N = 16 };
	struct nm_ctx c;
	struct nm_tbuf t;
	int dfd[N];
	uint8_t *d0, *d1;
	uint64_t size;

	nm_ctx_init(&c, NM_CTX_BASE | NM_CTX_FDS);
	tbuf_new(&t, &c, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0);
	size = t.a.buf.size;
	for (int i = 0; i < N; i++) {
		dfd[i] = nm_export_ok(c.fd, t.a.handle, O_RDWR | O_CLOEXEC);
		for (int j = 0; j < i; j++) {
			ck_assert_int_ne(dfd[i], dfd[j]);
			ck_assert_msg(nm_ino(dfd[i]) != nm_ino(dfd[j]),
				      "exports %d and %d share a dma-buf", i, j);
		}
	}
	/* one buffer however many exports */
	nm_assert_counters_now(c.fd, &c.s.counters);
	d0 = nm_dmabuf_map_ok(dfd[0], 0, size, RW);
	d1 = nm_dmabuf_map_ok(dfd[1], 0, size, RW);
	nm_fill(d0, size, t.seed + 1);
	nm_assert_pattern(d1, size, t.seed + 1, 0);
	nm_assert_pattern(t.map, size, t.seed + 1, 0);
	nm_fill(d1, size, t.seed + 2);
	nm_assert_pattern(d0, size, t.seed + 2, 0);
	/* closing one export leaves the others working */
	munmap(d0, size);
	close(dfd[0]);
	nm_fill_at(d1, NM_4K, t.seed + 3, 0);
	nm_assert_pattern(t.map, NM_4K, t.seed + 3, 0);
	for (int i = 2; i < N; i++)
		close(dfd[i]);
	/* freed handle, one export and its mapping left */
	munmap(t.map, size);
	nm_free_ok(c.fd, t.a.handle);
	nm_assert_global_now(c.fd, &c.s.counters);
	nm_assert_pattern(d1, NM_4K, t.seed + 3, 0);
	close(dfd[1]);
	nm_assert_global_now(c.fd, &c.s.counters);
	munmap(d1, size);
	nm_ctx_fini(&c);
}
END_TEST

/* The four holders of an exported buffer, released in a given order. */
enum holder { H_HANDLE, H_NPU_MAP, H_DMABUF_FD, H_DMABUF_MAP, H_N };
static const char *const holder_name[H_N] = {
	"handle", "npu-map", "dmabuf-fd", "dmabuf-map",
};

static void release_in_order(const int *order, bool close_file, int obs,
			     const struct nm_counters *start)
{
	struct npu_mem_alloc a;
	struct nm_counters live = *start;
	bool held[H_N] = { true, true, true, true };
	uint8_t *npu, *dmap;
	uint64_t size, seed = 0xc105e0 + order[0] * 64 + order[1] * 16 +
			     order[2] * 4 + order[3];
	int fd = nm_open(), dfd;
	char what[96];

	snprintf(what, sizeof(what), "%s: %s, %s, %s, %s",
		 close_file ? "close(fd)" : "FREE", holder_name[order[0]],
		 holder_name[order[1]], holder_name[order[2]],
		 holder_name[order[3]]);
	nm_alloc_ok(fd, NM_2M + 4 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST, 0, &a);
	size = a.buf.size;
	nm_counters_add(&live, &a.buf, 1, false);
	npu = nm_map_ok(fd, &a, RW);
	nm_fill(npu, size, seed);
	dfd = nm_export_ok(fd, a.handle, O_RDWR | O_CLOEXEC);
	dmap = nm_dmabuf_map_ok(dfd, 0, size, RW);

	for (int k = 0; k < H_N; k++) {
		struct nm_counters now;
		bool any = false;
		uint8_t *maps[2];
		int n = 0;

		switch (order[k]) {
		case H_HANDLE:
			if (close_file)
				close(fd);
			else
				nm_free_ok(fd, a.handle);
			break;
		case H_NPU_MAP:
			munmap(npu, size);
			break;
		case H_DMABUF_FD:
			close(dfd);
			break;
		case H_DMABUF_MAP:
			munmap(dmap, size);
			break;
		}
		held[order[k]] = false;
		for (int h = 0; h < H_N; h++)
			any |= held[h];
		/* what is left shows one set of bytes, written from any side */
		if (held[H_NPU_MAP])
			maps[n++] = npu;
		if (held[H_DMABUF_MAP])
			maps[n++] = dmap;
		for (int w = 0; w < n; w++) {
			const uint64_t at[] = { 0, NM_2M - 8, size - 8 };

			for (size_t i = 0; i < NM_ARRAY_SIZE(at); i++) {
				nm_fill_at(maps[w] + at[i], 8, seed + k + w,
					   at[i]);
				for (int r = 0; r < n; r++)
					ck_assert_msg(nm_verify_at(maps[r] + at[i],
						8, seed + k + w, at[i]) ==
						SIZE_MAX, "%s, after step %d: "
						"mapping %d does not see "
						"mapping %d's write at %llu",
						what, k, r, w,
						(unsigned long long)at[i]);
			}
		}
		nm_counters(obs, &now);
		if (any)
			ck_assert_msg(now.buffers == live.buffers &&
				      now.allocated_bytes == live.allocated_bytes,
				      "%s: buffer gone after step %d (%s) with "
				      "holders left", what, k,
				      holder_name[order[k]]);
		nm_assert_global_eq(any ? &live : start, &now);
	}
	if (!close_file)
		close(fd);
	nm_assert_global_now(obs, start);
}

static void every_order(bool close_file)
{
	int order[H_N] = { 0, 1, 2, 3 }, obs = nm_open(), n = 0;
	struct nm_counters start;

	nm_counters(obs, &start);
	/* all 24 permutations, lexicographic (next_permutation) */
	for (;;) {
		int i, j;

		release_in_order(order, close_file, obs, &start);
		n++;
		for (i = H_N - 2; i >= 0 && order[i] > order[i + 1]; i--)
			;
		if (i < 0)
			break;
		for (j = H_N - 1; order[j] < order[i]; j--)
			;
		int tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
		for (int l = i + 1, r = H_N - 1; l < r; l++, r--) {
			tmp = order[l];
			order[l] = order[r];
			order[r] = tmp;
		}
	}
	ck_assert_int_eq(n, 24);
	nm_assert_counters_now(obs, &start);
	close(obs);
}

START_TEST(close_every_order_free)
{
	every_order(false);
}
END_TEST

START_TEST(close_every_order_close_file)
{
	every_order(true);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("dmabuf");

	nm_add(s, export_flags_valid, 30);
	nm_add(s, export_flags_invalid, 30);
	nm_add(s, export_pad_nonzero, 30);
	nm_add(s, export_fd_is_output, 30);
	nm_add(s, export_unknown_handle, 30);
	nm_add(s, export_struct_framing, 30);
	nm_add(s, dmabuf_identity, 30);
	nm_add(s, mmap_same_bytes_normal, 60);
	nm_add(s, mmap_same_bytes_huge, 60);
	nm_add(s, mmap_same_bytes_mixed, 60);
	nm_add(s, mmap_access_rules, 30);
	nm_add(s, dmabuf_sync_ioctl, 30);
	nm_add(s, dmabuf_refault_after_dontneed, 30);
	nm_add(s, free_handle_first, 30);
	nm_add(s, export_twice, 30);
	nm_add(s, close_every_order_free, 120);
	nm_add(s, close_every_order_close_file, 120);
	return nm_run(s, NM_NEEDS_DEVICE);
}
