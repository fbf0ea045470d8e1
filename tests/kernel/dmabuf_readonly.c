// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmabuf_readonly: a dma-buf opened without O_RDWR gives no write access
 * through DMABUF_IMPORT either (the UAPI header's DMABUF_IMPORT rules).
 *
 * The owner (root, the test) makes a dma-buf read-only, fills the memory
 * behind it through its own writable view where it has one, and passes the
 * fd over a UNIX socket (SCM_RIGHTS) to a process that became uid 65534
 * before it received anything.  That process imports it into its own
 * /dev/npu-mem file and tries every way to write it:
 *  - the dma-buf fd's own mmap(PROT_WRITE): -EACCES (the VFS's rule, the
 *    yardstick for the rest);
 *  - the import is NPU_MEM_BUF_READONLY in DMABUF_IMPORT's answer and in
 *    QUERY; mmap(PROT_WRITE) of its offset -EACCES; a PROT_READ mapping
 *    cannot be mprotect()ed writable (-EACCES) and shows the owner's bytes;
 *  - npu-mem's own dma-buf: EXPORT with O_RDWR -EACCES, without it a
 *    dma-buf whose mmap(PROT_WRITE) is -EACCES; IPC_EXPORT makes a key
 *    whose importer (another file) gets a READONLY handle with the same
 *    refusals, and a key made from that handle is read-only too;
 *  - another driver's (vgem, the system heap): EXPORT and IPC_EXPORT
 *    -EINVAL, as for every foreign import;
 *  - importing it twice gives READONLY twice;
 *  - without an IOMMU the import's device address is withheld
 *    (NPU_MEM_BUF_DEV_HIDDEN): the importer lacks CAP_SYS_ADMIN.
 * Then the owner finds its bytes intact.  The system heap's buffer is
 * allocated read-only, so nobody ever had a writable view of it: its
 * bytes must stay zero.  udmabuf makes O_RDWR dma-bufs only: there is no
 * read-only one to import.
 *
 * With the edu DMA engine (x86_64-iommu-edu guest, root): a read-only
 * foreign import is mapped for a device that only reads it, so the engine
 * copies from it but refuses to copy into it (-EINVAL), and the owner's
 * bytes stay.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/dma-heap.h>

#include "nmtest_cred.h"
#include "nmtest_trace.h"
#include "nmtest_vgem.h"

#define RW		(PROT_READ | PROT_WRITE)
#define HEAP_DEV	"/dev/dma_heap/system"

/* In the unprivileged child: no Check assertions, a message and a status. */
#define CHILD_CHECK(cond, ...) NM_CHILD_CHECK("importer", cond, __VA_ARGS__)

#define CHILD_RET(expr, want) do {					\
	int _r = (expr);						\
	CHILD_CHECK(_r == (want), "%s: %s, want %s", #expr,		\
		    nm_retname(_r), nm_retname(want));			\
} while (0)

static int dmabuf_import(int fd, int dfd, struct npu_mem_dmabuf_import *d)
{
	memset(d, 0, sizeof(*d));
	d->fd = (uint32_t)dfd;
	return nm_ioctl(fd, NPU_MEM_IOCTL_DMABUF_IMPORT, d);
}

static int ipc_export(int fd, uint32_t handle, uint64_t key[2])
{
	struct npu_mem_ipc_export e = { .handle = handle };
	int ret = nm_ioctl(fd, NPU_MEM_IOCTL_IPC_EXPORT, &e);

	memcpy(key, e.key, sizeof(e.key));
	return ret;
}

static int ipc_import(int fd, const uint64_t key[2],
		      struct npu_mem_ipc_import *i)
{
	memset(i, 0, sizeof(*i));
	memcpy(i->key, key, sizeof(i->key));
	return nm_ioctl(fd, NPU_MEM_IOCTL_IPC_IMPORT, i);
}

/* What the importer must find behind the dma-buf. */
struct want {
	uint64_t size;
	uint64_t seed;		/* nm_fill's pattern, or 0: all zeroes */
	bool foreign;
};

static bool content_ok(const uint8_t *p, const struct want *w)
{
	return w->seed ? nm_verify(p, w->size, w->seed) == SIZE_MAX :
			 nm_nonzero(p, w->size) == SIZE_MAX;
}

/*
 * A handle without write access, checked from every side: QUERY, mmap
 * with and without PROT_WRITE, mprotect, EXPORT.  Returns nothing: any
 * failure ends the child.
 */
