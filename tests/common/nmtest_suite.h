/* SPDX-License-Identifier: MIT */
/*
 * nmtest_suite: the one way every Check program in tests/ registers a test.
 * Each test gets a TCase of its own, named after the test, with its own
 * timeout in seconds (Check multiplies it by CK_TIMEOUT_MULTIPLIER; the
 * guest is slow under TCG) and, where the suite has one, its fixture.  The
 * runners (tests/guest/run-suites.sh) count tests, so how a suite groups
 * them does not show in the totals.
 */
#ifndef NMTEST_SUITE_H
#define NMTEST_SUITE_H

#include <check.h>
#include <stdbool.h>

/*
 * What runs around each test.  A checked fixture runs in the test's own
 * process (an assertion in setup fails the test); an unchecked one runs
 * in Check's process, so its teardown still runs after a test that died,
 * and can give back what that test took (a module parameter, the device).
 */
struct nm_fixture {
	SFun setup;		/* may be NULL */
	SFun teardown;		/* may be NULL */
	bool unchecked;
};

void nm_add(Suite *s, const TTest *t, double timeout_s);
void nm_add_fx(Suite *s, const TTest *t, double timeout_s,
	       const struct nm_fixture *fx);
/* A loop test: runs n times, with _i from 0 to n - 1; fx may be NULL. */
void nm_add_loop(Suite *s, const TTest *t, int n, double timeout_s,
		 const struct nm_fixture *fx);

#endif /* NMTEST_SUITE_H */
