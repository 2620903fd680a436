/* The signals that end varprof (SIGINT, SIGTERM, SIGHUP, SIGPIPE), held
 * back from the calling thread for a moment: while a temporary file exists
 * but is not yet registered with vp_cleanup (varprof/cleanup.h), a handler
 * that ran would not know to remove it. A signal that arrives meanwhile is
 * delivered on release. Files are made before or after the engines' worker
 * threads exist, so the calling thread is the only one a signal can reach
 * then. Private to libvarprof. */
#ifndef VARPROF_SYS_SIGNAL_HOLD_H
#define VARPROF_SYS_SIGNAL_HOLD_H

#include <signal.h>

/* Holds the ending signals; *saved receives the mask to restore. */
void signals_hold(sigset_t *saved);

/* Restores the mask signals_hold saved. */
void signals_release(const sigset_t *saved);

#endif
