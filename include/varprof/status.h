/* Status codes and error detail: how every libvarprof function reports failure.
 *
 * The library never prints and never exits. A function that can fail returns a
 * vp_status; where a bare code would leave the user guessing (which line of a
 * file, which value), it also fills a caller-owned vp_error with one sentence.
 */
#ifndef VARPROF_STATUS_H
#define VARPROF_STATUS_H

typedef enum {
    VP_OK = 0,
    VP_EINVAL,    /* an argument is out of its documented range */
    VP_ENOMEM,    /* an allocation failed, or its size would overflow size_t */
    VP_EIO,       /* a file could not be opened, read or written */
    VP_EFORMAT,   /* a file's contents are malformed */
    VP_EOVERFLOW, /* a result does not fit in a double */
    VP_ETHREAD,   /* a worker thread could not be started */
    VP_EEXIST,    /* a file to be written exists and replacing it was not asked for */
} vp_status;

/* One sentence saying what went wrong, without a trailing newline or period. */
typedef struct {
    char message[512];
} vp_error;

/* A static, never-NULL description of a status ("out of memory", ...). */
const char *vp_strerror(vp_status status);

/* Fills err (if not NULL) with a printf-style message and returns status, so
 * that a failing function can end with `return vp_fail(err, VP_EINVAL, ...)`. */
vp_status vp_fail(vp_error *err, vp_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
