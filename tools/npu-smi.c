// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu-smi: what the npu-mem driver is doing, in the spirit of npu-smi and
 * nvidia-smi.
 *
 *   npu-smi [info] [--json] [-d DEVICE]
 *
 * Sources, each the one the driver meant for the purpose:
 *  - /sys/module/npu_mem/{version,parameters/}: the loaded module;
 *  - NPU_MEM_IOCTL_GET_INFO on the device node: ABI, device flags, totals,
 *    and of each NPU index its node and usage (ABI 1.4);
 *  - debugfs npu_mem/device: which device buffers are mapped for (root);
 *  - debugfs npu_mem/clients: every open file of the device (root), or else
 *    /proc/PID/fdinfo of the open files this user may see.
 *
 * Raw ioctls through the UAPI header rather than libaclmem: a status tool
 * must keep working (and say why) when the library and module disagree.
 *
 * Exit status, as nvidia-smi's where the meaning is the same:
 *   0 ok   2 bad usage   4 permission denied   6 query failed
 *   9 driver not loaded
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/npu_mem.h>

enum {
	EXIT_OK = 0,
	EXIT_USAGE = 2,
	EXIT_PERM = 4,
	EXIT_QUERY = 6,
	EXIT_NO_DRIVER = 9,
};

#define SYSFS_MODULE	"/sys/module/npu_mem"
#define DEBUGFS_DIR	"/sys/kernel/debug/npu_mem"
#define MAX_NPUS	64	/* the module's own limit */

/* One open file of the device, as debugfs or fdinfo describes it. */
struct client {
	uint64_t id;
	int pid;
	char comm[64];
	uint64_t buffers, bytes, huge_pages, normal_pages;
};

/* Clients of one process added up. */
struct proc {
	int pid;
	char comm[64];
	unsigned int clients;
	uint64_t buffers, bytes, huge_pages, normal_pages;
};

struct status {
	const char *node;
	char version[64];
	bool have_version;
	char max_bytes[32];
	char npu_pci[128];
	struct npu_mem_info info;
	struct npu_mem_info npus[MAX_NPUS];	/* GET_INFO of each index */
	unsigned int nr_npus;
	/* debugfs npu_mem/device, or what dev_flags and npu_pci tell */
	char bus[32];
	char dev_name[128];
	bool dev_from_debugfs;
	char pci_id[32];		/* " (vvvv:dddd)" of a PCI device */
	struct rlimit memlock;
	struct client *clients;
	size_t nr_clients;
	const char *clients_source;	/* "debugfs" or "fdinfo" */
	bool clients_complete;		/* false: other users' not visible */
};

static const char *prog = "npu-smi";

static void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Reads a small file into buf without its trailing newline; false on error. */
static bool read_line_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return false;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return true;
}

static const char *debugfs_dir(void)
{
	/* Tests point this elsewhere to exercise the fdinfo fallback. */
	const char *d = getenv("NPU_MEM_DEBUGFS");

	return d && *d ? d : DEBUGFS_DIR;
}

static int add_client(struct status *st, const struct client *c)
{
	struct client *n;
	size_t i;

	/* dup()ed or inherited descriptors show one file more than once. */
	for (i = 0; i < st->nr_clients; i++)
		if (st->clients[i].id == c->id)
			return 0;
	n = realloc(st->clients, (st->nr_clients + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	st->clients = n;
	st->clients[st->nr_clients++] = *c;
	return 0;
}

/*
 * "client pid comm buffers bytes huge_pages normal_pages" after a header
 * line.  comm may hold spaces: take two fields from the left and four from
 * the right.
 */
static int parse_debugfs_client(const char *line, struct client *c)
{
	char buf[256], *p, *end, *fields[4];
	int i, n;

	snprintf(buf, sizeof(buf), "%s", line);
	end = buf + strlen(buf);
	while (end > buf && isspace((unsigned char)end[-1]))
		*--end = '\0';
	for (i = 3; i >= 0; i--) {
		p = strrchr(buf, ' ');
		if (!p)
			return -EINVAL;
		fields[i] = p + 1;
		*p = '\0';
	}
	if (sscanf(buf, "%" SCNu64 " %d %n", &c->id, &c->pid, &n) != 2)
		return -EINVAL;
	snprintf(c->comm, sizeof(c->comm), "%s", buf + n);
	c->buffers = strtoull(fields[0], NULL, 10);
	c->bytes = strtoull(fields[1], NULL, 10);
	c->huge_pages = strtoull(fields[2], NULL, 10);
	c->normal_pages = strtoull(fields[3], NULL, 10);
	return 0;
}

/* 0, or -errno when debugfs cannot be read (not root, not mounted). */
static int clients_from_debugfs(struct status *st)
{
	char path[512], line[256];
	struct client c;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/clients", debugfs_dir());
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "client ", 7)) {
		fclose(f);
		return -EPROTO;
	}
	while (fgets(line, sizeof(line), f)) {
		if (parse_debugfs_client(line, &c))
			continue;
		ret = add_client(st, &c);
		if (ret)
			break;
	}
	fclose(f);
	st->clients_source = "debugfs";
	st->clients_complete = true;
	return ret;
}

