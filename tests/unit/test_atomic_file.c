/* The atomic file every output goes through: a file appears only when
 * committed, is never replaced without force, has the mode `>` would give,
 * writes devices and FIFOs in place, refuses directories, leaves nothing when
 * abandoned or interrupted. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_program.h"
#include "sys/atomic_file.h"
#include "test_filter.h"
#include "varprof/cleanup.h"

static const char *path_in(const char *dir, const char *name)
{
    static char paths[8][1024];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", dir, name);
    return path;
}

static void expect_files(const char *dir, size_t want)
{
    char names[2048];
    size_t n = list_dir(dir, names, sizeof names);
    if (n != want) {
        print_error("%s holds %zu files, want %zu: %s\n", dir, n, want, names);
        fail();
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *want)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, want);
}

static void expect_ok(vp_status status, const vp_error *err)
{
    if (status != VP_OK)
        print_error("expected success, got %s: %s\n", vp_strerror(status), err->message);
    assert_int_equal(status, VP_OK);
}

static void expect_message(const vp_error *err, const char *fragment)
{
    if (!strstr(err->message, fragment)) {
        print_error("message \"%s\" lacks \"%s\"\n", err->message, fragment);
        fail();
    }
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void appears_only_when_committed(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    const char *target = path_in(dir, "out.csv");
    atomic_file file;
    vp_error err;
    expect_ok(atomic_file_open(&file, target, 0, &err), &err);
    assert_false(file.direct);
    assert_non_null(file.temp_path);
    assert_ptr_equal(file.write_path, file.temp_path);
    /* beside the target, hidden, named after it */
    assert_non_null(strstr(file.temp_path, "/.out.csv.tmp."));
    fputs("a,b\n1,2\n", file.stream);
    assert_int_equal(fflush(file.stream), 0);
    assert_false(exists(target));
    expect_files(dir, 1);
    expect_ok(atomic_file_commit(&file, &err), &err);
    expect_text(target, "a,b\n1,2\n");
    expect_files(dir, 1);
    assert_null(file.stream);
    assert_null(file.temp_path);
    atomic_file_abort(&file); /* after a commit: nothing to do */
    expect_text(target, "a,b\n1,2\n");
    test_remove_tree(dir);
}

static void never_replaced_without_force(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    const char *target = path_in(dir, "kept.txt");
    write_text(target, "precious");
    atomic_file file;
    vp_error err;
    int direct = -1;
    assert_int_equal(atomic_file_check(target, 0, &direct, &err), VP_EEXIST);
    expect_message(&err, "already exists");
    assert_int_equal(direct, 0);
    assert_int_equal(atomic_file_open(&file, target, 0, &err), VP_EEXIST);
    expect_message(&err, "'");
    expect_message(&err, "kept.txt' already exists");
    assert_null(strstr(err.message, "--")); /* the fact, not the option */
    atomic_file_abort(&file);
    expect_text(target, "precious");
    expect_files(dir, 1);

    /* a file that appears while the new one is written is kept too */
    const char *late = path_in(dir, "late.txt");
    expect_ok(atomic_file_open(&file, late, 0, &err), &err);
    fputs("mine", file.stream);
    write_text(late, "theirs");
    assert_int_equal(atomic_file_commit(&file, &err), VP_EEXIST);
    expect_message(&err, "late.txt' already exists");
    expect_text(late, "theirs");
    expect_files(dir, 2);

    /* with force, both are replaced */
    expect_ok(atomic_file_check(target, 1, NULL, &err), &err);
    expect_ok(atomic_file_open(&file, target, 1, &err), &err);
    fputs("new", file.stream);
    expect_ok(atomic_file_commit(&file, &err), &err);
    expect_text(target, "new");
    assert_int_equal(atomic_file_open(&file, late, 0, &err), VP_EEXIST);
    expect_ok(atomic_file_open(&file, late, 1, &err), &err);
    write_text(late, "theirs again");
    fputs("mine", file.stream);
    expect_ok(atomic_file_commit(&file, &err), &err);
    expect_text(late, "mine");
    expect_files(dir, 2);
    test_remove_tree(dir);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_mode & 07777;
}

