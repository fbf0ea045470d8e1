// SPDX-License-Identifier: GPL-2.0-only
/*
 * nmtest_sys: the system helpers of the tests, without Check.  See
 * nmtest_sys.h.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "nmtest_sys.h"

static __thread char nm_namebuf[8][48];
static __thread unsigned int nm_nameidx;

const char *nm_errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "0";
	char *b;

	if (n)
		return n;
	b = nm_namebuf[nm_nameidx++ % 8];
	snprintf(b, sizeof(nm_namebuf[0]), "errno %d", err);
	return b;
}

const char *nm_retname(long ret)
{
	char *b = nm_namebuf[nm_nameidx++ % 8];

	if (ret < 0 && ret > -4096)
		snprintf(b, sizeof(nm_namebuf[0]), "-%s", nm_errname(-ret));
	else
		snprintf(b, sizeof(nm_namebuf[0]), "%ld", ret);
	return b;
}

uint64_t nm_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Cheap (TCG runs it over hundreds of MiB) but different for every word
 * index and seed. */
static inline uint64_t nm_word(uint64_t seed, uint64_t idx)
{
	uint64_t x = (idx + 1) * 0x9e3779b97f4a7c15ULL ^ seed;

	return x ^ (x >> 29);
}

static size_t nm_verify_at_slow(const void *p, size_t len, uint64_t seed,
				uint64_t base);

void nm_fill_at(void *p, size_t len, uint64_t seed, uint64_t base)
{
	uint8_t *b = p;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = nm_word(seed, (base + i) / 8);

		memcpy(b + i, &w, len - i < 8 ? len - i : 8);
	}
}

size_t nm_verify_at(const void *p, size_t len, uint64_t seed, uint64_t base)
{
	const uint8_t *b = p;

	if (base % 8 == 0 && (uintptr_t)p % 8 == 0) {
		const uint64_t *w = p;
		size_t i, n = len / 8;

		for (i = 0; i < n; i++)
			if (w[i] != nm_word(seed, base / 8 + i))
				break;
		if (i == n && len % 8 == 0)
			return SIZE_MAX;
		/* find the exact byte below */
		b += i * 8;
		len -= i * 8;
		base += i * 8;
		p = b;
		{
			size_t r = nm_verify_at_slow(b, len, seed, base);

			return r == SIZE_MAX ? r : r + i * 8;
		}
	}
	return nm_verify_at_slow(p, len, seed, base);
}

static size_t nm_verify_at_slow(const void *p, size_t len, uint64_t seed,
				uint64_t base)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = nm_word(seed, (base + i) / 8);
		size_t n = len - i < 8 ? len - i : 8;

		if (memcmp(b + i, &w, n)) {
			for (size_t j = 0; j < n; j++)
				if (b[i + j] != ((uint8_t *)&w)[j])
					return i + j;
		}
	}
	return SIZE_MAX;
}

void nm_fill(void *p, size_t len, uint64_t seed)
{
	nm_fill_at(p, len, seed, 0);
}

size_t nm_verify(const void *p, size_t len, uint64_t seed)
{
	return nm_verify_at(p, len, seed, 0);
}

size_t nm_nonzero(const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i = 0;

	for (; i + 64 <= len; i += 64) {
		const uint64_t *w = (const uint64_t *)(b + i);

		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			break;
	}
	for (; i < len; i++)
		if (b[i])
			return i;
	return SIZE_MAX;
}

size_t nm_first_not(const void *p, size_t len, uint8_t v)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != v)
			return i;
	return SIZE_MAX;
}

/* volatile: the stores around the probing access must not be elided or moved */
static __thread sigjmp_buf *volatile nm_probe_jmp;

