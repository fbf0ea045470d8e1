// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_race: ALLOC racing a FREE of the handle it is about to return.
 *
 * Handles are handed out cyclically, one after the other, so any thread of
 * the process that owns the file knows the next handle before it exists.
 * A FREE of it can therefore arrive the moment ALLOC has made the handle
 * visible, before ALLOC has written its answer: the driver must describe
 * the buffer while the handle is still certainly its own, or ALLOC returns
 * a description read from freed memory (with init_on_free=1: size 0, no
 * pages, offset 0; or another buffer's, once the memory is reused) or,
 * where describing reads the DMA mapping, oopses.
 *
 *  - thread A: ALLOC (4 KiB NORMAL_ONLY, 2 MiB HUGE_FIRST, sizes that leave
 *    a 4 KiB tail, READONLY ones) then FREE of it, in a loop, publishing
 *    each new handle; one ALLOC in 16 gets its answer written to a
 *    read-only page, so the driver takes back a handle that B may have
 *    freed already (-EFAULT, and nothing may be left behind);
 *  - thread B: FREE of A's last handle + 1 (and + 2), in a loop.
 * Every answer ALLOC gives must follow every rule of the header
 * (nmtest_bufcheck.h); A's FREE gets ENOENT exactly when B freed the buffer
 * first, which proves the race was run; any other errno fails.  At the end
 * the file holds no handle (GET_INFO client_buffers/client_bytes 0).
 *
 * The racing process is an unprivileged user (65534), the common caller:
 * the privileges are the opener's, so it opens the device itself (as root
 * the test makes the node 0666 for its duration).  One vCPU and
 * init_on_free=1 (configs/x86_64-race.conf) make the narrow window easy to
 * hit and a stale read visible; under an IOMMU (x86_64-iommu-edu) the same
 * race reaches the DMA mapping.
 *
 * The run must make at least NPU_MEM_RACE_MIN_ALLOCS ALLOCs (default 1000)
 * and B must free at least NPU_MEM_RACE_MIN_STOLEN fresh handles (default
 * 20), or it proves nothing.  It lasts NPU_MEM_RACE_SECONDS (default 20)
 * and then until both minimums are met, up to a ceiling (nm_span_ceiling):
 * how fast the guest runs changes how long it takes, not its verdict.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nmtest_bufcheck.h"
#include "nmtest_cred.h"
#include "nmtest_util.h"

#define MSG_LEN		512

/* What the racing child found, in memory shared with the test process. */
struct outcome {
	char setup[MSG_LEN];	/* the child could not run: why */
	bool iommu, hidden;
	double secs;
	uint64_t allocs;	/* successful ALLOCs */
	uint64_t efaults;	/* ALLOCs into a read-only answer: -EFAULT */
	uint64_t a_frees;	/* A freed its own buffer */
	uint64_t a_enoent;	/* ... B had freed it first */
	uint64_t b_calls, b_frees;	/* B's FREEs, and those that freed */
	uint64_t bad_errno;
	char bad_errno_msg[MSG_LEN];
	uint64_t bad_desc;	/* ALLOC answers that break a rule */
	uint64_t rule[NM_DESC_NRULES];
	char rule_msg[NM_DESC_NRULES][MSG_LEN];
	uint64_t left_buffers, left_bytes;
	int info_ret;
};

struct race {
	int fd;
	atomic_bool stop;
	_Atomic uint32_t last;	/* A's newest handle */
	struct npu_mem_alloc *ro;	/* a request on a read-only page */
	struct outcome *out;
	struct nm_span span;
	uint64_t min_allocs, min_stolen;
};

static double seconds(void)
{
	return (double)nm_env_u64("NPU_MEM_RACE_SECONDS", 20);
}

static uint64_t min_allocs(void)
{
	return nm_env_u64("NPU_MEM_RACE_MIN_ALLOCS", 1000);
}

static uint64_t min_stolen(void)
{
	return nm_env_u64("NPU_MEM_RACE_MIN_STOLEN", 20);
}

