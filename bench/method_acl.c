// SPDX-License-Identifier: GPL-2.0-only
/*
 * The allocation rows of libaclmem (acl.c loads it).  It reads its pool
 * switch once per process, so each setting runs
 * in a child of its own that serves "one cycle of this size" requests over
 * a pipe: the parent interleaves them with the other methods.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "bench.h"

/* One pool setting: its child and the pipes to it. */
struct acl_method {
	const char *pool;	/* NPU_MEM_POOL_MAX, NULL = library default */
	int req, resp;		/* request/response pipes */
	pid_t child;
};

struct acl_req {
	uint64_t size;		/* 0: exit */
	uint64_t warm;		/* run an untimed cycle first */
};

struct acl_resp {
	int ret;
	uint64_t get, rel;
	char why[96];
};

static int acl_cycle(uint64_t size, struct sample *s)
{
	uint64_t t0, t1, t2;
	void *p = NULL;
	aclError e;

	t0 = now_ns();
	e = acl.malloc_cached(&p, size, ACL_MEM_MALLOC_HUGE_FIRST);
	if (e != ACL_SUCCESS)
		return -ENOMEM;
	touch(p, size);
	t1 = now_ns();
	e = acl.free(p);
	t2 = now_ns();
	if (e != ACL_SUCCESS)
		return -EIO;
	s->get = t1 - t0;
	s->rel = t2 - t1;
	return 0;
}

static void __attribute__((noreturn)) acl_child(const char *pool, int req,
						int resp)
{
	struct acl_resp r = { 0 };
	struct acl_req q;

	if (pool)
		setenv(POOL_ENV, pool, 1);
	r.ret = acl_load(r.why, sizeof(r.why));
	if (nm_write_full(resp, &r, sizeof(r)) || r.ret)
		_exit(0);
	while (!nm_read_full(req, &q, sizeof(q)) && q.size) {
		struct sample s = { 0 };

		memset(&r, 0, sizeof(r));
		if (q.warm)
			r.ret = acl_cycle(q.size, &s);
		if (!r.ret)
			r.ret = acl_cycle(q.size, &s);
		r.get = s.get;
		r.rel = s.rel;
		if (nm_write_full(resp, &r, sizeof(r)))
			break;
	}
	acl_unload();
	_exit(0);
}

static int acl_setup(struct method *m)
{
	struct acl_method *am = m->priv;
	struct acl_resp r;
	int req[2], resp[2];

	if (pipe2(req, O_CLOEXEC) || pipe2(resp, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	am->child = fork();
	if (am->child < 0)
		return -errno;
	if (!am->child) {
		close(req[1]);
		close(resp[0]);
		acl_child(am->pool, req[0], resp[1]);
	}
	close(req[0]);
	close(resp[1]);
	am->req = req[1];
	am->resp = resp[0];
	if (nm_read_full(am->resp, &r, sizeof(r))) {
		snprintf(r.why, sizeof(r.why), "libaclmem child died");
		r.ret = -ECHILD;
	}
	if (r.ret) {
		snprintf(m->na, sizeof(m->na), "%s", r.why);
		close(am->req);
		close(am->resp);
		waitpid(am->child, NULL, 0);
		am->child = 0;
	}
	return r.ret;
}

static int acl_once(struct method *m, uint64_t size, struct sample *s)
{
	struct acl_method *am = m->priv;
	struct acl_req q = { .size = size, .warm = m->warm };
	struct acl_resp r;

	if (nm_write_full(am->req, &q, sizeof(q)) ||
	    nm_read_full(am->resp, &r, sizeof(r)))
		return -ECHILD;
	s->get = r.get;
	s->rel = r.rel;
	return r.ret;
}

static void acl_teardown(struct method *m)
{
	struct acl_method *am = m->priv;
	struct acl_req q = { 0 };

	if (!am->child)
		return;
	nm_write_full(am->req, &q, sizeof(q));
	close(am->req);
	close(am->resp);
	waitpid(am->child, NULL, 0);
	am->child = 0;
}

static struct acl_method acl_off = { .pool = "off" };
static struct acl_method acl_on;

struct method method_acl_off = {
	.key = "acl_pool_off",
	.label = "aclrtMallocCached, pool off",
	.setup = acl_setup,
	.once = acl_once,
	.teardown = acl_teardown,
	.priv = &acl_off,
	.warms_itself = true,
};

struct method method_acl_on = {
	.key = "acl_pool_on",
	.label = "aclrtMallocCached, pool on",
	.setup = acl_setup,
	.once = acl_once,
	.teardown = acl_teardown,
	.priv = &acl_on,
	.warms_itself = true,
};
