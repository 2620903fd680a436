/* What the program writes for a command line, held to a part it must
 * contain and one it must not: the tests of what a heading or a JSON
 * object says. */
#ifndef VARPROF_TESTS_OUTPUT_CHECK_H
#define VARPROF_TESTS_OUTPUT_CHECK_H

/* Runs the program on args (NULL-terminated); fails the test unless it
 * exits 0 with says in its standard output and, when lacks is not NULL,
 * without lacks, printing the output's start. */
void expect_output(const char *const *args, const char *says, const char *lacks);

/* Removes, in place, each line of text that starts with prefix: a heading's
   line that two runs may differ by while their figures may not. */
void drop_lines(char *text, const char *prefix);

#endif
