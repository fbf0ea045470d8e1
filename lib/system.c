// SPDX-License-Identifier: MIT
/*
 * System and device facts: versions, the SoC name, CANN attributes, device
 * attributes, status, utilisation, resource limits, identity, topology
 * (peer access is lib/peer.c's).
 *
 * What the library can honestly say.  The "device" is host RAM the npu-mem
 * driver pins and maps for an NPU; the library runs no kernels, so it has
 * no AI cores, vector cores, AI CPUs or L2 cache of its own (counts and
 * sizes 0) and no CANN compute features.  Memory figures and each
 * device's node and PCI address come from the driver's GET_INFO about
 * that device.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclmem/aclmem.h"
#include "args.h"
#include "context.h"
#include "device.h"
#include "log.h"
#include "system.h"

#ifndef ACLMEM_VERSION
#error "ACLMEM_VERSION (dkms.conf's PACKAGE_VERSION) must be defined"
#endif

/*
 * Not "Ascend...": programs pick kernels and code paths by that prefix,
 * and there is no Ascend AI core to run them.  A name that matches no
 * Ascend SoC sends them down their generic path instead of failing later
 * in a kernel launch.
 */
#define ACLMEM_SOC_NAME		"npu-mem"

static int bad_device(const char *fn, int64_t id)
{
	uint32_t n = aclmem_device_count();

	if (n == 1)
		return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
				   "%s: no device %lld (one device: 0)", fn,
				   (long long)id);
	return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
			   "%s: no device %lld (devices 0 to %u)", fn,
			   (long long)id, n - 1);
}

/*
 * GET_INFO about device dev through the file the devices are open on, or
 * a file opened for the question when this thread has no current device:
 * facts about a device do not require aclrtSetDevice in CANN either.
 */
static int device_info(const char *fn, int32_t dev, struct npu_mem_info *info)
{
	int fd, ret;

	if (aclmem_ctx_require() == ACL_SUCCESS) {
		ret = aclmem_dev_get_info(aclmem_ctx_fd(), dev, info);
	} else {
		fd = aclmem_open();
		if (fd < 0)
			return aclmem_fail(aclmem_open_errno_to_acl(-fd),
					   "%s: %s: %s", fn,
					   aclmem_device_path(), strerror(-fd));
		ret = aclmem_dev_get_info(fd, dev, info);
		aclmem_close(fd);
	}
	if (ret)
		return aclmem_fail(aclmem_ioctl_errno_to_acl(-ret),
				   "%s: GET_INFO: %s", fn, strerror(-ret));
	return ACL_SUCCESS;
}

/* ---- versions ---- */

/*
 * "runtime" is this library; "driver" the npu_mem module loaded now (its
 * MODULE_VERSION); any other CANN package is not installed, which CANN
 * reports as ACL_ERROR_INVALID_FILE (no version.info to read).
 */
static int package_version(const char *fn, const char *pkg, char *out,
			   size_t len)
{
	FILE *f;

	if (!strcmp(pkg, "runtime")) {
		snprintf(out, len, "%s", ACLMEM_VERSION);
		return ACL_SUCCESS;
	}
	if (!strcmp(pkg, "driver")) {
		f = fopen("/sys/module/npu_mem/version", "re");
		if (f) {
			if (fgets(out, (int)len, f)) {
				fclose(f);
				out[strcspn(out, "\n")] = '\0';
				return ACL_SUCCESS;
			}
			fclose(f);
		}
		return aclmem_fail(ACL_ERROR_INVALID_FILE,
				   "%s: driver: the npu_mem module is not loaded",
				   fn);
	}
	return aclmem_fail(ACL_ERROR_INVALID_FILE,
			   "%s: package \"%.64s\" is not installed (\"runtime\", \"driver\")",
			   fn, pkg);
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
	if (!pkgName)
		return aclmem_arg_null("aclsysGetVersionStr", "pkgName");
	if (!versionStr)
		return aclmem_arg_null("aclsysGetVersionStr", "versionStr");
	return package_version("aclsysGetVersionStr", pkgName, versionStr,
			       ACL_PKG_VERSION_MAX_SIZE);
}

