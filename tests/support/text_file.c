#include "text_file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buffer[1 << 16];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0)
        assert_int_equal(fwrite(buffer, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

char *replace_first(char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    const size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)head, text, to, at + strlen(from));
    free(text);
    return out;
}

void checkpoint_twin(const char *dir, const char *config, const char *weights)
{
    char path[1200], from[1200];
    (void)mkdir(dir, 0700); /* there already when a test makes a second twin in it */
    snprintf(path, sizeof path, "%s/config.json", dir);
    write_text(path, config);
    if (!weights)
        return;
    snprintf(from, sizeof from, "%s/model.safetensors", weights);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    copy_file(from, path);
}