static void check_ro_handle(int fd, uint32_t h, uint64_t off,
			    const struct want *w, const char *what)
{
	struct npu_mem_buffer q;
	uint8_t *m;
	int dfd = -1;

	m = mmap(NULL, w->size, RW, MAP_SHARED, fd, (off_t)off);
	CHILD_CHECK(m == MAP_FAILED && errno == EACCES,
		    "%s: mmap(PROT_WRITE) of the handle: %s, want EACCES",
		    what, m == MAP_FAILED ? nm_errname(errno) : "mapped");
	CHILD_RET(nm_query(fd, h, &q), 0);
	CHILD_CHECK(q.flags & NPU_MEM_BUF_READONLY,
		    "%s: QUERY flags %#x lack READONLY", what, q.flags);
	m = mmap(NULL, w->size, PROT_READ, MAP_SHARED, fd, (off_t)off);
	CHILD_CHECK(m != MAP_FAILED, "%s: mmap(PROT_READ): %s", what,
		    nm_errname(errno));
	CHILD_CHECK(content_ok(m, w), "%s: the mapping does not show the "
		    "owner's bytes", what);
	CHILD_CHECK(mprotect(m, w->size, RW) == -1 && errno == EACCES,
		    "%s: mprotect(PROT_WRITE) of a read-only mapping: %s, "
		    "want EACCES", what, nm_errname(errno));
	munmap(m, w->size);
	CHILD_RET(nm_export(fd, h, O_RDWR | O_CLOEXEC, &dfd),
		  w->foreign ? -EINVAL : -EACCES);
	if (w->foreign)
		return;
	/* without O_RDWR: a dma-buf as read-only as the handle */
	CHILD_RET(nm_export(fd, h, O_CLOEXEC, &dfd), 0);
	m = mmap(NULL, w->size, RW, MAP_SHARED, dfd, 0);
	CHILD_CHECK(m == MAP_FAILED && errno == EACCES,
		    "%s: mmap(PROT_WRITE) of its read-only EXPORT: %s", what,
		    m == MAP_FAILED ? nm_errname(errno) : "mapped");
	close(dfd);
}

/* The unprivileged importer: receives the dma-buf, tries to write it. */
static void __attribute__((noreturn)) importer(int sock, const struct want *w)
{
	struct npu_mem_dmabuf_import d, d2;
	struct npu_mem_ipc_import i, i2;
	struct npu_mem_info info = { 0 };
	uint64_t key[2], key2[2];
	int dfd, fd, fd2;
	void *m;

	CHILD_RET(nm_become(NM_UID_NOBODY, 64 * NM_MiB), 0);
	dfd = nm_recv_fd(sock);
	CHILD_CHECK(dfd >= 0, "receiving the dma-buf: %s", nm_retname(dfd));
	CHILD_CHECK(!(fcntl(dfd, F_GETFL) & O_RDWR) &&
		    (fcntl(dfd, F_GETFL) & O_ACCMODE) == O_RDONLY,
		    "the dma-buf is not read-only: flags %#x",
		    fcntl(dfd, F_GETFL));
	m = mmap(NULL, w->size, RW, MAP_SHARED, dfd, 0);
	CHILD_CHECK(m == MAP_FAILED && errno == EACCES,
		    "mmap(PROT_WRITE) of the read-only dma-buf fd itself: %s",
		    m == MAP_FAILED ? nm_errname(errno) : "mapped");
	fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(fd >= 0, "open %s as uid %d: %s", NM_DEV_PATH,
		    NM_UID_NOBODY, nm_errname(errno));

	CHILD_RET(dmabuf_import(fd, dfd, &d), 0);
	check_ro_handle(fd, d.handle, d.buf.mmap_offset, w, "import");
	CHILD_CHECK((d.buf.flags & (NPU_MEM_BUF_READONLY | NPU_MEM_BUF_IMPORTED |
				    NPU_MEM_BUF_FOREIGN)) ==
		    (NPU_MEM_BUF_READONLY | NPU_MEM_BUF_IMPORTED |
		     (w->foreign ? NPU_MEM_BUF_FOREIGN : 0)),
		    "DMABUF_IMPORT of a read-only dma-buf: flags %#x", d.buf.flags);
	CHILD_CHECK(d.buf.size == w->size, "size %llu, want %llu",
		    (unsigned long long)d.buf.size, (unsigned long long)w->size);
	/* without an IOMMU a device address is physical: not for uid 65534 */
	CHILD_RET(nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info), 0);
	if (!(info.dev_flags & NPU_MEM_DEV_IOMMU))
		CHILD_CHECK((d.buf.flags & NPU_MEM_BUF_DEV_HIDDEN) &&
			    !d.buf.dev_addr && !d.buf.dev_segments,
			    "import by uid 65534 without an IOMMU: flags %#x "
			    "dev_addr %#llx dev_segments %u", d.buf.flags,
			    (unsigned long long)d.buf.dev_addr,
			    d.buf.dev_segments);
	/* again: the same access */
	CHILD_RET(dmabuf_import(fd, dfd, &d2), 0);
	check_ro_handle(fd, d2.handle, d2.buf.mmap_offset, w, "second import");

	/* the key carries read-only to its importers, and theirs to theirs */
	CHILD_RET(ipc_export(fd, d.handle, key), w->foreign ? -EINVAL : 0);
	if (!w->foreign) {
		fd2 = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
		CHILD_CHECK(fd2 >= 0, "open: %s", nm_errname(errno));
		CHILD_RET(ipc_import(fd2, key, &i), 0);
		CHILD_CHECK(i.buf.flags & NPU_MEM_BUF_READONLY,
			    "IPC_IMPORT of a read-only handle's key: flags %#x",
			    i.buf.flags);
		check_ro_handle(fd2, i.handle, i.buf.mmap_offset, w,
				"IPC import");
		CHILD_RET(ipc_export(fd2, i.handle, key2), 0);
		CHILD_RET(ipc_import(fd, key2, &i2), 0);
		check_ro_handle(fd, i2.handle, i2.buf.mmap_offset, w,
				"IPC import of an IPC import");
		nm_free(fd, i2.handle);
		nm_free(fd2, i.handle);
		close(fd2);
	}
	CHILD_RET(nm_free(fd, d2.handle), 0);
	CHILD_RET(nm_free(fd, d.handle), 0);
	close(fd);
	close(dfd);
	_exit(0);
}

