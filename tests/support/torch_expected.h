/* PyTorch's figures for a network, as the tests/data/gen_*_reference.py
 * scripts (gen_torch_grads.py, gen_mlp_kinds_reference.py,
 * gen_positions_reference.py, gen_gqa_reference.py) write them: rows of
 *
 *   case,quantity,key,shape,float32,float64
 *
 * quantity loss (no key), frobenius and rms (key a tensor's name, shape
 * "48x96"), stream_norm and grad_var (key the sub-block k from 0),
 * weight_grad (k from 1). The tests hold varprof to the float64 column; the
 * float32 one, PyTorch's own float run, says how much float noise there is.
 * And the program's --grads-out file, read against them. */
#ifndef VARPROF_TESTS_TORCH_EXPECTED_H
#define VARPROF_TESTS_TORCH_EXPECTED_H

#include <stddef.h>

#define TORCH_MOST_TENSORS 256
#define TORCH_MOST_SUB_BLOCKS 256

typedef struct {
    char name[96];
    char shape[32]; /* "48x96"; "" where the data gives none */
    double frobenius, rms;
    int seen; /* times the program's --grads-out named it */
} torch_tensor;

typedef struct {
    double loss;
    int have_loss;
    torch_tensor tensors[TORCH_MOST_TENSORS];
    size_t n_tensors;
    /* per sub-block, [k]; each n_ the highest k given + 1 */
    double stream_norm[TORCH_MOST_SUB_BLOCKS + 1], grad_var[TORCH_MOST_SUB_BLOCKS + 1];
    double weight_grad[TORCH_MOST_SUB_BLOCKS + 1];
    size_t n_stream_norm, n_grad_var, n_weight_grad;
    double worst_noise; /* float32 against float64, relative, where |float64| > zero */
} torch_expected;

/* Case case_name of tests/data's file, allocated (free()); the noise is
 * measured only where |float64| > zero, an exact zero's float32 being
 * rounding alone. Fails the test when the file cannot be read. */
torch_expected *torch_expected_load(const char *file, const char *case_name, double zero);

/* The tensor called name, or NULL. */
torch_tensor *torch_expected_tensor(torch_expected *e, const char *name);

/* The program's --grads-out file (name,shape,frobenius,rms) against want:
 * each row's figures into got_frobenius[i] and got_rms[i], i its tensor's
 * index in want, its seen count raised. */
typedef struct {
    double got_frobenius[TORCH_MOST_TENSORS], got_rms[TORCH_MOST_TENSORS];
    char unknown[256];   /* a name the program wrote that PyTorch's data lacks */
    char bad_shape[256]; /* a shape that is not PyTorch's, "name: got, PyTorch want" */
    size_t rows;
    int header_ok;
} torch_grads_out;

/* Reads path into out against want. Fails the test when the file cannot be
 * read. */
void torch_grads_out_read(const char *path, torch_expected *want, torch_grads_out *out);

/* The program's CSV profile, per sub-block k (rows of k beyond
 * TORCH_MOST_SUB_BLOCKS left out). Fails the test when a column is missing. */
typedef struct {
    double stream_norm[TORCH_MOST_SUB_BLOCKS + 1], grad_var[TORCH_MOST_SUB_BLOCKS + 1];
    double weight_grad[TORCH_MOST_SUB_BLOCKS + 1];
    size_t rows;
} torch_profile;
void torch_profile_read(const char *csv, torch_profile *out);

/* The loss the program reports, "loss_value" in its JSON; NAN when absent
 * (json NULL included). */
double torch_reported_loss(const char *json);

#endif
