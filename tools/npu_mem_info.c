// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu_mem_info: print what NPU_MEM_IOCTL_GET_INFO reports, readably.
 *
 *   npu_mem_info [device]      (default /dev/npu-mem)
 *
 * Not a test: a tool for the demo (`make run`) and for debugging.  Exits 0
 * when the ioctl worked, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/npu_mem.h>

static void bytes(const char *name, unsigned long long v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	printf("  %-16s %llu (%.1f %s)\n", name, v, d, unit[u]);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/" NPU_MEM_DEVICE_NAME;
	struct npu_mem_info info;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "npu_mem_info: open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &info) < 0) {
		fprintf(stderr, "npu_mem_info: NPU_MEM_IOCTL_GET_INFO: %s\n",
			strerror(errno));
		return 1;
	}
	close(fd);

	printf("%s: npu-mem ABI %u.%u (this tool: %u.%u)\n", path,
	       info.abi_major, info.abi_minor, NPU_MEM_ABI_MAJOR,
	       NPU_MEM_ABI_MINOR);
	printf("  page sizes      %s%s%s (%#llx)\n",
	       info.page_sizes & NPU_MEM_PAGE_4K ? " 4K" : "",
	       info.page_sizes & NPU_MEM_PAGE_2M ? " 2M" : "",
	       info.page_sizes & NPU_MEM_PAGE_1G ? " 1G" : "",
	       (unsigned long long)info.page_sizes);
	printf("  device          %s%s%s (dev_flags %#x)\n",
	       info.dev_flags & NPU_MEM_DEV_PCI ? "PCI" : "platform",
	       info.dev_flags & NPU_MEM_DEV_COHERENT ? ", DMA-coherent" :
						       ", not coherent",
	       info.dev_flags & NPU_MEM_DEV_IOMMU ? ", behind an IOMMU" :
						    ", no IOMMU",
	       info.dev_flags);
	bytes("total_ram", info.total_ram);
	bytes("free_ram", info.free_ram);
	bytes("limit_bytes", info.limit_bytes);
	bytes("max_alloc", info.max_alloc);
	bytes("allocated_bytes", info.allocated_bytes);
	printf("  %-16s %llu x 2 MiB, %llu x 4 KiB, %llu x 1 GiB\n", "pages",
	       (unsigned long long)info.huge_pages,
	       (unsigned long long)info.normal_pages,
	       (unsigned long long)info.giant_pages);
	printf("  %-16s %llu (this file: %llu, %llu bytes)\n", "buffers",
	       (unsigned long long)info.buffers,
	       (unsigned long long)info.client_buffers,
	       (unsigned long long)info.client_bytes);
	return 0;
}
