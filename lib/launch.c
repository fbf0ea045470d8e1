// SPDX-License-Identifier: MIT
/*
 * Kernel launches: a stream task whose blocks run on the CPU, each in a
 * thread of its own (<aclmem/kernel.h>; the AscendC side is lib/ascendc/).
 *
 * Every block's thread is made before any block starts: SyncAll needs all
 * of them running at once, so a launch whose threads cannot all be made
 * runs none of its blocks and fails with ACL_ERROR_RT_MEMORY_ALLOCATION.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "aclmem/kernel.h"
#include "errors.h"
#include "launch.h"
#include "log.h"
#include "stream.h"

struct launch_task {
	struct aclmem_task task;
	char name[64];
	uint32_t dim;
	aclmem_kernel_block_fn block;
	aclmem_kernel_release_fn release;
	void *launch;
	struct aclmem_exception_kernel exc;	/* exc.args: ours */
};

struct block_thread {
	struct launch_task *t;
	uint32_t idx;
	int ret;
	pthread_t th;
};

/* The start line: blocks wait at it until all threads exist. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;		/* 0 waiting, 1 go, -1 give up */
};

struct block_arg {
	struct block_thread *b;
	struct gate *g;
};

static void *block_main(void *arg)
{
	struct block_arg *a = arg;
	struct gate *g = a->g;
	int state;

	pthread_mutex_lock(&g->lock);
	while (!g->state)
		pthread_cond_wait(&g->cond, &g->lock);
	state = g->state;
	pthread_mutex_unlock(&g->lock);
	if (state > 0)
		a->b->ret = a->b->t->block(a->b->t->launch, a->b->idx);
	return NULL;
}

static int launch_run(struct aclmem_task *task, struct aclmem_stream *s)
{
	struct launch_task *t = (struct launch_task *)task;
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
	struct block_thread *b;
	struct block_arg *args;
	uint32_t i, made = 0;
	int ret = ACL_SUCCESS;

	(void)s;
	b = calloc(t->dim, sizeof(*b));
	args = calloc(t->dim, sizeof(*args));
	if (!b || !args) {
		ret = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out;
	}
	for (i = 0; i < t->dim; i++, made++) {
		b[i].t = t;
		b[i].idx = i;
		args[i].b = &b[i];
		args[i].g = &g;
		if (pthread_create(&b[i].th, NULL, block_main, &args[i]))
			break;
	}
	pthread_mutex_lock(&g.lock);
	g.state = made == t->dim ? 1 : -1;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	for (i = 0; i < made; i++)
		pthread_join(b[i].th, NULL);
	if (made < t->dim) {
		aclmem_err("kernel %s: no thread for block %u of %u", t->name,
			   made, t->dim);
		ret = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out;
	}
	for (i = 0; i < t->dim; i++) {
		if (b[i].ret) {
			aclmem_err("kernel %s: block %u of %u failed (%d)",
				   t->name, i, t->dim, b[i].ret);
			ret = b[i].ret;
			break;
		}
	}
out:
	free(args);
	free(b);
	return ret;
}

static void launch_release(struct aclmem_task *task, bool ran)
{
	struct launch_task *t = (struct launch_task *)task;

	(void)ran;
	t->release(t->launch);
	free(t->exc.args);
	free(t);
}

static const char *launch_label(const struct aclmem_task *task)
{
	const struct launch_task *t = (const struct launch_task *)task;

	return t->name[0] ? t->name : NULL;
}

static const struct aclmem_exception_kernel *
launch_kernel(const struct aclmem_task *task)
{
	return &((const struct launch_task *)task)->exc;
}

static const struct aclmem_task_ops launch_ops = {
	.run = launch_run,
	.release = launch_release,
	.name = "kernel launch",
	.label = launch_label,
	.kernel = launch_kernel,
};

aclError aclmem_kernel_launch(const char *name, uint32_t block_dim,
			      aclrtStream stream, aclmem_kernel_block_fn block,
			      aclmem_kernel_release_fn release, void *launch)
{
	return aclmem_kernel_launch_func(name, block_dim, stream, block,
					 release, launch, NULL, NULL, 0);
}

aclError aclmem_kernel_launch_func(const char *name, uint32_t block_dim,
				   aclrtStream stream,
				   aclmem_kernel_block_fn block,
				   aclmem_kernel_release_fn release,
				   void *launch, void *func, const void *args,
				   uint32_t args_len)
{
	static const char fn[] = "aclmem_kernel_launch";
	struct launch_task *t;
	void *copy = NULL;

	if (!release)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: release is NULL", fn);
	if (!block || !block_dim || block_dim > ACLMEM_KERNEL_MAX_BLOCKS) {
		release(launch);
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: %s: blockDim %u (1 to %u)%s", fn,
				   name ? name : "kernel", block_dim,
				   ACLMEM_KERNEL_MAX_BLOCKS,
				   block ? "" : ", no block function");
	}
	if (args && args_len) {
		copy = malloc(args_len);
		if (copy)
			memcpy(copy, args, args_len);
	}
	t = aclmem_task_new(fn, sizeof(*t), &launch_ops);
	if (!t || (args && args_len && !copy)) {
		if (t)
			aclmem_fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
				    "%s: out of memory for the arguments", fn);
		free(copy);
		free(t);
		release(launch);
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	t->exc.func = func;
	t->exc.args = copy;
	t->exc.args_len = copy ? args_len : 0;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "kernel");
	t->dim = block_dim;
	t->block = block;
	t->release = release;
	t->launch = launch;
	return aclmem_task_queue(fn, stream, &t->task);
}
