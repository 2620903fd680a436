/* Running a peer's timing script (peer_script.h). */
#include "peer_script.h"

#include <stdio.h>
#include <string.h>

cJSON *peer_script_run(const char *who, const char *python, const char *script, const char *args,
                       size_t threads, int repeats, double min_s, int max_s, const char *linear,
                       peer_run *run)
{
    char cmd[4096];
    const int n = snprintf(cmd, sizeof cmd,
                           "OMP_NUM_THREADS=%zu OPENBLAS_NUM_THREADS=%zu MKL_NUM_THREADS=%zu "
                           "'%s' '%s' %s --threads %zu --repeats %d --min-time %g --max-time %d "
                           "--linear %s",
                           threads, threads, threads, python, script, args, threads, repeats, min_s,
                           max_s, linear);
    if (n < 0 || (size_t)n >= sizeof cmd || strchr(python, '\'') || strchr(script, '\'')) {
        fprintf(stderr, "%s: bad --python or --script path\n", who);
        return NULL;
    }
    (void)fflush(stdout);      /* the script's output follows ours */
    FILE *p = popen(cmd, "r"); // NOLINT(cert-env33-c) running the peer is the point
    if (!p) {
        perror(who);
        return NULL;
    }
    char line[8192] = "";
    const char *got = fgets(line, sizeof line, p);
    const int rc = pclose(p);
    if (!got || rc != 0) {
        fprintf(stderr, "%s: the PyTorch script failed (exit status %d): %s\n", who, rc, cmd);
        return NULL;
    }
    cJSON *json = cJSON_Parse(line);
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(json, "ms");
    if (!cJSON_IsNumber(ms)) {
        fprintf(stderr, "%s: cannot read the PyTorch script's output: %s", who, line);
        cJSON_Delete(json);
        return NULL;
    }
    const cJSON *reps = cJSON_GetObjectItemCaseSensitive(json, "repeats");
    const cJSON *passes = cJSON_GetObjectItemCaseSensitive(json, "passes_per_repeat");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(json, "torch");
    const cJSON *blas = cJSON_GetObjectItemCaseSensitive(json, "blas");
    run->ms = ms->valuedouble;
    run->repeats = cJSON_IsNumber(reps) ? reps->valueint : 0;
    run->passes = cJSON_IsNumber(passes) ? passes->valueint : 0;
    snprintf(run->torch, sizeof run->torch, "%s", cJSON_IsString(ver) ? ver->valuestring : "?");
    snprintf(run->blas, sizeof run->blas, "%s", cJSON_IsString(blas) ? blas->valuestring : "?");
    return json;
}

double peer_number(const cJSON *json, const char *key, int *ok)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, key);
    if (!cJSON_IsNumber(v)) {
        *ok = 0;
        return 0.0;
    }
    return v->valuedouble;
}
