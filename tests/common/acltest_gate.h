/* SPDX-License-Identifier: MIT */
/*
 * acltest_gate: a stream held by a host function until the test opens the
 * gate.  A test that must act while work it queued is still pending (query
 * it, free what it will use, time out waiting for it) holds the stream this
 * way, not with a host function that sleeps: under TCG, valgrind or a
 * loaded host the test itself can stall for longer than any sleep, and
 * the stream would then run early and fail the test by chance.  Open the
 * gate right after the step that needs the stream held.
 *
 * A running host function keeps aclrtStreamAbort and the force destroys
 * waiting until it returns, so a gate cannot be opened after those calls
 * by the thread that makes them; hold the stream with aclrtValueWait there
 * (an abort makes a running wait give up).
 *
 * A header of its own for the reason acltest_device.h gives: only programs
 * that link libaclmem include it.
 */
#ifndef ACLTEST_GATE_H
#define ACLTEST_GATE_H

#include <stdatomic.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acltest.h"

/*
 * A gate a failed test never opened lets its stream go after this long, so
 * that the teardown's reset (which waits for running host functions) ends;
 * no passing test keeps a gate shut for anything near it.
 */
#define ACLTEST_GATE_MAX_S	120.0

struct acltest_gate {
	atomic_int open;
};

static inline void acltest_gate_wait(void *arg)
{
	struct acltest_gate *g = arg;
	double give_up = acltest_now() + ACLTEST_GATE_MAX_S;

	while (!atomic_load(&g->open) && acltest_now() < give_up)
		usleep(1000);
}

/* Queue the gate, shut, on stream s: what is queued after it waits. */
static inline void acltest_gate_hold(struct acltest_gate *g, aclrtStream s)
{
	atomic_store(&g->open, 0);
	ck_assert_int_eq(aclrtLaunchHostFunc(s, acltest_gate_wait, g),
			 ACL_SUCCESS);
}

static inline void acltest_gate_open(struct acltest_gate *g)
{
	atomic_store(&g->open, 1);
}

#endif /* ACLTEST_GATE_H */
