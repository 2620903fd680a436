/* A file that appears whole or not at all: written under a temporary name
 * beside its target, then linked or renamed into place. Every file varprof
 * writes goes through here (--output, --plot, --plot-script, the figures), so
 * they all follow one set of rules:
 *
 *   - a target that does not exist, or is a regular file, is written to
 *     ".NAME.tmp.XXXXXX" in its folder, created with mode 0666 less the umask
 *     (what a shell's `>` gives), registered with vp_cleanup
 *     (varprof/cleanup.h) for as long as it exists, and put in place only by
 *     atomic_file_commit;
 *   - an existing file is replaced only with force; without it, commit uses
 *     link(), which never replaces, so a file made meanwhile is kept too;
 *   - a character device (/dev/null, /dev/stdout) or a FIFO is written
 *     directly, as `>` would: it is never replaced nor removed, force or not;
 *   - a directory, or any other kind of file, is refused.
 *
 * Private to libvarprof and its program (no vp_ prefix). Nothing here prints:
 * failures return a vp_status with one sentence in err (which may be NULL).
 */
#ifndef VARPROF_SYS_ATOMIC_FILE_H
#define VARPROF_SYS_ATOMIC_FILE_H

#include <stdio.h>

#include "varprof/status.h"

typedef struct {
    const char *path;       /* the target as given; not copied, must outlive the file */
    char *temp_path;        /* the file being written beside it; NULL when direct */
    const char *write_path; /* where the bytes go: temp_path, or path when direct */
    FILE *stream;           /* atomic_file_open only; NULL after atomic_file_reserve */
    int fd;                 /* the temporary file, held for fsync by atomic_file_reserve; else -1 */
    int cleanup_slot;       /* temp_path's vp_cleanup slot, or -1 */
    int force;
    int direct; /* a device or a FIFO, written in place */
} atomic_file;

/* What atomic_file_open would say about path now, creating nothing: for
 * checking a target before long work, so that a refusal comes first. *direct
 * (may be NULL) is set to 1 for a character device or a FIFO. Fails with
 *   VP_EINVAL  path is NULL or empty, or ends in '/' (a folder, not a file);
 *   VP_EEXIST  a regular file is there and force is 0 ("'x' already exists");
 *   VP_EIO     a directory or another kind of file is there, or stat failed
 *              for a reason other than the file being absent. */
vp_status atomic_file_check(const char *path, int force, int *direct, vp_error *err);

/* Starts writing path: file->stream is open on the temporary file (or on the
 * device or FIFO itself, which may block until a FIFO has a reader, as `>`
 * does). On failure nothing is left behind and *file needs no abort. Fails as
 * atomic_file_check, and with VP_EIO when the temporary file cannot be made
 * ("cannot write 'x': its folder 'd': ..." where the folder is missing, else
 * "cannot make a temporary file beside 'x': ...") or
 * the target cannot be opened; VP_ENOMEM. */
vp_status atomic_file_open(atomic_file *file, const char *path, int force, vp_error *err);

/* As atomic_file_open, without a stream: for another program (gnuplot) that
 * writes file->write_path by name. The temporary file exists, empty, with
 * its final mode; a device or a FIFO is not opened. */
vp_status atomic_file_reserve(atomic_file *file, const char *path, int force, vp_error *err);

/* Finishes: flushes and closes the stream, syncs a temporary file to disk and
 * moves it into place (rename with force, link without). Afterwards the file
 * is done with, whatever the outcome; a failed commit has removed the
 * temporary file and the target is as it was. Fails with
 *   VP_EEXIST  force is 0 and a file appeared at path meanwhile;
 *   VP_EIO     a write, the flush, the sync or the move failed (strerror). */
vp_status atomic_file_commit(atomic_file *file, vp_error *err);

/* Gives up: closes the stream and removes the temporary file (a device or a
 * FIFO keeps what was written to it). Safe on a file already committed,
 * aborted or failed to open, and on a zeroed struct. */
void atomic_file_abort(atomic_file *file);

#endif
