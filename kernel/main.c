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

/* An NPU's device is going: nothing may stay mapped for it. */
static void npu_mem_revoke(struct npu_mem_npu *npu)
{
	npu_mem_imports_revoke(npu);
	npu_mem_bufs_revoke(npu);
}

static const struct npu_mem_device_ops npu_mem_device_ops = {
	.revoke = npu_mem_revoke,
	.pci_bound = npu_mem_edu_probe,
	.pci_unbinding = npu_mem_edu_remove,
};

static int __init npu_mem_init(void)
{
	int ret;

	ret = npu_mem_reserve_init();
	if (ret)
		return ret;
	ret = npu_mem_ipc_init();
	if (ret)
		goto err_reserve;
	ret = npu_mem_mapping_init();
	if (ret)
		goto err_ipc;
	npu_mem_debugfs_init();
	ret = npu_mem_device_init(&npu_mem_device_ops);
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
	npu_mem_npu_exit();
err_reserve:
	npu_mem_reserve_exit();
	return ret;
}

static void __exit npu_mem_exit(void)
{
	misc_deregister(&npu_mem_misc);
	npu_mem_device_exit();
	npu_mem_retained_exit();
	npu_mem_reserve_exit();
	npu_mem_debugfs_exit();
	npu_mem_mapping_exit();
	npu_mem_ipc_exit();
	npu_mem_npu_exit();
}

module_init(npu_mem_init);
module_exit(npu_mem_exit);

MODULE_DESCRIPTION("Pinned, DMA-mapped NPU memory for user space");
MODULE_AUTHOR("npu-mem developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(NPU_MEM_VERSION);