/*
 * "A.B.C" -> A * 1000000 + B * 1000 + C (each part below 1000; anything
 * after the third number, e.g. "-rc1", is ignored), so a later release
 * compares greater.
 */
static int version_number(const char *s, int32_t *num)
{
	long part[3];
	char *end;
	int i;

	for (i = 0; i < 3; i++) {
		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		part[i] = strtol(s, &end, 10);
		if (errno || part[i] > 999)
			return -1;
		s = end;
		if (i < 2 && *s++ != '.')
			return -1;
	}
	*num = (int32_t)(part[0] * 1000000 + part[1] * 1000 + part[2]);
	return 0;
}

aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)
{
	char v[ACL_PKG_VERSION_MAX_SIZE];
	int ret;

	if (!pkgName)
		return aclmem_arg_null("aclsysGetVersionNum", "pkgName");
	if (!versionNum)
		return aclmem_arg_null("aclsysGetVersionNum", "versionNum");
	ret = package_version("aclsysGetVersionNum", pkgName, v, sizeof(v));
	if (ret)
		return ret;
	if (version_number(v, versionNum))
		return aclmem_fail(ACL_ERROR_INVALID_FILE,
				   "aclsysGetVersionNum: %s: version \"%s\" is not A.B.C",
				   pkgName, v);
	return ACL_SUCCESS;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
			 int32_t *patchVersion)
{
	if (!majorVersion || !minorVersion || !patchVersion)
		return aclmem_arg_null("aclrtGetVersion", "a version pointer");
	/* The interface version of the CANN headers ours follow. */
	*majorVersion = ACL_MAJOR_VERSION;
	*minorVersion = ACL_MINOR_VERSION;
	*patchVersion = ACL_PATCH_VERSION;
	return ACL_SUCCESS;
}

/* ---- SoC, CANN attributes ---- */

const char *aclrtGetSocName(void)
{
	return ACLMEM_SOC_NAME;
}

/* Only code built for this "SoC" runs here: nothing compiled for Ascend. */
aclError aclrtCheckArchCompatibility(const char *socVersion,
				     int32_t *canCompatible)
{
	if (!socVersion)
		return aclmem_arg_null("aclrtCheckArchCompatibility", "socVersion");
	if (!canCompatible)
		return aclmem_arg_null("aclrtCheckArchCompatibility", "canCompatible");
	*canCompatible = !strcmp(socVersion, ACLMEM_SOC_NAME);
	return ACL_SUCCESS;
}

/*
 * Inf/NaN arithmetic, BF16 and JIT compilation are features of an AI
 * core's compute: none here, so the list is empty.  The pointer is to
 * static storage, as CANN's ("freed when the process exits").
 */
static const aclCannAttr cann_attrs[1] = { ACL_CANN_ATTR_UNDEFINED };

aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{
	if (!cannAttrList)
		return aclmem_arg_null("aclGetCannAttributeList", "cannAttrList");
	if (!num)
		return aclmem_arg_null("aclGetCannAttributeList", "num");
	*cannAttrList = cann_attrs;
	*num = 0;
	return ACL_SUCCESS;
}

aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)
{
	if (!value)
		return aclmem_arg_null("aclGetCannAttribute", "value");
	switch (cannAttr) {
	case ACL_CANN_ATTR_INF_NAN:
	case ACL_CANN_ATTR_BF16:
	case ACL_CANN_ATTR_JIT_COMPILE:
		*value = 0;
		return ACL_SUCCESS;
	default:
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclGetCannAttribute: unknown attribute %d",
				   (int)cannAttr);
	}
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo,
				int64_t *value)
{
	if (!value)
		return aclmem_arg_null("aclGetDeviceCapability", "value");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclGetDeviceCapability", deviceId);
	switch (deviceInfo) {
	case ACL_DEVICE_INFO_VECTOR_CORE_NUM:
		*value = aclmem_vector_cores();
		return ACL_SUCCESS;
	case ACL_DEVICE_INFO_AI_CORE_NUM:
	case ACL_DEVICE_INFO_L2_SIZE:
		*value = 0;
		return ACL_SUCCESS;
	default:
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclGetDeviceCapability: unknown info %d",
				   (int)deviceInfo);
	}
}

