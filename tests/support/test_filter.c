#include "test_filter.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

void test_filter_from_environment(void)
{
    const char *only = getenv("VARPROF_TEST_FILTER");
    const char *skip = getenv("VARPROF_TEST_SKIP");
    if (only != NULL && *only != '\0')
        cmocka_set_test_filter(only);
    if (skip != NULL && *skip != '\0')
        cmocka_set_skip_filter(skip);
}
