// SPDX-License-Identifier: GPL-2.0-only
/*
 * A real DMA engine for the tests: QEMU's "edu" PCI device (1234:11e8).
 *
 * When npu_pci binds the module to an edu device, debugfs gets
 * npu_mem/dma_copy for NPU 0 and npu_mem/dma_copyN for NPU N > 0.  Writing
 * "SRC DST LEN" (device addresses of that NPU's buffers, as ALLOC reports
 * them, or of other NPUs' buffers mapped for it, as PEER_MAP reports them,
 * any base) makes the device copy LEN bytes from SRC to DST
 * through its 4 KiB internal buffer: it reads SRC by DMA, then writes DST by
 * DMA, both through the IOMMU when one translates for it.  This is a test
 * interface, root only, and both ranges must lie inside live npu-mem
 * buffers, so it cannot be used to reach other memory.  It is built only
 * into the test build of the module (NPU_MEM_TEST_ENGINE=y, see Kbuild):
 * no installed module ships a file that makes a device DMA into user
 * memory.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "npu_mem.h"

#define EDU_VENDOR		0x1234
#define EDU_DEVICE		0x11e8
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98
#define EDU_CMD_START		0x1
#define EDU_CMD_TO_RAM		0x2
#define EDU_BUF_ADDR		0x40000
#define EDU_BUF_SIZE		4096
/*
 * QEMU before 8.2.1 refuses a transfer ending at the buffer's last byte
 * (off-by-one in edu_check_range) and stops the machine: move half at a time.
 */
#define EDU_XFER_MAX		(EDU_BUF_SIZE / 2)

/* One engine per edu function; a copy at a time on each. */
struct edu {
	void __iomem *mmio;
	struct dentry *dma_copy;
	struct npu_mem_npu *npu;
	struct mutex lock;
};

/* By NPU index: the debugfs file's data, valid while the file exists. */
static struct edu *edus[NPU_MEM_MAX_NPUS];

static int edu_dma(struct edu *edu, u64 src, u64 dst, u32 len, u32 cmd)
{
	void __iomem *edu_mmio = edu->mmio;
	unsigned long timeout = jiffies + 10 * HZ;

	writeq(src, edu_mmio + EDU_REG_DMA_SRC);
	writeq(dst, edu_mmio + EDU_REG_DMA_DST);
	writeq(len, edu_mmio + EDU_REG_DMA_COUNT);
	writel(cmd | EDU_CMD_START, edu_mmio + EDU_REG_DMA_CMD);
	/* The model completes a transfer from a 100 ms timer: poll, sleeping. */
	while (readl(edu_mmio + EDU_REG_DMA_CMD) & EDU_CMD_START) {
		if (time_after(jiffies, timeout))
			return -ETIMEDOUT;
		if (fatal_signal_pending(current))
			return -EINTR;
		usleep_range(1000, 2000);
	}
	return 0;
}

static int edu_copy(struct edu *edu, u64 src, u64 dst, u64 len)
{
	int ret = 0;

	mutex_lock(&edu->lock);
	while (len && !ret) {
		u32 n = min_t(u64, len, EDU_XFER_MAX);

		ret = edu_dma(edu, src, EDU_BUF_ADDR, n, 0);
		if (!ret)
			ret = edu_dma(edu, EDU_BUF_ADDR, dst, n, EDU_CMD_TO_RAM);
		src += n;
		dst += n;
		len -= n;
	}
	mutex_unlock(&edu->lock);
	return ret;
}

/*
 * Are both ranges inside live device mappings for @npu, buffers'
 * (buffer.c) or foreign imports' (import.c), with @b one the device may
 * write?  On
 * success both registries stay locked, buffers' first, so nothing is
 * unmapped until dma_ranges_unlock(); on failure (-EINVAL) they are not.
 */
static int dma_ranges_lock(struct npu_mem_npu *npu, u64 a, u64 alen, u64 b,
			   u64 blen)
{
	npu_mem_bufs_registry_lock();
	npu_mem_imports_lock();
	if ((npu_mem_bufs_range_live(npu, a, alen, false) ||
	     npu_mem_imports_range_live(npu, a, alen, false)) &&
	    (npu_mem_bufs_range_live(npu, b, blen, true) ||
	     npu_mem_imports_range_live(npu, b, blen, true)))
		return 0;
	npu_mem_imports_unlock();
	npu_mem_bufs_registry_unlock();
	return -EINVAL;
}

static void dma_ranges_unlock(void)
{
	npu_mem_imports_unlock();
	npu_mem_bufs_registry_unlock();
}

static ssize_t dma_copy_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct edu *edu = file->private_data;
	char kbuf[96];
	u64 src, dst, len;
	int ret;

	if (count >= sizeof(kbuf))
		return -EINVAL;
	if (copy_from_user(kbuf, ubuf, count))
		return -EFAULT;
	kbuf[count] = '\0';
	if (sscanf(kbuf, "%lli %lli %lli", &src, &dst, &len) != 3 || !len)
		return -EINVAL;

	/* Holding the registries keeps both ranges mapped during the DMA. */
	ret = dma_ranges_lock(edu->npu, src, len, dst, len);
	if (ret)
		return ret;
	ret = edu_copy(edu, src, dst, len);
	dma_ranges_unlock();
	return ret ? ret : count;
}

static const struct file_operations dma_copy_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = dma_copy_write,
};

/* Its control file sits in the module's debugfs directory (debugfs.c). */
void npu_mem_edu_probe(struct npu_mem_npu *npu, struct pci_dev *pdev)
{
	unsigned int index = npu_mem_npu_index(npu);
	struct edu *edu;
	char name[24];

	if (pdev->vendor != EDU_VENDOR || pdev->device != EDU_DEVICE ||
	    index >= ARRAY_SIZE(edus))
		return;
	edu = kzalloc(sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return;
	edu->mmio = pcim_iomap(pdev, 0, 0);
	if (!edu->mmio) {
		pci_warn(pdev, "edu: cannot map BAR0, no dma_copy\n");
		kfree(edu);
		return;
	}
	edu->npu = npu;
	mutex_init(&edu->lock);
	if (index)
		snprintf(name, sizeof(name), "dma_copy%u", index);
	else
		strscpy(name, "dma_copy", sizeof(name));
	edu->dma_copy = debugfs_create_file(name, 0200, npu_mem_debugfs_dir(),
					    edu, &dma_copy_fops);
	edus[index] = edu;
}

/*
 * Before the BAR goes: debugfs_remove() waits for writes in flight, so no
 * copy touches the device after this returns.
 */
void npu_mem_edu_remove(struct npu_mem_npu *npu, struct pci_dev *pdev)
{
	unsigned int index = npu_mem_npu_index(npu);
	struct edu *edu = index < ARRAY_SIZE(edus) ? edus[index] : NULL;

	if (!edu)
		return;
	debugfs_remove(edu->dma_copy);
	edus[index] = NULL;
	mutex_destroy(&edu->lock);
	kfree(edu);
}
