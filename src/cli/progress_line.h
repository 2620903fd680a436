/* The one line on standard error that shows a long run's progress: what is
 * running, the percentage done, the time elapsed and the time left. It is
 * redrawn in place (a carriage return) at most PROGRESS_REDRAW_SECONDS
 * apart and erased when the run ends; nothing of it reaches standard output.
 *
 * Shown on a terminal once a run has gone on PROGRESS_DELAY_SECONDS; on a
 * pipe or a file only with --progress, and then from the first report; never
 * with --quiet. */
#ifndef VARPROF_CLI_PROGRESS_LINE_H
#define VARPROF_CLI_PROGRESS_LINE_H

#include <stdio.h>
#include <time.h>

#include "options.h"
#include "varprof/progress.h"

#define PROGRESS_DELAY_SECONDS 1.0
#define PROGRESS_REDRAW_SECONDS 0.1
#define PROGRESS_MAX_COLUMNS 79 /* one line of an 80-column terminal */

typedef struct {
    FILE *stream;
    int enabled; /* a terminal without --quiet, or --progress */
    int eager;   /* --progress: from the first report, without the delay */
    char label[64];
    struct timespec started, drawn_at;
    size_t drawn; /* the width of the line on screen; 0: none */
    vp_progress progress;
} progress_line;

/* Decides from --progress, --quiet and whether standard error is a terminal. */
void progress_line_init(progress_line *line, const cli_args *args);

/* Starts a run called label ("Monte Carlo, post-ln"); returns what to hand
 * the engine: NULL when nothing is to be shown. */
const vp_progress *progress_line_begin(progress_line *line, const char *label);

/* Erases the line, if one is drawn; the run has ended. */
void progress_line_end(progress_line *line);

#endif
