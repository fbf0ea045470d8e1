// SPDX-License-Identifier: GPL-2.0-only
/* nmtest_bounce: see nmtest_bounce.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmtest_bounce.h"
#include "nmtest_util.h"

#define IO_TLB_SLAB	2048ULL		/* bytes per swiotlb slab */

/* The value of "swiotlb=" on the command line (malloc'd) or NULL */
static char *swiotlb_arg(void)
{
	char *cmd = nm_read_file("/proc/cmdline"), *p, *ret = NULL;

	if (!cmd)
		return NULL;
	for (p = strtok(cmd, " \n"); p; p = strtok(NULL, " \n"))
		if (!strncmp(p, "swiotlb=", 8))
			ret = strdup(p + 8);	/* the last one wins */
	free(cmd);
	return ret;
}

bool nm_swiotlb_forced(void)
{
	char *arg = swiotlb_arg(), *p, *save = NULL;
	bool forced = false;

	for (p = arg ? strtok_r(arg, ",", &save) : NULL; p;
	     p = strtok_r(NULL, ",", &save))
		if (!strcmp(p, "force"))
			forced = true;
	free(arg);
	return forced;
}

bool nm_expect_bounced(uint32_t dev_flags)
{
	return nm_swiotlb_forced() && !(dev_flags & NPU_MEM_DEV_IOMMU);
}

uint64_t nm_swiotlb_pool_bytes(void)
{
	uint64_t slabs = 0;
	char *text, *arg;

	text = nm_read_file("/sys/kernel/debug/swiotlb/io_tlb_nslabs");
	if (text) {
		slabs = strtoull(text, NULL, 0);
		free(text);
		if (slabs)
			return slabs * IO_TLB_SLAB;
	}
	arg = swiotlb_arg();
	if (arg && arg[0] >= '0' && arg[0] <= '9')
		slabs = strtoull(arg, NULL, 0);
	free(arg);
	return slabs * IO_TLB_SLAB;
}
