// SPDX-License-Identifier: GPL-2.0-only
/*
 * fdinfo: usage is visible outside the ioctl ABI.
 *  - /proc/<pid>/fdinfo/<fd> of an open /dev/npu-mem has DRM-style lines
 *    "npu-mem-client-id: N", "npu-mem-buffers: N", "npu-mem-bytes: N"
 *    matching this open file's client_buffers/client_bytes; the client id
 *    differs between open files and is shared by dup()ed descriptors;
 *  - debugfs npu_mem/clients lists this process's pid while it has the
 *    device open (and not after it closed it);
 *  - debugfs npu_mem/usage has "allocated_bytes: N" (and the other GET_INFO
 *    counter names it shows) equal to GET_INFO.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_util.h"

static uint64_t fdinfo_ok(int fd, const char *key)
{
	uint64_t v = 0;
	int r = nm_fdinfo(fd, key, &v);

	if (r) {
		char path[64], *text;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		text = nm_read_file(path);
		ck_abort_msg("%s: no \"%s:\" line (%s); it has:\n%s", path, key,
			     nm_retname(r), text ? text : "?");
	}
	return v;
}

static void assert_fdinfo_matches(int fd)
{
	struct npu_mem_info info;

	nm_get_info_ok(fd, &info);
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-buffers"),
			  info.client_buffers);
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-bytes"), info.client_bytes);
}

START_TEST(fdinfo_lines)
{
	struct npu_mem_alloc a[4];
	int fd = nm_open();

	(void)fdinfo_ok(fd, "npu-mem-client-id");
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-buffers"), 0);
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-bytes"), 0);
	for (int i = 0; i < 4; i++) {
		nm_alloc_ok(fd, (i + 1) * NM_MiB + 1, i % 3, 0, &a[i]);
		assert_fdinfo_matches(fd);
	}
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-buffers"), 4);
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-bytes"),
			  a[0].buf.size + a[1].buf.size + a[2].buf.size +
			  a[3].buf.size);
	for (int i = 0; i < 4; i++) {
		nm_free_ok(fd, a[i].handle);
		assert_fdinfo_matches(fd);
	}
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-buffers"), 0);
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-bytes"), 0);
	close(fd);
}
END_TEST

START_TEST(fdinfo_freed_while_mapped)
{
	/* the handle is gone: not this file's any more */
	struct npu_mem_alloc a;
	int fd = nm_open();
	uint8_t *p;

	nm_alloc_ok(fd, NM_2M, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	p = nm_map_ok(fd, &a, PROT_READ | PROT_WRITE);
	nm_free_ok(fd, a.handle);
	assert_fdinfo_matches(fd);
	ck_assert_uint_eq(fdinfo_ok(fd, "npu-mem-buffers"), 0);
	munmap(p, a.buf.size);
	close(fd);
}
END_TEST

START_TEST(fdinfo_client_ids)
{
	int f1 = nm_open(), f2 = nm_open(), d1 = dup(f1);
	struct npu_mem_alloc a;
	uint64_t id1, id2, idd;

	ck_assert_int_ge(d1, 0);
	id1 = fdinfo_ok(f1, "npu-mem-client-id");
	id2 = fdinfo_ok(f2, "npu-mem-client-id");
	idd = fdinfo_ok(d1, "npu-mem-client-id");
	ck_assert_uint_ne(id1, id2);
	ck_assert_uint_eq(id1, idd);
	nm_alloc_ok(f1, 5 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ck_assert_uint_eq(fdinfo_ok(d1, "npu-mem-buffers"), 1);
	ck_assert_uint_eq(fdinfo_ok(d1, "npu-mem-bytes"), 5 * NM_4K);
	ck_assert_uint_eq(fdinfo_ok(f2, "npu-mem-buffers"), 0);
	close(f1);
	close(d1);
	close(f2);
	/* a new open file gets a new id */
	f1 = nm_open();
	ck_assert_uint_ne(fdinfo_ok(f1, "npu-mem-client-id"), id1);
	close(f1);
}
END_TEST

START_TEST(fdinfo_of_another_process)
{
	/* /proc/<pid>/fdinfo of a child that holds buffers */
	struct npu_mem_alloc a;
	int fd = nm_open(), go[2], ready[2];
	char tok, path[64];
	uint64_t v;
	pid_t pid;

	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int cfd = open(NM_DEV_PATH, O_RDWR);

		if (cfd < 0 || nm_alloc(cfd, 3 * NM_MiB,
					NPU_MEM_POLICY_HUGE_FIRST, 0, &a))
			_exit(1);
		if (dup2(cfd, 100) != 100)
			_exit(2);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &tok, 1) != 1)
			_exit(3);
		_exit(0);
	}
	ck_assert_int_eq(read(ready[0], &tok, 1), 1);
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/100", pid);
	nm_assert_ok(nm_kv_file(path, "npu-mem-buffers", &v));
	ck_assert_uint_eq(v, 1);
	nm_assert_ok(nm_kv_file(path, "npu-mem-bytes", &v));
	ck_assert_uint_eq(v, 3 * NM_MiB);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	nm_wait_ok(pid, "fdinfo child");
	close(fd);
}
END_TEST

