/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_multi: helpers for the programs that need several NPUs, each with
 * its edu engine (the x86_64-multi-edu guest: multi_npu, peer_map).  Same
 * conventions as nmtest_util.h: 0 or -errno, no asserts.
 */
#ifndef NMTEST_MULTI_H
#define NMTEST_MULTI_H

#include <stddef.h>
#include <stdint.h>
#include <linux/npu_mem.h>

/* Most NPUs these programs look at. */
#define NM_MAX_NPUS	8

int nm_info_of(int fd, uint32_t dev, struct npu_mem_info *out);
int nm_alloc_on(int fd, uint32_t dev, uint64_t size, uint32_t policy,
		struct npu_mem_alloc *a);
/*
 * nm_alloc_on() for a buffer whose first size bytes dev's engine copies
 * from its dev_addr: one device address range.  Behind an IOMMU any
 * buffer is (one IOVA range); without one, device addresses are physical,
 * so the buffer is 2 MiB of HUGE_FIRST instead (one compound page), and
 * -EAGAIN if it still came in pieces.
 */
int nm_alloc_dma_on(int fd, uint32_t dev, uint64_t size, uint32_t policy,
		    struct npu_mem_alloc *a);
/* NPU dev's engine copies len bytes, device addresses in its own view. */
int nm_dma_copy_on(uint32_t dev, uint64_t src, uint64_t dst, uint64_t len);
/* "dddd:bb:dd.f" of the PCI function GET_INFO describes. */
void nm_bdf_of(const struct npu_mem_info *i, char *bdf, size_t len);

/*
 * Put back every NPU of info[0..count-1] whose PCI function is gone: the
 * teardown of a test that removes one.  Check runs such a teardown in the
 * parent process, which cannot know what the test's child removed.
 */
void nm_multi_give_back(const struct npu_mem_info *info, unsigned int count);

/*
 * GET_INFO of every NPU into info[0..count-1] and their number into
 * *count.  Returns 0; 77 (print, then exit with it) with fewer than two
 * NPUs or no edu engine; 1 when the device cannot be asked.
 */
int nm_multi_setup(struct npu_mem_info info[NM_MAX_NPUS], unsigned int *count);

#endif /* NMTEST_MULTI_H */
