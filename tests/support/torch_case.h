/* A network of tests/data run by the program and held to PyTorch's figures
 * (torch_expected.h): the loss, every sub-block's stream norm (where the
 * data has them), grad_var and weight_grad, and every named tensor's
 * gradient norm and RMS from --grads-out, once each and no other. */
#ifndef VARPROF_TESTS_TORCH_CASE_H
#define VARPROF_TESTS_TORCH_CASE_H

typedef struct {
    const char *expected;    /* the figures' file in tests/data, "gqa_expected.csv" */
    const char *case_name;   /* its case */
    const char *weights;     /* tests/data: the weights (a file or a directory) */
    const char *tokens;      /* tests/data: the token ids */
    const char *const *args; /* the options beyond those, NULL-terminated (--loss among
                                  them; copy without) */
    double stream_tolerance; /* relative, the stream norms */
    double grad_tolerance;   /* relative, the loss and every gradient figure */
    double exact_zero;       /* a PyTorch figure within this of 0 is exactly 0 ... */
    double zero_tolerance;   /* ... and held to this absolute bound instead */
    double data_noise;       /* the data's float32 against float64, at most */
} torch_case;

/* Runs `varprof --engine forward --weights W --token-ids T ARGS --grad
 * --grads-out FILE --format csv` (and json, for the loss) with VARPROF_ISA
 * isa, prints the worst relative errors and fails the test on any figure
 * beyond its bound. A set the CPU lacks is passed over. */
void torch_case_run(const torch_case *c, const char *isa);

/* torch_case_run on every instruction set this CPU has. */
void torch_case_run_every_isa(const torch_case *c);

/* Steps `varprof train` replays: the case's token ids once a step. */
#define TORCH_TRAIN_STEPS 3

/* `varprof train --weights W --token-stream S --steps 3 --task next` on
 * every instruction set, S the case's tokens three times over (one step
 * each, Adam's default lr): step 0's loss and global gradient norm (before
 * any update, the case's loss and its grad_norm row, every parameter's
 * squares summed) within tol relative, and the loss falling step by step.
 * Prints the worst and fails beyond. */
void torch_case_check_train(const torch_case *c, double tol);

/* The same for any checkpoint of tests/data (weights) and its batch
 * (tokens, one sequence a line), against a reference's loss and global
 * gradient norm (the conformance corpus's loss and grad_global); name
 * labels the lines and the scratch file. */
void train_step0_check(const char *name, const char *weights, const char *tokens, double want_loss,
                       double want_norm, double tol);

#endif