/* The npu-mem-* keys of /proc/PID/fdinfo/FD; false if it has none. */
static bool read_fdinfo(int pid, const char *fd, struct client *c)
{
	char path[320], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v || strncmp(line, "npu-mem-", 8))
			continue;
		*v++ = '\0';
		if (!strcmp(line, "npu-mem-client-id")) {
			c->id = strtoull(v, NULL, 10);
			found = true;
		} else if (!strcmp(line, "npu-mem-buffers")) {
			c->buffers = strtoull(v, NULL, 10);
		} else if (!strcmp(line, "npu-mem-bytes")) {
			c->bytes = strtoull(v, NULL, 10);
		} else if (!strcmp(line, "npu-mem-huge-pages")) {
			c->huge_pages = strtoull(v, NULL, 10);
		} else if (!strcmp(line, "npu-mem-normal-pages")) {
			c->normal_pages = strtoull(v, NULL, 10);
		}
	}
	fclose(f);
	return found;
}

/*
 * Every descriptor of the device node in every process whose /proc/PID/fd
 * this user may read.  The device is recognised by its device number, not
 * by name, so a node elsewhere (NPU_MEM_DEVICE) is found too.
 */
static int clients_from_fdinfo(struct status *st, dev_t rdev)
{
	struct dirent *pe, *fe;
	DIR *procd, *fdd;
	char path[64], fdpath[320];
	struct stat sb;
	int ret = 0;

	st->clients_source = "fdinfo";
	st->clients_complete = true;
	procd = opendir("/proc");
	if (!procd)
		return -errno;
	while (!ret && (pe = readdir(procd))) {
		char comm[64] = "?";
		int pid;

		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		pid = atoi(pe->d_name);
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fdd = opendir(path);
		if (!fdd) {
			if (errno == EACCES || errno == EPERM)
				st->clients_complete = false;
			continue;
		}
		snprintf(fdpath, sizeof(fdpath), "/proc/%d/comm", pid);
		read_line_file(fdpath, comm, sizeof(comm));
		while ((fe = readdir(fdd))) {
			struct client c = { .pid = pid };

			if (fe->d_name[0] == '.')
				continue;
			snprintf(fdpath, sizeof(fdpath), "%s/%s", path, fe->d_name);
			if (stat(fdpath, &sb) || !S_ISCHR(sb.st_mode) ||
			    sb.st_rdev != rdev)
				continue;
			if (!read_fdinfo(pid, fe->d_name, &c))
				continue;
			snprintf(c.comm, sizeof(c.comm), "%s", comm);
			ret = add_client(st, &c);
			if (ret)
				break;
		}
		closedir(fdd);
	}
	closedir(procd);
	return ret;
}

