// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device that stands for an NPU in the DMA API.  Every buffer is
 * DMA-mapped for one, so its DMA ops (direct or IOMMU, coherent or not)
 * decide what a "device address" is and what cache maintenance costs.
 *
 * An NPU is a struct npu_mem_npu: the device, the SRCU that guards it, what
 * it came from and whether it was removed.  The module serves several, by
 * index (npu_mem_npu_get()); everything that maps for a device is handed
 * the instance, and a buffer remembers the one it was mapped for
 * (buf->npu).
 *
 * By default the module registers its own platform device, "npu-mem", with
 * a 64-bit DMA mask: NPU 0, the only one.  With npu_pci= it instead binds
 * PCI functions (a real NPU's, or QEMU's edu device in the tests) as a PCI
 * driver: binding is what gives a PCI device its DMA ops and IOMMU domain
 * on every platform.  Each function is an NPU, with an index that stays
 * its own for the module's life (reserve_slots()).
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
#include <linux/nospec.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/srcu.h>

#include "npu_mem.h"

static char *npu_pci;
module_param(npu_pci, charp, 0444);
MODULE_PARM_DESC(npu_pci,
		 "PCI functions to map buffers for: a comma-separated list of vendor:device (hex) and domain:bus:dev.fn addresses; default: a platform device of our own");

/* Most entries in npu_pci=, and most NPUs the module serves. */
#define NPU_PCI_MAX_MATCH	16
#define NPU_MAX			NPU_MEM_MAX_NPUS

/*
 * dynid driver_data: the id was added for an address entry only, so a
 * function it matches is an NPU only at a listed address.
 */
#define NPU_ID_BY_ADDRESS	1

/* An entry of npu_pci=: every function of vendor:device, or one address. */
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
	unsigned int index;		/* its place in npus[], for good */
	bool pci;			/* a PCI function, rather than @pdev */
	struct platform_device *pdev;	/* our own device, unless @pci */
	struct pci_dev *pci_dev;	/* bound function, under @lock */
	u32 domain, bdf;		/* the PCI address the slot is for */
	int node;			/* its NUMA node, or NUMA_NO_NODE */
	atomic64_t bytes;		/* live buffers allocated for it */
	atomic64_t buffers;
};

/*
 * The NPUs, by index.  A slot is made once per PCI address (or for the
 * platform device) and kept until the module goes, whatever binds and
 * unbinds, so an index names the same function for the module's life and
 * a buffer's ->npu stays valid.  Slots are only added, under npus_lock, and
 * published by nr_npus (release/acquire), so lookups take no lock.
 */
static struct npu_mem_npu *npus[NPU_MAX];
static unsigned int nr_npus;
static DEFINE_MUTEX(npus_lock);

static struct npu_pci_match matches[NPU_PCI_MAX_MATCH];
static unsigned int nr_matches;
static const struct npu_mem_device_ops *npu_ops;

/**
 * npu_mem_npu_get() - the NPU of index @index
 * @index: 0 .. npu_mem_npu_count() - 1
 *
 * Return: the NPU, valid until module exit (its device may be gone: see
 * npu_mem_dev_enter()), or NULL when there is no such index.
 */
struct npu_mem_npu *npu_mem_npu_get(u32 index)
{
	unsigned int n = smp_load_acquire(&nr_npus);

	if (index >= n)
		return NULL;
	return npus[array_index_nospec(index, n)];
}

unsigned int npu_mem_npu_count(void)
{
	return smp_load_acquire(&nr_npus);
}

unsigned int npu_mem_npu_index(const struct npu_mem_npu *npu)
{
	return npu->index;
}

/* Memory for @npu comes from here: the node of its device, if known. */
int npu_mem_npu_node(const struct npu_mem_npu *npu)
{
	return READ_ONCE(npu->node);
}

/* Buffers allocated for @npu come (+) and go (-): buffer.c counts them. */
void npu_mem_npu_account(struct npu_mem_npu *npu, s64 bytes, int buffers)
{
	atomic64_add(bytes, &npu->bytes);
	atomic64_add(buffers, &npu->buffers);
}

void npu_mem_npu_usage(const struct npu_mem_npu *npu, u64 *bytes,
		       u64 *buffers)
{
	*bytes = atomic64_read(&npu->bytes);
	*buffers = atomic64_read(&npu->buffers);
}

