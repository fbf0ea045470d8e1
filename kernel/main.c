// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu-mem: pinned, zeroed, DMA-mapped memory for an NPU, for user space.
 *
 * /dev/npu-mem is a misc device; each open file is a client (client.c)
 * owning buffers (buffer.c) that it maps with mmap (mmap.c), syncs and
 * exports as dma-bufs (ioctl.c, dmabuf.c).  The module cannot be unloaded
 * while any of them exists: open files, mappings (through vm_file) and
 * dma-bufs (through their exporter owner) all pin it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "npu_mem.h"

static unsigned long max_bytes;
module_param(max_bytes, ulong, 0644);
MODULE_PARM_DESC(max_bytes,
		 "Cap on bytes in npu-mem buffers, all processes together (0: 3/4 of RAM)");
static unsigned long reserve_bytes;
module_param(reserve_bytes, ulong, 0644);
MODULE_PARM_DESC(reserve_bytes,
		 "Memory an allocation must leave available to the rest of the system (0: 1/16 of RAM)");

/*
 * Pinned memory cannot be reclaimed, and unmapped buffers count in no
 * process's OOM score: by default a quarter of RAM stays out of reach, so
 * the system keeps working when every buffer is taken.  Pinning more is
 * the administrator's choice (max_bytes, at most all of RAM).
 */
u64 npu_mem_limit_bytes(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	u64 cap = READ_ONCE(max_bytes);

	if (!cap)
		return ram / 4 * 3;
	return min(cap, ram);
}

/* What MemAvailable must still hold after an allocation. */
u64 npu_mem_reserve_bytes(void)
{
	u64 reserve = READ_ONCE(reserve_bytes);

	return reserve ? reserve : ((u64)totalram_pages() << PAGE_SHIFT) / 16;
}

/* The largest ALLOC: the cap, and page counts that fit the UAPI's __u32. */
u64 npu_mem_max_alloc(void)
{
	return min_t(u64, npu_mem_limit_bytes(), NPU_MEM_MAX_ALLOC);
}

static int npu_mem_open(struct inode *inode, struct file *file)
{
	struct npu_mem_client *client = npu_mem_client_create(file->f_cred);

	if (!client)
		return -ENOMEM;
	file->private_data = client;
	npu_mem_mapping_attach(file);
	return 0;
}

static int npu_mem_release(struct inode *inode, struct file *file)
{
	npu_mem_client_destroy(file->private_data);
	return 0;
}

static void npu_mem_show_fdinfo(struct seq_file *m, struct file *file)
{
	npu_mem_client_show_fdinfo(m, file->private_data);
}

static const struct file_operations npu_mem_fops = {
	.owner = THIS_MODULE,
	.open = npu_mem_open,
	.release = npu_mem_release,
	.unlocked_ioctl = npu_mem_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = npu_mem_mmap,
	/* 2 MiB chunks need 2 MiB-aligned addresses to get PMDs. */
	.get_unmapped_area = thp_get_unmapped_area,
	.show_fdinfo = npu_mem_show_fdinfo,
	.llseek = noop_llseek,
};

static struct miscdevice npu_mem_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = NPU_MEM_DEVICE_NAME,
	.fops = &npu_mem_fops,
};

/* The NPU device is going: nothing may stay mapped for it. */
static void npu_mem_revoke(struct device *dev)
{
	npu_mem_imports_revoke(dev);
	npu_mem_bufs_revoke(dev);
}

static int __init npu_mem_init(void)
{
	int ret;

	ret = npu_mem_ipc_init();
	if (ret)
		return ret;
	ret = npu_mem_mapping_init();
	if (ret)
		goto err_ipc;
	npu_mem_debugfs_init();
	ret = npu_mem_device_init(npu_mem_revoke);
	if (ret)
		goto err_debugfs;
	ret = misc_register(&npu_mem_misc);
	if (ret)
		goto err_device;
	pr_info("version %s, ABI %d.%d, /dev/%s\n", NPU_MEM_VERSION,
		NPU_MEM_ABI_MAJOR, NPU_MEM_ABI_MINOR, NPU_MEM_DEVICE_NAME);
	return 0;

err_device:
	npu_mem_device_exit();
err_debugfs:
	npu_mem_debugfs_exit();
	npu_mem_mapping_exit();
err_ipc:
	npu_mem_ipc_exit();
	return ret;
}

static void __exit npu_mem_exit(void)
{
	misc_deregister(&npu_mem_misc);
	npu_mem_device_exit();
	npu_mem_retained_exit();
	npu_mem_debugfs_exit();
	npu_mem_mapping_exit();
	npu_mem_ipc_exit();
}

module_init(npu_mem_init);
module_exit(npu_mem_exit);

MODULE_DESCRIPTION("Pinned, DMA-mapped NPU memory for user space");
MODULE_AUTHOR("npu-mem developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(NPU_MEM_VERSION);
