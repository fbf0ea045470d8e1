/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nmtest_cgroup: a memory cgroup of the test program's own, to see from
 * outside the driver what its pages are charged to (buffer pages carry
 * __GFP_ACCOUNT) and to make allocations fail part-way with memory.max.
 * cgroup2 is mounted in a private mount namespace of the process when the
 * guest has none mounted (the test guests' init mounts no cgroups).
 */
#ifndef NMTEST_CGROUP_H
#define NMTEST_CGROUP_H

#include <stdint.h>

/* Create the cgroup (root only, call from main): NULL, or why it cannot
 * be had here (a reason for nm_skip). */
const char *nm_cgroup_setup(const char *tag);
const char *nm_cgroup_dir(void);
/* printf into the cgroup's FILE: 0 or -errno */
int nm_cgroup_write(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The calling process into the cgroup, with no memory limit (asserts) */
void nm_cgroup_enter(void);
/* A number from the cgroup's FILE: the whole file (key NULL), or a
 * "key value" line of it (memory.events); asserts it can be read */
uint64_t nm_cgroup_value(const char *file, const char *key);
/* Remove the cgroup once no process is left in it */
void nm_cgroup_remove(void);

#endif /* NMTEST_CGROUP_H */
