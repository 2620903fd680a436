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

/* The setting a caller may change to get past a refusal, named apart from
 * the message: the message states the fact in the library's words and names
 * no command-line option, and a program names its own way to change the
 * setting (varprof's command line maps each to the option that fixes it,
 * with the words it has always printed). */
typedef enum {
    VP_FIX_NONE = 0,        /* nothing the caller sets gets past it */
    VP_FIX_HEAD_SHAPE,      /* the heads and head width given: the shapes admit several */
    VP_FIX_HEADS,           /* the heads left to the file */
    VP_FIX_HEAD_DIM,        /* the head width left to the file */
    VP_FIX_KV_HEADS,        /* the key-value heads left to the file */
    VP_FIX_EPS,             /* the norms' epsilon left to the file */
    VP_FIX_MLP,             /* another MLP kind, or the file's */
    VP_FIX_BIAS,            /* another vp_bias, or the file's */
    VP_FIX_POSITIONS,       /* other positions: none, learned or rope */
    VP_FIX_ROPE_THETA,      /* RoPE's base left to the file */
    VP_FIX_TIE_EMBEDDINGS,  /* the head's tying left to the file */
    VP_FIX_BY_HAND,         /* the model's stack given by hand from its shape */
    VP_FIX_METHOD_FULL,     /* the full Monte Carlo method (VP_MC_FULL) */
    VP_FIX_WIDTH_OR_LAYERS, /* a narrower or shallower network */
    VP_FIX_WEIGHTS_DRAWN,   /* weights drawn as they are used, not stored */
    VP_FIX_RECOMPUTE,       /* activations recomputed (VP_ACTIVATIONS_RECOMPUTE) */
    VP_FIX_SMALLER,         /* a narrower, shallower network or a smaller batch */
} vp_fix;

/* One sentence saying what went wrong, without a trailing newline or period,
 * and the setting that gets past it (VP_FIX_NONE where none does, or where
 * the function says nothing of it). */
typedef struct {
    char message[512];
    vp_fix fix;
} vp_error;

/* A static, never-NULL description of a status ("out of memory", ...). */
const char *vp_strerror(vp_status status);

/* Fills err (if not NULL) with a printf-style message and VP_FIX_NONE and
 * returns status, so that a failing function can end with
 * `return vp_fail(err, VP_EINVAL, ...)`. */
vp_status vp_fail(vp_error *err, vp_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* As vp_fail, naming the setting that gets past the failure in err->fix
 * (vp_fail leaves VP_FIX_NONE there). */
vp_status vp_fail_fix(vp_error *err, vp_status status, vp_fix fix, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

#endif
