// SPDX-License-Identifier: MIT
/*
 * aclInit/aclFinalize, the device, its contexts and each thread's current
 * context.
 *
 * The devices are the NPUs the npu-mem module serves, 0 .. device_count - 1
 * of its GET_INFO, all through one device file.  aclrtSetDevice(n) opens
 * the file the first time (so a missing module or a permission problem is
 * reported there, as ACL_ERROR_RT_NO_DEVICE / ACL_ERROR_RT_NO_PERMISSION),
 * makes device n's default context if it has none, counts n's references,
 * process-wide, as CANN does, and makes that context current on the
 * calling thread.  When n's count drops to zero its default context dies
 * with its streams and events; once no context is left the pool is
 * emptied.  A context, and what is made in it, belongs to one device: the
 * thread's current device is always its current context's, so setting
 * another device's context current switches the device (CANN).  Buffers the program did not free stay valid until aclrtFree or
 * aclFinalize: memory belongs to the process, not to a context.
 *
 * aclrtCreateContext makes another context on the device and makes it
 * current; any thread may then aclrtSetCurrentContext it.  Each context has
 * its own default stream.  A thread whose context died (destroyed, or the
 * device reset) gets ACL_ERROR_RT_CONTEXT_NULL until it sets another.
 *
 * The file stays open until aclFinalize (or the process ends): buffers
 * still live need their handles, and reopening would cost an open per
 * SetDevice/ResetDevice cycle for nothing.
 *
 * fork(): the child starts with no device state at all.  The parent's
 * mappings are not inherited (the driver marks them VM_DONTCOPY), so the
 * child forgets the parent's buffers and pool without touching the driver,
 * closes its copy of the parent's descriptor (the parent's file and handles
 * stay intact: the descriptor is only a reference), and gets a client of its
 * own on its next aclrtSetDevice.  Pointers to the parent's buffers are then
 * refused with ACL_ERROR_RT_PARAM_INVALID.  aclInit state is inherited.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "aclmem/aclmem.h"
#include "args.h"
#include "config.h"
#include "context.h"
#include "device.h"
#include "hooks.h"
#include "log.h"

struct aclmem_ctx {
	struct aclmem_ctx *next;	/* live contexts, under ctx_lock */
	uint64_t serial;		/* never reused: tells a new context
					 * at a dead one's address apart */
	int32_t dev;
	bool primary;			/* the device's default context */
};

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static bool acl_inited;
static bool acl_finalized;
static int dev_fd = -1;
/* Per device: aclrtSetDevice calls not reset, and its default context. */
static unsigned long dev_refs[ACLMEM_MAX_DEVICES];
static struct aclmem_ctx *primary[ACLMEM_MAX_DEVICES];
static struct aclmem_ctx *ctxs;
/* Bumped whenever a context dies: threads then re-check theirs. */
static _Atomic uint64_t ctx_epoch = 1;

static uint64_t next_serial = 1;

static __thread struct aclmem_ctx *tls_ctx;
static __thread uint64_t tls_serial;
static __thread uint64_t tls_epoch;

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Device state callbacks, and what serialises them. */
static pthread_mutex_t transition_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct aclmem_hooks device_hooks = ACLMEM_HOOKS_INIT;

/* The live context at this address, or NULL; never dereferences ctx. */
static struct aclmem_ctx *ctx_find_locked(const void *ctx)
{
	struct aclmem_ctx *c;

	for (c = ctxs; c; c = c->next)
		if (c == ctx)
			return c;
	return NULL;
}

bool aclmem_ctx_alive(const struct aclmem_ctx *ctx)
{
	bool alive;

	pthread_mutex_lock(&ctx_lock);
	alive = ctx_find_locked(ctx) != NULL;
	pthread_mutex_unlock(&ctx_lock);
	return alive;
}

static bool tls_ctx_alive(void)
{
	struct aclmem_ctx *c;

	pthread_mutex_lock(&ctx_lock);
	c = ctx_find_locked(tls_ctx);
	pthread_mutex_unlock(&ctx_lock);
	return c && c->serial == tls_serial;
}

/*
 * aclInit's configuration may name a default device: a thread that calls
 * without a current context then gets that device set, as CANN does.
 */
static int implicit_device(void)
{
	int dev = aclmem_config_default_device();

	if (dev >= 0 && aclrtSetDevice(dev) == ACL_SUCCESS)
		return ACL_SUCCESS;
	return ACL_ERROR_RT_CONTEXT_NULL;
}

