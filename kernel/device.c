// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device that stands for the NPU in the DMA API.  Every buffer is
 * DMA-mapped for it, so its DMA ops (direct or IOMMU, coherent or not)
 * decide what a "device address" is and what cache maintenance costs.
 *
 * By default the module registers its own platform device, "npu-mem", with
 * a 64-bit DMA mask.  With npu_pci= it instead binds a PCI function (a real
 * NPU's, or QEMU's edu device in the tests) as a PCI driver: binding is
 * what gives a PCI device its DMA ops and IOMMU domain on every platform.
 */
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>

#include "npu_mem.h"

static char *npu_pci;
module_param(npu_pci, charp, 0444);
MODULE_PARM_DESC(npu_pci,
		 "PCI device to map buffers for, as vendor:device (hex) or a domain:bus:dev.fn address; default: a platform device of our own");

static struct platform_device *npu_pdev;
static struct pci_dev *npu_pci_dev;
static struct device *npu_dev;

struct device *npu_mem_dma_dev(void)
{
	return npu_dev;
}

static bool translated_by_iommu(struct device *dev)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);

	return dom && (dom->type & __IOMMU_DOMAIN_PAGING);
}

u32 npu_mem_dev_flags(void)
{
	u32 flags = 0;

	if (dev_is_dma_coherent(npu_dev))
		flags |= NPU_MEM_DEV_COHERENT;
	if (translated_by_iommu(npu_dev))
		flags |= NPU_MEM_DEV_IOMMU;
	if (npu_pci_dev)
		flags |= NPU_MEM_DEV_PCI;
	return flags;
}

void npu_mem_device_show(struct seq_file *m)
{
	u32 flags = npu_mem_dev_flags();

	seq_printf(m, "device:\t%s %s\n", dev_bus_name(npu_dev), dev_name(npu_dev));
	seq_printf(m, "coherent:\t%s\n", flags & NPU_MEM_DEV_COHERENT ? "yes" : "no");
	seq_printf(m, "iommu:\t%s\n", flags & NPU_MEM_DEV_IOMMU ? "yes" : "no");
}

/* npu_pci as parsed: a vendor:device pair or a full address. */
static unsigned int want_vendor, want_device;
static int want_domain = -1;
static unsigned int want_bus, want_devfn;

static int npu_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	if (npu_pci_dev)
		return -EBUSY;		/* one NPU device per module instance */
	if (want_domain >= 0 &&
	    (pci_domain_nr(pdev->bus) != want_domain ||
	     pdev->bus->number != want_bus || pdev->devfn != want_devfn))
		return -ENODEV;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (!ret)
		ret = npu_dma_set_seg_limits(&pdev->dev);
	if (ret)
		return ret;
	npu_pci_dev = pdev;
	npu_mem_edu_probe(pdev, npu_mem_debugfs_dir());
	dev_info(&pdev->dev, "npu-mem maps buffers for this device%s\n",
		 translated_by_iommu(&pdev->dev) ? " (behind an IOMMU)" : "");
	return 0;
}

static void npu_pci_remove(struct pci_dev *pdev)
{
	/* Only at module unload: no buffer can be left by then. */
	if (npu_pci_dev == pdev)
		npu_pci_dev = NULL;
}

static struct pci_driver npu_pci_driver = {
	.name = "npu_mem",
	.probe = npu_pci_probe,
	.remove = npu_pci_remove,
};

static int parse_npu_pci(void)
{
	unsigned int dom, bus, slot, fn;
	struct pci_dev *pdev;

	if (sscanf(npu_pci, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) == 4) {
		pdev = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, fn));
		if (!pdev)
			return -ENODEV;
		want_vendor = pdev->vendor;
		want_device = pdev->device;
		want_domain = dom;
		want_bus = bus;
		want_devfn = PCI_DEVFN(slot, fn);
		pci_dev_put(pdev);
		return 0;
	}
	if (sscanf(npu_pci, "%x:%x", &want_vendor, &want_device) == 2)
		return 0;
	return -EINVAL;
}

static int bind_pci(void)
{
	int ret;

	ret = parse_npu_pci();
	if (ret) {
		pr_err("npu_mem: npu_pci=%s: %s\n", npu_pci,
		       ret == -ENODEV ? "no such device" : "expected vvvv:dddd or dddd:bb:dd.f");
		return ret;
	}
	ret = pci_register_driver(&npu_pci_driver);
	if (ret)
		return ret;
	/* A dynamic ID rather than a static table: the device is a parameter. */
	ret = pci_add_dynid(&npu_pci_driver, want_vendor, want_device,
			    PCI_ANY_ID, PCI_ANY_ID, 0, 0, 0);
	if (!ret && !npu_pci_dev)
		ret = -ENODEV;
	if (ret) {
		pr_err("npu_mem: npu_pci=%s: could not bind (%d)\n", npu_pci, ret);
		pci_unregister_driver(&npu_pci_driver);
		return ret;
	}
	npu_dev = &npu_pci_dev->dev;
	return 0;
}

static int create_platform_device(void)
{
	struct platform_device_info info = {
		.name = NPU_MEM_DEVICE_NAME,
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};

	int ret;

	npu_pdev = platform_device_register_full(&info);
	if (IS_ERR(npu_pdev))
		return PTR_ERR(npu_pdev);
	ret = npu_dma_set_seg_limits(&npu_pdev->dev);
	if (ret) {
		platform_device_unregister(npu_pdev);
		npu_pdev = NULL;
		return ret;
	}
	npu_dev = &npu_pdev->dev;
	return 0;
}

int npu_mem_device_init(void)
{
	return npu_pci ? bind_pci() : create_platform_device();
}

void npu_mem_device_exit(void)
{
	if (npu_pdev)
		platform_device_unregister(npu_pdev);
	else
		pci_unregister_driver(&npu_pci_driver);
	npu_dev = NULL;
}