/* ---- device attributes ---- */

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr,
			    int64_t *value)
{
	struct npu_mem_info info;
	int ret;

	if (!value)
		return aclmem_arg_null("aclrtGetDeviceInfo", "value");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtGetDeviceInfo", deviceId);
	switch ((int)attr) {
	case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
		/* What aclrtGetMemInfo calls total: the driver's cap. */
		ret = device_info("aclrtGetDeviceInfo", (int32_t)deviceId, &info);
		if (ret)
			return ret;
		*value = info.limit_bytes > INT64_MAX ? INT64_MAX :
			 (int64_t)info.limit_bytes;
		return ACL_SUCCESS;
	/* Vector work would run on the CPUs (aclmem_vector_cores). */
	case ACL_DEV_ATTR_VECTOR_CORE_NUM:
		*value = aclmem_vector_cores();
		return ACL_SUCCESS;
	/* Compute: no cores, threads, grids or local memory of any kind. */
	case ACL_DEV_ATTR_AICPU_CORE_NUM:
	case ACL_DEV_ATTR_AICORE_CORE_NUM:
	case ACL_DEV_ATTR_CUBE_CORE_NUM:
	case ACL_DEV_ATTR_WARP_SIZE:
	case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
	case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE:
	case ACL_DEV_ATTR_MAX_GRID_DIM_X:
	case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
	case ACL_DEV_ATTR_MAX_GRID_DIM_Z:
	case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID:
	case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK:
	case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
	case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y:
	case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
	case ACL_DEV_ATTR_L2_CACHE_SIZE:
	/* One host: the same OS, chip 0, not a virtual split of a device. */
	case ACL_DEV_ATTR_SMP_ID:
	case ACL_DEV_ATTR_PHY_CHIP_ID:
	case ACL_DEV_ATTR_IS_VIRTUAL:
		*value = 0;
		return ACL_SUCCESS;
	/* Facts of Ascend servers and SoCs this device has no answer for. */
	case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID:
	case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
	case ACL_DEV_ATTR_SUPER_POD_ID:
	case ACL_DEV_ATTR_CUST_OP_PRIVILEGE:
	case ACL_DEV_ATTR_MAINBOARD_ID:
	case ACL_DEV_ATTR_HD_CONNECT_TYPE:
	case ACL_DEV_ATTR_DEVICE_FORM_FACTOR:
	case ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID:
	case ACL_DEV_ATTR_NPU_ARCH:
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "aclrtGetDeviceInfo: attribute %d has no meaning here",
				   (int)attr);
	default:
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetDeviceInfo: unknown attribute %d",
				   (int)attr);
	}
}

aclError aclrtGetDeviceCapability(int32_t deviceId,
				  aclrtDevFeatureType devFeatureType,
				  int32_t *value)
{
	if (!value)
		return aclmem_arg_null("aclrtGetDeviceCapability", "value");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtGetDeviceCapability", deviceId);
	switch (devFeatureType) {
	case ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV:
	case ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV:
		*value = ACL_DEV_FEATURE_NOT_SUPPORT;
		return ACL_SUCCESS;
	default:
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetDeviceCapability: unknown feature %d",
				   (int)devFeatureType);
	}
}

/*
 * NORMAL while the driver has an NPU to map buffers for; ABNORMAL once it
 * reports the device removed (allocations fail until one is bound again).
 */