/*
 * Threads never touch their context to check it: after any context died
 * (the epoch moved) each looks its own up again in the registry, by
 * address and serial, so a dead context is noticed even when a new one
 * took its memory.
 */
int aclmem_ctx_require(void)
{
	uint64_t epoch = atomic_load_explicit(&ctx_epoch,
					      memory_order_acquire);

	if (!tls_ctx)
		return implicit_device();
	if (tls_epoch == epoch)
		return ACL_SUCCESS;
	if (!tls_ctx_alive()) {
		tls_ctx = NULL;
		return implicit_device();
	}
	tls_epoch = epoch;
	return ACL_SUCCESS;
}

int32_t aclmem_ctx_device(const struct aclmem_ctx *ctx)
{
	return ctx->dev;
}

struct aclmem_ctx *aclmem_ctx_current(void)
{
	return tls_ctx;
}

static void set_current(struct aclmem_ctx *ctx)
{
	tls_ctx = ctx;
	tls_serial = ctx ? ctx->serial : 0;
	tls_epoch = atomic_load(&ctx_epoch);
}

int aclmem_ctx_fd(void)
{
	return dev_fd;
}

int aclmem_ctx_info(struct npu_mem_info *info)
{
	int ret = aclmem_dev_get_info(dev_fd, tls_ctx ? tls_ctx->dev : 0, info);

	if (ret) {
		aclmem_err("GET_INFO: %s", strerror(-ret));
		return aclmem_ioctl_errno_to_acl(-ret);
	}
	return ACL_SUCCESS;
}

/* ---- the parts built on contexts (context.h) ---- */

#define MAX_PARTS	16

static const struct aclmem_part *parts[MAX_PARTS];	/* by rising rank */
static unsigned int nr_parts;

void aclmem_part_register(const struct aclmem_part *part)
{
	unsigned int i = nr_parts;

	/* A constant table's worth: a part too many is a build mistake. */
	if (nr_parts == MAX_PARTS)
		abort();
	while (i && parts[i - 1]->rank > part->rank) {
		parts[i] = parts[i - 1];
		i--;
	}
	parts[i] = part;
	nr_parts++;
}

/* Each part's hook, if it has one, in falling rank. */
#define for_each_part_down(p, i)					\
	for ((i) = nr_parts; (i)-- && ((p) = parts[(i)], 1);)

static void parts_ctx_destroy(struct aclmem_ctx *ctx, bool force)
{
	const struct aclmem_part *p;
	unsigned int i;

	for_each_part_down(p, i)
		if (p->ctx_destroy)
			p->ctx_destroy(ctx, force);
}

static void parts_idle(bool finalize)
{
	const struct aclmem_part *p;
	unsigned int i;

	for_each_part_down(p, i)
		if (p->idle)
			p->idle(finalize);
}

static size_t parts_release(void)
{
	const struct aclmem_part *p;
	unsigned int i;
	size_t n = 0;

	for_each_part_down(p, i)
		if (p->release)
			n += p->release();
	return n;
}

void aclmem_parts_stream_gone(struct aclmem_stream *s)
{
	const struct aclmem_part *p;
	unsigned int i;

	for_each_part_down(p, i)
		if (p->stream_gone)
			p->stream_gone(s);
}

static void atfork_prepare(void)
{
	unsigned int i;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < nr_parts; i++)
		if (parts[i]->fork_prepare)
			parts[i]->fork_prepare();
}

static void atfork_parent(void)
{
	const struct aclmem_part *p;
	unsigned int i;

	for_each_part_down(p, i)
		if (p->fork_parent)
			p->fork_parent();
	pthread_mutex_unlock(&ctx_lock);
}

