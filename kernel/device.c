// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device that stands for an NPU in the DMA API.  Every buffer is
 * DMA-mapped for one, so its DMA ops (direct or IOMMU, coherent or not)
 * decide what a "device address" is and what cache maintenance costs.
 *
 * An NPU is a struct npu_mem_npu: the device, the SRCU that guards it, what
 * it came from and whether it was removed.  The module has one today,
 * npu_mem_npu_default(); everything that maps for a device is handed the
 * instance, and a buffer remembers the one it was mapped for (buf->npu).
 *
 * By default the module registers its own platform device, "npu-mem", with
 * a 64-bit DMA mask.  With npu_pci= it instead binds a PCI function (a real
 * NPU's, or QEMU's edu device in the tests) as a PCI driver: binding is
 * what gives a PCI device its DMA ops and IOMMU domain on every platform.
 *
 * A PCI function can go away at any time (sysfs unbind, hot-unplug, AER
 * recovery), with buffers live.  Users of the device therefore reach it
 * only through npu_mem_dev_enter()/npu_mem_dev_exit(), a read section of
 * the NPU's SRCU (the drm_dev_enter() pattern): removal unpublishes the
 * device, waits for every section in flight, then has every DMA mapping
 * made for that NPU torn down (the revoke callback) before the function is
 * released.  Nothing maps for a device that is gone, and nothing it mapped
 * outlives it.
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

/* A PCI function that may be an NPU: npu_pci= as parsed. */
struct npu_pci_match {
	unsigned int vendor, device;
	int domain;			/* -1: any function of vendor:device */
	unsigned int bus, devfn;
};

struct npu_mem_npu {
	struct srcu_struct srcu;	/* read side: npu_mem_dev_enter() */
	struct mutex lock;		/* probe and remove */
	/* what the DMA API maps for; NULL before probe and once removed */
	struct device __rcu *dev;
	bool pci;			/* a PCI function, rather than @pdev */
	struct platform_device *pdev;	/* our own device, unless @pci */
	struct pci_dev *pci_dev;	/* bound function, under @lock */
	struct npu_pci_match match;	/* which function, when @pci */
};

static struct npu_mem_npu npu_default;
static const struct npu_mem_device_ops *npu_ops;

/* The module's one NPU, until it can have several. */
struct npu_mem_npu *npu_mem_npu_default(void)
{
	return &npu_default;
}

/**
 * npu_mem_dev_enter() - the NPU's device, held until npu_mem_dev_exit()
 * @npu: the NPU
 * @idx: where to keep the read-section cookie for npu_mem_dev_exit()
 *
 * Return: the device, or NULL when it was removed.  Either way the caller
 * must call npu_mem_dev_exit(@npu, *idx).  Sections may sleep; removal
 * waits.
 */
struct device *npu_mem_dev_enter(struct npu_mem_npu *npu, int *idx)
	__acquires(&npu->srcu)
{
	*idx = srcu_read_lock(&npu->srcu);
	return srcu_dereference(npu->dev, &npu->srcu);
}

void npu_mem_dev_exit(struct npu_mem_npu *npu, int idx)
	__releases(&npu->srcu)
{
	srcu_read_unlock(&npu->srcu, idx);
}

bool npu_mem_dev_translated(struct device *dev)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);

	return dom && (dom->type & __IOMMU_DOMAIN_PAGING);
}

static u32 dev_flags(struct npu_mem_npu *npu, struct device *dev)
{
	u32 flags = npu->pci ? NPU_MEM_DEV_PCI : 0;

	if (!dev)
		return flags | NPU_MEM_DEV_REMOVED;
	if (dev_is_dma_coherent(dev))
		flags |= NPU_MEM_DEV_COHERENT;
	if (npu_mem_dev_translated(dev))
		flags |= NPU_MEM_DEV_IOMMU;
	return flags;
}

u32 npu_mem_dev_flags(struct npu_mem_npu *npu)
{
	int idx;
	u32 flags = dev_flags(npu, npu_mem_dev_enter(npu, &idx));

	npu_mem_dev_exit(npu, idx);
	return flags;
}

void npu_mem_device_show(struct seq_file *m, struct npu_mem_npu *npu)
{
	int idx;
	struct device *dev = npu_mem_dev_enter(npu, &idx);
	u32 flags = dev_flags(npu, dev);

	if (dev)
		seq_printf(m, "device:\t%s %s\n", dev_bus_name(dev), dev_name(dev));
	else
		seq_puts(m, "device:\tremoved\n");
	seq_printf(m, "coherent:\t%s\n", flags & NPU_MEM_DEV_COHERENT ? "yes" : "no");
	seq_printf(m, "iommu:\t%s\n", flags & NPU_MEM_DEV_IOMMU ? "yes" : "no");
	npu_mem_dev_exit(npu, idx);
}

static void publish(struct npu_mem_npu *npu, struct device *dev)
{
	rcu_assign_pointer(npu->dev, dev);
}

/*
 * After this, no section sees the NPU's device and none that saw it is
 * still running, so the revoke callback can tear down every mapping made
 * for it.
 */
static void unpublish(struct npu_mem_npu *npu)
{
	rcu_assign_pointer(npu->dev, NULL);
	synchronize_srcu(&npu->srcu);
	npu_ops->revoke(npu);
}

static bool npu_pci_matches(const struct npu_pci_match *match,
			    struct pci_dev *pdev)
{
	return match->domain < 0 ||
	       (pci_domain_nr(pdev->bus) == match->domain &&
		pdev->bus->number == match->bus && pdev->devfn == match->devfn);
}