static void nm_probe_handler(int sig)
{
	if (nm_probe_jmp)
		siglongjmp(*nm_probe_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

int nm_probe(volatile void *addr, bool write)
{
	struct sigaction sa = { .sa_handler = nm_probe_handler }, old_segv,
			 old_bus;
	sigjmp_buf jb;
	int sig;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(jb, 1);
	if (sig == 0) {
		nm_probe_jmp = &jb;
		if (write)
			*(volatile uint8_t *)addr = *(volatile uint8_t *)addr;
		else
			(void)*(volatile uint8_t *)addr;
	}
	nm_probe_jmp = NULL;
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

int nm_wait_timeout(pid_t pid, double timeout_s)
{
	double end = nm_now() + timeout_s;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (nm_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

char *nm_read_file(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

int nm_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	return (size_t)n == strlen(text) ? 0 : -EIO;
}

int nm_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int nm_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int nm_read_long(const char *path, long *val)
{
	char *text = nm_read_file(path), *end;
	int ret = 0;

	if (!text)
		return -errno;
	errno = 0;
	*val = strtol(text, &end, 0);
	if (errno || end == text)
		ret = -EINVAL;
	free(text);
	return ret;
}

int nm_kv_file(const char *path, const char *key, uint64_t *val)
{
	return nm_key_file(path, key, ':', val);
}

int nm_meminfo_kb(const char *key, uint64_t *kb)
{
	nm_write_file("/proc/sys/vm/stat_refresh", "1");
	return nm_kv_file("/proc/meminfo", key, kb);
}

const char *nm_kernel_release(void)
{
	static struct utsname u;

	uname(&u);
	return u.release;
}

int nm_kernel_version(void)
{
	int major = 0, minor = 0;

	sscanf(nm_kernel_release(), "%d.%d", &major, &minor);
	return major * 100 + minor;
}

int nm_key_file(const char *path, const char *key, char sep, uint64_t *val)
{
	char *text = nm_read_file(path), *line, *save = NULL;
	size_t klen = strlen(key);
	int ret = -ENOENT;

	if (!text)
		return -errno;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (strncmp(line, key, klen) || line[klen] != sep)
			continue;
		errno = 0;
		*val = strtoull(line + klen + 1, &end, 10);
		ret = (errno || end == line + klen + 1) ? -EINVAL : 0;
		break;
	}
	free(text);
	return ret;
}

int nm_fdinfo(int fd, const char *key, uint64_t *val)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return nm_kv_file(path, key, val);
}

int nm_fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* the directory's own fd */
}

int nm_vmpin(uint64_t *bytes)
{
	uint64_t kb = 0;
	int ret = nm_kv_file("/proc/self/status", "VmPin", &kb);

	*bytes = kb * 1024;
	return ret;
}

int nm_param_get(const char *name, uint64_t *val)
{
	char path[128], *text, *end;

	snprintf(path, sizeof(path), NM_SYSMOD "/parameters/%s", name);
	text = nm_read_file(path);
	if (!text)
		return -errno;
	errno = 0;
	*val = strtoull(text, &end, 0);
	if (errno || end == text) {
		free(text);
		return -EINVAL;
	}
	free(text);
	return 0;
}

int nm_param_set(const char *name, uint64_t val)
{
	char path[128], text[32];

	snprintf(path, sizeof(path), NM_SYSMOD "/parameters/%s", name);
	snprintf(text, sizeof(text), "%llu", (unsigned long long)val);
	return nm_write_file(path, text);
}

void nm_print_reserve_counters(FILE *out, const char *prefix)
{
	static const char *const keys[] = {
		"zero_reserve_taken", "zero_reserve_recycled",
		"zero_reserve_refilled", "zero_reserve_given_back",
	};
	uint64_t v;
	size_t i;

	fprintf(out, "%s", prefix);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (nm_kv_file("/sys/kernel/debug/npu_mem/usage", keys[i], &v))
			fprintf(out, " %s ?", keys[i] + 13);
		else
			fprintf(out, " %s %llu", keys[i] + 13, (unsigned long long)v);
	}
	fprintf(out, "\n");
}

int nm_drop_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t m = ~(uint32_t)(caps >> (32 * i));

		d[i].effective &= m;
		d[i].permitted &= m;
		d[i].inheritable &= m;
	}
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}

int nm_debugfs_mount(void)
{
	struct statfs sfs;

	if (statfs("/sys/kernel/debug", &sfs) == 0 &&
	    sfs.f_type == DEBUGFS_MAGIC)
		return 0;
	if (access("/sys/kernel/debug", F_OK))
		return -errno;
	if (unshare(CLONE_NEWNS))
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL))
		return -errno;
	return 0;
}

int nm_shell(const char *cmd, char **out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *full;
	FILE *f;
	int st;

	if (out)
		*out = NULL;
	if (!buf || asprintf(&full, "( %s ) 2>&1", cmd) < 0) {
		free(buf);
		return -1;
	}
	f = popen(full, "r");
	free(full);
	if (!f) {
		free(buf);
		return -1;
	}
	for (;;) {
		size_t n;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	buf[len] = 0;
	st = pclose(f);
	if (out)
		*out = buf;
	else
		free(buf);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

double nm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double nm_span_ceiling(double secs)
{
	double c = (double)nm_env_u64("NPU_MEM_CEILING_SECONDS", 0);

	if (c <= 0) {
		c = secs * 10 > 300 ? secs * 10 : 300;
		if (c > 420)
			c = 420;
	}
	return c > secs ? c : secs;
}

void nm_span_start(struct nm_span *sp, double secs)
{
	sp->t0 = nm_now();
	sp->min_end = sp->t0 + secs;
	sp->max_end = sp->t0 + nm_span_ceiling(secs);
}

bool nm_span_more(const struct nm_span *sp, bool enough)
{
	double now = nm_now();

	return now < sp->min_end || (!enough && now < sp->max_end);
}

bool nm_span_over(const struct nm_span *sp)
{
	return nm_now() >= sp->max_end;
}

double nm_span_secs(const struct nm_span *sp)
{
	return nm_now() - sp->t0;
}

uint64_t nm_env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long r;

	if (!v || !*v)
		return def;
	errno = 0;
	r = strtoull(v, &end, 0);
	return (errno || *end) ? def : r;
}
