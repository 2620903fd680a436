/* Temporary files removed on a fatal signal. */
#include "varprof/cleanup.h"
#include "sys/signal_hold.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

/* Each slot holds a path or NULL; atomic so that a handler sees a whole
 * pointer, never half of one. */
static _Atomic(const char *) slots[VP_CLEANUP_SLOTS];

int vp_cleanup_register(const char *path)
{
    for (int i = 0; i < VP_CLEANUP_SLOTS; i++) {
        const char *expected = NULL;
        if (atomic_compare_exchange_strong(&slots[i], &expected, path))
            return i;
    }
    return -1;
}

void vp_cleanup_unregister(int slot)
{
    if (slot >= 0 && slot < VP_CLEANUP_SLOTS)
        atomic_store(&slots[slot], NULL);
}

void signals_hold(sigset_t *saved)
{
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGHUP);
    sigaddset(&ending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &ending, saved);
}

void signals_release(const sigset_t *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

void vp_cleanup_remove_all(void)
{
    for (int i = 0; i < VP_CLEANUP_SLOTS; i++) {
        const char *path = atomic_exchange(&slots[i], NULL);
        if (path)
            unlink(path);
    }
}
