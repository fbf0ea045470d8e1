/* SPDX-License-Identifier: MIT */
/*
 * aclInit's configuration file: JSON, parsed with json-c.  Of CANN's keys
 * only "defaultDevice" means anything here; the others (dump, profiling,
 * operator caches...) describe features this library does not have and are
 * accepted and ignored, as CANN ignores keys it does not know.
 */
#ifndef ACLMEM_CONFIG_H
#define ACLMEM_CONFIG_H

/*
 * Read and check the file aclInit was given (NULL or "": no file, no
 * configuration) and make it the configuration in force, replacing any
 * earlier one.  ACL_SUCCESS; ACL_ERROR_INVALID_FILE when the file cannot be
 * read; ACL_ERROR_PARSE_FILE when it is not JSON, nests "{" or "[" deeper
 * than CANN's 10 levels, or its top level is not an object;
 * ACL_ERROR_INVALID_PARAM when defaultDevice.default_device is not a
 * device id.  On failure the configuration in force is left as it was.
 * An empty file is no configuration, as in CANN.
 */
int aclmem_config_load(const char *path);

/* Forget the configuration (aclFinalize). */
void aclmem_config_reset(void);

/*
 * The device id of "defaultDevice": {"default_device": "N"}, or -1 when
 * none is configured.  Lock-free: read on every call made without a
 * current device.
 */
int aclmem_config_default_device(void);

#endif /* ACLMEM_CONFIG_H */
