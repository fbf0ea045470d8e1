// SPDX-License-Identifier: GPL-2.0-only
/*
 * The address space CPU mappings of /dev/npu-mem belong to.
 *
 * A 2 MiB chunk is mapped by one PMD through the core fault path: ->fault
 * hands back a page of the chunk's compound page and finish_fault() maps
 * the whole chunk with do_set_pmd(), a normal, refcounted entry that
 * get_user_pages() (O_DIRECT, process_vm_readv, FOLL_LONGTERM pins) takes
 * like file THP.  Kernels since the stable fix "do not populate page table
 * entries beyond i_size" only do so when the mapping's inode has an i_size
 * covering the folio, and a character device's inode has none: so every
 * open file of the device gets this pseudo filesystem's inode as its
 * f_mapping (as DRM does with its anonymous inode), with the largest size
 * there is, and every chunk's ->index says where it sits in the buffer
 * (buffer.c), so the check passes.  Nothing is ever put in this inode's page
 * cache.  dma-buf mappings pass it too: a dma-buf's inode has the buffer's
 * size.
 */
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>

#include "npu_mem.h"

#define NPU_MEM_FS_MAGIC	0x6e70756d	/* "npum" */

static struct vfsmount *npu_mem_mnt;
static struct inode *npu_mem_inode;

static int npu_mem_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, NPU_MEM_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * Never registered, so nobody else can mount it; no .owner, so our own
 * mount does not pin the module (it goes away in module exit).
 */
static struct file_system_type npu_mem_fs_type = {
	.name = "npu_mem",
	.init_fs_context = npu_mem_init_fs_context,
	.kill_sb = kill_anon_super,
};

int npu_mem_mapping_init(void)
{
	npu_mem_mnt = kern_mount(&npu_mem_fs_type);
	if (IS_ERR(npu_mem_mnt))
		return PTR_ERR(npu_mem_mnt);
	npu_mem_inode = alloc_anon_inode(npu_mem_mnt->mnt_sb);
	if (IS_ERR(npu_mem_inode)) {
		kern_unmount(npu_mem_mnt);
		return PTR_ERR(npu_mem_inode);
	}
	i_size_write(npu_mem_inode, MAX_LFS_FILESIZE);
	return 0;
}

void npu_mem_mapping_exit(void)
{
	iput(npu_mem_inode);
	kern_unmount(npu_mem_mnt);
}

/* Called from open(): this file's mappings live in our address space. */
void npu_mem_mapping_attach(struct file *file)
{
	file->f_mapping = npu_mem_inode->i_mapping;
}
