/* How wide the terminal is, for text drawn to fit it. */
#ifndef VARPROF_CLI_TERMINAL_WIDTH_H
#define VARPROF_CLI_TERMINAL_WIDTH_H

#include <stddef.h>

#define DEFAULT_COLUMNS 80

/* The columns of the terminal on standard output (TIOCGWINSZ); else
 * $COLUMNS, when it is a whole number from 20 to 1000; else 80. */
size_t terminal_columns(void);

#endif
