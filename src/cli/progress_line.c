/* Drawing and erasing the progress line on standard error. */
#include "progress_line.h"

#include <string.h>
#include <unistd.h>

void progress_line_init(progress_line *line, const cli_args *args)
{
    memset(line, 0, sizeof *line);
    line->stream = stderr;
    line->eager = args->given[OPT_PROGRESS];
    line->enabled = !args->given[OPT_QUIET] && (line->eager || isatty(STDERR_FILENO));
}

static double seconds_between(const struct timespec *from, const struct timespec *to)
{
    return (double)(to->tv_sec - from->tv_sec) + 1e-9 * (double)(to->tv_nsec - from->tv_nsec);
}

/* "0:07", "12:30", "2:05:00" */
static void format_duration(char *buf, size_t size, double seconds)
{
    unsigned long s = (unsigned long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, size, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, size, "%lu:%02lu", s / 60, s % 60);
}

static void draw(progress_line *line, unsigned long long done, unsigned long long total,
                 double elapsed)
{
    char spent[24], left[24] = "?";
    format_duration(spent, sizeof spent, elapsed);
    if (done > 0)
        format_duration(left, sizeof left, elapsed * (double)(total - done) / (double)done);
    char text[PROGRESS_MAX_COLUMNS + 1];
    int n = snprintf(text, sizeof text, "%s: %3d %%, %s elapsed, %s left", line->label,
                     (int)(100.0 * (double)done / (double)total), spent, left);
    size_t width = n < 0 ? 0 : strlen(text);
    /* spaces over what is left of a longer line before */
    fprintf(line->stream, "\r%s%*s", text, (int)(line->drawn > width ? line->drawn - width : 0),
            "");
    (void)fflush(line->stream); /* a failed draw is no reason to stop the run */
    if (width > line->drawn)
        line->drawn = width;
}

/* The engine's callback: serialised by the library, so no lock here. */
static void report(void *context, unsigned long long done, unsigned long long total)
{
    progress_line *line = context;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double elapsed = seconds_between(&line->started, &now);
    if (!line->eager && elapsed < PROGRESS_DELAY_SECONDS)
        return;
    /* the first draw at once; then a redraw no more often than the rate */
    if (line->drawn && seconds_between(&line->drawn_at, &now) < PROGRESS_REDRAW_SECONDS &&
        done < total)
        return;
    line->drawn_at = now;
    draw(line, done, total, elapsed);
}

const vp_progress *progress_line_begin(progress_line *line, const char *label)
{
    if (!line->enabled)
        return NULL;
    snprintf(line->label, sizeof line->label, "%s", label);
    clock_gettime(CLOCK_MONOTONIC, &line->started);
    line->progress = (vp_progress){report, line};
    return &line->progress;
}

void progress_line_end(progress_line *line)
{
    if (!line->drawn)
        return;
    fprintf(line->stream, "\r%*s\r", (int)line->drawn, "");
    (void)fflush(line->stream); /* a failed draw is no reason to stop the run */
    line->drawn = 0;
}