/* Hand dfd to an unprivileged importer and wait for its verdict. */
static void pass_to_importer(int dfd, const struct want *w)
{
	int sv[2];
	pid_t pid;

	nm_assert_sys(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fflush(stdout);
	pid = nm_assert_sys(fork());
	if (pid == 0) {
		close(sv[0]);
		importer(sv[1], w);
	}
	close(sv[1]);
	nm_assert_ok(nm_send_fd(sv[0], dfd));
	nm_wait_ok(pid, "the unprivileged importer");
	close(sv[0]);
}

static void own_readonly(uint64_t size, uint32_t policy)
{
	struct want w = { .seed = 0x50a1 };
	struct npu_mem_alloc a;
	uint8_t *map;
	int fd = nm_open(), dfd;

	nm_alloc_ok(fd, size, policy, 0, &a);
	map = nm_map_ok(fd, &a, RW);
	w.size = a.buf.size;
	nm_fill(map, w.size, w.seed);
	dfd = nm_export_ok(fd, a.handle, O_CLOEXEC);
	pass_to_importer(dfd, &w);
	nm_assert_pattern(map, w.size, w.seed, 0);
	close(dfd);
	munmap(map, w.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}

/* 4 KiB pages: mapped whole at mmap time */
START_TEST(own_readonly_pages)
{
	own_readonly(64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY);
}
END_TEST

/* a 2 MiB chunk and pages: mapped on fault */
START_TEST(own_readonly_huge)
{
	own_readonly(NM_2M + 8 * NM_KiB, NPU_MEM_POLICY_HUGE_FIRST);
}
END_TEST

static char g_vgem_why[512];
static bool g_vgem;

/* A vgem dumb buffer, filled through vgem's own mapping, exported without
 * DRM_RDWR (the first export fixes the mode: PRIME keeps one dma-buf). */
struct vgem_ro {
	int card;
	uint32_t gem;
	uint8_t *cpu;
	uint64_t size;
	int dfd;
};

static void vgem_ro_new(struct vgem_ro *v, uint32_t bytes, uint64_t seed)
{
	uint64_t off = 0;

	v->card = nm_vgem_open();
	nm_assert_ok(nm_vgem_dumb_create(v->card, bytes, &v->gem, &v->size));
	nm_assert_ok(nm_vgem_map_dumb(v->card, v->gem, &off));
	v->cpu = mmap(NULL, v->size, RW, MAP_SHARED, v->card, (off_t)off);
	ck_assert_msg(v->cpu != MAP_FAILED, "mmap vgem dumb: %s",
		      nm_errname(errno));
	nm_fill(v->cpu, v->size, seed);
	ck_assert_msg(drmPrimeHandleToFD(v->card, v->gem, DRM_CLOEXEC,
					 &v->dfd) == 0,
		      "drmPrimeHandleToFD(DRM_CLOEXEC): %s", nm_errname(errno));
	ck_assert_int_eq(fcntl(v->dfd, F_GETFL) & O_ACCMODE, O_RDONLY);
}

static void vgem_ro_drop(struct vgem_ro *v)
{
	close(v->dfd);
	munmap(v->cpu, v->size);
	nm_assert_ok(nm_gem_close(v->card, v->gem));
	close(v->card);
}

START_TEST(vgem_readonly)
{
	struct want w = { .seed = 0x7e3, .foreign = true };
	struct vgem_ro v;

	if (!g_vgem)
		nm_skip("no vgem: %s", g_vgem_why);
	vgem_ro_new(&v, 64 * NM_KiB, w.seed);
	w.size = v.size;
	pass_to_importer(v.dfd, &w);
	nm_assert_pattern(v.cpu, v.size, w.seed, 0);
	vgem_ro_drop(&v);
}
END_TEST

/* The system heap, allocated read-only (nobody ever could write it); -errno
 * without a heap. */
static int heap_ro(uint64_t size)
{
	struct dma_heap_allocation_data a = {
		.len = size, .fd_flags = O_RDONLY | O_CLOEXEC,
	};
	int heap = open(HEAP_DEV, O_RDONLY | O_CLOEXEC);

	if (heap < 0)
		return -errno;
	nm_assert_sys(ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a));
	close(heap);
	ck_assert_int_eq(fcntl((int)a.fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	return (int)a.fd;
}

START_TEST(heap_readonly)
{
	struct want w = { .size = 128 * NM_KiB, .seed = 0, .foreign = true };
	int dfd = heap_ro(w.size);
	uint8_t *m;

	if (dfd < 0)
		nm_skip("%s: %s (the system dma-heap is in Debian's 6.12 and "
			"later kernels)", HEAP_DEV, nm_retname(dfd));
	pass_to_importer(dfd, &w);
	m = nm_dmabuf_map_ok(dfd, 0, w.size, PROT_READ);
	ck_assert_msg(nm_nonzero(m, w.size) == SIZE_MAX,
		      "the read-only heap buffer was written at %zu",
		      nm_nonzero(m, w.size));
	munmap(m, w.size);
	close(dfd);
}
END_TEST

/*
 * The device only reads a read-only import: the edu engine copies out of
 * it, and refuses to copy into it.
 */
static void edu_readonly(int dfd, const uint8_t *owner, uint64_t size,
			 uint64_t seed)
{
	struct npu_mem_dmabuf_import d;
	struct npu_mem_alloc a;
	uint8_t *ma;
	int fd;

	fd = nm_open();
	nm_alloc_dev_contig_ok(fd, 64 * NM_KiB, NPU_MEM_POLICY_NORMAL_ONLY, 0,
			       &a);
	ma = nm_map_ok(fd, &a, RW);
	nm_fill(ma, a.buf.size, seed + 1);
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_TO_DEVICE, 0, a.buf.size);
	nm_assert_ok(dmabuf_import(fd, dfd, &d));
	ck_assert_msg(d.buf.flags & NPU_MEM_BUF_DEV_CONTIG,
		      "offsets into the import need one device range: flags "
		      "%#x", d.buf.flags);
	nm_assert_ret(nm_dma_copy(a.buf.dev_addr, d.buf.dev_addr, 4096),
		      -EINVAL);
	nm_assert_ret(nm_dma_copy(a.buf.dev_addr, d.buf.dev_addr + size - 64,
				  64), -EINVAL);
	ck_assert_msg(d.buf.flags & NPU_MEM_BUF_READONLY,
		      "read-only import: flags %#x", d.buf.flags);
	/* reading it is what it is for */
	nm_assert_ok(nm_dma_copy(d.buf.dev_addr + 4096, a.buf.dev_addr, 4096));
	nm_sync_ok(fd, a.handle, NPU_MEM_SYNC_FROM_DEVICE, 0, 4096);
	ck_assert_msg(!memcmp(ma, owner + 4096, 4096), "the device's copy out "
		      "of the read-only import differs");
	nm_assert_pattern(owner, size, seed, 0);
	nm_free_ok(fd, d.handle);
	munmap(ma, a.buf.size);
	nm_free_ok(fd, a.handle);
	close(fd);
}

START_TEST(edu_readonly_vgem)
{
	struct vgem_ro v;

	if (!g_vgem)
		nm_skip("no vgem: %s", g_vgem_why);
	if (access(NM_DMA_COPY, W_OK))
		nm_skip("no edu DMA engine (%s: %s): run in the "
			"x86_64-iommu-edu guest", NM_DMA_COPY,
			nm_errname(errno));
	vgem_ro_new(&v, 64 * NM_KiB, 0xed0);
	edu_readonly(v.dfd, v.cpu, v.size, 0xed0);
	vgem_ro_drop(&v);
}
END_TEST

/*
 * kprobes on the dma-buf core's CPU-access calls, for this process only:
 * what npu-mem asks a foreign exporter to do, in order.
 */
#define RO_GROUP	"npumem_ro"
#define RO_INSTANCE	"npumem_ro_sync"

static void ro_trace_off(void)
{
	char path[256];

	nm_tracefs_write("instances/" RO_INSTANCE "/events/" RO_GROUP "/enable",
			 "0", 0);
	snprintf(path, sizeof(path), "%s/instances/" RO_INSTANCE,
		 nm_tracefs_dir());
	rmdir(path);
	nm_tracefs_write("kprobe_events", "-:" RO_GROUP "/begin", O_APPEND);
	nm_tracefs_write("kprobe_events", "-:" RO_GROUP "/end", O_APPEND);
}

/* 0, or -errno with *what naming the step */
static int ro_trace_on(const char **what)
{
	char path[256], filter[64];
	int ret;

	ro_trace_off();
	*what = "kprobe on dma_buf_begin_cpu_access";
	ret = nm_tracefs_write("kprobe_events", "p:" RO_GROUP "/begin "
			       "dma_buf_begin_cpu_access dir=$arg2:s32", O_APPEND);
	if (ret)
		return ret;
	*what = "kprobe on dma_buf_end_cpu_access";
	ret = nm_tracefs_write("kprobe_events", "p:" RO_GROUP "/end "
			       "dma_buf_end_cpu_access dir=$arg2:s32", O_APPEND);
	if (ret)
		return ret;
	*what = "trace instance";
	snprintf(path, sizeof(path), "%s/instances/" RO_INSTANCE,
		 nm_tracefs_dir());
	if (mkdir(path, 0700))
		return -errno;
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)getpid());
	ret = nm_tracefs_write("instances/" RO_INSTANCE "/events/" RO_GROUP
			       "/filter", filter, 0);
	return ret ? ret : nm_tracefs_write("instances/" RO_INSTANCE "/events/"
					    RO_GROUP "/enable", "1", 0);
}

