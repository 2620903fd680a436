#include "reference.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    F_CASE,
    F_PLACEMENT,
    F_LAYERS,
    F_GAIN,
    F_GAMMA,
    F_ALPHA,
    F_BETA,
    F_EMBEDDING_VAR,
    F_GAINS,
    F_K,
    F_STREAM_VAR,
    F_UPDATE_RATIO,
    F_EMBEDDING_SHARE,
    F_COUNT
};

static const char *const header_names[F_COUNT] = {
    "case",          "placement", "layers", "gain",       "gamma",        "alpha",           "beta",
    "embedding_var", "gains",     "k",      "stream_var", "update_ratio", "embedding_share",
};

/* What the libcsv callbacks share: the table so far and the record being read.
 * libcsv hands over fields one at a time, so a record is gathered here and
 * turned into a row only when it ends. */
typedef struct {
    ref_table *table;
    size_t capacity;
    char *fields[F_COUNT]; /* malloc'd copies of this record's first fields */
    size_t n_fields;       /* fields seen in this record, even past F_COUNT */
    size_t record;         /* records finished; record 0 is the header */
    int failed;            /* after the first error the rest is skipped */
    char *err;
    size_t err_size;
} reader;

static void set_error(char *err, size_t err_size, const char *format, va_list args)
{
    if (err && err_size > 0)
        vsnprintf(err, err_size, format, args);
}

/* Keeps the first error only: later ones are consequences of it. */
static void fail(reader *r, const char *format, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    va_list args;
    va_start(args, format);
    set_error(r->err, r->err_size, format, args);
    va_end(args);
}

static int fail_plain(char *err, size_t err_size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    set_error(err, err_size, format, args);
    va_end(args);
    return -1;
}

const char *ref_testdata_dir(void)
{
    const char *dir = getenv("VARPROF_TESTDATA");
    return dir && *dir ? dir : "tests/data";
}

/* A double that uses the whole field; the reference holds only finite ones. */
static int parse_double(const char *s, double *out)
{
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || !isfinite(x))
        return -1;
    *out = x;
    return 0;
}

/* A non-negative decimal integer that uses the whole field. strtoull would
 * accept a sign and wrap a negative, so a digit is required first. */
static int parse_size(const char *s, size_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || x > SIZE_MAX)
        return -1;
    *out = (size_t)x;
    return 0;
}

/* "g1;g2;...;gK" into a new array; an empty field gives NULL and 0. */
static int parse_gains(const char *s, double **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!*s)
        return 0;
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == ';';
    double *gains = malloc(n * sizeof *gains);
    char *copy = malloc(strlen(s) + 1);
    if (!gains || !copy) {
        free(gains);
        free(copy);
        return -2;
    }
    strcpy(copy, s);
    char *item = copy;
    for (size_t i = 0; i < n; i++) {
        char *sep = strchr(item, ';');
        if (sep)
            *sep = '\0';
        if (parse_double(item, &gains[i]) != 0) {
            free(gains);
            free(copy);
            return -1;
        }
        item = sep ? sep + 1 : item + strlen(item);
    }
    free(copy);
    *out = gains;
    *n_out = n;
    return 0;
}

static void row_free(ref_row *row)
{
    free(row->case_name);
    free(row->placement);
    free(row->gains);
    *row = (ref_row){0};
}

/* Takes the field's string for the row, so that it is not freed with the record. */
static char *take_field(reader *r, int field)
{
    char *s = r->fields[field];
    r->fields[field] = NULL;
    return s;
}

static int parse_required_doubles(reader *r, ref_row *row)
{
    static const struct {
        int field;
        size_t offset;
    } required[] = {
        {F_GAMMA, offsetof(ref_row, gamma)},
        {F_ALPHA, offsetof(ref_row, alpha)},
        {F_BETA, offsetof(ref_row, beta)},
        {F_EMBEDDING_VAR, offsetof(ref_row, embedding_var)},
        {F_STREAM_VAR, offsetof(ref_row, stream_var)},
        {F_EMBEDDING_SHARE, offsetof(ref_row, embedding_share)},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        double *dest = (double *)((char *)row + required[i].offset);
        if (parse_double(r->fields[required[i].field], dest) != 0) {
            fail(r, "record %zu: %s is \"%s\", not a finite number", r->record,
                 header_names[required[i].field], r->fields[required[i].field]);
            return -1;
        }
    }
    return 0;
}

/* An optional number: empty gives *has = 0. */
static int parse_optional(reader *r, int field, int *has, double *out)
{
    *has = 0;
    *out = 0.0;
    if (!*r->fields[field])
        return 0;
    if (parse_double(r->fields[field], out) != 0) {
        fail(r, "record %zu: %s is \"%s\", not a finite number", r->record, header_names[field],
             r->fields[field]);
        return -1;
    }
    *has = 1;
    return 0;
}

