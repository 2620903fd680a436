/* Copies of a conformance case with config.json edited, run beside the
 * unedited case: the harness of the tests that hold a family's config keys
 * the corpus does not vary (test_hf_llama_kin, test_hf_gemma3). */
#ifndef VARPROF_TESTS_EDITED_CASE_H
#define VARPROF_TESTS_EDITED_CASE_H

#include <stddef.h>

/* One edit of config.json: its first `from` becomes `to`. */
typedef struct {
    const char *from, *to;
} edit;

typedef struct {
    const char *base;    /* a case of tests/data/conformance */
    edit edits[4];       /* in turn; a NULL from ends them */
    const char *says[2]; /* in the message, for a refusal; NULL: the same output */
} kin_case;

/* dir: a copy of c's base case with c's edits made to its config.json. */
void edited_case_copy(const kin_case *c, const char *dir);

/* c beside its unedited base, in the scratch folder as NAME + i: refused (a
   non-zero exit, nothing out, every says in the message) or, with no says,
   exit 0 and the same output; 1 (after printing why) if it is not. */
int edited_case_expect(const char *name, size_t i, const kin_case *c);

/* edited_case_expect on each of the n cases, every one run; 1 (after
   printing why for each) if any is not as it should be. */
int edited_cases_expect(const char *name, const kin_case *cases, size_t n);

#endif