/* debugfs npu_mem/device: "device:\t<bus> <name>", then key:\tvalue lines. */
static void read_device(struct status *st)
{
	char path[512], line[256];
	FILE *f;

	snprintf(st->bus, sizeof(st->bus), "%s",
		 st->info.dev_flags & NPU_MEM_DEV_PCI ? "pci" : "platform");
	snprintf(st->dev_name, sizeof(st->dev_name), "%s",
		 st->info.dev_flags & NPU_MEM_DEV_PCI && st->npu_pci[0] ?
		 st->npu_pci : NPU_MEM_DEVICE_NAME);

	snprintf(path, sizeof(path), "%s/device", debugfs_dir());
	f = fopen(path, "re");
	if (!f)
		return;
	/* NPU 0's paragraph, the one GET_INFO described: the first. */
	while (fgets(line, sizeof(line), f) && line[0] != '\n') {
		char bus[32], name[128];

		if (sscanf(line, "device: %31s %127s", bus, name) == 2) {
			snprintf(st->bus, sizeof(st->bus), "%s", bus);
			snprintf(st->dev_name, sizeof(st->dev_name), "%s", name);
			st->dev_from_debugfs = true;
		}
	}
	fclose(f);
	if (!strcmp(st->bus, "pci")) {
		char v[16] = "", d[16] = "";

		/* Which NPU it is, for a human: the address alone does not say. */
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", st->dev_name);
		read_line_file(path, v, sizeof(v));
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", st->dev_name);
		read_line_file(path, d, sizeof(d));
		if (!strncmp(v, "0x", 2) && !strncmp(d, "0x", 2))
			snprintf(st->pci_id, sizeof(st->pci_id), " (%.4s:%.4s)", v + 2, d + 2);
	}
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Clients added up per process, sorted by pid.  NULL only without memory. */
static struct proc *group_by_pid(const struct status *st, size_t *nr)
{
	struct proc *p = calloc(st->nr_clients + 1, sizeof(*p));
	size_t i, j, n = 0;

	if (!p)
		return NULL;
	for (i = 0; i < st->nr_clients; i++) {
		const struct client *c = &st->clients[i];

		for (j = 0; j < n && p[j].pid != c->pid; j++)
			;
		if (j == n) {
			p[n].pid = c->pid;
			snprintf(p[n].comm, sizeof(p[n].comm), "%s", c->comm);
			n++;
		}
		p[j].clients++;
		p[j].buffers += c->buffers;
		p[j].bytes += c->bytes;
		p[j].huge_pages += c->huge_pages;
		p[j].normal_pages += c->normal_pages;
	}
	qsort(p, n, sizeof(*p), cmp_proc);
	*nr = n;
	return p;
}

/* ---- output ------------------------------------------------------------ */

static const char *human(uint64_t v, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%" PRIu64 " B", v);
	else if (!(v & ((1ULL << (10 * u)) - 1)))
		snprintf(buf, size, "%" PRIu64 " %s", v >> (10 * u), units[u]);
	else
		snprintf(buf, size, "%.1f %s", d, units[u]);
	return buf;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_rlim(rlim_t v)
{
	if (v == RLIM_INFINITY)
		printf("null");
	else
		printf("%llu", (unsigned long long)v);
}

static void json_driver(const struct status *st)
{
	const struct npu_mem_info *in = &st->info;

	printf("{\n  \"driver\": {\n    \"loaded\": true,\n    \"version\": ");
	if (st->have_version)
		json_str(st->version);
	else
		printf("null");
	printf(",\n    \"abi\": {\"major\": %u, \"minor\": %u},\n",
	       in->abi_major, in->abi_minor);
	printf("    \"tool_abi\": {\"major\": %d, \"minor\": %d},\n",
	       NPU_MEM_ABI_MAJOR, NPU_MEM_ABI_MINOR);
	printf("    \"abi_compatible\": %s,\n",
	       in->abi_major == NPU_MEM_ABI_MAJOR ? "true" : "false");
	printf("    \"device_node\": ");
	json_str(st->node);
	printf(",\n    \"parameters\": {\"max_bytes\": ");
	/* A number as sysfs gives it, so not quoted. */
	if (st->max_bytes[0])
		printf("%s", st->max_bytes);
	else
		printf("null");
	printf(", \"npu_pci\": ");
	if (st->npu_pci[0])
		json_str(st->npu_pci);
	else
		printf("null");
	printf("}\n  },\n");
}

static void json_device(const struct status *st)
{
	const struct npu_mem_info *in = &st->info;
	size_t i;

	printf("  \"device\": {\n    \"bus\": ");
	json_str(st->bus);
	printf(",\n    \"name\": ");
	json_str(st->dev_name);
	printf(",\n    \"pci\": %s,\n    \"coherent\": %s,\n    \"iommu\": %s,\n"
	       "    \"removed\": %s,\n",
	       in->dev_flags & NPU_MEM_DEV_PCI ? "true" : "false",
	       in->dev_flags & NPU_MEM_DEV_COHERENT ? "true" : "false",
	       in->dev_flags & NPU_MEM_DEV_IOMMU ? "true" : "false",
	       in->dev_flags & NPU_MEM_DEV_REMOVED ? "true" : "false");
	printf("    \"dev_flags\": %u,\n    \"page_sizes\": [", in->dev_flags);
	for (i = 0; i < 64; i++)
		if (in->page_sizes & (1ULL << i))
			printf("%s%llu", in->page_sizes & ((1ULL << i) - 1) ? ", " : "",
			       1ULL << i);
	printf("]\n  },\n");
}

/* Each NPU: its node, and what is allocated for it and on its node. */
static void json_npus(const struct status *st)
{
	unsigned int i;

	printf("  \"npus\": [");
	for (i = 0; i < st->nr_npus; i++) {
		const struct npu_mem_info *in = &st->npus[i];

		printf("%s\n    {\"index\": %u, \"node\": ", i ? "," : "", i);
		if (in->dev_node == NPU_MEM_NODE_NONE)
			printf("null");
		else
			printf("%u", in->dev_node);
		printf(", \"removed\": %s, \"buffers\": %llu, \"bytes\": %llu, "
		       "\"node_bytes\": %llu}",
		       in->dev_flags & NPU_MEM_DEV_REMOVED ? "true" : "false",
		       (unsigned long long)in->dev_buffers,
		       (unsigned long long)in->dev_bytes,
		       (unsigned long long)in->dev_node_bytes);
	}
	printf("%s],\n", st->nr_npus ? "\n  " : "");
}

/* The "memory" and "limits" objects. */
static void json_memory(const struct status *st)
{
	const struct npu_mem_info *in = &st->info;

	printf("  \"memory\": {\n");
	printf("    \"total_ram\": %llu,\n", (unsigned long long)in->total_ram);
	printf("    \"free_ram\": %llu,\n", (unsigned long long)in->free_ram);
	printf("    \"allocated_bytes\": %llu,\n", (unsigned long long)in->allocated_bytes);
	printf("    \"retained_bytes\": %llu,\n", (unsigned long long)in->retained_bytes);
	printf("    \"zero_reserve_bytes\": %llu,\n",
	       (unsigned long long)in->zero_reserve_bytes);
	printf("    \"zero_reserve_low\": %llu,\n",
	       (unsigned long long)in->zero_reserve_low);
	printf("    \"zero_reserve_high\": %llu,\n",
	       (unsigned long long)in->zero_reserve_high);
	printf("    \"buffers\": %llu,\n", (unsigned long long)in->buffers);
	printf("    \"huge_pages\": %llu,\n", (unsigned long long)in->huge_pages);
	printf("    \"normal_pages\": %llu,\n", (unsigned long long)in->normal_pages);
	printf("    \"giant_pages\": %llu\n  },\n", (unsigned long long)in->giant_pages);

	printf("  \"limits\": {\n");
	printf("    \"limit_bytes\": %llu,\n", (unsigned long long)in->limit_bytes);
	printf("    \"max_alloc\": %llu,\n", (unsigned long long)in->max_alloc);
	printf("    \"memlock_soft\": ");
	json_rlim(st->memlock.rlim_cur);
	printf(",\n    \"memlock_hard\": ");
	json_rlim(st->memlock.rlim_max);
	printf("\n  },\n");
}

/* The processes, and the end of the top-level object. */
static void json_processes(const struct status *st, const struct proc *p,
			   size_t np)
{
	size_t i;

	printf("  \"processes_source\": \"%s\",\n", st->clients_source);
	printf("  \"processes_complete\": %s,\n",
	       st->clients_complete ? "true" : "false");
	printf("  \"processes\": [");
	for (i = 0; i < np; i++) {
		printf("%s\n    {\"pid\": %d, \"command\": ", i ? "," : "", p[i].pid);
		json_str(p[i].comm);
		printf(", \"clients\": %u, \"buffers\": %llu, \"bytes\": %llu, "
		       "\"huge_pages\": %llu, \"normal_pages\": %llu}",
		       p[i].clients, (unsigned long long)p[i].buffers,
		       (unsigned long long)p[i].bytes,
		       (unsigned long long)p[i].huge_pages,
		       (unsigned long long)p[i].normal_pages);
	}
	printf("%s]\n}\n", np ? "\n  " : "");
}

static void print_json(const struct status *st, const struct proc *p, size_t np)
{
	json_driver(st);
	json_device(st);
	json_npus(st);
	json_memory(st);
	json_processes(st, p, np);
}

static void row(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("  %-20s ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void human_driver(const struct status *st)
{
	const struct npu_mem_info *in = &st->info;

	printf("npu-smi: npu-mem status\n\nDriver\n");
	row("Version", "%s", st->have_version ? st->version : "unknown");
	row("ABI", "%u.%u%s", in->abi_major, in->abi_minor,
	    in->abi_major == NPU_MEM_ABI_MAJOR ? "" : " (INCOMPATIBLE with this tool)");
	row("Device node", "%s", st->node);
}

static void human_device(const struct status *st)
{
	const struct npu_mem_info *in = &st->info;
	char a[32];
	size_t i;
	int n;

	printf("\nDevice\n");
	if (in->dev_flags & NPU_MEM_DEV_REMOVED)
		row("State", "%s", "REMOVED: allocations fail until it is bound again");
	row("Mapped for", "%s %s%s", st->bus, st->dev_name, st->pci_id);
	/* Non-coherent DMA is what makes aclrtMemFlush and SYNC cost something. */
	row("DMA", "%s", in->dev_flags & NPU_MEM_DEV_COHERENT ?
	    "cache-coherent" : "non-coherent (CPU cache maintenance on sync)");
	row("IOMMU", "%s", in->dev_flags & NPU_MEM_DEV_IOMMU ?
	    "yes (device addresses are IOVAs)" : "no (device addresses are physical)");
	printf("  %-20s ", "Page sizes");
	n = 0;
	for (i = 0; i < 64; i++)
		if (in->page_sizes & (1ULL << i))
			printf("%s%s", n++ ? ", " : "", human(1ULL << i, a, sizeof(a)));
	putchar('\n');
}

/*
 * One line per NPU: bytes allocated for it, and bytes of every NPU's
 * buffers on its node (what its DMA reaches without crossing sockets).
 */
static void human_npus(const struct status *st)
{
	char a[32], b[32];
	unsigned int i;

	printf("\nNPUs\n  %5s %5s %8s %12s %12s\n", "INDEX", "NODE",
	       "BUFFERS", "BYTES", "ON ITS NODE");
	for (i = 0; i < st->nr_npus; i++) {
		const struct npu_mem_info *in = &st->npus[i];
		char node[16] = "-";

		if (in->dev_node != NPU_MEM_NODE_NONE)
			snprintf(node, sizeof(node), "%u", in->dev_node);
		printf("  %5u %5s %8llu %12s %12s%s\n", i, node,
		       (unsigned long long)in->dev_buffers,
		       human(in->dev_bytes, a, sizeof(a)),
		       in->dev_node == NPU_MEM_NODE_NONE ? "-" :
		       human(in->dev_node_bytes, b, sizeof(b)),
		       in->dev_flags & NPU_MEM_DEV_REMOVED ? "  (removed)" : "");
	}
}

/* The "Memory" and "Limits" sections. */
static void human_memory(const struct status *st)
{
	const struct npu_mem_info *in = &st->info;
	char a[32];

	printf("\nMemory\n");
	row("Total RAM", "%s", human(in->total_ram, a, sizeof(a)));
	row("Free RAM", "%s", human(in->free_ram, a, sizeof(a)));
	row("Allocated", "%s in %llu buffer%s", human(in->allocated_bytes, a, sizeof(a)),
	    (unsigned long long)in->buffers, in->buffers == 1 ? "" : "s");
	/* Part of Allocated: freed, but still charged (UAPI header). */
	row("Retained", "%s (freed, still referenced elsewhere)",
	    human(in->retained_bytes, a, sizeof(a)));
	/* The module's, not in Allocated until ALLOC takes a chunk. */
	if (in->zero_reserve_high || in->zero_reserve_bytes) {
		char l[32], h[32];

		row("Zero reserve", "%s (per node: refill under %s, up to %s)",
		    human(in->zero_reserve_bytes, a, sizeof(a)),
		    human(in->zero_reserve_low, l, sizeof(l)),
		    human(in->zero_reserve_high, h, sizeof(h)));
	}
	row("Huge pages (2 MiB)", "%llu", (unsigned long long)in->huge_pages);
	row("Normal pages (4 KiB)", "%llu", (unsigned long long)in->normal_pages);
	row("Giant pages (1 GiB)", "%llu", (unsigned long long)in->giant_pages);

	printf("\nLimits\n");
	row("All processes", "%s%s", human(in->limit_bytes, a, sizeof(a)),
	    st->max_bytes[0] && strcmp(st->max_bytes, "0") ?
	    " (module parameter max_bytes)" : " (3/4 of RAM; max_bytes unset)");
	row("One allocation", "%s", human(in->max_alloc, a, sizeof(a)));
	if (st->memlock.rlim_cur == RLIM_INFINITY)
		row("RLIMIT_MEMLOCK", "unlimited (this process)");
	else
		row("RLIMIT_MEMLOCK", "%s (this process, for all its user's buffers; "
		    "not applied to files opened with CAP_IPC_LOCK)",
		    human(st->memlock.rlim_cur, a, sizeof(a)));
}

static void human_processes(const struct status *st, const struct proc *p,
			    size_t np)
{
	char b[32];
	size_t i;

	printf("\nProcesses (from %s)\n", st->clients_source);
	if (!np) {
		printf("  No process has %s open.\n", st->node);
	} else {
		printf("  %7s  %-16s %7s %7s %12s %7s %8s\n", "PID", "COMMAND",
		       "FILES", "BUFFERS", "BYTES", "HUGE", "NORMAL");
		for (i = 0; i < np; i++)
			printf("  %7d  %-16s %7u %7llu %12s %7llu %8llu\n",
			       p[i].pid, p[i].comm, p[i].clients,
			       (unsigned long long)p[i].buffers,
			       human(p[i].bytes, b, sizeof(b)),
			       (unsigned long long)p[i].huge_pages,
			       (unsigned long long)p[i].normal_pages);
	}
	if (!st->clients_complete)
		printf("  (processes of other users are not visible: run as root)\n");
}

static void print_human(const struct status *st, const struct proc *p, size_t np)
{
	human_driver(st);
	human_device(st);
	human_npus(st);
	human_memory(st);
	human_processes(st, p, np);
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [info] [--json] [-d DEVICE]\n"
		"Show the npu-mem driver, the device it maps memory for, memory in use\n"
		"and the processes using it.\n\n"
		"  -j, --json          machine-readable output\n"
		"  -d, --device PATH   device node (default $NPU_MEM_DEVICE or /dev/%s)\n"
		"  -V, --version       print the driver ABI the tool was built for\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 ok, 2 bad usage, 4 permission denied, 6 query failed,\n"
		"9 driver not loaded.\n", prog, NPU_MEM_DEVICE_NAME);
}

/* With --json, errors are a JSON object too, so scripts always get one. */
static int fail(bool json, int code, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(bool json, int code, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_msg("%s", msg);
	if (json) {
		printf("{\"error\": ");
		json_str(what);
		printf(", \"message\": ");
		json_str(msg);
		printf(", \"exit_status\": %d}\n", code);
	}
	return code;
}

/*
 * Options into @st and @json.  Returns -1 to go on, else the exit status
 * (--version, --help, bad usage).
 */
static int parse_args(int argc, char **argv, struct status *st, bool *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "jd:Vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			*json = true;
			break;
		case 'd':
			st->node = optarg;
			break;
		case 'V':
			/* The ABI is what must match; the package version is the driver's. */
			printf("npu-smi for npu-mem ABI %d.%d\n",
			       NPU_MEM_ABI_MAJOR, NPU_MEM_ABI_MINOR);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc && strcmp(argv[optind], "info"))
		return fail(*json, EXIT_USAGE, "usage", "unknown command '%s'",
			    argv[optind]);
	if (optind + 1 < argc)
		return fail(*json, EXIT_USAGE, "usage", "unexpected argument '%s'",
			    argv[optind + 1]);
	return -1;
}

static void read_module(struct status *st)
{
	st->have_version = read_line_file(SYSFS_MODULE "/version", st->version,
					  sizeof(st->version));
	read_line_file(SYSFS_MODULE "/parameters/max_bytes", st->max_bytes,
		       sizeof(st->max_bytes));
	if (read_line_file(SYSFS_MODULE "/parameters/npu_pci", st->npu_pci,
			   sizeof(st->npu_pci)) && !strcmp(st->npu_pci, "(null)"))
		st->npu_pci[0] = '\0';
}

/* Why the node did not open, as an exit status and a message. */
static int open_failed(const struct status *st, bool json, int err)
{
	if (err == ENOENT && st->have_version)
		return fail(json, EXIT_NO_DRIVER, "no device node",
			    "%s: %s: npu_mem is loaded but its node is missing (is udev or devtmpfs running?)",
			    st->node, strerror(err));
	if (err == ENOENT || err == ENODEV || err == ENXIO)
		return fail(json, EXIT_NO_DRIVER, "driver not loaded",
			    "%s: %s: the npu_mem driver is not loaded (modprobe npu_mem)",
			    st->node, strerror(err));
	if (err == EACCES || err == EPERM)
		return fail(json, EXIT_PERM, "permission denied",
			    "%s: %s: ask for membership of its group (ls -l %s)",
			    st->node, strerror(err), st->node);
	return fail(json, EXIT_QUERY, "open failed", "%s: %s", st->node,
		    strerror(err));
}

/*
 * GET_INFO on the node into st->info, and its device number into @rdev.
 * Returns -1 on success, else the exit status.
 */
static int query_node(struct status *st, bool json, dev_t *rdev)
{
	struct stat sb;
	int fd, ret, err;

	do {
		fd = open(st->node, O_RDONLY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return open_failed(st, json, errno);
	if (fstat(fd, &sb) || !S_ISCHR(sb.st_mode)) {
		close(fd);
		return fail(json, EXIT_QUERY, "not a device",
			    "%s is not a character device", st->node);
	}
	do {
		ret = ioctl(fd, NPU_MEM_IOCTL_GET_INFO, &st->info);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	err = errno;
	/* A module before ABI 1.3 has one NPU and says device_count 0. */
	st->npus[0] = st->info;
	st->nr_npus = ret ? 0 : 1;
	while (!ret && st->nr_npus < st->info.device_count &&
	       st->nr_npus < MAX_NPUS) {
		struct npu_mem_info *in = &st->npus[st->nr_npus];

		memset(in, 0, sizeof(*in));
		in->device = st->nr_npus;
		if (ioctl(fd, NPU_MEM_IOCTL_GET_INFO, in))
			break;
		st->nr_npus++;
	}
	/* Closed before listing clients, so this tool is not among them. */
	close(fd);
	if (ret < 0)
		return fail(json, EXIT_QUERY, "query failed",
			    "%s: GET_INFO: %s%s", st->node, strerror(err),
			    err == ENOTTY ? " (not an npu-mem device?)" : "");
	*rdev = sb.st_rdev;
	return -1;
}

int main(int argc, char **argv)
{
	struct status st = { .clients_source = "debugfs" };
	const char *env = getenv("NPU_MEM_DEVICE");
	struct proc *procs;
	bool json = false;
	size_t nprocs;
	dev_t rdev = 0;
	int ret;

	st.node = env && *env ? env : "/dev/" NPU_MEM_DEVICE_NAME;
	ret = parse_args(argc, argv, &st, &json);
	if (ret >= 0)
		return ret;
	read_module(&st);
	ret = query_node(&st, json, &rdev);
	if (ret >= 0)
		return ret;
	read_device(&st);
	getrlimit(RLIMIT_MEMLOCK, &st.memlock);
	if (clients_from_debugfs(&st)) {
		free(st.clients);
		st.clients = NULL;
		st.nr_clients = 0;
		if (clients_from_fdinfo(&st, rdev))
			st.clients_complete = false;
	}
	procs = group_by_pid(&st, &nprocs);
	if (!procs)
		return fail(json, EXIT_QUERY, "out of memory", "out of memory");
	if (json)
		print_json(&st, procs, nprocs);
	else
		print_human(&st, procs, nprocs);
	free(procs);
	free(st.clients);
	return fflush(stdout) ? EXIT_QUERY : EXIT_OK;
}