static void bad_errno(struct race *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void bad_errno(struct race *r, const char *fmt, ...)
{
	va_list ap;

	/* The first one is what matters; stop both threads there. */
	if (r->out->bad_errno++ == 0) {
		va_start(ap, fmt);
		vsnprintf(r->out->bad_errno_msg, MSG_LEN, fmt, ap);
		va_end(ap);
	}
	atomic_store(&r->stop, true);
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static const struct {
	uint64_t size;
	uint32_t policy, flags;
} kinds[] = {
	{ NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0 },
	{ NM_2M, NPU_MEM_POLICY_HUGE_FIRST, 0 },
	{ NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, NPU_MEM_ALLOC_READONLY },
	{ 2 * NM_4K + 1, NPU_MEM_POLICY_HUGE_FIRST, 0 },
	{ NM_4K, NPU_MEM_POLICY_NORMAL_ONLY, 0 },
	{ NM_2M + NM_4K, NPU_MEM_POLICY_HUGE_FIRST, NPU_MEM_ALLOC_READONLY },
	{ 64 * NM_KiB - 1, NPU_MEM_POLICY_NORMAL_ONLY, 0 },
};

static void check_answer(struct race *r, const struct npu_mem_alloc *a,
			 uint64_t size, uint32_t policy, uint32_t flags)
{
	struct nm_desc_expect e = {
		.req_known = true, .req = size, .policy = policy,
		.alloc_flags = flags, .hidden = r->out->hidden,
	};
	char msg[MSG_LEN];
	unsigned int bad, k;
	bool formatted = false;

	if (!a->handle) {
		bad_errno(r, "ALLOC returned handle 0");
		return;
	}
	bad = nm_desc_check(&a->buf, &e, NULL, 0);
	if (!bad)
		return;
	r->out->bad_desc++;
	for (k = 0; k < NM_DESC_NRULES; k++) {
		if (!(bad & (1U << k)) || r->out->rule[k]++)
			continue;
		/* Only the first of each rule is described: formatting is
		 * slow, and A's calls must stay close together. */
		if (!formatted)
			nm_desc_check(&a->buf, &e, msg, sizeof(msg));
		formatted = true;
		snprintf(r->out->rule_msg[k], MSG_LEN,
			 "ALLOC %#llx %s%s -> handle %u %s",
			 (unsigned long long)size, nm_policy_name(policy),
			 flags ? " READONLY" : "", a->handle, msg);
	}
}

static void *thread_a(void *arg)
{
	struct race *r = arg;
	struct outcome *o = r->out;
	uint64_t i;
	int ret;

	for (i = 0; !atomic_load(&r->stop); i++) {
		struct npu_mem_alloc a;
		uint64_t size = kinds[i % NM_ARRAY_SIZE(kinds)].size;
		uint32_t policy = kinds[i % NM_ARRAY_SIZE(kinds)].policy;
		uint32_t flags = kinds[i % NM_ARRAY_SIZE(kinds)].flags;

		if (i % 16 == 15) {
			/* Readable request, unwritable answer: the handle is
			 * taken back, whoever freed it first. */
			ret = ioc(r->fd, NPU_MEM_IOCTL_ALLOC, r->ro);
			if (ret != -EFAULT)
				bad_errno(r, "ALLOC into a read-only answer: "
					  "%s, want -EFAULT", nm_retname(ret));
			o->efaults++;
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.size = size;
		a.policy = policy;
		a.flags = flags;
		ret = ioc(r->fd, NPU_MEM_IOCTL_ALLOC, &a);
		if (ret) {
			bad_errno(r, "ALLOC %#llx %s: %s",
				  (unsigned long long)size,
				  nm_policy_name(policy), nm_retname(ret));
			break;
		}
		atomic_store(&r->last, a.handle);
		o->allocs++;
		check_answer(r, &a, size, policy, flags);

		ret = ioc(r->fd, NPU_MEM_IOCTL_FREE,
			  &(struct npu_mem_free){ .handle = a.handle });
		if (ret == 0)
			o->a_frees++;
		else if (ret == -ENOENT)
			o->a_enoent++;	/* B was first: the race was run */
		else
			bad_errno(r, "FREE of own handle %u: %s", a.handle,
				  nm_retname(ret));
		if ((i & 63) == 0 &&
		    !nm_span_more(&r->span, o->allocs >= r->min_allocs &&
				  __atomic_load_n(&o->b_frees,
						  __ATOMIC_RELAXED) >=
				  r->min_stolen))
			break;
	}
	atomic_store(&r->stop, true);
	return NULL;
}

static void *thread_b(void *arg)
{
	struct race *r = arg;
	struct outcome *o = r->out;
	uint64_t k;
	int ret;

	for (k = 0; !atomic_load(&r->stop); k++) {
		/* + 2 as well: A may be one ALLOC ahead of what it published
		 * (the read-only answers publish nothing). */
		uint32_t h = atomic_load(&r->last) + 1 + (k % 3 == 2);

		ret = ioc(r->fd, NPU_MEM_IOCTL_FREE,
			  &(struct npu_mem_free){ .handle = h });
		o->b_calls++;
		if (ret == 0)	/* read by A, which decides when to stop */
			__atomic_store_n(&o->b_frees, o->b_frees + 1,
					 __ATOMIC_RELAXED);
		else if (ret != -ENOENT)
			bad_errno(r, "FREE of next handle %u: %s", h,
				  nm_retname(ret));
	}
	return NULL;
}

static void setup_fail(struct outcome *o, const char *what, int err)
{
	snprintf(o->setup, MSG_LEN, "%s: %s", what, nm_errname(err));
}

/* The racing process: becomes nobody (as root), opens, races, reports. */
static void racer(struct outcome *o)
{
	struct race r = {
		.out = o,
		.min_allocs = min_allocs(),
		.min_stolen = min_stolen(),
	};
	struct npu_mem_info info;
	pthread_t ta, tb;
	void *page;
	int ret;

	if (geteuid() == 0) {
		ret = nm_become(NM_UID_NOBODY, 64 * NM_MiB);
		if (ret) {
			setup_fail(o, "become nobody", -ret);
			return;
		}
	}
	r.fd = open(NM_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (r.fd < 0) {
		setup_fail(o, "open " NM_DEV_PATH, errno);
		return;
	}
	memset(&info, 0, sizeof(info));
	ret = ioc(r.fd, NPU_MEM_IOCTL_GET_INFO, &info);
	if (ret) {
		setup_fail(o, "GET_INFO", -ret);
		return;
	}
	o->iommu = info.dev_flags & NPU_MEM_DEV_IOMMU;
	o->hidden = !o->iommu && !nm_desc_cap_sys_admin();

	page = mmap(NULL, NM_4K, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		setup_fail(o, "mmap", errno);
		return;
	}
	r.ro = page;
	r.ro->size = NM_4K;
	r.ro->policy = NPU_MEM_POLICY_NORMAL_ONLY;
	if (mprotect(page, NM_4K, PROT_READ)) {
		setup_fail(o, "mprotect", errno);
		return;
	}

	nm_span_start(&r.span, seconds());
	if (pthread_create(&tb, NULL, thread_b, &r) ||
	    pthread_create(&ta, NULL, thread_a, &r)) {
		setup_fail(o, "pthread_create", EAGAIN);
		_exit(1);
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	o->secs = nm_span_secs(&r.span);

	memset(&info, 0, sizeof(info));
	o->info_ret = ioc(r.fd, NPU_MEM_IOCTL_GET_INFO, &info);
	o->left_buffers = info.client_buffers;
	o->left_bytes = info.client_bytes;
	close(r.fd);
}

START_TEST(alloc_vs_free_of_next_handle)
{
	struct outcome *o;
	unsigned int k;
	pid_t pid;
	int status;

	o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(o, MAP_FAILED);
	memset(o, 0, sizeof(*o));

	pid = nm_assert_sys(fork());
	if (pid == 0) {
		racer(o);
		_exit(0);
	}
	status = nm_wait_timeout(pid, nm_span_ceiling(seconds()) + 120);
	ck_assert_msg(status != -1, "the racing process hung (killed)");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the racing process ended with status %#x", status);
	ck_assert_msg(!o->setup[0], "racing process: %s", o->setup);

	printf("alloc_race: %.1f s, %s, answers %s: %llu ALLOCs (%llu into "
	       "a read-only answer), A freed %llu, B freed %llu first "
	       "(A saw ENOENT %llu times) in %llu FREEs of the next handle\n",
	       o->secs, o->iommu ? "IOMMU" : "no IOMMU",
	       o->hidden ? "hidden" : "with device addresses",
	       (unsigned long long)o->allocs, (unsigned long long)o->efaults,
	       (unsigned long long)o->a_frees, (unsigned long long)o->b_frees,
	       (unsigned long long)o->a_enoent,
	       (unsigned long long)o->b_calls);
	if (o->bad_desc) {
		printf("alloc_race: %llu wrong ALLOC answers\n",
		       (unsigned long long)o->bad_desc);
		for (k = 0; k < NM_DESC_NRULES; k++)
			if (o->rule[k])
				printf("  %s: %llu, first: %s\n",
				       nm_desc_rule_names[k],
				       (unsigned long long)o->rule[k],
				       o->rule_msg[k]);
	}
	fflush(stdout);

	ck_assert_msg(!o->bad_errno, "%llu unexpected results, first: %s",
		      (unsigned long long)o->bad_errno, o->bad_errno_msg);
	ck_assert_msg(!o->bad_desc, "%llu of %llu ALLOC answers break the "
		      "header's rules (above), e.g. %s",
		      (unsigned long long)o->bad_desc,
		      (unsigned long long)o->allocs,
		      o->rule[NM_DESC_SIZE] ? o->rule_msg[NM_DESC_SIZE] :
		      o->rule[NM_DESC_OFFSET] ? o->rule_msg[NM_DESC_OFFSET] :
		      "see the output");
	nm_assert_ok(o->info_ret);
	ck_assert_msg(!o->left_buffers && !o->left_bytes,
		      "%llu handles (%llu bytes) left in the file after every "
		      "buffer was freed", (unsigned long long)o->left_buffers,
		      (unsigned long long)o->left_bytes);
	ck_assert_msg(o->allocs >= min_allocs(), "only %llu ALLOCs in %.1f s, "
		      "the ceiling (NPU_MEM_RACE_MIN_ALLOCS %llu)",
		      (unsigned long long)o->allocs, o->secs,
		      (unsigned long long)min_allocs());
	ck_assert_msg(o->b_frees >= min_stolen(), "B freed only %llu fresh "
		      "handles before A in %.1f s, the ceiling "
		      "(NPU_MEM_RACE_MIN_STOLEN %llu): the race was not run",
		      (unsigned long long)o->b_frees, o->secs,
		      (unsigned long long)min_stolen());
	/* Each buffer is freed once: by A or by B (or by the undo of a
	 * failed answer, which B may also beat). */
	ck_assert_uint_eq(o->a_enoent + o->a_frees, o->allocs);
	munmap(o, sizeof(*o));
}
END_TEST

int main(void)
{
	Suite *s = nm_suite("alloc_race");
	int ret;

	nm_require_device();
	if (geteuid() == 0) {
		ret = nm_node_open_to_all();
		if (ret) {
			printf("cannot open %s to user %u: %s\n", NM_DEV_PATH,
			       NM_UID_NOBODY, nm_retname(ret));
			return 77;
		}
	} else if (access(NM_DEV_PATH, R_OK | W_OK)) {
		printf("%s is not open to uid %u\n", NM_DEV_PATH, getuid());
		return 77;
	}
	nm_add(s, alloc_vs_free_of_next_handle,
	       nm_span_ceiling(seconds()) + 180);
	ret = nm_run(s, NM_NEEDS_DEVICE);
	nm_node_restore();
	return ret;
}