aclError aclrtQueryDeviceStatus(int32_t deviceId,
				aclrtDeviceStatus *deviceStatus)
{
	struct npu_mem_info info;
	int ret;

	if (!deviceStatus)
		return aclmem_arg_null("aclrtQueryDeviceStatus", "deviceStatus");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtQueryDeviceStatus", deviceId);
	ret = device_info("aclrtQueryDeviceStatus", deviceId, &info);
	if (ret)
		return ret;
	*deviceStatus = (info.dev_flags & NPU_MEM_DEV_REMOVED) ?
			ACL_RT_DEVICE_STATUS_ABNORMAL :
			ACL_RT_DEVICE_STATUS_NORMAL;
	return ACL_SUCCESS;
}

/*
 * -1 for the engines that do not exist (CANN's "no such unit"); memory is
 * what the library can measure: bytes in npu-mem buffers, all processes,
 * as a percentage of the driver's cap.
 */
aclError aclrtGetDeviceUtilizationRate(int32_t deviceId,
				       aclrtUtilizationInfo *utilizationInfo)
{
	struct npu_mem_info info;
	uint64_t pct;
	int ret;

	if (!utilizationInfo)
		return aclmem_arg_null("aclrtGetDeviceUtilizationRate",
				       "utilizationInfo");
	if (utilizationInfo->utilizationExtend)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtGetDeviceUtilizationRate: utilizationExtend must be NULL");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtGetDeviceUtilizationRate", deviceId);
	ret = device_info("aclrtGetDeviceUtilizationRate", deviceId,
			  &info);
	if (ret)
		return ret;
	pct = info.limit_bytes ?
	      info.allocated_bytes / (info.limit_bytes / 100 + 1) : 0;
	utilizationInfo->cubeUtilization = -1;
	utilizationInfo->vectorUtilization = -1;
	utilizationInfo->aicpuUtilization = -1;
	utilizationInfo->memoryUtilization = pct > 100 ? 100 : (int32_t)pct;
	return ACL_SUCCESS;
}

/*
 * ---- resource limits: no cube cores; vector cores are the CPUs online ----
 *
 * CANN lets a process run the device's kernels on fewer cores than it has.
 * A CPU path for vector kernels would use the CPUs online, so that is the
 * vector core count; a limit from 0 up to it is kept per device (and read
 * back) until that device's aclrtResetDeviceResLimit, more is 100000 as
 * in CANN.  There are no cube
 * cores: their limit is 0, and 0 is all that may be set.
 */
uint32_t aclmem_vector_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Each device's limit plus one; 0: none set. */
static _Atomic uint64_t vector_limit[ACLMEM_DEVICES_MAX];

uint32_t aclmem_vector_limit(int32_t dev)
{
	uint64_t v = atomic_load(&vector_limit[dev]);

	return v ? (uint32_t)(v - 1) : aclmem_vector_cores();
}

static int res_type_ok(const char *fn, aclrtDevResLimitType type)
{
	if (type == ACL_RT_DEV_RES_CUBE_CORE ||
	    type == ACL_RT_DEV_RES_VECTOR_CORE)
		return ACL_SUCCESS;
	return aclmem_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown type %d", fn,
			   (int)type);
}

aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type,
				uint32_t *value)
{
	int ret;

	if (!value)
		return aclmem_arg_null("aclrtGetDeviceResLimit", "value");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtGetDeviceResLimit", deviceId);
	ret = res_type_ok("aclrtGetDeviceResLimit", type);
	if (ret)
		return ret;
	*value = type == ACL_RT_DEV_RES_VECTOR_CORE ?
		 aclmem_vector_limit(deviceId) : 0;
	return ACL_SUCCESS;
}

aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type,
				uint32_t value)
{
	uint32_t cores;
	int ret;

	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtSetDeviceResLimit", deviceId);
	ret = res_type_ok("aclrtSetDeviceResLimit", type);
	if (ret)
		return ret;
	cores = type == ACL_RT_DEV_RES_VECTOR_CORE ? aclmem_vector_cores() : 0;
	if (value > cores)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "aclrtSetDeviceResLimit: %u %s cores asked, "
				   "the device has %u", value,
				   cores ? "vector" : "cube", cores);
	if (type == ACL_RT_DEV_RES_VECTOR_CORE)
		atomic_store(&vector_limit[deviceId], (uint64_t)value + 1);
	return ACL_SUCCESS;
}