static void atfork_child(void)
{
	const struct aclmem_part *p;
	struct aclmem_ctx *c;
	pthread_mutexattr_t a;
	unsigned int i;

	for_each_part_down(p, i)
		if (p->fork_child)
			p->fork_child();
	aclmem_hooks_atfork_child(&device_hooks);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&transition_lock, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutex_init(&ctx_lock, NULL);
	if (dev_fd >= 0)
		close(dev_fd);
	dev_fd = -1;
	memset(dev_refs, 0, sizeof(dev_refs));
	memset(primary, 0, sizeof(primary));
	while ((c = ctxs)) {
		ctxs = c->next;
		free(c);
	}
	atomic_fetch_add(&ctx_epoch, 1);
	tls_ctx = NULL;
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static struct aclmem_ctx *ctx_new_locked(int32_t dev, bool is_primary)
{
	struct aclmem_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->dev = dev;
	c->primary = is_primary;
	c->serial = next_serial++;
	c->next = ctxs;
	ctxs = c;
	return c;
}

/* Take a context out of the registry: threads naming it see it dead. */
static void ctx_unlink_locked(struct aclmem_ctx *ctx)
{
	struct aclmem_ctx **pc;

	for (pc = &ctxs; *pc; pc = &(*pc)->next) {
		if (*pc == ctx) {
			*pc = ctx->next;
			break;
		}
	}
	if (ctx == primary[ctx->dev])
		primary[ctx->dev] = NULL;
	if (tls_ctx == ctx)
		tls_ctx = NULL;
	atomic_fetch_add_explicit(&ctx_epoch, 1, memory_order_release);
}

/*
 * Destroy what an unlinked context owns, without ctx_lock: its streams'
 * last tasks (callbacks) may call back into the library.
 */
static void ctx_free(struct aclmem_ctx *ctx, bool force)
{
	parts_ctx_destroy(ctx, force);
	free(ctx);
}

/* With no context left, the parts let go of what they cache. */
static void idle_if_unused(void)
{
	bool unused;

	pthread_mutex_lock(&ctx_lock);
	unused = !ctxs;
	pthread_mutex_unlock(&ctx_lock);
	if (unused)
		parts_idle(false);
}

aclError aclInit(const char *configPath)
{
	int ret = ACL_SUCCESS;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&ctx_lock);
	if (acl_inited) {
		ret = ACL_ERROR_REPEAT_INITIALIZE;
		aclmem_err("aclInit: already initialized (aclFinalize first)");
		goto out;
	}
	/* Of the configuration only defaultDevice means something here. */
	ret = aclmem_config_load(configPath);
	if (ret)
		goto out;
	acl_inited = true;
	acl_finalized = false;
out:
	pthread_mutex_unlock(&ctx_lock);
	return aclmem_api_ret("aclInit", ret);
}

aclError aclFinalize(void)
{
	struct aclmem_ctx *list, *c;
	size_t leaked;

	pthread_mutex_lock(&ctx_lock);
	if (acl_finalized) {
		pthread_mutex_unlock(&ctx_lock);
		return aclmem_fail(ACL_ERROR_REPEAT_FINALIZE,
				   "aclFinalize: already finalized");
	}
	acl_finalized = true;
	acl_inited = false;
	aclmem_config_reset();
	list = ctxs;
	ctxs = NULL;
	memset(primary, 0, sizeof(primary));
	memset(dev_refs, 0, sizeof(dev_refs));
	tls_ctx = NULL;
	atomic_fetch_add_explicit(&ctx_epoch, 1, memory_order_release);
	pthread_mutex_unlock(&ctx_lock);

	/* As CANN: finalizing releases everything the process still holds. */
	while ((c = list)) {
		list = c->next;
		ctx_free(c, true);
	}
	parts_idle(true);

	pthread_mutex_lock(&ctx_lock);
	if (dev_fd >= 0 && !ctxs) {
		leaked = parts_release();
		if (leaked)
			aclmem_info("aclFinalize: released %zu buffers never freed",
				    leaked);
		close(dev_fd);
		dev_fd = -1;
	}
	pthread_mutex_unlock(&ctx_lock);
	return ACL_SUCCESS;
}

static int check_abi(int fd)
{
	struct npu_mem_info info;
	int ret = aclmem_dev_get_info(fd, 0, &info);

	if (ret) {
		aclmem_err("GET_INFO on %s: %s", aclmem_device_path(),
			   strerror(-ret));
		return aclmem_ioctl_errno_to_acl(-ret);
	}
	if (info.abi_major != NPU_MEM_ABI_MAJOR) {
		aclmem_err("%s speaks ABI %u.%u, this library %u.%u",
			   aclmem_device_path(), info.abi_major, info.abi_minor,
			   NPU_MEM_ABI_MAJOR, NPU_MEM_ABI_MINOR);
		return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
	}
	return ACL_SUCCESS;
}

