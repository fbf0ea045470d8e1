// SPDX-License-Identifier: MIT
/*
 * nmtest_suite: test registration.  See nmtest_suite.h.
 */
#include "nmtest_suite.h"

void nm_add_loop(Suite *s, const TTest *t, int n, double timeout_s,
		 const struct nm_fixture *fx)
{
	TCase *tc = tcase_create(t->name);

	if (fx && fx->unchecked)
		tcase_add_unchecked_fixture(tc, fx->setup, fx->teardown);
	else if (fx)
		tcase_add_checked_fixture(tc, fx->setup, fx->teardown);
	tcase_add_loop_test(tc, t, 0, n);
	tcase_set_timeout(tc, timeout_s);
	suite_add_tcase(s, tc);
}

void nm_add_fx(Suite *s, const TTest *t, double timeout_s,
	       const struct nm_fixture *fx)
{
	nm_add_loop(s, t, 1, timeout_s, fx);
}

void nm_add(Suite *s, const TTest *t, double timeout_s)
{
	nm_add_loop(s, t, 1, timeout_s, NULL);
}