/* 0666 less the umask, as `>` gives: the file is shared as any other */
static void mode_is_0666_less_umask(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    const mode_t masks[] = {022, 027, 0, 077};
    const mode_t saved = umask(0);
    for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
        umask(masks[i]);
        const mode_t want = 0666 & ~masks[i];
        atomic_file file;
        vp_error err;
        char name[32];
        snprintf(name, sizeof name, "opened-%zu", i);
        const char *target = path_in(dir, name);
        expect_ok(atomic_file_open(&file, target, 0, &err), &err);
        assert_int_equal(mode_of(file.temp_path), want); /* from the start, not at commit */
        expect_ok(atomic_file_commit(&file, &err), &err);
        assert_int_equal(mode_of(target), want);

        /* reserved for another program to write by name */
        snprintf(name, sizeof name, "reserved-%zu", i);
        target = path_in(dir, name);
        expect_ok(atomic_file_reserve(&file, target, 0, &err), &err);
        assert_null(file.stream);
        write_text(file.write_path, "drawn");
        expect_ok(atomic_file_commit(&file, &err), &err);
        assert_int_equal(mode_of(target), want);
        expect_text(target, "drawn");
    }
    umask(saved);
    expect_files(dir, 2 * sizeof masks / sizeof *masks);
    test_remove_tree(dir);
}

