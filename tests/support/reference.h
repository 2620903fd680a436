/* Reads the reference tables the tests hold the engines against.
 *
 * tests/data/closed_reference.csv (made by tests/data/gen_closed_reference.py)
 * has one row per sub-block of each case, with the header
 *
 *   case,placement,layers,gain,gamma,alpha,beta,embedding_var,gains,k,
 *   stream_var,update_ratio,embedding_share
 *
 * This reader only parses: it keeps the placement as its name and checks no
 * maths, so that a test can tell a malformed file from a wrong engine.
 */
#ifndef VARPROF_TESTS_REFERENCE_H
#define VARPROF_TESTS_REFERENCE_H

#include <stddef.h>

typedef struct {
    char *case_name; /* malloc'd; unique per case, no commas */
    char *placement; /* malloc'd; the canonical name ("pre-norm") */
    size_t layers;
    int has_gain; /* 0 when the case gives per-sub-block gains */
    double gain;  /* 0 when !has_gain */
    double gamma, alpha, beta, embedding_var;
    double *gains; /* malloc'd, n_gains long; NULL when the field is empty
                               (every row but a per-sub-block case's k = 0) */
    size_t n_gains;
    size_t k; /* sub-block, 0 = the embedding */
    double stream_var;
    int has_update_ratio; /* 0 where the field is empty (k = 0) */
    double update_ratio;  /* 0 when !has_update_ratio */
    double embedding_share;
} ref_row;

typedef struct {
    ref_row *rows; /* malloc'd, in file order */
    size_t n_rows; /* data rows, without the header */
} ref_table;

/* The directory of test data: $VARPROF_TESTDATA when set and not empty, else
 * "tests/data" (relative to the repository root, where the tests run). Never
 * NULL; the string is not owned by the caller. */
const char *ref_testdata_dir(void);

/* Reads the CSV at path into *out (zeroed first, owned by the caller, freed
 * with ref_table_free). Returns 0 on success. Returns -1, with *out empty and
 * one sentence in err (err_size bytes, may be 0), when the file cannot be
 * opened or read, when libcsv rejects it, when the header is not the one
 * above, when a record has other than 13 fields, when a required field is
 * empty or is not a number (integers for layers and k), or when memory runs
 * out. A file holding only the header is not a failure: it gives 0 rows.
 * Messages number records from 0 at the header (blank lines are skipped). */
int ref_table_load(const char *path, ref_table *out, char *err, size_t err_size);

/* ref_table_load of name inside ref_testdata_dir(); fails as it does, and
 * with -1 when the joined path would be longer than 4095 bytes. */
int ref_table_load_data(const char *name, ref_table *out, char *err, size_t err_size);

/* Frees every row and the array, and empties the table; NULL is allowed. */
void ref_table_free(ref_table *table);

#endif