static bool clients_lists_pid(pid_t pid, char **text_out)
{
	char *text = nm_read_file(NM_DEBUGFS "/clients"), *p;
	char want[32];
	bool found = false;

	ck_assert_msg(text, NM_DEBUGFS "/clients: %s", nm_errname(errno));
	snprintf(want, sizeof(want), "%d", (int)pid);
	/* the pid as a whole token somewhere */
	for (p = strstr(text, want); p; p = strstr(p + 1, want)) {
		char before = p == text ? ' ' : p[-1];
		char after = p[strlen(want)];

		if (!(before >= '0' && before <= '9') &&
		    !(after >= '0' && after <= '9')) {
			found = true;
			break;
		}
	}
	if (text_out)
		*text_out = text;
	else
		free(text);
	return found;
}

START_TEST(debugfs_clients)
{
	struct npu_mem_alloc a;
	char *text = NULL;
	int fd, r;
	pid_t self = getpid();

	r = nm_debugfs_mount();
	ck_assert_msg(r == 0, "debugfs: %s", nm_retname(r));
	ck_assert_msg(!clients_lists_pid(self, &text),
		      "pid %d listed before it opened the device:\n%s",
		      (int)self, text);
	free(text);
	fd = nm_open();
	nm_alloc_ok(fd, 7 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &a);
	ck_assert_msg(clients_lists_pid(self, &text),
		      "pid %d not in " NM_DEBUGFS "/clients:\n%s", (int)self,
		      text);
	printf(NM_DEBUGFS "/clients:\n%s", text);
	free(text);
	close(fd);
	ck_assert_msg(!clients_lists_pid(self, &text),
		      "pid %d still listed after close:\n%s", (int)self, text);
	free(text);
}
END_TEST

START_TEST(debugfs_usage)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
#define K(f) { #f, offsetof(struct npu_mem_info, f) }
		K(allocated_bytes), K(huge_pages), K(normal_pages),
		K(giant_pages), K(buffers), K(total_ram), K(limit_bytes),
		K(max_alloc),
#undef K
	};
	struct npu_mem_alloc a, b;
	struct npu_mem_info info;
	int fd, r, compared = 0;
	char *text;

	r = nm_debugfs_mount();
	ck_assert_msg(r == 0, "debugfs: %s", nm_retname(r));
	fd = nm_open();
	nm_alloc_ok(fd, 4 * NM_MiB, NPU_MEM_POLICY_HUGE_ONLY, 0, &a);
	nm_alloc_ok(fd, 9 * NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0, &b);
	nm_get_info_ok(fd, &info);
	text = nm_read_file(NM_DEBUGFS "/usage");
	ck_assert_msg(text, NM_DEBUGFS "/usage: %s", nm_errname(errno));
	printf(NM_DEBUGFS "/usage:\n%s", text);
	free(text);
	for (size_t i = 0; i < NM_ARRAY_SIZE(keys); i++) {
		uint64_t v, want;

		r = nm_kv_file(NM_DEBUGFS "/usage", keys[i].key, &v);
		if (i == 0)
			ck_assert_msg(r == 0, "no allocated_bytes line: %s",
				      nm_retname(r));
		if (r == -ENOENT)
			continue;
		ck_assert_msg(r == 0, "usage %s: %s", keys[i].key,
			      nm_retname(r));
		memcpy(&want, (char *)&info + keys[i].off, sizeof(want));
		ck_assert_msg(v == want, "usage %s: %llu, GET_INFO %llu",
			      keys[i].key, (unsigned long long)v,
			      (unsigned long long)want);
		compared++;
	}
	printf("%d usage fields equal GET_INFO's\n", compared);
	nm_free_ok(fd, a.handle);
	nm_free_ok(fd, b.handle);
	{
		uint64_t v;

		nm_get_info_ok(fd, &info);
		nm_assert_ok(nm_kv_file(NM_DEBUGFS "/usage", "allocated_bytes",
					&v));
		ck_assert_uint_eq(v, info.allocated_bytes);
	}
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("fdinfo");

	nm_add(s, fdinfo_lines, 30);
	nm_add(s, fdinfo_freed_while_mapped, 30);
	nm_add(s, fdinfo_client_ids, 30);
	nm_add(s, fdinfo_of_another_process, 30);
	nm_add(s, debugfs_clients, 30);
	nm_add(s, debugfs_usage, 30);
	return nm_run(s, NM_NEEDS_DEVICE);
}