/* Open the device file on first use: ACL code. */
static int device_open_locked(int32_t deviceId)
{
	int fd, ret;

	if (dev_fd >= 0)
		return ACL_SUCCESS;
	fd = aclmem_device_open();
	if (fd < 0) {
		aclmem_err("device %d: %s: %s%s", deviceId,
			   aclmem_device_path(), strerror(-fd),
			   fd == -ENOENT ?
			   " (is the npu_mem module loaded?)" : "");
		return aclmem_open_errno_to_acl(-fd);
	}
	ret = check_abi(fd);
	if (ret) {
		close(fd);
		return ret;
	}
	dev_fd = fd;
	return ACL_SUCCESS;
}

/* ---- device state callbacks ---- */

/*
 * aclrtRegDeviceStateCallback: told when the device comes into use (its
 * default context is made: SET_PRE, SET_POST) and when it goes out of use
 * (the last reset: RESET_PRE, RESET_POST), not on every call.  Those
 * transitions are serialised by a lock of their own, recursive so that a
 * callback may itself call aclrtSetDevice; callbacks never run under
 * ctx_lock (declared with the process state above).
 */

struct device_change {
	int32_t dev;
	aclrtDeviceState state;
};

static void call_device(void *fn, void *args, void *ctx)
{
	struct device_change *c = ctx;

	((aclrtDeviceStateCallback)fn)(c->dev, c->state, args);
}

static void device_changed(int32_t dev, aclrtDeviceState state)
{
	struct device_change c = { dev, state };

	aclmem_hooks_call(&device_hooks, call_device, &c);
}

aclError aclrtRegDeviceStateCallback(const char *regName,
				     aclrtDeviceStateCallback callback,
				     void *args)
{
	int ret = aclmem_hooks_set(&device_hooks, regName, (void *)callback,
				   args);

	return ret ? aclmem_fail(ret, "aclrtRegDeviceStateCallback: name NULL, "
				 "empty or longer than %d",
				 ACLMEM_HOOK_NAME_MAX) : ACL_SUCCESS;
}

bool aclmem_ctx_device_in_use(int32_t dev)
{
	bool used;

	pthread_mutex_lock(&ctx_lock);
	used = primary[dev] != NULL;
	pthread_mutex_unlock(&ctx_lock);
	return used;
}

/* "fn(id): ...", the way these calls have always worded it. */
static int no_device(const char *fn, int32_t id)
{
	uint32_t n = aclmem_device_count();

	if (n == 1)
		return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
				   "%s(%d): no such device (device 0 only)", fn,
				   (int)id);
	return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
			   "%s(%d): no such device (devices 0 to %u)", fn,
			   (int)id, n - 1);
}

aclError aclrtSetDevice(int32_t deviceId)
{
	bool first;
	int ret;

	if (!aclmem_device_valid(deviceId))
		return no_device("aclrtSetDevice", deviceId);
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&transition_lock);
	first = !aclmem_ctx_device_in_use(deviceId);
	if (first)
		device_changed(deviceId, ACL_RT_DEVICE_STATE_SET_PRE);
	pthread_mutex_lock(&ctx_lock);
	ret = device_open_locked(deviceId);
	if (ret)
		goto out;
	if (!primary[deviceId]) {
		primary[deviceId] = ctx_new_locked(deviceId, true);
		if (!primary[deviceId]) {
			ret = ACL_ERROR_RT_MEMORY_ALLOCATION;
			goto out;
		}
	}
	dev_refs[deviceId]++;
	set_current(primary[deviceId]);
out:
	pthread_mutex_unlock(&ctx_lock);
	if (first && !ret)
		device_changed(deviceId, ACL_RT_DEVICE_STATE_SET_POST);
	pthread_mutex_unlock(&transition_lock);
	return aclmem_api_ret("aclrtSetDevice", ret);
}

/*
 * The default context lives while aclrtSetDevice calls outnumber resets
 * (process-wide, as in CANN); contexts made with aclrtCreateContext are
 * not touched by a reset.  The calling thread loses its current context
 * if that is the default one.
 */