/*
 * The calls of one SYNC of handle @h, as "b1 e1 b2 e2 " (begin or end,
 * enum dma_data_direction: 0 BIDIRECTIONAL, 1 TO_DEVICE, 2 FROM_DEVICE).
 */
static void ro_sync_seq(int fd, uint32_t h, uint32_t dir, uint64_t size,
			char *seq, size_t len)
{
	char path[256], *text, *line, *save = NULL;
	size_t n = 0;

	ck_assert_int_eq(nm_tracefs_write("instances/" RO_INSTANCE "/trace", "",
					  O_TRUNC), 0);
	nm_assert_ok(nm_sync(fd, h, dir, 0, size));
	snprintf(path, sizeof(path), "%s/instances/" RO_INSTANCE "/trace",
		 nm_tracefs_dir());
	text = nm_read_file(path);
	ck_assert_ptr_nonnull(text);
	seq[0] = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *d = strstr(line, " dir=");
		char kind = strstr(line, ": begin: (") ? 'b' :
			    strstr(line, ": end: (") ? 'e' : 0;

		if (line[0] == '#')
			continue;
		ck_assert_msg(kind && d, "unexpected trace line: %s", line);
		n += snprintf(seq + n, n < len ? len - n : 0, "%c%d ", kind,
			      atoi(d + 5));
	}
	free(text);
}

