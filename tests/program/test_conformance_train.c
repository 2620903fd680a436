/* varprof train --weights DIR on every case of the conformance corpus
 * (tests/data/conformance/cases.txt: checkpoints written and run by the
 * transformers library itself, all seventeen families): step 0's loss and
 * global gradient norm, before any update, are transformers' own loss and
 * grad_global for that batch (expected.json), within the corpus's bound
 * for the global gradient, 1e-5 relative, on every instruction set; and
 * three steps of Adam lower the loss. So the backward pass and training
 * work for every family a checkpoint of which varprof reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"
#include "torch_case.h"

#define GLOBAL_BOUND 1e-5 /* the conformance test's for the global gradient */

static double expected_number(const cJSON *doc, const char *key, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);
    if (!cJSON_IsNumber(v))
        fail_msg("conformance/%s/expected.json has no number %s", name, key);
    return v->valuedouble;
}

static void every_case_trains(void **state)
{
    (void)state;
    /* read_text's buffer is static: the list is copied before the next read */
    char *list = strdup(read_text(test_data_path("conformance/cases.txt")));
    assert_non_null(list);
    size_t cases = 0;
    char *save = NULL;
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!*line)
            continue;
        char dir[256], tokens[256], expected[256];
        snprintf(dir, sizeof dir, "conformance/%s", line);
        snprintf(tokens, sizeof tokens, "conformance/%s/tokens.csv", line);
        snprintf(expected, sizeof expected, "conformance/%s/expected.json", line);
        cJSON *doc = cJSON_Parse(read_text(test_data_path(expected)));
        if (!doc)
            fail_msg("%s: not JSON", expected);
        train_step0_check(line, dir, tokens, expected_number(doc, "loss", line),
                          expected_number(doc, "grad_global", line), GLOBAL_BOUND);
        cJSON_Delete(doc);
        cases++;
    }
    free(list);
    assert_int_equal(cases, 38);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case_trains),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("train on the conformance corpus", tests, test_scratch_setup,
                                       test_scratch_teardown);
}
