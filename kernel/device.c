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
 *
 * A PCI function can go away at any time (sysfs unbind, hot-unplug, AER
 * recovery), with buffers live.  Users of the device therefore reach it
 * only through npu_mem_dev_enter()/npu_mem_dev_exit(), an SRCU read section
 * (the drm_dev_enter() pattern): removal unpublishes the device, waits for
 * every section in flight, then has every buffer's DMA mapping torn down
 * (the revoke callback) before the function is released.  Nothing maps
 * for a device that is gone, and nothing it mapped outlives it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/srcu.h>

#include "npu_mem.h"

static char *npu_pci;
module_param(npu_pci, charp, 0444);
MODULE_PARM_DESC(npu_pci,
		 "PCI device to map buffers for, as vendor:device (hex) or a domain:bus:dev.fn address; default: a platform device of our own");

DEFINE_STATIC_SRCU(npu_dev_srcu);
static DEFINE_MUTEX(npu_dev_lock);	/* probe and remove */
static struct device __rcu *npu_dev;
static struct platform_device *npu_pdev;
static struct pci_dev *npu_pci_dev;	/* bound function, under npu_dev_lock */
static const struct npu_mem_device_ops *npu_ops;

/**
 * npu_mem_dev_enter() - the NPU device, held until npu_mem_dev_exit()
 * @idx: where to keep the read-section cookie for npu_mem_dev_exit()
 *
 * Return: the device, or NULL when it was removed.  Either way the caller
 * must call npu_mem_dev_exit(*idx).  Sections may sleep; removal waits.
 */
struct device *npu_mem_dev_enter(int *idx) __acquires(npu_dev_srcu)
{
	*idx = srcu_read_lock(&npu_dev_srcu);
	return srcu_dereference(npu_dev, &npu_dev_srcu);
}

void npu_mem_dev_exit(int idx) __releases(npu_dev_srcu)
{
	srcu_read_unlock(&npu_dev_srcu, idx);
}

bool npu_mem_dev_translated(struct device *dev)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);

	return dom && (dom->type & __IOMMU_DOMAIN_PAGING);
}

static u32 dev_flags(struct device *dev)
{
	u32 flags = npu_pci ? NPU_MEM_DEV_PCI : 0;

	if (!dev)
		return flags | NPU_MEM_DEV_REMOVED;
	if (dev_is_dma_coherent(dev))
		flags |= NPU_MEM_DEV_COHERENT;
	if (npu_mem_dev_translated(dev))
		flags |= NPU_MEM_DEV_IOMMU;
	return flags;
}

u32 npu_mem_dev_flags(void)
{
	int idx;
	u32 flags = dev_flags(npu_mem_dev_enter(&idx));

	npu_mem_dev_exit(idx);
	return flags;
}

void npu_mem_device_show(struct seq_file *m)
{
	int idx;
	struct device *dev = npu_mem_dev_enter(&idx);
	u32 flags = dev_flags(dev);

	if (dev)
		seq_printf(m, "device:\t%s %s\n", dev_bus_name(dev), dev_name(dev));
	else
		seq_puts(m, "device:\tremoved\n");
	seq_printf(m, "coherent:\t%s\n", flags & NPU_MEM_DEV_COHERENT ? "yes" : "no");
	seq_printf(m, "iommu:\t%s\n", flags & NPU_MEM_DEV_IOMMU ? "yes" : "no");
	npu_mem_dev_exit(idx);
}

static void publish(struct device *dev)
{
	rcu_assign_pointer(npu_dev, dev);
}

/*
 * After this, no section sees @dev and none that saw it is still running,
 * so the revoke callback can tear down every mapping made for it.
 */
static void unpublish(struct device *dev)
{
	rcu_assign_pointer(npu_dev, NULL);
	synchronize_srcu(&npu_dev_srcu);
	npu_ops->revoke(dev);
}

/* npu_pci as parsed: a vendor:device pair or a full address. */
static unsigned int want_vendor, want_device;
static int want_domain = -1;
static unsigned int want_bus, want_devfn;

static int npu_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	if (want_domain >= 0 &&
	    (pci_domain_nr(pdev->bus) != want_domain ||
	     pdev->bus->number != want_bus || pdev->devfn != want_devfn))
		return -ENODEV;

	mutex_lock(&npu_dev_lock);
	ret = -EBUSY;			/* one NPU device per module instance */
	if (npu_pci_dev)
		goto out;
	ret = pcim_enable_device(pdev);
	if (ret)
		goto out;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (!ret)
		ret = npu_dma_set_seg_limits(&pdev->dev);
	if (ret)
		goto out;
	npu_pci_dev = pci_dev_get(pdev);
	publish(&pdev->dev);
	npu_ops->pci_bound(pdev);
	dev_info(&pdev->dev, "npu-mem maps buffers for this device%s\n",
		 npu_mem_dev_translated(&pdev->dev) ? " (behind an IOMMU)" : "");
out:
	mutex_unlock(&npu_dev_lock);
	return ret;
}

/*
 * Unbind, hot-unplug and module unload all end here, possibly with buffers
 * live: the test DMA engine stops first (its in-flight copies finish), then
 * the device is revoked.  The buffers themselves stay, as plain memory.
 */
static void npu_pci_remove(struct pci_dev *pdev)
{
	mutex_lock(&npu_dev_lock);
	if (npu_pci_dev == pdev) {
		npu_ops->pci_unbinding(pdev);
		unpublish(&pdev->dev);
		npu_pci_dev = NULL;
		pci_dev_put(pdev);
		dev_info(&pdev->dev, "npu-mem device removed\n");
	}
	mutex_unlock(&npu_dev_lock);
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
	bool bound;
	int ret;

	ret = parse_npu_pci();
	if (ret) {
		pr_err("npu_pci=%s: %s\n", npu_pci,
		       ret == -ENODEV ? "no such device" : "expected vvvv:dddd or dddd:bb:dd.f");
		return ret;
	}
	ret = pci_register_driver(&npu_pci_driver);
	if (ret)
		return ret;
	/* A dynamic ID rather than a static table: the device is a parameter. */
	ret = pci_add_dynid(&npu_pci_driver, want_vendor, want_device,
			    PCI_ANY_ID, PCI_ANY_ID, 0, 0, 0);
	mutex_lock(&npu_dev_lock);
	bound = npu_pci_dev;
	mutex_unlock(&npu_dev_lock);
	if (!ret && !bound)
		ret = -ENODEV;
	if (ret) {
		pr_err("npu_pci=%s: could not bind (%d)\n", npu_pci, ret);
		pci_unregister_driver(&npu_pci_driver);
		return ret;
	}
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
	publish(&npu_pdev->dev);
	return 0;
}

/**
 * npu_mem_device_init() - find or create the NPU device
 * @ops: what the module does as a device comes and goes (npu_mem.h)
 */
int npu_mem_device_init(const struct npu_mem_device_ops *ops)
{
	npu_ops = ops;
	return npu_pci ? bind_pci() : create_platform_device();
}

void npu_mem_device_exit(void)
{
	if (npu_pdev) {
		unpublish(&npu_pdev->dev);
		platform_device_unregister(npu_pdev);
		npu_pdev = NULL;
	} else {
		pci_unregister_driver(&npu_pci_driver);
	}
}
