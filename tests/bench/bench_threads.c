/* `make bench`, threads by the work (issue 31): each job below as a whole
 * process at --threads T = 1, 2, 4, ... up to the cores online (and the
 * core count itself), with its speed-up over one thread and its parallel
 * efficiency (speed-up / T); then each job at the default thread count
 * (no --threads) against its best T, with a verdict where the default is
 * more than 10 % slower. On a machine of two cores it also times
 * --threads 16 against --threads 2 (oversubscribed: at most 10 % slower)
 * and holds the default to 5 % of the best.
 *
 * Usage: bench_threads --varprof PATH [--quick] [--only NAME]
 *   --quick: leave out the 70B layers and the 16-run sweep;
 *   --only NAME: that job alone.
 * Each time is the best of --repeat R runs (default 1; 3 on two cores,
 * where a neighbour's load weighs). Prints PASS/MISS; exits 0 either way,
 * 1 when a run fails. */
#define _DEFAULT_SOURCE /* wait4 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fma_peak.h"

#define MAX_ARGS 40

typedef struct {
    const char *name;
    const char *args[MAX_ARGS]; /* after the program, NULL-ended */
    int slow;                   /* left out by --quick */
} job;

static const job jobs[] = {
    {"llama-2-7b forward, 8 layers, 128 tokens",
     {"--model", "llama-2-7b", "--engine", "forward", "--layers", "8", "--batch", "1", "--tokens",
      "128", NULL},
     0},
    {"Monte Carlo full, width 4096, 16384 trials",
     {"--engine", "mc", "--method", "full", "--width", "4096", "--trials", "16384", NULL},
     0},
    {"train, the seed's two runs", {"train", NULL}, 0},
    {"train sweep, 16 runs (2 placements x 4 depths x 2 rates)",
     {"train", "--placement", "pre-norm,post-ln", "--layers", "6,12,24,48", "--lr", "1e-3,3e-3",
      NULL},
     1},
    {"llama-3.1-70b forward, 8 of its 80 layers, 128 tokens",
     {"--model", "llama-3.1-70b", "--engine", "forward", "--layers", "8", "--batch", "1",
      "--tokens", "128", NULL},
     1},
};

/* Runs varprof with the job's arguments and --threads threads (NULL: the
   default), output to /dev/null; the best wall time of repeat runs, or -1. */
static double timed(const char *varprof, const job *j, const char *threads, int repeat)
{
    char *argv[MAX_ARGS + 4];
    size_t c = 0;
    argv[c++] = (char *)varprof;
    for (size_t i = 0; j->args[i]; i++)
        argv[c++] = (char *)j->args[i];
    if (threads) {
        argv[c++] = "--threads";
        argv[c++] = (char *)threads;
    }
    argv[c] = NULL;
    double best = -1.0;
    for (int r = 0; r < repeat; r++) {
        fflush(stdout);
        const double t0 = bench_now();
        const pid_t pid = fork();
        if (pid < 0)
            return -1.0;
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                _exit(127);
            execv(argv[0], argv);
            _exit(127);
        }
        int status = 0;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench_threads: %s (--threads %s) failed\n", j->name,
                    threads ? threads : "default");
            return -1.0;
        }
        const double t = bench_now() - t0;
        best = best < 0.0 || t < best ? t : best;
    }
    return best;
}

/* One job over the thread counts, then its default against its best. */
static int one_job(const char *varprof, const job *j, long cores, int repeat)
{
    printf("%s\n", j->name);
    double one = 0.0, best = 0.0;
    long best_t = 1;
    for (long t = 1; t <= cores; t = t * 2 > cores && t < cores ? cores : t * 2) {
        char text[24];
        snprintf(text, sizeof text, "%ld", t);
        const double s = timed(varprof, j, text, repeat);
        if (s < 0.0)
            return 1;
        if (t == 1)
            one = s;
        if (t == 1 || s < best)
            best = s, best_t = t;
        printf("  %3ld threads %8.2f s   %5.2fx   efficiency %3.0f %%\n", t, s, one / s,
               100.0 * one / s / (double)t);
    }
    const double dflt = timed(varprof, j, NULL, repeat);
    if (dflt < 0.0)
        return 1;
    const double bar = cores == 2 ? 1.05 : 1.10;
    printf("  default     %8.2f s   best %ld threads %.2f s: the default %.1f %% %s; target "
           "within %.0f %%: %s\n",
           dflt, best_t, best, 100.0 * fabs(dflt / best - 1.0), dflt > best ? "slower" : "faster",
           100.0 * (bar - 1.0), dflt <= bar * best ? "PASS" : "MISS");
    if (cores == 2) {
        const double two = timed(varprof, j, "2", repeat),
                     sixteen = timed(varprof, j, "16", repeat);
        if (two < 0.0 || sixteen < 0.0)
            return 1;
        printf("  --threads 16 %7.2f s against --threads 2 %.2f s on two cores: %+.1f %%; target "
               "at most +10 %%: %s\n",
               sixteen, two, 100.0 * (sixteen / two - 1.0),
               sixteen <= 1.10 * two ? "PASS" : "MISS");
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *varprof = NULL, *only = NULL;
    int quick = 0, repeat = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--varprof") == 0 && i + 1 < argc)
            varprof = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: bench_threads --varprof PATH [--quick] [--only NAME] "
                            "[--repeat R]\n");
            return 2;
        }
    }
    if (!varprof) {
        fprintf(stderr, "bench_threads: --varprof PATH is required\n");
        return 2;
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (repeat < 1)
        repeat = cores <= 2 ? 3 : 1;
    printf("bench_threads: %ld cores online, best of %d run%s a time\n", cores, repeat,
           repeat == 1 ? "" : "s");
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        if ((quick && jobs[i].slow) || (only && !strstr(jobs[i].name, only)))
            continue;
        if (one_job(varprof, &jobs[i], cores, repeat) != 0)
            return 1;
    }
    return 0;
}
