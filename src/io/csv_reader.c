/* The CSV reader, over libcsv. */
#include "io/csv_reader.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    csv_row_fn on_row;
    void *ctx;
    size_t line;
    size_t n_cells, cells_capacity;
    size_t *starts; /* each cell's offset in text */
    char **cells;   /* pointers made at the row's end, text no longer moving */
    char *text;     /* the row's cells, each NUL-terminated */
    size_t used, text_capacity;
    vp_status status; /* the first failure; later callbacks do nothing */
    vp_error err;
} reader;

/* Makes room for one more cell of length bytes; 0 when memory runs out. */
static int grow(reader *r, size_t length)
{
    if (r->n_cells == r->cells_capacity) {
        size_t capacity = r->cells_capacity ? 2 * r->cells_capacity : 64;
        size_t *starts = realloc(r->starts, capacity * sizeof *starts);
        if (starts)
            r->starts = starts;
        char **cells = starts ? realloc(r->cells, capacity * sizeof *cells) : NULL;
        if (!cells)
            return 0;
        r->cells = cells;
        r->cells_capacity = capacity;
    }
    if (r->used + length + 1 > r->text_capacity) {
        size_t capacity = r->text_capacity ? 2 * r->text_capacity : 4096;
        while (capacity < r->used + length + 1)
            capacity *= 2;
        char *text = realloc(r->text, capacity);
        if (!text)
            return 0;
        r->text = text;
        r->text_capacity = capacity;
    }
    return 1;
}

static void on_cell(void *text, size_t length, void *data)
{
    reader *r = data;
    if (r->status != VP_OK)
        return;
    if (r->n_cells == VP_CSV_MAX_CELLS) {
        r->status = vp_fail(&r->err, VP_EFORMAT, "line %zu has more than %d columns", r->line,
                            VP_CSV_MAX_CELLS);
        return;
    }
    if (length > VP_CSV_MAX_CELL_BYTES) {
        r->status = vp_fail(&r->err, VP_EFORMAT, "line %zu, column %zu is longer than %d bytes",
                            r->line, r->n_cells + 1, VP_CSV_MAX_CELL_BYTES);
        return;
    }
    if (r->used + length + 1 > VP_CSV_MAX_ROW_BYTES) {
        r->status = vp_fail(&r->err, VP_EFORMAT, "line %zu is longer than %d bytes", r->line,
                            VP_CSV_MAX_ROW_BYTES);
        return;
    }
    if (length && memchr(text, '\0', length)) {
        r->status = vp_fail(&r->err, VP_EFORMAT, "line %zu, column %zu holds a NUL byte", r->line,
                            r->n_cells + 1);
        return;
    }
    if (!grow(r, length)) {
        r->status = vp_fail(&r->err, VP_ENOMEM, "line %zu: no memory for its cells", r->line);
        return;
    }
    char *cell = r->text + r->used;
    if (length)
        memcpy(cell, text, length);
    cell[length] = '\0';
    r->starts[r->n_cells++] = r->used;
    r->used += length + 1;
}

static void on_row_end(int terminator, void *data)
{
    (void)terminator;
    reader *r = data;
    for (size_t c = 0; c < r->n_cells; c++)
        r->cells[c] = r->text + r->starts[c];
    if (r->status == VP_OK)
        r->status = r->on_row(r->ctx, r->line, r->n_cells, r->cells, &r->err);
    r->n_cells = 0;
    r->used = 0;
}

/* Feeds one chunk, cut after each newline so that r->line is the line the
 * parser is on when a row ends. */
static void feed(struct csv_parser *parser, reader *r, const char *chunk, size_t length)
{
    while (length && r->status == VP_OK) {
        const char *newline = memchr(chunk, '\n', length);
        size_t piece = newline ? (size_t)(newline - chunk) + 1 : length;
        if (csv_parse(parser, chunk, piece, on_cell, on_row_end, r) != piece) {
            r->status = vp_fail(&r->err, VP_EFORMAT, "line %zu: %s", r->line,
                                csv_strerror(csv_error(parser)));
            return;
        }
        if (newline)
            r->line++;
        chunk += piece;
        length -= piece;
    }
}

