/* The backward half of `varprof table` (with --grad), varprof-maths(7),
 * GRADIENTS. Each returns EXIT_OK, or EXIT_RUNTIME after printing why. */
#ifndef VARPROF_CLI_TABLE_GRAD_H
#define VARPROF_CLI_TABLE_GRAD_H

#include <stddef.h>

#include "varprof/config.h"

/* The table's text, shared by both halves (table_cmd.c): a number to six
 * significant digits, or 17 with --wide; `figures` significant digits, or
 * 17 with --wide; a line at `indent` wrapped to 80 columns unless --wide,
 * broken before an " = " where one fits; a formula with its value on the
 * line under it. */
const char *table_num(double x);
int table_digits(int figures);
__attribute__((format(printf, 2, 3))) void table_say(size_t indent, const char *format, ...);
void table_row(const char *formula, const char *value);

/* cfg's placement's backward formulas (G_K, G_{k-1}, weight_grad_k^2) beside
 * their values, from the closed form at cfg. */
int print_grad_rows(const vp_config *cfg);

/* The backward recursion of cfg's placement walked down with its numbers:
 * the top three steps and the last. */
int explain_grad(const vp_config *cfg);

/* Issue 13's figures at cfg's layers and gain, worked by hand: pre-norm's
 * telescoping to sqrt(v_K), its weight gradients 1/sqrt(v_K) and
 * 1/sqrt(1 + g^2), Post-LN's flat 1/sqrt(1 + g^2), and their ratio. */
int explain_grad_figures(const vp_config *cfg);

#endif
