/* Files written whole or not at all: a temporary renamed into place. */
#include "sys/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sys/signal_hold.h"
#include "varprof/cleanup.h"

#define TEMP_SUFFIX ".tmp.XXXXXX"
#define TEMP_LETTERS 6
#define TEMP_TRIES 100

typedef enum { TARGET_ABSENT, TARGET_REGULAR, TARGET_DIRECT } target_kind;

/* What is at path, and whether it may be written: the one rule for every
 * caller. stat, not lstat: a link to /dev/null is written as /dev/null is. */
static vp_status classify(const char *path, int force, target_kind *kind, vp_error *err)
{
    if (!path || !*path)
        return vp_fail(err, VP_EINVAL, "no file name given");
    if (path[strlen(path) - 1] == '/')
        return vp_fail(err, VP_EINVAL, "'%s' names a folder, not a file", path);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return vp_fail(err, VP_EIO, "cannot write '%s': %s", path, strerror(errno));
        *kind = TARGET_ABSENT;
        return VP_OK;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        *kind = TARGET_DIRECT;
        return VP_OK;
    }
    if (S_ISDIR(st.st_mode))
        return vp_fail(err, VP_EIO, "cannot write '%s': it is a directory", path);
    if (!S_ISREG(st.st_mode))
        return vp_fail(err, VP_EIO,
                       "cannot write '%s': it is not a regular file, a character device "
                       "or a FIFO",
                       path);
    if (!force)
        return vp_fail(err, VP_EEXIST, "'%s' already exists", path);
    *kind = TARGET_REGULAR;
    return VP_OK;
}

vp_status atomic_file_check(const char *path, int force, int *direct, vp_error *err)
{
    target_kind kind = TARGET_ABSENT;
    vp_status status = classify(path, force, &kind, err);
    if (direct)
        *direct = status == VP_OK && kind == TARGET_DIRECT;
    return status;
}

/* "dir/name" -> "dir/.name.tmp.XXXXXX": the same folder, so that the final
 * rename or link never crosses file systems; hidden, as work in progress. */
static char *temp_name_for(const char *path)
{
    const char *slash = strrchr(path, '/');
    const size_t dir_length = slash ? (size_t)(slash - path) + 1 : 0;
    const size_t length = strlen(path);
    char *name = malloc(length + 1 + sizeof TEMP_SUFFIX);
    if (!name)
        return NULL;
    memcpy(name, path, dir_length);
    name[dir_length] = '.';
    memcpy(name + dir_length + 1, path + dir_length, length - dir_length);
    memcpy(name + length + 1, TEMP_SUFFIX, sizeof TEMP_SUFFIX);
    return name;
}

/* splitmix64's finaliser: every bit of x moves every bit of the result. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* Creates name, its last six letters replaced, as mkstemp does, but with
 * mode 0666 for the kernel to take the umask from, as it does for `>`.
 * mkstemp gives 0600, and widening that with fchmod needs the umask, which
 * can only be read by setting it (a race with any other thread) and which
 * would still ignore a folder's default ACL. O_EXCL, not the letters' being
 * hard to guess, is what makes the file ours. Returns the descriptor, or -1
 * with errno set. */
static int create_temp(char *name)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint calls;
    char *tail = name + strlen(name) - TEMP_LETTERS;
    for (int attempt = 0; attempt < TEMP_TRIES; attempt++) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        uint64_t bits = mix((uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30) ^
                            ((uint64_t)getpid() << 40) ^ atomic_fetch_add(&calls, 1u));
        for (int i = 0; i < TEMP_LETTERS; i++) {
            tail[i] = letters[bits % (sizeof letters - 1)];
            bits /= sizeof letters - 1;
        }
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* The temporary file no longer needs removing: unregistered and forgotten. */
static void forget_temp(atomic_file *file)
{
    vp_cleanup_unregister(file->cleanup_slot);
    file->cleanup_slot = -1;
    free(file->temp_path);
    file->temp_path = NULL;
    file->write_path = file->direct ? file->path : NULL;
}

void atomic_file_abort(atomic_file *file)
{
    if (file->stream)
        (void)fclose(file->stream); /* abandoned: its write errors no longer matter */
    file->stream = NULL;
    if (file->temp_path) {
        if (file->fd >= 0)
            close(file->fd);
        unlink(file->temp_path);
        forget_temp(file);
    }
    file->fd = -1;
}

static vp_status open_stream(atomic_file *file, int fd, vp_error *err)
{
    file->stream = fdopen(fd, "w");
    if (file->stream)
        return VP_OK;
    const int saved = errno;
    close(fd);
    atomic_file_abort(file);
    return vp_fail(err, VP_EIO, "cannot write '%s': %s", file->path, strerror(saved));
}