/* A character device or a FIFO is written in place and never replaced */
static void devices_and_fifos_are_written_directly(void **state)
{
    (void)state;
    atomic_file file;
    vp_error err;
    for (int force = 0; force < 2; force++) {
        int direct = 0;
        expect_ok(atomic_file_check("/dev/null", force, &direct, &err), &err);
        assert_int_equal(direct, 1);
        expect_ok(atomic_file_open(&file, "/dev/null", force, &err), &err);
        assert_true(file.direct);
        assert_null(file.temp_path);
        assert_string_equal(file.write_path, "/dev/null");
        fputs("into the void", file.stream);
        expect_ok(atomic_file_commit(&file, &err), &err);
        struct stat st;
        assert_int_equal(stat("/dev/null", &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
    /* a device that cannot take the bytes says why */
    expect_ok(atomic_file_open(&file, "/dev/full", 0, &err), &err);
    fputs("no room", file.stream);
    assert_int_equal(atomic_file_commit(&file, &err), VP_EIO);
    expect_message(&err, "No space left on device");

    const char *dir = test_scratch_dir();
    const char *fifo = path_in(dir, "pipe");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* a reader first, so that opening for writing does not wait */
    int reader = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(reader >= 0);
    expect_ok(atomic_file_open(&file, fifo, 0, &err), &err);
    assert_true(file.direct);
    fputs("through", file.stream);
    expect_ok(atomic_file_commit(&file, &err), &err);
    char got[16] = {0};
    assert_int_equal(read(reader, got, sizeof got - 1), 7);
    assert_string_equal(got, "through");
    close(reader);
    /* reserved: handed over by name, not opened here */
    expect_ok(atomic_file_reserve(&file, fifo, 0, &err), &err);
    assert_string_equal(file.write_path, fifo);
    expect_ok(atomic_file_commit(&file, &err), &err);
    struct stat st;
    assert_int_equal(stat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    expect_files(dir, 1);
    test_remove_tree(dir);
}

static void directories_are_refused(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    atomic_file file;
    vp_error err;
    for (int force = 0; force < 2; force++) {
        assert_int_equal(atomic_file_open(&file, dir, force, &err), VP_EIO);
        expect_message(&err, "is a directory");
        assert_int_equal(atomic_file_reserve(&file, dir, force, &err), VP_EIO);
        assert_int_equal(atomic_file_check(dir, force, NULL, &err), VP_EIO);
    }
    assert_int_equal(atomic_file_open(&file, path_in(dir, "sub/"), 1, &err), VP_EINVAL);
    expect_message(&err, "names a folder");
    assert_int_equal(atomic_file_open(&file, "", 1, &err), VP_EINVAL);
    assert_int_equal(atomic_file_open(&file, NULL, 1, &err), VP_EINVAL);
    /* no folder to put it in */
    assert_int_equal(atomic_file_open(&file, path_in(dir, "no/such/out.csv"), 0, &err), VP_EIO);
    expect_message(&err, "its folder");
    expect_message(&err, "out.csv");
    expect_message(&err, "No such file");
    expect_files(dir, 0);
    test_remove_tree(dir);
}

static void abort_leaves_nothing(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    atomic_file file;
    vp_error err;
    expect_ok(atomic_file_open(&file, path_in(dir, "half.csv"), 0, &err), &err);
    fputs("half a ta", file.stream);
    atomic_file_abort(&file);
    expect_files(dir, 0);
    atomic_file_abort(&file); /* twice is harmless */
    expect_ok(atomic_file_reserve(&file, path_in(dir, "fig.svg"), 0, &err), &err);
    atomic_file_abort(&file);
    expect_files(dir, 0);
    /* a replaced file stays as it was */
    write_text(path_in(dir, "old"), "old");
    expect_ok(atomic_file_open(&file, path_in(dir, "old"), 1, &err), &err);
    fputs("new", file.stream);
    atomic_file_abort(&file);
    expect_text(path_in(dir, "old"), "old");
    expect_files(dir, 1);
    /* a zeroed struct, never opened: nothing removed, descriptor 0 not closed */
    const int stdin_open = fcntl(0, F_GETFD) != -1;
    atomic_file zeroed = {0};
    atomic_file_abort(&zeroed);
    assert_int_equal(fcntl(0, F_GETFD) != -1, stdin_open);
    test_remove_tree(dir);
}

/* While it is written, the temporary file is in the cleanup registry that
 * the program's SIGINT and SIGTERM handler empties; afterwards it is not. */
static void temp_file_is_registered_while_open(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    const char *target = path_in(dir, "interrupted.csv");
    atomic_file file;
    vp_error err;
    expect_ok(atomic_file_open(&file, target, 0, &err), &err);
    assert_true(file.cleanup_slot >= 0);
    fputs("partial", file.stream);
    assert_true(exists(file.temp_path));
    vp_cleanup_remove_all(); /* what the signal handler does */
    expect_files(dir, 0);
    assert_int_equal(atomic_file_commit(&file, &err), VP_EIO);
    assert_false(exists(target));

    expect_ok(atomic_file_reserve(&file, target, 0, &err), &err);
    assert_true(file.cleanup_slot >= 0);
    vp_cleanup_remove_all();
    expect_files(dir, 0);
    atomic_file_abort(&file);

    /* committed or aborted, a file holds no slot: every one is free again */
    expect_ok(atomic_file_open(&file, target, 0, &err), &err);
    expect_ok(atomic_file_commit(&file, &err), &err);
    expect_ok(atomic_file_open(&file, path_in(dir, "dropped"), 0, &err), &err);
    atomic_file_abort(&file);
    int slots[VP_CLEANUP_SLOTS];
    for (int i = 0; i < VP_CLEANUP_SLOTS; i++)
        assert_true((slots[i] = vp_cleanup_register("/nonexistent/varprof-slot")) >= 0);
    for (int i = 0; i < VP_CLEANUP_SLOTS; i++)
        vp_cleanup_unregister(slots[i]);
    vp_cleanup_remove_all(); /* must not touch the committed file */
    assert_true(exists(target));
    expect_files(dir, 1);
    test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(appears_only_when_committed),
        cmocka_unit_test(never_replaced_without_force),
        cmocka_unit_test(mode_is_0666_less_umask),
        cmocka_unit_test(devices_and_fifos_are_written_directly),
        cmocka_unit_test(directories_are_refused),
        cmocka_unit_test(abort_leaves_nothing),
        cmocka_unit_test(temp_file_is_registered_while_open),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("atomic files: in place whole or not at all", tests, NULL,
                                       NULL);
}
