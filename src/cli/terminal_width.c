/* The terminal's width, asked of the terminal, then of $COLUMNS. */
#include "terminal_width.h"

#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

size_t terminal_columns(void)
{
    struct winsize size;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20)
        return size.ws_col;
    const char *columns = getenv("COLUMNS");
    if (columns && *columns) {
        char *end;
        long n = strtol(columns, &end, 10);
        if (*end == '\0' && n >= 20 && n <= 1000)
            return (size_t)n;
    }
    return DEFAULT_COLUMNS;
}
