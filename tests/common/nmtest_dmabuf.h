/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_dmabuf: helpers for the SYNC / EXPORT / dma-buf / edu DMA tests
 * (tests/kernel/{sync,dmabuf,dmabuf_vgem,dmabuf_share,edu_dma,
 * coherence_stress}.c).  Same conventions as nmtest_util.h: nm_*() return 0
 * or -errno and never assert, *_ok() variants assert and report the
 * caller's line.  Only libc and Check here (every test program links every
 * .c file in tests/common); the libdrm/vgem helpers live in nmtest_vgem.h, a
 * header, for the programs that link libdrm.
 */
#ifndef NMTEST_DMABUF_H
#define NMTEST_DMABUF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/dma-buf.h>

#include "nmtest_util.h"

#define NM_DMA_COPY	NM_DEBUGFS "/dma_copy"
#define NM_BUFINFO	"/sys/kernel/debug/dma_buf/bufinfo"

/* One copy by the edu device (debugfs dma_copy): 0 or -errno. */
int nm_dma_copy(uint64_t src, uint64_t dst, uint64_t len);

/* ---- SYNC ------------------------------------------------------------ */
int nm_sync(int fd, uint32_t handle, uint32_t dir, uint64_t off, uint64_t len);
#define nm_sync_ok(fd, h, dir, off, len) \
	_nm_sync_ok((fd), (h), (dir), (off), (len), __FILE__, __LINE__)
void _nm_sync_ok(int fd, uint32_t handle, uint32_t dir, uint64_t off,
		 uint64_t len, const char *f, int l);

/* ---- EXPORT ---------------------------------------------------------- */
/* EXPORT with pad 0; *dfd gets the dma-buf fd on success. */
int nm_export(int fd, uint32_t handle, uint32_t flags, int *dfd);
#define nm_export_ok(fd, h, flags) \
	_nm_export_ok((fd), (h), (flags), __FILE__, __LINE__)
int _nm_export_ok(int fd, uint32_t handle, uint32_t flags, const char *f,
		  int l);

/* DMA_BUF_IOCTL_SYNC (retried on EINTR/EAGAIN as the dma-buf docs say) */
int nm_dmabuf_sync(int dfd, uint64_t flags);
#define nm_dmabuf_sync_ok(dfd, flags) \
	_nm_dmabuf_sync_ok((dfd), (flags), __FILE__, __LINE__)
void _nm_dmabuf_sync_ok(int dfd, uint64_t flags, const char *f, int l);

/* Map [off, off+len) of a dma-buf fd MAP_SHARED, asserting success. */
#define nm_dmabuf_map_ok(dfd, off, len, prot) \
	_nm_dmabuf_map_ok((dfd), (off), (len), (prot), __FILE__, __LINE__)
void *_nm_dmabuf_map_ok(int dfd, uint64_t off, size_t len, int prot,
			const char *f, int l);

/* ---- files ----------------------------------------------------------- */
uint64_t nm_ino(int fd);		/* st_ino, asserting fstat works */
int nm_fd_count(void);			/* entries of /proc/self/fd */
bool nm_fd_valid(int fd);
/* "exp_name:" of a dma-buf fd's fdinfo (malloc'd), NULL if absent */
char *nm_dmabuf_exp_name(int dfd);

/*
 * The block of /sys/kernel/debug/dma_buf/bufinfo that describes the dma-buf
 * with inode ino (from its header line to the next one), malloc'd; NULL
 * with errno ENOENT when there is none, or the errno of reading the file.
 */
char *nm_bufinfo_entry(uint64_t ino);
/* Devices listed under "Attached Devices:" in such a block (-1: no list) */
int nm_bufinfo_attached(const char *entry, const char *dev);
/* Number of dma-bufs in bufinfo whose exporter is npu_mem (-errno) */
int nm_bufinfo_count_npu(void);

/* ---- SCM_RIGHTS ------------------------------------------------------ */
/* Send a 32-bit message, with fd attached when fd >= 0.  0 or -errno. */
int nm_send_msg(int sock, uint32_t msg, int fd);
/* Receive one; *fd gets the passed fd or -1.  Times out after timeout_s
 * seconds (-ETIMEDOUT); -EPIPE when the peer closed. */
int nm_recv_msg(int sock, uint32_t *msg, int *fd, double timeout_s);

/* ---- physical addresses ---------------------------------------------- */
/* Physical address of the page mapped at addr (root: PFN from
 * /proc/self/pagemap) plus the offset within it; -errno, -ENODATA when the
 * PFN is withheld or the page is not present. */
int nm_virt_to_phys(const volatile void *addr, uint64_t *phys);
/* Runs of physically adjacent 4 KiB pages in [addr, addr+len) (page
 * aligned, mapped), and the physical address of the first: 0 or -errno. */
int nm_phys_runs(const void *addr, size_t len, uint64_t *first,
		 unsigned int *runs);

/* ---- the NPU device --------------------------------------------------- */
/*
 * GET_INFO.dev_flags as sysfs predicts it: PCI when the module's PCI driver
 * has a device bound, IOMMU when that device sits in an IOMMU group with a
 * translating default domain (type DMA or DMA-FQ), COHERENT always on x86.
 * why gets a human-readable account (may be NULL).
 */
uint32_t nm_expected_dev_flags(char *why, size_t len);
/* "key:\tvalue" line of NM_DEBUGFS/device (malloc'd value) or NULL */
char *nm_debugfs_device(const char *key);
/* $VM_CONFIG, or "" outside vm-run */
const char *nm_vm_config(void);

/* ---- patterns -------------------------------------------------------- */
/* Compare two mappings; first differing offset or SIZE_MAX. */
size_t nm_cmp(const void *a, const void *b, size_t len);

/* Run fn(arg) in a thread and return whether it finished within wait_s
 * (true: done).  A thread still running is left to finish in *th. */
#include <pthread.h>
struct nm_bg {
	pthread_t th;
	volatile int done;
	int ret;
	int (*fn)(void *);
	void *arg;
};
void nm_bg_start(struct nm_bg *bg, int (*fn)(void *), void *arg);
bool nm_bg_wait(struct nm_bg *bg, double wait_s);
void nm_bg_join(struct nm_bg *bg);

#endif /* NMTEST_DMABUF_H */
