// SPDX-License-Identifier: GPL-2.0-only
/*
 * npu-hold: allocate buffers on /dev/npu-mem with raw ioctls and hold them
 * until stdin reaches end of file, so that the install tests can compare
 * what npu-smi reports for this process with what the driver returned.
 *
 *   npu-hold [-d DEVICE] [-o] SIZE[:POLICY]...
 *
 * SIZE takes K/M/G suffixes; POLICY is first, huge, normal (default normal:
 * exact, and within any RLIMIT_MEMLOCK a test user has).  -o only opens the
 * device.  Prints one line, then waits:
 *   ready pid=P buffers=N bytes=B huge_pages=H normal_pages=M
 * Exit status: 0 ok, 3 open refused (EACCES/EPERM), 4 other open error,
 * 5 ALLOC failed, 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/npu_mem.h>

static unsigned long long parse_size(const char *s, char **end)
{
	unsigned long long v = strtoull(s, end, 0);

	switch (**end) {
	case 'G':
		v <<= 10;
		/* fall through */
	case 'M':
		v <<= 10;
		/* fall through */
	case 'K':
		v <<= 10;
		(*end)++;
		break;
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("NPU_MEM_DEVICE");
	unsigned long long bytes = 0, huge = 0, normal = 0;
	unsigned int nr = 0;
	int fd, opt, i, open_only = 0;
	char buf[64];

	if (!dev || !*dev)
		dev = "/dev/" NPU_MEM_DEVICE_NAME;
	while ((opt = getopt(argc, argv, "d:o")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'o':
			open_only = 1;
			break;
		default:
			return 2;
		}
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		printf("open %s: %s\n", dev, strerror(err));
		return err == EACCES || err == EPERM ? 3 : 4;
	}
	for (i = optind; i < argc && !open_only; i++) {
		struct npu_mem_alloc a = { .policy = NPU_MEM_POLICY_NORMAL_ONLY };
		char *end;

		a.size = parse_size(argv[i], &end);
		if (!strcmp(end, ":first"))
			a.policy = NPU_MEM_POLICY_HUGE_FIRST;
		else if (!strcmp(end, ":huge"))
			a.policy = NPU_MEM_POLICY_HUGE_ONLY;
		else if (*end && strcmp(end, ":normal"))
			return 2;
		if (ioctl(fd, NPU_MEM_IOCTL_ALLOC, &a)) {
			printf("ALLOC %s: %s\n", argv[i], strerror(errno));
			return 5;
		}
		nr++;
		bytes += a.buf.size;
		huge += a.buf.huge_pages;
		normal += a.buf.normal_pages;
	}
	printf("ready pid=%d buffers=%u bytes=%llu huge_pages=%llu normal_pages=%llu\n",
	       getpid(), nr, bytes, huge, normal);
	fflush(stdout);
	/* Held until the test closes our stdin; the fd's release frees all. */
	while (read(0, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}