/*
 * A reader of another driver's memory cannot make its exporter drop what
 * the exporter's other users wrote: SYNC FROM_DEVICE through a read-only
 * import asks for a write-back (a TO_DEVICE begin/end pair) before the
 * invalidation, never the invalidation alone.  A writable import's is
 * unchanged.
 */
START_TEST(foreign_reader_writes_back_first)
{
	struct npu_mem_dmabuf_import ro = { 0 }, rw = { 0 };
	uint32_t gem_rw = 0;
	uint64_t size_rw = 0;
	struct vgem_ro v;
	const char *what;
	char seq[256];
	int fd, dfd_rw, ret;

	if (!g_vgem)
		nm_skip("no vgem: %s", g_vgem_why);
	if (geteuid() != 0 || nm_tracefs_find())
		nm_skip("kprobes need root and tracefs");
	snprintf(seq, sizeof(seq), "%s/kprobe_events", nm_tracefs_dir());
	if (access(seq, W_OK))
		nm_skip("this kernel has no kprobe events (%s: %s)", seq,
			nm_errname(errno));
	nm_cpus_solo();
	ret = ro_trace_on(&what);
	ck_assert_msg(!ret, "%s: %s", what, nm_retname(ret));
	fd = nm_open();
	vgem_ro_new(&v, 64 * NM_KiB, 0x5c);
	nm_assert_ok(dmabuf_import(fd, v.dfd, &ro));
	ck_assert_uint_eq(ro.buf.flags & (NPU_MEM_BUF_FOREIGN | NPU_MEM_BUF_READONLY),
			  NPU_MEM_BUF_FOREIGN | NPU_MEM_BUF_READONLY);
	ro_sync_seq(fd, ro.handle, NPU_MEM_SYNC_FROM_DEVICE, v.size, seq,
		    sizeof(seq));
	ck_assert_msg(!strcmp(seq, "b1 e1 b2 e2 "), "read-only import, SYNC "
		      "FROM_DEVICE: exporter calls '%s', want 'b1 e1 b2 e2 '",
		      seq);
	ro_sync_seq(fd, ro.handle, NPU_MEM_SYNC_BIDIRECTIONAL, v.size, seq,
		    sizeof(seq));
	ck_assert_msg(!strcmp(seq, "b1 e1 b0 e0 "), "read-only import, SYNC "
		      "BIDIRECTIONAL: exporter calls '%s', want 'b1 e1 b0 e0 '",
		      seq);
	ro_sync_seq(fd, ro.handle, NPU_MEM_SYNC_TO_DEVICE, v.size, seq,
		    sizeof(seq));
	ck_assert_msg(!strcmp(seq, "b1 e1 "), "read-only import, SYNC "
		      "TO_DEVICE: exporter calls '%s', want 'b1 e1 '", seq);

	/* a writer: its invalidation needs no write-back of others' lines */
	nm_assert_ok(nm_vgem_dumb_create(v.card, 64 * NM_KiB, &gem_rw, &size_rw));
	dfd_rw = nm_vgem_export_ok(v.card, gem_rw);
	nm_assert_ok(dmabuf_import(fd, dfd_rw, &rw));
	ck_assert_uint_eq(rw.buf.flags & NPU_MEM_BUF_READONLY, 0);
	ro_sync_seq(fd, rw.handle, NPU_MEM_SYNC_FROM_DEVICE, size_rw, seq,
		    sizeof(seq));
	ck_assert_msg(!strcmp(seq, "b2 e2 "), "writable import, SYNC "
		      "FROM_DEVICE: exporter calls '%s', want 'b2 e2 '", seq);

	ro_trace_off();
	nm_assert_ok(nm_free(fd, rw.handle));
	nm_assert_ok(nm_free(fd, ro.handle));
	close(dfd_rw);
	nm_assert_ok(nm_gem_close(v.card, gem_rw));
	vgem_ro_drop(&v);
	close(fd);
	nm_cpus_restore();
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("dmabuf_readonly");

	nm_require_device();
	g_vgem = nm_vgem_ensure(g_vgem_why, sizeof(g_vgem_why)) == 0;
	printf("vgem: %s\n", g_vgem ? "yes" : g_vgem_why);
	nm_add(s, own_readonly_pages, 60);
	nm_add(s, own_readonly_huge, 60);
	nm_add(s, vgem_readonly, 60);
	nm_add(s, heap_readonly, 60);
	nm_add(s, edu_readonly_vgem, 60);
	nm_add(s, foreign_reader_writes_back_first, 60);
	return nm_run_open_to_all(s);
}
