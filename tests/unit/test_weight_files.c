/* Weight files and token files as the library reads them: hostile
 * safetensors files and bad token ids files are refused with the reason (a
 * token's naming its row and column), while safetensors metadata, F16
 * weights and Excel's byte-order mark read as they should. Weights matched
 * to PyTorch through the program are tests/program/test_pytorch_match.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* A safetensors file with this header and data bytes. */
static void write_safetensors(const char *path, const char *header, size_t data_bytes)
{
    const size_t h = strlen(header);
    unsigned char *bytes = calloc(1, 8 + h + data_bytes + 1);
    assert_non_null(bytes);
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(bytes + 8, header, h);
    write_bytes(path, bytes, 8 + h + data_bytes);
    free(bytes);
}

static void hostile_safetensors_are_refused(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/x.safetensors", dir);
    const struct {
        const char *header; /* NULL: raw bytes below */
        size_t data;
        const char *why;
    } cases[] = {
        {"not json", 0, "not a JSON object"},
        {"[1, 2]", 0, "not a JSON object"},
        {"{\"a\": {\"dtype\": \"F64\", \"shape\": [1], \"data_offsets\": [0, 8]}}", 8, "'F64'"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 16]}}", 8, "outside"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 8]}}", 8,
         "8 bytes for 4 elements"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
         "\"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}",
         12, "overlap"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296], "
         "\"data_offsets\": [0, 8]}}",
         8, "overflows"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 4,
         "whole number"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1.5], \"data_offsets\": [0, 4]}}", 4,
         "whole number"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 4]}}", 8, "outside"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
         "\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
         8, "named twice"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 4]}}",
         4, "rank 9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_safetensors(path, cases[i].header, cases[i].data);
        vp_safetensors f;
        vp_error err = {0};
        assert_int_not_equal(vp_safetensors_read(path, &f, &err), VP_OK);
        if (!strstr(err.message, cases[i].why)) {
            print_error("case %zu: want \"%s\" in \"%s\"\n", i, cases[i].why, err.message);
            fail();
        }
        assert_int_equal(f.count, 0);
        assert_null(f.data);
    }
    /* raw files: shorter than a header length; a length beyond the file; an absurd one */
    const unsigned char short_file[5] = {1, 2, 3, 4, 5};
    const unsigned char beyond[12] = {200, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
    const unsigned char absurd[12] = {255, 255, 255, 255, 255, 255, 255, 127, '{', '}', ' ', ' '};
    const struct {
        const unsigned char *bytes;
        size_t n;
        const char *why;
    } raw[] = {{short_file, 5, "shorter"}, {beyond, 12, "beyond"}, {absurd, 12, "beyond"}};
    for (size_t i = 0; i < 3; i++) {
        write_bytes(path, raw[i].bytes, raw[i].n);
        vp_safetensors f;
        vp_error err = {0};
        assert_int_equal(vp_safetensors_read(path, &f, &err), VP_EFORMAT);
        assert_non_null(strstr(err.message, raw[i].why));
    }
    /* metadata is allowed, and F16 converts exactly */
    write_safetensors(path,
                      "{\"__metadata__\": {\"format\": \"pt\"}, \"h\": {\"dtype\": \"F16\", "
                      "\"shape\": [2], \"data_offsets\": [0, 4]}}",
                      4);
    vp_safetensors f;
    assert_int_equal(vp_safetensors_read(path, &f, NULL), VP_OK);
    assert_int_equal(f.count, 1);
    const unsigned char halves[4] = {0x00, 0x3c, 0x00, 0xc0}; /* 1.0, -2.0 */
    memcpy(f.data, halves, 4);
    float v[2];
    vp_safetensors_to_float(&f, vp_safetensors_find(&f, "h"), v);
    assert_true(v[0] == 1.0f && v[1] == -2.0f);
    vp_safetensors_free(&f);
    test_remove_tree(dir);
}

static void bad_token_files_name_row_and_column(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/tokens.csv", dir);
    const struct {
        const char *text, *why;
    } cases[] = {
        {"1,2,3\n4,x,6\n", "row 2, column 2: 'x'"},
        {"1,2,3\n4,5,24\n", "row 2, column 3: '24'"},
        {"1,2,3\n4,5\n", "row 2 (line 2) has 2 ids; row 1 has 3"},
        {"1,-2,3\n", "row 1, column 2"},
        {"", "no token ids"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i].text, f);
        fclose(f);
        unsigned *ids = NULL;
        size_t b, t;
        vp_error err = {0};
        assert_int_equal(vp_token_ids_read(path, 24, &ids, &b, &t, &err), VP_EFORMAT);
        if (!strstr(err.message, cases[i].why)) {
            print_error("case %zu: want \"%s\" in \"%s\"\n", i, cases[i].why, err.message);
            fail();
        }
        assert_null(ids);
    }
    /* Excel's byte-order mark is skipped, not read as part of the first id */
    FILE *f = fopen(path, "w");
    fputs("\xEF\xBB\xBF"
          "1,2,3\n4,5,6\n",
          f);
    fclose(f);
    unsigned *ids = NULL;
    size_t b = 0, t = 0;
    assert_int_equal(vp_token_ids_read(path, 24, &ids, &b, &t, NULL), VP_OK);
    assert_int_equal(b, 2);
    assert_int_equal(t, 3);
    assert_int_equal(ids[0], 1);
    free(ids);
    test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_safetensors_are_refused),
        cmocka_unit_test(bad_token_files_name_row_and_column),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("weight and token files", tests, NULL, NULL);
}
