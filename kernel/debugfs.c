// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs view of global usage (npu_mem/usage, with the zero reserve and
 * live buffers' bytes on each memory node), of the NPUs' devices and their
 * buffers (npu_mem/device, a paragraph each by index) and of every client
 * (npu_mem/clients), for status tools; in the test build also
 * npu_mem/pgoff_limit, a smaller mmap offset space for the files opened
 * while it is set (client.c).
 */
#include <linux/debugfs.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>

#include "npu_mem.h"

static struct dentry *npu_mem_debugfs;

static int usage_show(struct seq_file *m, void *unused)
{
	int node;

	seq_printf(m, "allocated_bytes: %lld\n", atomic64_read(&npu_mem_usage.bytes));
	seq_printf(m, "huge_pages: %lld\n", atomic64_read(&npu_mem_usage.huge_pages));
	seq_printf(m, "normal_pages: %lld\n", atomic64_read(&npu_mem_usage.normal_pages));
	seq_printf(m, "buffers: %lld\n", atomic64_read(&npu_mem_usage.buffers));
	seq_printf(m, "retained_bytes: %lld\n",
		   atomic64_read(&npu_mem_usage.retained_bytes));
	seq_printf(m, "limit_bytes: %llu\n", npu_mem_limit_bytes());
	seq_printf(m, "peer_mappings: %lld\n",
		   atomic64_read(&npu_mem_usage.peer_maps));
	for_each_node_state(node, N_MEMORY)
		seq_printf(m, "node%d_bytes: %llu\n", node,
			   npu_mem_node_bytes(node));
	npu_mem_reserve_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(usage);

static int device_show(struct seq_file *m, void *unused)
{
	npu_mem_device_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(device);

static int clients_show(struct seq_file *m, void *unused)
{
	struct npu_mem_client *c;

	seq_puts(m, "client pid comm buffers bytes huge_pages normal_pages\n");
	mutex_lock(&npu_mem_clients_lock);
	list_for_each_entry(c, &npu_mem_clients, node) {
		mutex_lock(&c->lock);
		seq_printf(m, "%llu %d %s %llu %llu %llu %llu\n", c->id, c->pid,
			   c->comm, c->nr_buffers, c->bytes, c->huge_pages,
			   c->normal_pages);
		mutex_unlock(&c->lock);
	}
	mutex_unlock(&npu_mem_clients_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(clients);

struct dentry *npu_mem_debugfs_dir(void)
{
	return npu_mem_debugfs;
}

void npu_mem_debugfs_init(void)
{
	/* debugfs failures are not errors: the driver works without it. */
	npu_mem_debugfs = debugfs_create_dir("npu_mem", NULL);
	debugfs_create_file("usage", 0444, npu_mem_debugfs, NULL, &usage_fops);
	debugfs_create_file("device", 0444, npu_mem_debugfs, NULL, &device_fops);
	debugfs_create_file("clients", 0444, npu_mem_debugfs, NULL, &clients_fops);
#ifdef NPU_MEM_TEST_ENGINE
	/* Test build only: client.c says what it is for. */
	debugfs_create_u64("pgoff_limit", 0600, npu_mem_debugfs,
			   &npu_mem_test_pgoff_limit);
#endif
}

void npu_mem_debugfs_exit(void)
{
	debugfs_remove_recursive(npu_mem_debugfs);
}
