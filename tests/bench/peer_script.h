/* `make bench`'s peers: a Python script that times the same network in
 * PyTorch (or NumPy) and prints one JSON line. What bench_forward,
 * bench_backward, bench_arch and bench_families share of running one. */
#ifndef VARPROF_BENCH_PEER_SCRIPT_H
#define VARPROF_BENCH_PEER_SCRIPT_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* The peer's own figures every script reports. */
typedef struct {
    double ms;           /* a pass, the best repeat's mean */
    int repeats, passes; /* repeats run, passes a repeat */
    char torch[64];      /* torch.__version__, "?" when not said */
    char blas[256];      /* the BLAS it ran on (BLAS_INFO and the library loaded), "?" */
} peer_run;

/* Runs `python script args --threads T --repeats R --min-time S
 * --max-time M --linear L` with OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
 * MKL_NUM_THREADS set to T, after flushing stdout (its output follows
 * ours), and parses the line it prints. The JSON (cJSON_Delete it) with
 * run's fields filled; NULL after saying why on stderr, `who` first: a
 * path with a quote, the script failing, a line that is not JSON or has
 * no "ms". */
cJSON *peer_script_run(const char *who, const char *python, const char *script, const char *args,
                       size_t threads, int repeats, double min_s, int max_s, const char *linear,
                       peer_run *run);

/* A number of the JSON; 0 with *ok cleared when it is not there. */
double peer_number(const cJSON *json, const char *key, int *ok);

#endif