static aclError reset_device(int32_t deviceId, int force)
{
	struct aclmem_ctx *dead = NULL;
	unsigned long *refs;
	bool last;

	if (!aclmem_device_valid(deviceId))
		return no_device(force ? "aclrtResetDeviceForce" :
				 "aclrtResetDevice", deviceId);
	refs = &dev_refs[deviceId];
	pthread_mutex_lock(&transition_lock);
	pthread_mutex_lock(&ctx_lock);
	last = *refs && primary[deviceId] && (force || *refs == 1);
	pthread_mutex_unlock(&ctx_lock);
	if (last)
		device_changed(deviceId, ACL_RT_DEVICE_STATE_RESET_PRE);
	pthread_mutex_lock(&ctx_lock);
	if (tls_ctx && tls_ctx == primary[deviceId])
		tls_ctx = NULL;
	/* Resetting a device nobody set is harmless, as in CANN. */
	if (*refs && (force || --*refs == 0)) {
		*refs = 0;
		dead = primary[deviceId];
		if (dead)
			ctx_unlink_locked(dead);
	}
	pthread_mutex_unlock(&ctx_lock);
	if (dead) {
		ctx_free(dead, force);
		idle_if_unused();
	}
	if (last)
		device_changed(deviceId, ACL_RT_DEVICE_STATE_RESET_POST);
	pthread_mutex_unlock(&transition_lock);
	return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
	return reset_device(deviceId, 0);
}

aclError aclrtResetDeviceForce(int32_t deviceId)
{
	return reset_device(deviceId, 1);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	int ret;

	if (!deviceId)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetDevice: deviceId is NULL");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtGetDevice", ret);
	*deviceId = tls_ctx->dev;
	return ACL_SUCCESS;
}

/* ---- contexts ---- */

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
	struct aclmem_ctx *c;
	int ret;

	if (!context)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtCreateContext: context is NULL");
	ret = aclmem_arg_device("aclrtCreateContext", deviceId);
	if (ret)
		return ret;
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&ctx_lock);
	ret = device_open_locked(deviceId);
	if (ret)
		goto out;
	c = ctx_new_locked(deviceId, false);
	if (!c) {
		ret = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out;
	}
	set_current(c);
	*context = c;
out:
	pthread_mutex_unlock(&ctx_lock);
	return aclmem_api_ret("aclrtCreateContext", ret);
}

/*
 * Only contexts made by aclrtCreateContext; the default one goes with
 * aclrtResetDevice.  Work queued on its streams is waited for, then its
 * streams and events are destroyed.  Any thread whose current context it
 * was has none afterwards (ACL_ERROR_RT_CONTEXT_NULL).
 */
aclError aclrtDestroyContext(aclrtContext context)
{
	struct aclmem_ctx *c;

	if (!context)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtDestroyContext: context is NULL");
	pthread_mutex_lock(&ctx_lock);
	c = ctx_find_locked(context);
	if (!c || c->primary) {
		pthread_mutex_unlock(&ctx_lock);
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "aclrtDestroyContext(%p): %s", context,
				   c ? "the default context goes with aclrtResetDevice" :
				   "not a live context");
	}
	ctx_unlink_locked(c);
	pthread_mutex_unlock(&ctx_lock);
	ctx_free(c, false);
	idle_if_unused();
	return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
	struct aclmem_ctx *c;

	if (!context)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetCurrentContext: context is NULL");
	pthread_mutex_lock(&ctx_lock);
	c = ctx_find_locked(context);
	if (c)
		set_current(c);
	pthread_mutex_unlock(&ctx_lock);
	if (!c)
		return aclmem_fail(ACL_ERROR_RT_PARAM_INVALID,
				   "aclrtSetCurrentContext(%p): not a live context",
				   context);
	return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
	int ret;

	if (!context)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetCurrentContext: context is NULL");
	ret = aclmem_ctx_require();
	if (ret)
		return aclmem_api_ret("aclrtGetCurrentContext", ret);
	*context = tls_ctx;
	return ACL_SUCCESS;
}

aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags,
				 int32_t *active)
{
	int ret = aclmem_arg_device("aclrtGetPrimaryCtxState", deviceId);

	if (ret)
		return ret;
	/* CANN: flags is reserved and passed as NULL; filled if not. */
	if (!active)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetPrimaryCtxState: active is NULL");
	pthread_mutex_lock(&ctx_lock);
	if (flags)
		*flags = 0;
	*active = primary[deviceId] != NULL;
	pthread_mutex_unlock(&ctx_lock);
	return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	struct stat st;

	if (!count)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetDeviceCount: count is NULL");
	if (stat(aclmem_device_path(), &st)) {
		int err = errno;

		*count = 0;
		return aclmem_fail(aclmem_open_errno_to_acl(err),
				   "aclrtGetDeviceCount: %s: %s",
				   aclmem_device_path(), strerror(err));
	}
	*count = aclmem_device_count();
	return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
	if (!runMode)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetRunMode: runMode is NULL");
	/* The program runs on the host, beside the device. */
	*runMode = ACL_HOST;
	return ACL_SUCCESS;
}