/* The PCI address an index stands for (domain, bus << 8 | devfn). */
bool npu_mem_npu_pci_addr(const struct npu_mem_npu *npu, u32 *domain,
			  u32 *bdf)
{
	*domain = npu->domain;
	*bdf = npu->bdf;
	return npu->pci;
}

/*
 * A new slot, at the next index.  Its SRCU is there before anyone can look
 * it up, and stays until npu_mem_npu_exit().
 */
static struct npu_mem_npu *npu_new(bool pci, u32 domain, u32 bdf)
{
	struct npu_mem_npu *npu;

	lockdep_assert_held(&npus_lock);
	if (nr_npus == NPU_MAX)
		return NULL;
	npu = kzalloc(sizeof(*npu), GFP_KERNEL);
	if (!npu)
		return NULL;
	if (init_srcu_struct(&npu->srcu)) {
		kfree(npu);
		return NULL;
	}
	mutex_init(&npu->lock);
	npu->index = nr_npus;
	npu->pci = pci;
	npu->domain = domain;
	npu->bdf = bdf;
	npu->node = NUMA_NO_NODE;
	npus[nr_npus] = npu;
	smp_store_release(&nr_npus, nr_npus + 1);
	return npu;
}

static u32 pci_bdf(struct pci_dev *pdev)
{
	return pdev->bus->number << 8 | pdev->devfn;
}

/* The slot for @pdev's address, made (at the next index) if it has none. */
static struct npu_mem_npu *npu_for_pci(struct pci_dev *pdev)
{
	u32 domain = pci_domain_nr(pdev->bus), bdf = pci_bdf(pdev);
	struct npu_mem_npu *npu = NULL;
	unsigned int i;

