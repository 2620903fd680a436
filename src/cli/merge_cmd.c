/* varprof merge: the parts of a sharded sweep (--shard K/N) joined into the
 * whole sweep's CSV or JSON. The parts are contiguous runs of the sweep's
 * combinations (varprof/shard.h), so the whole is the first part's header,
 * then each part's rows in the order K = 1..N: byte for byte what the
 * unsharded run writes. Each part is checked to be a whole varprof output of
 * the same kind before anything is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "output_file.h"

/* A part is at most this large: a sweep's output, not a data set. */
#define MERGE_MAX_BYTES ((size_t)1 << 32)
/* How a varprof JSON output ends: its one array, then the object. */
#define JSON_END "\n]}\n"

typedef struct {
    const char *path;
    const char *text; /* in the one buffer all the parts are read into */
    size_t size;
    size_t body, body_end; /* the rows: text[body, body_end) */
} merge_part;

/* The part's size, a regular file's of at most MERGE_MAX_BYTES; EXIT_RUNTIME
   after saying why otherwise. */
static int size_part(const char *path, merge_part *part)
{
    struct stat st;
    *part = (merge_part){.path = path};
    if (stat(path, &st) != 0) {
        cli_runtime_error("merge: cannot open %s: %s", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > MERGE_MAX_BYTES) {
        cli_runtime_error("merge: %s is not a regular file of at most 4 GiB", path);
        return EXIT_RUNTIME;
    }
    part->size = (size_t)st.st_size;
    return EXIT_OK;
}

/* The part's whole text into its room, size + 1 bytes, NUL-ended. */
static int read_part(merge_part *part, char *room)
{
    FILE *f = fopen(part->path, "rb");
    int ok = f && fread(room, 1, part->size, f) == part->size && fgetc(f) == EOF;
    if (f)
        ok = fclose(f) == 0 && ok;
    if (!ok) {
        cli_runtime_error("merge: cannot read %s whole (did it change while it was read?)",
                          part->path);
        return EXIT_RUNTIME;
    }
    room[part->size] = '\0';
    part->text = room;
    return EXIT_OK;
}

/* The CSV's header is its first line; the rows follow it. */
static int split_csv(merge_part *p, const merge_part *first)
{
    const char *newline = memchr(p->text, '\n', p->size);
    if (!newline || p->size == 0 || p->text[p->size - 1] != '\n' || memchr(p->text, '\0', p->size))
        return cli_runtime_error("merge: %s is not a whole CSV output: no header line, or its "
                                 "last line is cut short",
                                 p->path);
    p->body = (size_t)(newline - p->text) + 1;
    p->body_end = p->size;
    if (first && (first->body != p->body || memcmp(first->text, p->text, p->body) != 0))
        return cli_runtime_error("merge: %s has another header than %s: the parts of one sweep "
                                 "share their columns",
                                 p->path, first->path);
    return EXIT_OK;
}

/* A varprof JSON output is one object holding one array, an element a line
   group: its first line opens the array, JSON_END closes it. */
static int split_json(merge_part *p, const merge_part *first)
{
    cJSON *doc = cJSON_ParseWithLength(p->text, p->size);
    const int one_array = doc && cJSON_IsObject(doc) &&
                          cJSON_IsArray(cJSON_GetArrayItem(doc, cJSON_GetArraySize(doc) - 1));
    cJSON_Delete(doc);
    const char *newline = memchr(p->text, '\n', p->size);
    const size_t end_len = strlen(JSON_END);
    if (!one_array || !newline || newline == p->text || newline[-1] != '[' || p->size < end_len ||
        memcmp(p->text + p->size - end_len, JSON_END, end_len) != 0)
        return cli_runtime_error("merge: %s is not a whole varprof JSON output (an object whose "
                                 "last member is the array of profiles or runs)",
                                 p->path);
    p->body = (size_t)(newline - p->text) + 1;
    p->body_end = p->size - end_len;
    if (p->body_end < p->body)
        p->body_end = p->body;
    if (first && (first->body != p->body || memcmp(first->text, p->text, p->body) != 0))
        return cli_runtime_error("merge: %s opens otherwise than %s: the parts of one sweep come "
                                 "from one version of varprof and one command",
                                 p->path, first->path);
    return EXIT_OK;
}

static int write_merged(FILE *out, const merge_part *parts, size_t n, int json)
{
    int ok = fwrite(parts[0].text, 1, parts[0].body, out) == parts[0].body;
    for (size_t i = 0, written = 0; i < n && ok; i++) {
        const size_t len = parts[i].body_end - parts[i].body;
        if (len == 0)
            continue;
        if (json && written++ > 0)
            ok = fputs(",\n", out) >= 0;
        ok = ok && fwrite(parts[i].text + parts[i].body, 1, len, out) == len;
    }
    if (ok && json)
        ok = fputs(JSON_END, out) >= 0;
    return ok ? EXIT_OK : cli_runtime_error("merge: cannot write the output: %s", strerror(errno));
}

/* Every part read into one buffer, *all (the caller frees it), and split
   into its header and rows, each checked against the first. */
static int read_parts(const cli_args *args, merge_part *parts, char **all, int *json)
{
    size_t total = 0;
    for (size_t i = 0; i < args->n_operands; i++) {
        if (size_part(args->operands[i], &parts[i]) != EXIT_OK)
            return EXIT_RUNTIME;
        total += parts[i].size + 1;
        if (total > MERGE_MAX_BYTES) {
            cli_runtime_error("merge: the parts hold more than 4 GiB together");
            return EXIT_RUNTIME;
        }
    }
    if (!(*all = malloc(total))) {
        cli_runtime_error("merge: no memory for the parts' %zu bytes", total);
        return EXIT_RUNTIME;
    }
    int rc = EXIT_OK;
    for (size_t i = 0, at = 0; i < args->n_operands && rc == EXIT_OK; i++) {
        if (read_part(&parts[i], *all + at) != EXIT_OK)
            return EXIT_RUNTIME;
        at += parts[i].size + 1;
        const int is_json = parts[i].size > 0 && parts[i].text[0] == '{';
        if (i == 0)
            *json = is_json;
        else if (is_json != *json)
            return cli_runtime_error("merge: %s is %s, but %s is %s: merge parts of one kind",
                                     parts[i].path, is_json ? "JSON" : "CSV", parts[0].path,
                                     *json ? "JSON" : "CSV");
        rc = *json ? split_json(&parts[i], i ? &parts[0] : NULL)
                   : split_csv(&parts[i], i ? &parts[0] : NULL);
    }
    return rc;
}

int run_merge(const cli_args *args)
{
    if (args->n_operands == 0)
        return cli_usage_error("merge: give the parts' files, K = 1 to N in order: varprof merge "
                               "part1.csv part2.csv ...");
    merge_part *parts = calloc(args->n_operands, sizeof *parts);
    if (!parts)
        return cli_runtime_error("merge: no memory for %zu files", args->n_operands);
    int json = 0;
    char *all = NULL;
    int rc = read_parts(args, parts, &all, &json);
    output_file out = {0};
    if (rc == EXIT_OK &&
        (rc = output_open(&out, args->value[OPT_OUTPUT], args->given[OPT_FORCE])) == EXIT_OK) {
        rc = write_merged(out.stream, parts, args->n_operands, json);
        rc = rc == EXIT_OK ? output_commit(&out) : (output_abort(&out), rc);
    }
    free(all);
    free(parts);
    return rc;
}