/* A device or a FIFO, opened as `>` opens it. O_NOCTTY: a terminal written to
 * must not become the program's controlling terminal. */
static vp_status open_direct(atomic_file *file, vp_error *err)
{
    int fd = open(file->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return vp_fail(err, VP_EIO, "cannot write '%s': %s", file->path, strerror(errno));
    // swapped for a regular file since it was looked at: that would be written over
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        close(fd);
        return vp_fail(err, VP_EIO, "cannot write '%s': it was replaced while being opened",
                       file->path);
    }
    return open_stream(file, fd, err);
}

static vp_status begin(atomic_file *file, const char *path, int force, int with_stream,
                       vp_error *err)
{
    *file = (atomic_file){.path = path, .fd = -1, .cleanup_slot = -1, .force = force};
    target_kind kind = TARGET_ABSENT;
    vp_status status = classify(path, force, &kind, err);
    if (status != VP_OK)
        return status;
    if (kind == TARGET_DIRECT) {
        file->direct = 1;
        file->write_path = path;
        return with_stream ? open_direct(file, err) : VP_OK;
    }
    file->temp_path = temp_name_for(path);
    if (!file->temp_path)
        return vp_fail(err, VP_ENOMEM, "no memory for a temporary file name");
    // made and registered as one step: a signal between the two would leave it
    sigset_t held;
    signals_hold(&held);
    const int fd = create_temp(file->temp_path);
    if (fd >= 0)
        file->cleanup_slot = vp_cleanup_register(file->temp_path);
    signals_release(&held);
    if (fd < 0) {
        const int saved = errno;
        free(file->temp_path);
        file->temp_path = NULL;
        if (saved == ENOENT || saved == ENOTDIR) { /* the folder, not a temporary file */
            const char *slash = strrchr(path, '/');
            const int n = slash ? (int)(slash - path) + (slash == path) : 1;
            return vp_fail(err, VP_EIO, "cannot write '%s': its folder '%.*s': %s", path, n,
                           slash ? path : ".", strerror(saved));
        }
        return vp_fail(err, VP_EIO, "cannot make a temporary file beside '%s': %s", path,
                       strerror(saved));
    }
    file->write_path = file->temp_path;
    if (!with_stream) {
        file->fd = fd; // held for the fsync at commit
        return VP_OK;
    }
    return open_stream(file, fd, err);
}

vp_status atomic_file_open(atomic_file *file, const char *path, int force, vp_error *err)
{
    return begin(file, path, force, 1, err);
}

vp_status atomic_file_reserve(atomic_file *file, const char *path, int force, vp_error *err)
{
    return begin(file, path, force, 0, err);
}

/* Moves the finished temporary file to the target. Without force, link():
 * it refuses to replace, so a file that appeared since the check is kept. */
static vp_status put_in_place(atomic_file *file, vp_error *err)
{
    if (!file->force) {
        if (link(file->temp_path, file->path) == 0) {
            unlink(file->temp_path);
            return VP_OK;
        }
        struct stat st;
        if (errno == EEXIST || lstat(file->path, &st) == 0)
            return vp_fail(err, VP_EEXIST, "'%s' already exists", file->path);
        // a file system without hard links (FAT, some network ones): rename,
        // having just seen nothing there
    }
    if (rename(file->temp_path, file->path) != 0)
        return vp_fail(err, VP_EIO, "cannot put '%s' in place: %s", file->path, strerror(errno));
    return VP_OK;
}

/* Flushes, syncs and closes whatever is open; 0 or an errno. A device or a
 * FIFO is not synced: fsync refuses them (EINVAL) and has nothing to do. */
static int finish_writing(atomic_file *file)
{
    int saved = 0;
    if (file->stream) {
        if (fflush(file->stream) != 0 || ferror(file->stream))
            saved = errno ? errno : EIO;
        else if (!file->direct && fsync(fileno(file->stream)) != 0)
            saved = errno;
        if (fclose(file->stream) != 0 && !saved)
            saved = errno;
        file->stream = NULL;
    } else if (file->fd >= 0) {
        if (fsync(file->fd) != 0)
            saved = errno;
        if (close(file->fd) != 0 && !saved)
            saved = errno;
        file->fd = -1;
    }
    return saved;
}

vp_status atomic_file_commit(atomic_file *file, vp_error *err)
{
    errno = 0;
    const int saved = finish_writing(file);
    vp_status status = VP_OK;
    if (saved)
        status = vp_fail(err, VP_EIO, "cannot write '%s': %s", file->path, strerror(saved));
    else if (file->temp_path)
        status = put_in_place(file, err);
    if (status == VP_OK && file->temp_path)
        forget_temp(file); // in place: nothing left to remove
    atomic_file_abort(file);
    return status;
}
