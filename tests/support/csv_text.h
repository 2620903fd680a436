/* Reading a program's CSV output in memory, for the tests: no quoting, the
 * cells numbers and names, as varprof writes them. */
#ifndef VARPROF_TESTS_CSV_TEXT_H
#define VARPROF_TESTS_CSV_TEXT_H

/* The index of the column called name in the header line at header (up to
 * its newline), or -1. */
int csv_column_of(const char *header, const char *name);

/* The cell in column col of the line at line, as a number; NAN when the
 * cell is empty or the line has no such column. */
double csv_number_at(const char *line, int col);

#endif
