/* Status codes and their messages. */
#include "varprof/status.h"

#include <stdarg.h>
#include <stdio.h>

const char *vp_strerror(vp_status status)
{
    switch (status) {
    case VP_OK: return "success";
    case VP_EINVAL: return "invalid argument";
    case VP_ENOMEM: return "out of memory";
    case VP_EIO: return "input/output error";
    case VP_EFORMAT: return "malformed file";
    case VP_EOVERFLOW: return "result does not fit in a double";
    case VP_ETHREAD: return "cannot start a thread";
    case VP_EEXIST: return "file exists";
    }
    return "unknown status";
}

vp_status vp_fail(vp_error *err, vp_status status, const char *format, ...)
{
    if (err) {
        va_list args;
        va_start(args, format);
        vsnprintf(err->message, sizeof err->message, format, args);
        va_end(args);
        err->fix = VP_FIX_NONE;
    }
    return status;
}

vp_status vp_fail_fix(vp_error *err, vp_status status, vp_fix fix, const char *format, ...)
{
    if (err) {
        va_list args;
        va_start(args, format);
        vsnprintf(err->message, sizeof err->message, format, args);
        va_end(args);
        err->fix = fix;
    }
    return status;
}