static int parse_row(reader *r, ref_row *row)
{
    *row = (ref_row){0};
    if (!*r->fields[F_CASE] || !*r->fields[F_PLACEMENT]) {
        fail(r, "record %zu: case and placement must not be empty", r->record);
        return -1;
    }
    if (parse_size(r->fields[F_LAYERS], &row->layers) != 0 ||
        parse_size(r->fields[F_K], &row->k) != 0) {
        fail(r, "record %zu: layers \"%s\" and k \"%s\" must be integers >= 0", r->record,
             r->fields[F_LAYERS], r->fields[F_K]);
        return -1;
    }
    if (parse_required_doubles(r, row) != 0 ||
        parse_optional(r, F_GAIN, &row->has_gain, &row->gain) != 0 ||
        parse_optional(r, F_UPDATE_RATIO, &row->has_update_ratio, &row->update_ratio) != 0)
        return -1;
    int status = parse_gains(r->fields[F_GAINS], &row->gains, &row->n_gains);
    if (status != 0) {
        fail(r,
             status == -2 ? "record %zu: out of memory for the gains"
                          : "record %zu: gains is not a ';'-separated list of numbers",
             r->record);
        return -1;
    }
    row->case_name = take_field(r, F_CASE);
    row->placement = take_field(r, F_PLACEMENT);
    return 0;
}

static int append_row(reader *r, const ref_row *row)
{
    ref_table *t = r->table;
    if (t->n_rows == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 1024;
        ref_row *rows =
            capacity <= SIZE_MAX / sizeof *rows ? realloc(t->rows, capacity * sizeof *rows) : NULL;
        if (!rows) {
            fail(r, "out of memory after %zu rows", t->n_rows);
            return -1;
        }
        t->rows = rows;
        r->capacity = capacity;
    }
    t->rows[t->n_rows++] = *row;
    return 0;
}

static void check_header(reader *r)
{
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(r->fields[i], header_names[i]) != 0) {
            fail(r, "header field %d is \"%s\", expected \"%s\"", i + 1, r->fields[i],
                 header_names[i]);
            return;
        }
}

static void clear_record(reader *r)
{
    for (int i = 0; i < F_COUNT; i++) {
        free(r->fields[i]);
        r->fields[i] = NULL;
    }
    r->n_fields = 0;
}

/* libcsv: one field of the current record, not NUL-terminated. */
static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    if (r->failed)
        return;
    if (r->n_fields < F_COUNT) {
        char *copy = malloc(len + 1);
        if (!copy) {
            fail(r, "out of memory reading record %zu", r->record);
            return;
        }
        if (len)
            memcpy(copy, s, len);
        copy[len] = '\0';
        r->fields[r->n_fields] = copy;
    }
    r->n_fields++;
}

/* libcsv: the current record ended; the header is checked, a data row kept. */
static void on_record(int terminator, void *data)
{
    (void)terminator;
    reader *r = data;
    if (!r->failed && r->n_fields != F_COUNT)
        fail(r, "record %zu has %zu fields, expected %d", r->record, r->n_fields, F_COUNT);
    if (!r->failed) {
        if (r->record == 0) {
            check_header(r);
        } else {
            ref_row row;
            if (parse_row(r, &row) != 0 || append_row(r, &row) != 0)
                row_free(&row);
        }
    }
    clear_record(r);
    r->record++;
}

/* Feeds the file to libcsv in chunks; fails on a read or parse error. */
static void parse_stream(reader *r, FILE *file, struct csv_parser *parser)
{
    char buffer[65536];
    size_t n;
    while (!r->failed && (n = fread(buffer, 1, sizeof buffer, file)) > 0)
        if (csv_parse(parser, buffer, n, on_field, on_record, r) != n)
            fail(r, "libcsv: %s", csv_strerror(csv_error(parser)));
    if (!r->failed && ferror(file))
        fail(r, "read error: %s", strerror(errno));
    if (!r->failed && csv_fini(parser, on_field, on_record, r) != 0)
        fail(r, "libcsv: %s", csv_strerror(csv_error(parser)));
    if (!r->failed && r->record == 0)
        fail(r, "the file is empty: no header");
}

int ref_table_load(const char *path, ref_table *out, char *err, size_t err_size)
{
    *out = (ref_table){0};
    FILE *file = fopen(path, "rb");
    if (!file)
        return fail_plain(err, err_size, "cannot open %s: %s", path, strerror(errno));
    struct csv_parser parser;
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
        fclose(file);
        return fail_plain(err, err_size, "cannot start libcsv for %s", path);
    }
    reader r = {.table = out, .err = err, .err_size = err_size};
    parse_stream(&r, file, &parser);
    csv_free(&parser);
    fclose(file);
    clear_record(&r);
    if (r.failed) {
        ref_table_free(out);
        return -1;
    }
    return 0;
}

int ref_table_load_data(const char *name, ref_table *out, char *err, size_t err_size)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", ref_testdata_dir(), name);
    if (n < 0 || (size_t)n >= sizeof path) {
        *out = (ref_table){0};
        return fail_plain(err, err_size, "the path of %s in %s is too long", name,
                          ref_testdata_dir());
    }
    return ref_table_load(path, out, err, err_size);
}

void ref_table_free(ref_table *table)
{
    if (!table)
        return;
    for (size_t i = 0; i < table->n_rows; i++)
        row_free(&table->rows[i]);
    free(table->rows);
    *table = (ref_table){0};
}
