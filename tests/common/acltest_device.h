/* SPDX-License-Identifier: MIT */
/*
 * acltest_device: the fixture most ACL suites share: device 0 set before
 * each test (in the test's process, so a refusal fails the test) and reset
 * by force after it, whatever the test left current or alive.  A header of
 * its own, not part of acltest.c: only programs that link libaclmem
 * (tests/lib/) include it, and every program in tests/ links
 * every .c file of tests/common/.
 */
#ifndef ACLTEST_DEVICE_H
#define ACLTEST_DEVICE_H

#include "acl/acl.h"
#include "acltest.h"

static inline void acltest_set_device(void)
{
	ck_assert_int_eq(aclrtSetDevice(0), ACL_SUCCESS);
}

static inline void acltest_reset_device(void)
{
	aclrtResetDeviceForce(0);
}

static const struct nm_fixture acltest_device = {
	.setup = acltest_set_device,
	.teardown = acltest_reset_device,
};

#endif /* ACLTEST_DEVICE_H */
