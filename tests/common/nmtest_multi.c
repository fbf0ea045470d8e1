// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_multi: helpers for programs that need several NPUs.  See
 * nmtest_multi.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nmtest_dmabuf.h"
#include "nmtest_multi.h"
#include "nmtest_pci.h"
#include "nmtest_util.h"

int nm_info_of(int fd, uint32_t dev, struct npu_mem_info *out)
{
	memset(out, 0, sizeof(*out));
	out->device = dev;
	return nm_ioctl(fd, NPU_MEM_IOCTL_GET_INFO, out);
}

int nm_alloc_on(int fd, uint32_t dev, uint64_t size, uint32_t policy,
		struct npu_mem_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
	a->policy = policy;
	a->device = dev;
	return nm_ioctl(fd, NPU_MEM_IOCTL_ALLOC, a);
}

int nm_alloc_dma_on(int fd, uint32_t dev, uint64_t size, uint32_t policy,
		    struct npu_mem_alloc *a)
{
	struct npu_mem_info i;
	int ret = nm_info_of(fd, dev, &i);

	if (ret)
		return ret;
	if (!(i.dev_flags & NPU_MEM_DEV_IOMMU)) {
		size = size > NM_2M ? size : NM_2M;
		policy = NPU_MEM_POLICY_HUGE_FIRST;
	}
	ret = nm_alloc_on(fd, dev, size, policy, a);
	if (!ret && !(a->buf.flags & NPU_MEM_BUF_DEV_CONTIG)) {
		nm_free(fd, a->handle);
		return -EAGAIN;
	}
	return ret;
}

void nm_multi_give_back(const struct npu_mem_info *info, unsigned int count)
{
	char bdf[NM_BDF_LEN];

	for (unsigned int d = 0; d < count; d++) {
		nm_bdf_of(&info[d], bdf, sizeof(bdf));
		if (!nm_pci_present(bdf))
			nm_pci_give_back(bdf, 60);
	}
}

int nm_dma_copy_on(uint32_t dev, uint64_t src, uint64_t dst, uint64_t len)
{
	char path[96], text[96];

	if (dev)
		snprintf(path, sizeof(path), NM_DEBUGFS "/dma_copy%u", dev);
	else
		snprintf(path, sizeof(path), NM_DMA_COPY);
	snprintf(text, sizeof(text), "%#llx %#llx %#llx",
		 (unsigned long long)src, (unsigned long long)dst,
		 (unsigned long long)len);
	return nm_write_file(path, text);
}

void nm_bdf_of(const struct npu_mem_info *i, char *bdf, size_t len)
{
	snprintf(bdf, len, "%04x:%02x:%02x.%x", i->dev_pci_domain,
		 i->dev_pci_bdf >> 8, (i->dev_pci_bdf >> 3) & 0x1f,
		 i->dev_pci_bdf & 7);
}

int nm_multi_setup(struct npu_mem_info info[NM_MAX_NPUS], unsigned int *count)
{
	int fd = open("/dev/" NPU_MEM_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	unsigned int n;

	if (fd < 0 || nm_info_of(fd, 0, &info[0])) {
		printf("open or GET_INFO of /dev/npu-mem: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	n = info[0].device_count;
	if (n < 2 || n > NM_MAX_NPUS || access(NM_DMA_COPY, F_OK)) {
		printf("SKIP: %u NPU(s), %s: run in the x86_64-multi-edu guest\n",
		       n, access(NM_DMA_COPY, F_OK) ? "no edu engine" :
		       "edu engine");
		close(fd);
		return 77;
	}
	for (uint32_t d = 1; d < n; d++) {
		int ret = nm_info_of(fd, d, &info[d]);

		if (ret) {
			printf("GET_INFO of device %u: %s\n", d, nm_retname(ret));
			close(fd);
			return 1;
		}
	}
	close(fd);
	*count = n;
	return 0;
}