aclError aclrtResetDeviceResLimit(int32_t deviceId)
{
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtResetDeviceResLimit", deviceId);
	atomic_store(&vector_limit[deviceId], 0);
	return ACL_SUCCESS;
}

/* ---- identity ---- */

/* No container or VM translation of pids happens on this path. */
aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
	if (!pid)
		return aclmem_arg_null("aclrtDeviceGetBareTgid", "pid");
	*pid = (int32_t)getpid();
	return ACL_SUCCESS;
}

/*
 * The device is this host's npu-mem device: its UUID is the host's
 * (systemd's /etc/machine-id, 128 bits), with the variant and version of
 * an RFC 4122 random UUID so it reads as one.  Stable across boots and
 * processes, different between hosts.
 */
aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)
{
	char hex[40];
	FILE *f;
	int i;

	if (!uuid)
		return aclmem_arg_null("aclrtDeviceGetUuid", "uuid");
	if (!aclmem_device_valid(deviceId))
		return bad_device("aclrtDeviceGetUuid", deviceId);
	f = fopen("/etc/machine-id", "re");
	if (!f || !fgets(hex, sizeof(hex), f) || strspn(hex, "0123456789abcdef") < 32) {
		if (f)
			fclose(f);
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "aclrtDeviceGetUuid: no /etc/machine-id to derive it from");
	}
	fclose(f);
	for (i = 0; i < 16; i++) {
		unsigned int b;

		sscanf(hex + 2 * i, "%2x", &b);
		uuid->bytes[i] = (char)b;
	}
	uuid->bytes[6] = (char)((uuid->bytes[6] & 0x0F) | 0x40);
	uuid->bytes[8] = (char)((uuid->bytes[8] & 0x3F) | 0x80);
	return ACL_SUCCESS;
}

/*
 * PCI addresses, as GET_INFO reports each device's function: CANN's
 * "dddd:bb:dd.f" in lowercase hex, 12 characters.  The module's own
 * device (no PCI NPU bound) has none: 207000, as CANN answers where the
 * interconnect is not PCIe.  Rules where CANN is silent (lib/README.md):
 * len below 13 and a string that is no address are 100000; an address
 * no device has is 107001.
 */
#define PCI_BUS_ID_LEN	13

static int pci_info(const char *fn, int32_t dev, struct npu_mem_info *info)
{
	int ret = device_info(fn, dev, info);

	if (ret)
		return ret;
	if (!(info->dev_flags & NPU_MEM_DEV_PCI))
		return aclmem_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
				   "%s: device %d is not a PCI function", fn,
				   (int)dev);
	return ACL_SUCCESS;
}

aclError aclrtDeviceGetPCIBusId(int32_t devId, char *pciBusId, int32_t len)
{
	static const char fn[] = "aclrtDeviceGetPCIBusId";
	struct npu_mem_info info;
	int ret;

	if (!pciBusId)
		return aclmem_arg_null(fn, "pciBusId");
	if (!aclmem_device_valid(devId))
		return bad_device(fn, devId);
	if (len < PCI_BUS_ID_LEN)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: len %d, %d needed", fn, (int)len,
				   PCI_BUS_ID_LEN);
	ret = pci_info(fn, devId, &info);
	if (ret)
		return ret;
	snprintf(pciBusId, PCI_BUS_ID_LEN, "%04x:%02x:%02x.%x",
		 info.dev_pci_domain & 0xffff, (info.dev_pci_bdf >> 8) & 0xff,
		 (info.dev_pci_bdf >> 3) & 0x1f, info.dev_pci_bdf & 7);
	return ACL_SUCCESS;
}

