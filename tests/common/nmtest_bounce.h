/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_bounce: when the NPU device sees bounce buffers (swiotlb) instead
 * of the buffers' pages, for the tests that check NPU_MEM_BUF_BOUNCED and
 * what SYNC must do then (tests/kernel/{sync,edu_dma}.c).
 */
#ifndef NMTEST_BOUNCE_H
#define NMTEST_BOUNCE_H

#include <stdbool.h>
#include <stdint.h>

/* The kernel command line forces swiotlb for every mapping (swiotlb=force
 * or swiotlb=N,force). */
bool nm_swiotlb_forced(void);

/*
 * Whether every buffer must carry NPU_MEM_BUF_BOUNCED on a device with
 * these GET_INFO dev_flags: swiotlb is forced and no IOMMU translates for
 * the device (dma-iommu bounces only untrusted devices, which the test
 * guests do not have).  Otherwise no buffer may: the test guests' devices
 * reach all of RAM with a 64-bit DMA mask.
 */
bool nm_expect_bounced(uint32_t dev_flags);

/* Bytes in the swiotlb pool (debugfs swiotlb/io_tlb_nslabs, 2 KiB each,
 * or the swiotlb= slab count on the command line); 0 when unknown. */
uint64_t nm_swiotlb_pool_bytes(void);

#endif /* NMTEST_BOUNCE_H */