	mutex_lock(&npus_lock);
	for (i = 0; i < nr_npus; i++)
		if (npus[i]->pci && npus[i]->domain == domain &&
		    npus[i]->bdf == bdf)
			npu = npus[i];
	if (!npu)
		npu = npu_new(true, domain, bdf);
	mutex_unlock(&npus_lock);
	return npu;
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

static void device_show(struct seq_file *m, struct npu_mem_npu *npu)
{
	int idx;
	struct device *dev = npu_mem_dev_enter(npu, &idx);
	u32 flags = dev_flags(npu, dev);

	seq_printf(m, "index:\t%u\n", npu->index);
	if (dev)
		seq_printf(m, "device:\t%s %s\n", dev_bus_name(dev), dev_name(dev));
	else
		seq_puts(m, "device:\tremoved\n");
	seq_printf(m, "coherent:\t%s\n", flags & NPU_MEM_DEV_COHERENT ? "yes" : "no");
	seq_printf(m, "iommu:\t%s\n", flags & NPU_MEM_DEV_IOMMU ? "yes" : "no");
	seq_printf(m, "node:\t%d\n", npu_mem_npu_node(npu));
	seq_printf(m, "buffers:\t%lld\n", atomic64_read(&npu->buffers));
	seq_printf(m, "bytes:\t%lld\n", atomic64_read(&npu->bytes));
	npu_mem_dev_exit(npu, idx);
}

/* Every NPU, by index, a blank line apart: NPU 0's lines come first. */
void npu_mem_device_show(struct seq_file *m)
{
	unsigned int i, n = npu_mem_npu_count();

	for (i = 0; i < n; i++) {
		if (i)
			seq_putc(m, '\n');
		device_show(m, npu_mem_npu_get(i));
	}
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

/* Is @pdev's address one that npu_pci= lists? */
static bool npu_pci_listed(struct pci_dev *pdev)
{
	unsigned int i;

	for (i = 0; i < nr_matches; i++)
		if (matches[i].domain == pci_domain_nr(pdev->bus) &&
		    matches[i].bus == pdev->bus->number &&
		    matches[i].devfn == pdev->devfn)
			return true;
	return false;
}

/* Does an entry of npu_pci= name @pdev, by its ids or by its address? */
static bool npu_pci_wanted(struct pci_dev *pdev)
{
	unsigned int i;

	for (i = 0; i < nr_matches; i++)
		if (matches[i].domain < 0 && matches[i].vendor == pdev->vendor &&
		    matches[i].device == pdev->device)
			return true;
	return npu_pci_listed(pdev);
}

/*
 * Every function the driver core offers is an NPU (npu_pci='s ids, an id
 * added through new_id, a driver_override bind), except one offered only
 * by the id of an address entry, at another address: the driver core
 * matches a driver_override bind against that id too, so such a function
 * must be listed to be an NPU.
 */
static int npu_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct npu_mem_npu *npu;
	int ret;

	if (id->driver_data == NPU_ID_BY_ADDRESS && !npu_pci_listed(pdev))
		return -ENODEV;
	npu = npu_for_pci(pdev);
	if (!npu)
		return -ENOSPC;

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
	WRITE_ONCE(npu->node, dev_to_node(&pdev->dev));
	pci_set_drvdata(pdev, npu);
	publish(npu, &pdev->dev);
	npu_ops->pci_bound(npu, pdev);
	dev_info(&pdev->dev, "npu-mem device %u maps buffers for this function%s\n",
		 npu->index,
		 npu_mem_dev_translated(&pdev->dev) ? " (behind an IOMMU)" : "");
out:
	mutex_unlock(&npu->lock);
	return ret;
}

/*
 * Unbind, hot-unplug and module unload all end here, possibly with buffers
 * live: the test DMA engine stops first (its in-flight copies finish), then
 * the device is revoked, and only this NPU's: the others' mappings stay.
 * The buffers themselves stay, as plain memory.
 */
static void npu_pci_remove(struct pci_dev *pdev)
{
	struct npu_mem_npu *npu = pci_get_drvdata(pdev);

	mutex_lock(&npu->lock);
	if (npu->pci_dev == pdev) {
		npu_ops->pci_unbinding(npu, pdev);
		unpublish(npu);
		npu->pci_dev = NULL;
		pci_dev_put(pdev);
		dev_info(&pdev->dev, "npu-mem device %u removed\n", npu->index);
	}
	mutex_unlock(&npu->lock);
}

static struct pci_driver npu_pci_driver = {
	.name = "npu_mem",
	.probe = npu_pci_probe,
	.remove = npu_pci_remove,
};

/* One entry of npu_pci=: an address (of a function present now) or ids. */
static int parse_match(const char *arg, struct npu_pci_match *match)
{
	unsigned int dom, bus, slot, fn;
	struct pci_dev *pdev;
	char end;

	match->domain = -1;
	if (sscanf(arg, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &end) == 4) {
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
	if (sscanf(arg, "%x:%x%c", &match->vendor, &match->device, &end) == 2)
		return 0;
	return -EINVAL;
}

static int parse_npu_pci(void)
{
	char *list, *cur, *arg;
	int ret = 0;

	list = kstrdup(npu_pci, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	cur = list;
	while ((arg = strsep(&cur, ",")) && !ret) {
		arg = strim(arg);
		if (!*arg)
			continue;
		if (nr_matches == NPU_PCI_MAX_MATCH)
			ret = -E2BIG;
		else
			ret = parse_match(arg, &matches[nr_matches++]);
		if (ret)
			pr_err("npu_pci=%s: %s: %s\n", npu_pci, arg,
			       ret == -ENODEV ? "no such device" :
			       ret == -E2BIG ? "too many entries" :
			       "expected vvvv:dddd or dddd:bb:dd.f");
	}
	kfree(list);
	if (!ret && !nr_matches)
		ret = -EINVAL;
	return ret;
}

static int pci_addr_cmp(const void *a, const void *b)
{
	const struct pci_dev *x = *(struct pci_dev * const *)a;
	const struct pci_dev *y = *(struct pci_dev * const *)b;
	u64 kx = (u64)pci_domain_nr(x->bus) << 16 | x->bus->number << 8 | x->devfn;
	u64 ky = (u64)pci_domain_nr(y->bus) << 16 | y->bus->number << 8 | y->devfn;

	return kx < ky ? -1 : kx > ky;
}

/*
 * Indices in address order: the functions npu_pci= names that are there at
 * load get slots 0, 1, ... by domain, bus and devfn before the driver binds
 * any (the driver core probes in the order devices were added, which is not
 * address order behind expander buses).  Functions bound later (hotplug,
 * new_id, driver_override) get the next free index.
 */
static int reserve_slots(void)
{
	struct pci_dev **found, *pdev = NULL;
	unsigned int n = 0, i;
	int ret = 0;

	found = kcalloc(NPU_MAX, sizeof(*found), GFP_KERNEL);
	if (!found)
		return -ENOMEM;
	for_each_pci_dev(pdev)
		if (n < NPU_MAX && npu_pci_wanted(pdev))
			found[n++] = pci_dev_get(pdev);
	sort(found, n, sizeof(*found), pci_addr_cmp, NULL);
	mutex_lock(&npus_lock);
	for (i = 0; i < n; i++) {
		if (!ret && !npu_new(true, pci_domain_nr(found[i]->bus),
				     pci_bdf(found[i])))
			ret = -ENOMEM;
		pci_dev_put(found[i]);
	}
	mutex_unlock(&npus_lock);
	kfree(found);
	return ret;
}

/*
 * The driver's ids, dynamic ones as the devices are a parameter: each
 * entry's vendor:device once, an address entry's marked so that probe
 * takes only its address.
 */
static int add_ids(void)
{
	unsigned int i, j;
	int ret;

	for (i = 0; i < nr_matches; i++) {
		bool dup = false, by_ids = false;

		for (j = 0; j < nr_matches; j++) {
			if (matches[j].vendor != matches[i].vendor ||
			    matches[j].device != matches[i].device)
				continue;
			dup |= j < i;
			by_ids |= matches[j].domain < 0;
		}
		if (dup)
			continue;
		ret = pci_add_dynid(&npu_pci_driver, matches[i].vendor,
				    matches[i].device, PCI_ANY_ID, PCI_ANY_ID,
				    0, 0, by_ids ? 0 : NPU_ID_BY_ADDRESS);
		if (ret)
			return ret;
	}
	return 0;
}

static bool any_bound(void)
{
	unsigned int i, n = npu_mem_npu_count();
	bool bound = false;

	for (i = 0; i < n; i++) {
		mutex_lock(&npus[i]->lock);
		bound |= !!npus[i]->pci_dev;
		mutex_unlock(&npus[i]->lock);
	}
	return bound;
}

static int bind_pci(void)
{
	int ret;

	ret = parse_npu_pci();
	if (ret)
		return ret;
	ret = reserve_slots();
	if (ret)
		return ret;
	ret = pci_register_driver(&npu_pci_driver);
	if (ret)
		return ret;
	ret = add_ids();
	if (!ret && !any_bound())
		ret = -ENODEV;
	if (ret) {
		pr_err("npu_pci=%s: could not bind (%d)\n", npu_pci, ret);
		pci_unregister_driver(&npu_pci_driver);
		return ret;
	}
	return 0;
}

/* No PCI NPU: one device of our own, NPU 0. */
static int create_platform_device(void)
{
	struct platform_device_info info = {
		.name = NPU_MEM_DEVICE_NAME,
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct platform_device *pdev;
	struct npu_mem_npu *npu;
	int ret;

	mutex_lock(&npus_lock);
	npu = npu_new(false, 0, 0);
	mutex_unlock(&npus_lock);
	if (!npu)
		return -ENOMEM;
	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	ret = npu_dma_set_seg_limits(&pdev->dev);
	if (ret) {
		platform_device_unregister(pdev);
		return ret;
	}
	npu->pdev = pdev;
	npu->node = dev_to_node(&pdev->dev);
	publish(npu, &pdev->dev);
	return 0;
}

/*
 * After debugfs and the devices are gone: a debugfs reader may enter any
 * NPU's SRCU until then.
 */
void npu_mem_npu_exit(void)
{
	unsigned int i;

	for (i = 0; i < nr_npus; i++) {
		mutex_destroy(&npus[i]->lock);
		cleanup_srcu_struct(&npus[i]->srcu);
		kfree(npus[i]);
		npus[i] = NULL;
	}
	nr_npus = 0;
}

/**
 * npu_mem_device_init() - find or create the NPUs' devices
 * @ops: what the module does as a device comes and goes (npu_mem.h)
 */
int npu_mem_device_init(const struct npu_mem_device_ops *ops)
{
	npu_ops = ops;
	return npu_pci ? bind_pci() : create_platform_device();
}

void npu_mem_device_exit(void)
{
	struct npu_mem_npu *npu = npu_mem_npu_get(0);

	if (!npu_pci) {
		if (npu && npu->pdev) {
			unpublish(npu);
			platform_device_unregister(npu->pdev);
			npu->pdev = NULL;
		}
	} else {
		pci_unregister_driver(&npu_pci_driver);
	}
}