static int npu_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct npu_mem_npu *npu = &npu_default;
	int ret;

	if (!npu_pci_matches(&npu->match, pdev))
		return -ENODEV;

	mutex_lock(&npu->lock);
	ret = -EBUSY;			/* one PCI function per NPU */
	if (npu->pci_dev)
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
	npu->pci_dev = pci_dev_get(pdev);
	pci_set_drvdata(pdev, npu);
	publish(npu, &pdev->dev);
	npu_ops->pci_bound(pdev);
	dev_info(&pdev->dev, "npu-mem maps buffers for this device%s\n",
		 npu_mem_dev_translated(&pdev->dev) ? " (behind an IOMMU)" : "");
out:
	mutex_unlock(&npu->lock);
	return ret;
}

/*
 * Unbind, hot-unplug and module unload all end here, possibly with buffers
 * live: the test DMA engine stops first (its in-flight copies finish), then
 * the device is revoked.  The buffers themselves stay, as plain memory.
 */
static void npu_pci_remove(struct pci_dev *pdev)
{
	struct npu_mem_npu *npu = pci_get_drvdata(pdev);

	mutex_lock(&npu->lock);
	if (npu->pci_dev == pdev) {
		npu_ops->pci_unbinding(pdev);
		unpublish(npu);
		npu->pci_dev = NULL;
		pci_dev_put(pdev);
		dev_info(&pdev->dev, "npu-mem device removed\n");
	}
	mutex_unlock(&npu->lock);
}

static struct pci_driver npu_pci_driver = {
	.name = "npu_mem",
	.probe = npu_pci_probe,
	.remove = npu_pci_remove,
};

static int parse_npu_pci(struct npu_pci_match *match)
{
	unsigned int dom, bus, slot, fn;
	struct pci_dev *pdev;

	match->domain = -1;
	if (sscanf(npu_pci, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) == 4) {
		pdev = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, fn));
		if (!pdev)
			return -ENODEV;
		match->vendor = pdev->vendor;
		match->device = pdev->device;
		match->domain = dom;
		match->bus = bus;
		match->devfn = PCI_DEVFN(slot, fn);
		pci_dev_put(pdev);
		return 0;
	}
	if (sscanf(npu_pci, "%x:%x", &match->vendor, &match->device) == 2)
		return 0;
	return -EINVAL;
}

static int bind_pci(struct npu_mem_npu *npu)
{
	bool bound;
	int ret;

	ret = parse_npu_pci(&npu->match);
	if (ret) {
		pr_err("npu_pci=%s: %s\n", npu_pci,
		       ret == -ENODEV ? "no such device" : "expected vvvv:dddd or dddd:bb:dd.f");
		return ret;
	}
	npu->pci = true;
	ret = pci_register_driver(&npu_pci_driver);
	if (ret)
		return ret;
	/* A dynamic ID rather than a static table: the device is a parameter. */
	ret = pci_add_dynid(&npu_pci_driver, npu->match.vendor,
			    npu->match.device, PCI_ANY_ID, PCI_ANY_ID, 0, 0, 0);
	mutex_lock(&npu->lock);
	bound = npu->pci_dev;
	mutex_unlock(&npu->lock);
	if (!ret && !bound)
		ret = -ENODEV;
	if (ret) {
		pr_err("npu_pci=%s: could not bind (%d)\n", npu_pci, ret);
		pci_unregister_driver(&npu_pci_driver);
		return ret;
	}
	return 0;
}

static int create_platform_device(struct npu_mem_npu *npu)
{
	struct platform_device_info info = {
		.name = NPU_MEM_DEVICE_NAME,
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct platform_device *pdev;
	int ret;

	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	ret = npu_dma_set_seg_limits(&pdev->dev);
	if (ret) {
		platform_device_unregister(pdev);
		return ret;
	}
	npu->pdev = pdev;
	publish(npu, &pdev->dev);
	return 0;
}

/**
 * npu_mem_npu_init() - make the NPUs reachable, before anything looks
 *
 * Their SRCU must be there before the first npu_mem_dev_enter(), which a
 * debugfs reader may make as soon as main.c creates the files, and until
 * the last, so it lives from before debugfs to after it, apart from the
 * device that npu_mem_device_init() finds.
 */
int npu_mem_npu_init(void)
{
	struct npu_mem_npu *npu = &npu_default;
	int ret;

	ret = init_srcu_struct(&npu->srcu);
	if (ret)
		return ret;
	mutex_init(&npu->lock);
	return 0;
}

void npu_mem_npu_exit(void)
{
	struct npu_mem_npu *npu = &npu_default;

	mutex_destroy(&npu->lock);
	cleanup_srcu_struct(&npu->srcu);
}

/**
 * npu_mem_device_init() - find or create the NPU's device
 * @ops: what the module does as a device comes and goes (npu_mem.h)
 */
int npu_mem_device_init(const struct npu_mem_device_ops *ops)
{
	struct npu_mem_npu *npu = &npu_default;

	npu_ops = ops;
	return npu_pci ? bind_pci(npu) : create_platform_device(npu);
}

void npu_mem_device_exit(void)
{
	struct npu_mem_npu *npu = &npu_default;

	if (npu->pdev) {
		unpublish(npu);
		platform_device_unregister(npu->pdev);
		npu->pdev = NULL;
	} else {
		pci_unregister_driver(&npu_pci_driver);
	}
}