aclError aclrtDeviceGetByPCIBusId(const char *pciBusId, int32_t *devId)
{
	static const char fn[] = "aclrtDeviceGetByPCIBusId";
	unsigned int dom, bus, slot, func;
	struct npu_mem_info info;
	uint32_t d, n;
	int end = -1;

	if (!pciBusId)
		return aclmem_arg_null(fn, "pciBusId");
	if (!devId)
		return aclmem_arg_null(fn, "devId");
	if (sscanf(pciBusId, "%4x:%2x:%2x.%1x%n", &dom, &bus, &slot, &func,
		   &end) != 4 || end < 0 || pciBusId[end] || slot > 0x1f ||
	    func > 7)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: \"%.32s\" is not dddd:bb:dd.f", fn,
				   pciBusId);
	n = aclmem_device_count();
	for (d = 0; d < n; d++) {
		if (device_info(fn, (int32_t)d, &info))
			continue;
		if ((info.dev_flags & NPU_MEM_DEV_PCI) &&
		    info.dev_pci_domain == dom &&
		    info.dev_pci_bdf == (bus << 8 | slot << 3 | func)) {
			*devId = (int32_t)d;
			return ACL_SUCCESS;
		}
	}
	return aclmem_fail(ACL_ERROR_RT_INVALID_DEVICEID,
			   "%s: no device at %s", fn, pciBusId);
}

/*
 * Device ids: logical (what the ACL calls take), physical and user ids are
 * the module's indices alike (there is no container or VM remapping), so
 * each mapping is the identity on 0 .. count - 1.
 */
static aclError map_id(const char *fn, int32_t from, int32_t *to)
{
	if (!to)
		return aclmem_arg_null(fn, "output id");
	if (!aclmem_device_valid(from))
		return bad_device(fn, from);
	*to = from;
	return ACL_SUCCESS;
}

aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId,
				      int32_t *const logicDevId)
{
	return map_id("aclrtGetLogicDevIdByPhyDevId", phyDevId, logicDevId);
}

aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId,
				      int32_t *const phyDevId)
{
	return map_id("aclrtGetPhyDevIdByLogicDevId", logicDevId, phyDevId);
}

aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId,
				     int32_t *const userDevId)
{
	return map_id("aclrtGetUserDevIdByPhyDevId", phyDevId, userDevId);
}

aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId,
				     int32_t *const phyDevId)
{
	return map_id("aclrtGetPhyDevIdByUserDevId", userDevId, phyDevId);
}

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevId,
				       int32_t *const logicDevId)
{
	return map_id("aclrtGetLogicDevIdByUserDevId", userDevId, logicDevId);
}

aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId,
				       int32_t *const userDevId)
{
	return map_id("aclrtGetUserDevIdByLogicDevId", logicDevId, userDevId);
}

/*
 * How two devices are connected, as far as the driver knows it: their
 * NUMA nodes.  Two NPUs on one node share a host bridge (PHB); on two
 * nodes, or with a node unknown, traffic crosses the link between the
 * sockets (SYS).  There is no NPU-to-NPU link (HCCS) and the driver does
 * not see PCIe switches, so PIX/PIB are never reported.
 */
aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId,
			     uint64_t *value)
{
	static const char fn[] = "aclrtGetDevicesTopo";
	struct npu_mem_info a, b;
	int ret;

	if (!value)
		return aclmem_arg_null(fn, "value");
	if (!aclmem_device_valid(deviceId))
		return bad_device(fn, deviceId);
	if (!aclmem_device_valid(otherDeviceId))
		return bad_device(fn, otherDeviceId);
	if (deviceId == otherDeviceId)
		return aclmem_fail(ACL_ERROR_INVALID_PARAM,
				   "%s: device %u with itself is no pair", fn,
				   deviceId);
	ret = device_info(fn, (int32_t)deviceId, &a);
	if (!ret)
		ret = device_info(fn, (int32_t)otherDeviceId, &b);
	if (ret)
		return ret;
	*value = a.dev_node != NPU_MEM_NODE_NONE && a.dev_node == b.dev_node ?
		 ACL_RT_DEVS_TOPOLOGY_PHB : ACL_RT_DEVS_TOPOLOGY_SYS;
	return ACL_SUCCESS;
}
