// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_pci: unbind, bind, remove and rescan of the NPU's PCI function
 * through sysfs.  See nmtest_pci.h.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nmtest_pci.h"
#include "nmtest_util.h"

int nm_pci_bound(char *bdf, size_t len)
{
	DIR *d = opendir(NM_PCI_DRIVER);
	struct dirent *e;
	int ret = -ENOENT;

	while (d && (e = readdir(d))) {
		unsigned int dom, bus, dev, fn;
		char tail;

		/*
		 * The driver's directory holds one link per bound function;
		 * the lowest address (fixed-width hex sorts as text) is NPU 0.
		 */
		if (sscanf(e->d_name, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn,
			   &tail) == 4 && (ret || strcmp(e->d_name, bdf) < 0)) {
			snprintf(bdf, len, "%s", e->d_name);
			ret = 0;
		}
	}
	if (d)
		closedir(d);
	return ret;
}

bool nm_pci_is_bound(const char *bdf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NM_PCI_DRIVER "/%s", bdf);
	return access(path, F_OK) == 0;
}

bool nm_pci_present(const char *bdf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NM_PCI_DEVICES "/%s", bdf);
	return access(path, F_OK) == 0;
}

int nm_pci_unbind(const char *bdf)
{
	return nm_write_file(NM_PCI_DRIVER "/unbind", bdf);
}

int nm_pci_bind(const char *bdf)
{
	return nm_write_file(NM_PCI_DRIVER "/bind", bdf);
}

int nm_pci_remove(const char *bdf)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), NM_PCI_DEVICES "/%s/remove", bdf);
	return nm_write_file(path, "1");
}

int nm_pci_rescan(void)
{
	return nm_write_file(NM_PCI_RESCAN, "1");
}

bool nm_pci_wait_bound(const char *bdf, bool bound, double timeout_s)
{
	double end = nm_now() + timeout_s;

	for (;;) {
		if (nm_pci_is_bound(bdf) == bound)
			return true;
		if (nm_now() > end)
			return false;
		usleep(10000);
	}
}

int nm_pci_restore(const char *bdf, double timeout_s)
{
	int ret = 0;

	if (nm_pci_is_bound(bdf))
		return 0;
	if (!nm_pci_present(bdf)) {
		ret = nm_pci_rescan();
		printf("restore: %s was removed: rescan: %s\n", bdf,
		       nm_retname(ret));
	}
	/* a rescan probes it by itself: bind only what is still unbound */
	if (!nm_pci_wait_bound(bdf, true, 2) && nm_pci_present(bdf)) {
		ret = nm_pci_bind(bdf);
		printf("restore: %s was unbound: bind: %s\n", bdf,
		       nm_retname(ret));
	}
	if (!nm_pci_wait_bound(bdf, true, timeout_s))
		return ret ? ret : -ETIMEDOUT;
	return 0;
}

void nm_pci_give_back(const char *bdf, double timeout_s)
{
	int ret;

	if (!bdf[0])
		return;
	ret = nm_pci_restore(bdf, timeout_s);
	if (ret)
		printf("could not give %s back to npu_mem: %s\n", bdf,
		       nm_retname(ret));
}
