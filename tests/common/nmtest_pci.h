/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_pci: sysfs helpers for tests that take the NPU device away from
 * the module and give it back (tests/kernel/dev_remove.c): unbind/bind
 * through the npu_mem PCI driver, remove through the device, rescan of the
 * bus.  Same conventions as nmtest_util.h: functions return 0 or -errno and
 * never assert, so they are safe in Check's parent process (unchecked
 * fixtures) as well as in the tests.
 *
 * The module binds its PCI function through a dynamic id of its driver
 * "npu_mem" (kernel/device.c), so the driver core probes it again both on
 * a sysfs bind and when a rescan re-creates a removed function.
 */
#ifndef NMTEST_PCI_H
#define NMTEST_PCI_H

#include <stdbool.h>
#include <stddef.h>

#define NM_PCI_DRIVER	"/sys/bus/pci/drivers/npu_mem"
#define NM_PCI_DEVICES	"/sys/bus/pci/devices"
#define NM_PCI_RESCAN	"/sys/bus/pci/rescan"

/* Longest "dddd:bb:dd.f" plus room */
#define NM_BDF_LEN	32

/*
 * The address of the PCI function bound to npu_mem, the lowest of several
 * (NPU 0, the one ALLOC uses unless told otherwise, when all were bound at
 * module load): 0, or -ENOENT.
 */
int nm_pci_bound(char *bdf, size_t len);
/* Is bdf bound to npu_mem now? */
bool nm_pci_is_bound(const char *bdf);
/* Does bdf exist on the bus now (not removed)? */
bool nm_pci_present(const char *bdf);

/* Each writes its sysfs file once and returns 0 or the write's -errno. */
int nm_pci_unbind(const char *bdf);	/* drivers/npu_mem/unbind */
int nm_pci_bind(const char *bdf);	/* drivers/npu_mem/bind */
int nm_pci_remove(const char *bdf);	/* devices/BDF/remove */
int nm_pci_rescan(void);		/* bus rescan */

/* Poll until bdf's binding to npu_mem is `bound`: true when it got there
 * within timeout_s. */
bool nm_pci_wait_bound(const char *bdf, bool bound, double timeout_s);

/*
 * Give bdf back to npu_mem whatever state a test left it in: rescan when it
 * was removed, bind when it is there but unbound.  0 once it is bound, or
 * -errno (-ETIMEDOUT when it never got bound).  Prints what it did.
 */
int nm_pci_restore(const char *bdf, double timeout_s);
/* The same for a test's unchecked teardown: nothing when bdf is "", and a
 * line when the device could not be given back. */
void nm_pci_give_back(const char *bdf, double timeout_s);

#endif /* NMTEST_PCI_H */