static vp_status read_stream(FILE *in, reader *r)
{
    struct csv_parser parser;
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return vp_fail(&r->err, VP_ENOMEM, "cannot start the CSV parser");
    char chunk[1 << 16];
    /* Excel's "CSV UTF-8" starts with a byte-order mark, which would
     * otherwise be the first cell's first bytes; fread reads all three
     * unless the file is shorter */
    static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
    size_t got = fread(chunk, 1, sizeof bom, in);
    long total = (long)got;
    if (!(got == sizeof bom && memcmp(chunk, bom, sizeof bom) == 0))
        feed(&parser, r, chunk, got);
    while (r->status == VP_OK && (got = fread(chunk, 1, sizeof chunk, in)) > 0) {
        total += (long)got;
        if (total > VP_CSV_MAX_FILE_BYTES) {
            r->status =
                vp_fail(&r->err, VP_EFORMAT, "is larger than %ld bytes", VP_CSV_MAX_FILE_BYTES);
            break;
        }
        feed(&parser, r, chunk, got);
    }
    if (r->status == VP_OK && ferror(in))
        r->status = vp_fail(&r->err, VP_EIO, "cannot be read: %s", strerror(errno));
    if (r->status == VP_OK && csv_fini(&parser, on_cell, on_row_end, r) != 0)
        r->status =
            vp_fail(&r->err, VP_EFORMAT, "line %zu: a quoted field is never closed", r->line);
    csv_free(&parser);
    return r->status;
}

vp_status csv_read_file(const char *path, csv_row_fn on_row, void *ctx, vp_error *err)
{
    static reader r_init; /* zero */
    reader *r = malloc(sizeof *r);
    if (!r)
        return vp_fail(err, VP_ENOMEM, "%s: no memory to read it", path);
    *r = r_init;
    r->on_row = on_row;
    r->ctx = ctx;
    r->line = 1;

    int is_stdin = strcmp(path, "-") == 0;
    FILE *in = is_stdin ? stdin : fopen(path, "rb");
    vp_status status;
    if (!in) {
        status = vp_fail(&r->err, VP_EIO, "cannot be opened: %s", strerror(errno));
    } else {
        struct stat st;
        if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode))
            status = vp_fail(&r->err, VP_EIO, "is a directory, not a file");
        else
            status = read_stream(in, r);
        if (!is_stdin)
            (void)fclose(in); /* read to the end or abandoned: nothing to lose */
    }
    if (status != VP_OK)
        vp_fail(err, status, "%s: %s", path, r->err.message);
    free(r->starts);
    free(r->cells);
    free(r->text);
    free(r);
    return status;
}

static int is_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* A: whole digits, optionally signed; B: digits, optionally an exponent. */
static int reads_as_decimal_comma(const char *a, const char *b)
{
    if (*a == '-' || *a == '+')
        a++;
    if (!is_digits(a))
        return 0;
    size_t digits = strspn(b, "0123456789");
    if (digits == 0)
        return 0;
    b += digits;
    if (*b == 'e' || *b == 'E') {
        b++;
        if (*b == '-' || *b == '+')
            b++;
        return is_digits(b);
    }
    return *b == '\0';
}

static void write_hint(const char *a, const char *b, char *hint, size_t size)
{
    snprintf(hint, size,
             "; '%s,%s' looks like the number %s.%s written with a decimal comma: "
             "write %s.%s",
             a, b, a, b, a, b);
}

void csv_decimal_comma_hint(size_t n_cells, char *const *cells, size_t number_column, char *hint,
                            size_t size)
{
    hint[0] = '\0';
    if (number_column + 1 < n_cells &&
        reads_as_decimal_comma(cells[number_column], cells[number_column + 1])) {
        write_hint(cells[number_column], cells[number_column + 1], hint, size);
        return;
    }
    for (size_t c = 0; c + 1 < n_cells; c++)
        if (reads_as_decimal_comma(cells[c], cells[c + 1])) {
            write_hint(cells[c], cells[c + 1], hint, size);
            return;
        }
}

vp_status csv_check_row_width(size_t line, size_t n_cells, char *const *cells, size_t width,
                              size_t number_column, const char *expected, vp_error *err)
{
    if (n_cells == width)
        return VP_OK;
    char hint[2 * VP_CSV_MAX_CELL_BYTES + 128] = "";
    if (n_cells > width) /* a decimal comma makes one cell two */
        csv_decimal_comma_hint(n_cells, cells, number_column, hint, sizeof hint);
    return vp_fail(err, VP_EFORMAT, "line %zu has %zu cell%s; %s%s", line, n_cells,
                   n_cells == 1 ? "" : "s", expected, hint);
}

int csv_header_near_miss(const char *cell, const char *name)
{
    while (*cell == ' ' || *cell == '\t')
        cell++;
    size_t length = strlen(cell);
    while (length && (cell[length - 1] == ' ' || cell[length - 1] == '\t'))
        length--;
    if (length != strlen(name))
        return 0;
    for (size_t i = 0; i < length; i++)
        if (tolower((unsigned char)cell[i]) != tolower((unsigned char)name[i]))
            return 0;
    return strcmp(cell, name) != 0;
}
