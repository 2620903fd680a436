/* Files that must not outlive an interrupted run. The library registers each
 * temporary file while it writes it; the program's handler of the signals
 * that end it (SIGINT, SIGTERM, SIGHUP, SIGPIPE), and its exit, call
 * vp_cleanup_remove_all(), which is async-signal-safe.
 * The library itself installs no handler. */
#ifndef VARPROF_CLEANUP_H
#define VARPROF_CLEANUP_H

/* How many files may be registered at once. */
#define VP_CLEANUP_SLOTS 8

/* Registers path (which must stay valid until unregistered). Returns a slot
 * for vp_cleanup_unregister, or -1 when every slot is taken (the file is then
 * simply not removed on a signal). */
int vp_cleanup_register(const char *path);

/* Forgets a slot (-1 is allowed). */
void vp_cleanup_unregister(int slot);

/* Unlinks every registered file. Only async-signal-safe calls. */
void vp_cleanup_remove_all(void);

#endif
