/* SPDX-License-Identifier: MIT */
/*
 * What the device is, as lib/system.c answers for it, for the other files
 * that report or limit its cores (lib/settings.c).
 */
#ifndef ACLMEM_SYSTEM_H
#define ACLMEM_SYSTEM_H

#include <stdint.h>

/*
 * The device's vector cores: the CPUs online, those a CPU path for vector
 * kernels would run on (at least 1).  It has no cube or AI CPU cores.
 */
uint32_t aclmem_vector_cores(void);

/*
 * The vector core limit of device dev, a valid id (aclrtSetDeviceResLimit):
 * the core count until one is set, and again after
 * aclrtResetDeviceResLimit of that device.
 */
uint32_t aclmem_vector_limit(int32_t dev);

#endif /* ACLMEM_SYSTEM_H */
