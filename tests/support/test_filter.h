/* Choosing which tests of a binary run, from the environment, so that the
 * Makefile can run a slow binary's thread tests alone under ThreadSanitizer
 * without a second copy of the binary. */
#ifndef VARPROF_TESTS_TEST_FILTER_H
#define VARPROF_TESTS_TEST_FILTER_H

/* Passes VARPROF_TEST_FILTER (run only the tests whose names match this
 * glob, cmocka's * and ?) and VARPROF_TEST_SKIP (skip those that match) to
 * cmocka. Unset or empty, every test runs. Call before the first group. */
void test_filter_from_environment(void);

#endif
