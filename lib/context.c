// SPDX-License-Identifier: MIT
/*
 * aclInit/aclFinalize, the device and each thread's current device.
 *
 * There is one device, id 0: the npu-mem driver.  aclrtSetDevice opens the
 * device file the first time (so a missing module or a permission problem
 * is reported there, as ACL_ERROR_RT_NO_DEVICE / ACL_ERROR_RT_NO_PERMISSION)
 * and counts references, process-wide, as CANN does; it also makes the
 * device current on the calling thread.  When the count drops to zero the
 * device's streams are destroyed and the pool is emptied; buffers the
 * program did not free stay valid until aclrtFree or aclFinalize.  Every
 * drop to zero bumps a generation number, so threads whose current device
 * was reset get ACL_ERROR_RT_CONTEXT_NULL until they set it again.
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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl_rt.h"
#include "aclmem/aclmem.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "pool.h"
#include "stream.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static bool acl_inited;
static bool acl_finalized;
static int dev_fd = -1;
static unsigned long dev_refs;
static _Atomic uint64_t dev_gen = 1;

static __thread int tls_dev = -1;
static __thread uint64_t tls_gen;

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

int aclmem_ctx_require(void)
{
	if (tls_dev < 0 || tls_gen != atomic_load_explicit(&dev_gen,
							    memory_order_acquire))
		return ACL_ERROR_RT_CONTEXT_NULL;
	return ACL_SUCCESS;
}

int aclmem_ctx_fd(void)
{
	return dev_fd;
}

int aclmem_ctx_info(struct npu_mem_info *info)
{
	int ret = aclmem_get_info(dev_fd, info);

	if (ret) {
		aclmem_err("GET_INFO: %s", strerror(-ret));
		return aclmem_ioctl_errno_to_acl(-ret);
	}
	return ACL_SUCCESS;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&ctx_lock);
	aclmem_streams_atfork_prepare();
	pthread_mutex_lock(&aclmem_pool_global()->lock);
	aclmem_mem_atfork_prepare();
}

static void atfork_parent(void)
{
	aclmem_mem_atfork_parent();
	pthread_mutex_unlock(&aclmem_pool_global()->lock);
	aclmem_streams_atfork_parent();
	pthread_mutex_unlock(&ctx_lock);
}

static void atfork_child(void)
{
	aclmem_mem_atfork_child();
	aclmem_pool_forget(aclmem_pool_global());
	aclmem_streams_atfork_child();
	pthread_mutex_init(&ctx_lock, NULL);
	if (dev_fd >= 0)
		close(dev_fd);
	dev_fd = -1;
	dev_refs = 0;
	atomic_fetch_add(&dev_gen, 1);
	tls_dev = -1;
}

static void atfork_register(void)
{
	/* Make sure the pool exists before a fork handler touches its lock. */
	aclmem_pool_global();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* The device lost its last reference, or the process finalizes. */
static void device_teardown(int force)
{
	aclmem_streams_destroy_all(force);
	aclmem_pool_trim(aclmem_pool_global(), 0);
	atomic_fetch_add_explicit(&dev_gen, 1, memory_order_release);
}

aclError aclInit(const char *configPath)
{
	int ret = ACL_SUCCESS;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&ctx_lock);
	if (acl_inited) {
		ret = ACL_ERROR_REPEAT_INITIALIZE;
		goto out;
	}
	/* The configuration (dump, profiling...) means nothing here; it
	 * must still name a readable file if given, as in CANN. */
	if (configPath && *configPath) {
		int fd = open(configPath, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			aclmem_err("aclInit: %s: %s", configPath, strerror(errno));
			ret = ACL_ERROR_INVALID_FILE;
			goto out;
		}
		close(fd);
	}
	acl_inited = true;
	acl_finalized = false;
out:
	pthread_mutex_unlock(&ctx_lock);
	return ret;
}

aclError aclFinalize(void)
{
	size_t leaked;

	pthread_mutex_lock(&ctx_lock);
	if (acl_finalized) {
		pthread_mutex_unlock(&ctx_lock);
		return ACL_ERROR_REPEAT_FINALIZE;
	}
	/* As CANN: finalizing releases everything the process still holds. */
	device_teardown(1);
	dev_refs = 0;
	tls_dev = -1;
	if (dev_fd >= 0) {
		leaked = aclmem_mem_release_all();
		if (leaked)
			aclmem_info("aclFinalize: released %zu buffers never freed",
				    leaked);
		close(dev_fd);
		dev_fd = -1;
	}
	acl_inited = false;
	acl_finalized = true;
	pthread_mutex_unlock(&ctx_lock);
	return ACL_SUCCESS;
}

static int check_abi(int fd)
{
	struct npu_mem_info info;
	int ret = aclmem_get_info(fd, &info);

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

aclError aclrtSetDevice(int32_t deviceId)
{
	int ret = ACL_SUCCESS;

	if (deviceId < 0 || deviceId >= ACLMEM_MAX_DEVICES)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&ctx_lock);
	if (dev_fd < 0) {
		int fd = aclmem_device_open();

		if (fd < 0) {
			ret = aclmem_open_errno_to_acl(-fd);
			aclmem_err("aclrtSetDevice(%d): %s: %s%s", deviceId,
				   aclmem_device_path(), strerror(-fd),
				   fd == -ENOENT ?
				   " (is the npu_mem module loaded?)" : "");
			goto out;
		}
		ret = check_abi(fd);
		if (ret) {
			close(fd);
			goto out;
		}
		dev_fd = fd;
	}
	dev_refs++;
	tls_dev = deviceId;
	tls_gen = atomic_load(&dev_gen);
out:
	pthread_mutex_unlock(&ctx_lock);
	return ret;
}

static aclError reset_device(int32_t deviceId, int force)
{
	if (deviceId < 0 || deviceId >= ACLMEM_MAX_DEVICES)
		return ACL_ERROR_RT_INVALID_DEVICEID;
	pthread_mutex_lock(&ctx_lock);
	if (tls_dev == deviceId)
		tls_dev = -1;
	/* Resetting a device nobody set is harmless, as in CANN. */
	if (dev_refs && (force || --dev_refs == 0)) {
		dev_refs = 0;
		device_teardown(force);
	}
	pthread_mutex_unlock(&ctx_lock);
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
		return ACL_ERROR_INVALID_PARAM;
	ret = aclmem_ctx_require();
	if (ret)
		return ret;
	*deviceId = tls_dev;
	return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	struct stat st;

	if (!count)
		return ACL_ERROR_INVALID_PARAM;
	if (stat(aclmem_device_path(), &st)) {
		int err = errno;

		*count = 0;
		aclmem_err("aclrtGetDeviceCount: %s: %s", aclmem_device_path(),
			   strerror(err));
		return aclmem_open_errno_to_acl(err);
	}
	*count = ACLMEM_MAX_DEVICES;
	return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
	if (!runMode)
		return ACL_ERROR_INVALID_PARAM;
	/* The program runs on the host, beside the device. */
	*runMode = ACL_HOST;
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void)
{
	int ret = aclmem_ctx_require();

	return ret ? ret : aclmem_streams_sync_all();
}
