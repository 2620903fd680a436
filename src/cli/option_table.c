/* The option table: every option's name, value, commands and help. */
#include "option_table.h"

#define BOTH (CMD_PROFILE | CMD_TABLE)

const option_spec cli_options[OPT_COUNT] = {
    [OPT_PLACEMENT] = {"placement", "NAME[,NAME...]|all", CMD_PROFILE,
                       "post-ln, pre-norm (pre-ln), sandwich (peri-norm), output-norm, "
                       "deepnorm, parallel, none; default pre-norm"},
    [OPT_MODEL] = {"model", "NAME", CMD_PROFILE,
                   "take placement and layers from the models table ('varprof models'); "
                   "--layers still overrides"},
    [OPT_LAYERS] =
        {"layers", "L[,L...]", BOTH,
         "layers in the stack, 1 to {max_layers}; default {default_layers}; a list sweeps "
         "(profile)"},
    [OPT_GAIN] = {"gain", "G[,G...]", BOTH,
                  "every branch's gain g >= 0; default 1; a list sweeps (profile)"},
    [OPT_GAINS] = {"gains", "FILE", CMD_PROFILE,
                   "one gain per sub-block: a single column, or a CSV with a 'gain' column"},
    [OPT_GAMMA] = {"gamma", "G", BOTH,
                   "scale of a normalised branch output (sandwich, "
                   "output-norm), >= 0; default 1"},
    [OPT_ALPHA] = {"alpha", "A", BOTH, "DeepNorm's residual scale > 0; default (2L)^(1/4)"},
    [OPT_BETA] = {"beta", "B", BOTH, "DeepNorm's init scale >= 0; default (8L)^(-1/4)"},
    [OPT_EMBEDDING_VAR] = {"embedding-var", "V", CMD_PROFILE,
                           "the embedding's variance v_0 > 0; default 1"},
    [OPT_ENGINE] = {"engine", "closed|mc|forward[,...]|all", CMD_PROFILE,
                    "closed form, Monte Carlo, the forward pass of a random network, a list "
                    "of them, or all; compared side by side when closed is with another; "
                    "default closed"},
    [OPT_WIDTH] = {"width", "D[,D...]", CMD_PROFILE,
                   "Monte Carlo and forward: the stream's width, 1 to {mc_max_width} (2 up with "
                   "layernorm; forward up to {forward_max_width}); default {mc_default_width}; "
                   "a list sweeps"},
    [OPT_TRIALS] =
        {"trials", "N", CMD_PROFILE,
         "Monte Carlo: tokens sampled, 2 to {mc_max_trials}; default {mc_default_trials}"},
    [OPT_SEED] = {"seed", "S", CMD_PROFILE,
                  "Monte Carlo and forward: the seed of draws, weights and tokens, 0 to "
                  "2^64-1; default 1"},
    [OPT_THREADS] = {"threads", "T", CMD_TRAIN | CMD_PROFILE,
                     "Monte Carlo and forward: at most T threads, 1 to {max_threads}, and no more "
                     "pool threads than cores; default all cores; the result is the same for any "
                     "T"},
    [OPT_NORM] = {"norm", "layernorm|rmsnorm", CMD_TRAIN | CMD_PROFILE,
                  "Monte Carlo and forward: the norm; default layernorm"},
    [OPT_NORM_EPS] =
        {"norm-eps", "E", CMD_TRAIN | CMD_PROFILE,
         "Monte Carlo and forward: the norms' eps, > 0 and < 1; default {default_eps}"},
    [OPT_HEADS] = {"heads", "H", CMD_TRAIN | CMD_PROFILE,
                   "forward: attention heads, dividing the width; default {default_heads}"},
    [OPT_KV_HEADS] = {"kv-heads", "H", CMD_TRAIN | CMD_PROFILE,
                      "forward: key and value heads, dividing --heads: fewer is grouped-query "
                      "attention, 1 multi-query; default --heads"},
    [OPT_HEAD_DIM] =
        {"head-dim", "N", CMD_TRAIN | CMD_PROFILE,
         "forward: each head's width, 1 to {forward_max_width} with --heads x N at most "
         "{forward_max_width} "
         "(even with --positions rope); default width / heads"},
    [OPT_FFN_MULT] = {"ffn-mult", "M", CMD_PROFILE,
                      "forward: the MLP's hidden width in widths, 1 to {max_ffn_mult}; default "
                      "{default_ffn_mult}"},
    [OPT_FFN_WIDTH] =
        {"ffn-width", "N", CMD_TRAIN | CMD_PROFILE,
         "forward: the MLP's hidden width exactly, 1 to {max_ffn_width} (11008, 14336, "
         "...); instead of --ffn-mult"},
    [OPT_MLP] = {"mlp", "gelu|gelu-tanh|relu|swiglu|geglu|geglu-tanh", CMD_TRAIN | CMD_PROFILE,
                 "forward: the MLP's activation; swiglu, geglu and geglu-tanh (Gemma's) are "
                 "gated, down(act(gate h) * up h); default gelu (erf)"},
    [OPT_BIAS] = {"bias", "yes|no|qkv|mlp", CMD_TRAIN | CMD_PROFILE,
                  "forward: which projections carry a bias: yes, every one and the head "
                  "(GPT-2); no, none (Llama); qkv, the attention's q, k and v alone (Qwen2); "
                  "mlp, the MLP's and the head (GPT-J); default yes"},
    [OPT_TIE_EMBEDDINGS] = {"tie-embeddings", "yes|no", CMD_TRAIN | CMD_PROFILE,
                            "forward: the head's weight is the embedding (GPT-2, Gemma), one "
                            "tensor whose gradient sums both uses; default no, or the model's"},
    [OPT_WEIGHT_STORAGE] = {"weight-storage", "drawn|stored", CMD_PROFILE,
                            "forward without --weights: drawn, each weight made by its "
                            "position right before the matmul reads it, never stored (the "
                            "memory is the activations'); stored, every matrix drawn whole "
                            "once and kept; the same bits either way; default drawn"},
    [OPT_ACTIVATIONS] = {"activations", "auto|keep|recompute", CMD_PROFILE,
                         "forward with --grad: what the backward keeps: every sub-block's "
                         "activations, or each one's input alone with the rest recomputed "
                         "before its backward (one more forward pass, the same bits); auto "
                         "keeps them unless that would not fit; default auto"},
    [OPT_VOCAB] = {"vocab", "V", CMD_PROFILE, "forward: vocabulary size; default {default_vocab}"},
    [OPT_BATCH] = {"batch", "B", CMD_PROFILE,
                   "forward: sequences in the batch; default {default_batch}"},
    [OPT_TOKENS] = {"tokens", "T", CMD_PROFILE,
                    "forward: tokens per sequence; default {default_tokens}"},
    [OPT_QK_NORM] = {"qk-norm", NULL, CMD_TRAIN | CMD_PROFILE,
                     "forward: RMSNorm over each head's queries and keys"},
    [OPT_POSITIONS] = {"positions", "none|learned|rope|rope-interleaved|alibi",
                       CMD_TRAIN | CMD_PROFILE,
                       "forward: positional information: none, learned (GPT-2's wpe, "
                       "pos_embed.weight), rope (rotary, Llama's and GPT-NeoX's rotate-half "
                       "pairing), rope-interleaved (GPT-J's pairs 2i, 2i+1) or alibi "
                       "(BLOOM's per-head linear bias on the scores); default none, "
                       "learned when --weights has pos_embed.weight"},
    [OPT_ROPE_THETA] = {"rope-theta", "T", CMD_TRAIN | CMD_PROFILE,
                        "forward with --positions rope: the rotary base theta > 0; default "
                        "10000"},
    [OPT_ROPE_FRACTION] = {"rope-fraction", "F", CMD_TRAIN | CMD_PROFILE,
                           "forward with rotary positions: the share of each head rotated, "
                           "its first hd F coordinates (GPT-NeoX's rotary_pct); default 1"},
    [OPT_LOGIT_SCALE] = {"logit-scale", "S", CMD_TRAIN | CMD_PROFILE,
                         "forward: the head's logits multiplied by S > 0 before the loss "
                         "(Cohere's logit_scale); default 1. No variance of the stream "
                         "changes, so the closed form and the Monte Carlo ignore it"},
    [OPT_RESIDUAL] = {"residual", "sequential|parallel-shared-norm|parallel-two-norms",
                      CMD_TRAIN | CMD_PROFILE,
                      "forward with --placement parallel: one norm shared by attention and "
                      "the MLP (GPT-J's, the default) or one each (GPT-NeoX's); the closed "
                      "form and the Monte Carlo model the shared norm alone"},
    [OPT_EMBEDDING_NORM] = {"embedding-norm", "none|layernorm", CMD_TRAIN | CMD_PROFILE,
                            "forward: a LayerNorm on the embedding before the first block "
                            "(BLOOM's word_embeddings_layernorm); default none"},
    [OPT_SLIDING_WINDOW] = {"sliding-window", "W", CMD_TRAIN | CMD_PROFILE,
                            "forward: on each sliding layer query t attends to keys "
                            "t - W + 1 .. t alone (Mistral's sliding_window); default none. "
                            "The closed form and the Monte Carlo model no mixing of positions, "
                            "windowed or not"},
    [OPT_WINDOW_PATTERN] = {"window-pattern", "N", CMD_TRAIN | CMD_PROFILE,
                            "forward with --sliding-window: layer l attends fully where "
                            "(l + 1) % N is 0 and slides elsewhere (Gemma 2's 2, Gemma 3's "
                            "6); default every layer slides"},
    [OPT_BLOCK] = {"block", "attn-mlp|mlp", CMD_PROFILE,
                   "a layer is attention then MLP, or the MLP alone (one sub-block); "
                   "default attn-mlp"},
    [OPT_GRAD] = {"grad", NULL, BOTH,
                  "also the backward half: the gradient's size and each branch's weight "
                  "gradient, in every engine"},
    [OPT_FINAL_NORM] = {"final-norm", "yes|no", BOTH,
                        "with --grad: a norm between the last sub-block and the head; default "
                        "the placement's (yes for pre-norm, sandwich, output-norm, parallel)"},
    [OPT_WEIGHTS] = {"weights", "FILE|DIR", CMD_TRAIN | CMD_PROFILE,
                     "forward: load every weight from a safetensors file (PyTorch's names; "
                     "see the manual); width, vocab, layers, MLP width, norm and QK-norm "
                     "follow from it; or a Hugging Face checkpoint directory (gpt2, llama, "
                     "mistral, qwen2, qwen3, starcoder2, phi3, gemma2, gemma3_text, olmo2, "
                     "gpt_neox, phi, opt, cohere, gptj, falcon, bloom), its config.json giving "
                     "the rest"},
    [OPT_TOKEN_IDS] = {"token-ids", "FILE", CMD_PROFILE,
                       "forward: the batch's token ids, a CSV of B rows of T ids"},
    [OPT_LOSS] = {"loss", "copy|next|random", CMD_PROFILE,
                  "forward with --grad: the loss differentiated: the head's cross-entropy "
                  "against token t (copy) or t + 1 (next), or <r_t, y_t> with r_t Gaussian "
                  "(random, no head needed); default copy"},
    [OPT_GRADS_OUT] = {"grads-out", "FILE", CMD_PROFILE,
                       "forward with --grad: write each parameter's gradient as a CSV row "
                       "name,shape,frobenius,rms; never replaces a file without --force"},
    [OPT_NAMES] = {"names", "checkpoint|varprof", CMD_PROFILE,
                   "with --grads-out and a checkpoint directory: name the rows as the "
                   "checkpoint does, a fused tensor as one row (checkpoint), or by varprof's "
                   "own tensors; default checkpoint"},
    [OPT_INIT] = {"init", "gain|torch", CMD_PROFILE,
                  "forward: weights scaled to --gain, or PyTorch's default init; default gain"},
    [OPT_METHOD] = {"method", "full|reduced", CMD_PROFILE,
                    "Monte Carlo: every coordinate, or the few the recursion uses plus a "
                    "chi-square (exact in distribution); default reduced, full with --grad"},
    [OPT_FORMAT] = {"format", "text|csv|json|markdown|latex", CMD_PROFILE | CMD_TABLE | CMD_MODELS,
                    "output format; default text, or as --output's .csv, .json, .md or .tex "
                    "says"},
    [OPT_COLUMNS] = {"columns", "NAME[,NAME...]|all", CMD_MODELS,
                     "the columns of --format csv, json, markdown or latex, by their CSV "
                     "names; default: name, year, layers, placement, norm, qk_norm and "
                     "parameters on a page (markdown, latex), all in csv and json"},
    [OPT_OUTPUT] = {"output", "FILE", CMD_TRAIN | CMD_PROFILE | CMD_MERGE,
                    "write to FILE instead of standard output; never replaces a file "
                    "without --force"},
    [OPT_FORCE] = {"force", NULL, CMD_TRAIN | CMD_PROFILE | CMD_MERGE,
                   "let --output, --plot, --plot-script, --grads-out, --layer-stats and --save "
                   "replace an existing file"},
    [OPT_EVERY] = {"every", "N", CMD_PROFILE,
                   "show every Nth sub-block (the first and last always); default 1"},
    [OPT_PLOT] = {"plot", "FILE|-", CMD_TRAIN | CMD_PROFILE,
                  "draw the profile (train: the loss curves) with gnuplot: FILE.png, .svg or "
                  ".pdf, or - for the terminal"},
    [OPT_PLOT_SCRIPT] = {"plot-script", "FILE", CMD_TRAIN | CMD_PROFILE,
                         "with --plot, also write the gnuplot script, data inline, to rerun or "
                         "restyle"},
    [OPT_QUANTITY] = {"quantity", "all|stream|update|share|grad|weight-grad", CMD_PROFILE,
                      "what --plot draws; default all (three panels); grad and weight-grad "
                      "with --grad"},
    [OPT_SIZE] =
        {"size", "W,H", CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
         "the figure's size: inches for .pdf and .svg ({min_inches} to {max_inches}), pixels "
         "for .png ({min_pixels} to {max_pixels}, at {png_dpi} dpi); default 5.5,3.4 in "
         "(7 in high for three panels)"},
    [OPT_FONT_SIZE] = {"font-size", "PT", CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                       "the figures' text in points at that size, {min_font_pt} to {max_font_pt}; "
                       "default {default_font_pt}"},
    [OPT_X_AXIS] = {"x", "layer|sub-block", CMD_PROFILE,
                    "what --plot's x axis counts; default layer, so that parallel (one "
                    "sub-block a layer) lines up with the others at equal depth"},
    [OPT_NO_TITLE] = {"no-title", NULL, CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                      "draw the figures without their titles, for a caption to carry them"},
    [OPT_FIGURE_SCRIPTS] = {"plot-script", "DIR", CMD_FIGURES,
                            "also write each figure's gnuplot script, data inline, as DIR/NAME.gp"},
    [OPT_OUTDIR] = {"outdir", "DIR", CMD_FIGURES, "where the figures go; default plots"},
    [OPT_FIGURE_FORMAT] = {"format", "svg|png|pdf", CMD_FIGURES,
                           "the figures' format; default svg"},
    [OPT_EXPLAIN] = {"explain", NULL, CMD_TABLE,
                     "walk the recursion step by step, with the arithmetic written out"},
    [OPT_PROGRESS] = {"progress", NULL, CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                      "show the progress line on standard error even when it is not a "
                      "terminal"},
    [OPT_QUIET] = {"quiet", NULL, CMD_TRAIN | CMD_PROFILE | CMD_FIGURES,
                   "no progress line, even on a terminal"},
    [OPT_WIDE] = {"wide", NULL, CMD_TRAIN | BOTH | CMD_MODELS | CMD_FIGURES,
                  "text in its full width, lines beyond 80 columns; default: fit 80 columns"},
    [OPT_SHARD] = {"shard", "K/N", CMD_TRAIN | CMD_PROFILE,
                   "run the K-th of N parts of a sweep's combinations, split in their order "
                   "by estimated cost; 'varprof merge' joins the parts' CSV or JSON into the "
                   "whole sweep's"},
    [OPT_TRAIN_PLACEMENT] = {"placement", "NAME[,NAME...]", CMD_TRAIN,
                             "the placements to train, a list sweeps; default pre-norm,post-ln "
                             "(the seed's two)"},
    [OPT_TRAIN_LAYERS] =
        {"layers", "L[,L...]", CMD_TRAIN,
         "layers, 1 to {train_max_layers}; default {train_default_layers}; a list sweeps"},
    [OPT_TRAIN_WIDTH] = {"width", "D", CMD_TRAIN,
                         "the stream's width; default {train_default_width}"},
    [OPT_TRAIN_VOCAB] = {"vocab", "V", CMD_TRAIN, "vocabulary size; default {train_default_vocab}"},
    [OPT_TRAIN_FFN_MULT] =
        {"ffn-mult", "M", CMD_TRAIN,
         "the MLP's hidden width in widths, 1 to {max_ffn_mult}; default {train_default_ffn_mult}"},
    [OPT_TRAIN_BATCH] = {"batch", "B", CMD_TRAIN,
                         "sequences per step; default {train_default_batch}"},
    [OPT_TRAIN_TOKENS] = {"tokens", "T", CMD_TRAIN,
                          "tokens per sequence; default {train_default_tokens}"},
    [OPT_TRAIN_BLOCK] = {"block", "mlp|attn-mlp", CMD_TRAIN,
                         "a layer is the MLP alone, or attention then MLP; default mlp"},
    [OPT_TRAIN_INIT] = {"init", "torch|gain", CMD_TRAIN,
                        "PyTorch's default init, or weights scaled to gain 1; default torch"},
    [OPT_TRAIN_SEED] = {"seed", "S[,S...]", CMD_TRAIN,
                        "the seed of the weights and the tokens, 0 to 2^64-1; default 1; a "
                        "list sweeps"},
    [OPT_TRAIN_FINAL_NORM] = {"final-norm", "yes|no", CMD_TRAIN,
                              "a norm between the last layer and the head; default no (the "
                              "seed's)"},
    [OPT_TRAIN_EVERY] = {"every", "N", CMD_TRAIN,
                         "text: the loss every N steps (and the last); default 100"},
    [OPT_TRAIN_FORMAT] = {"format", "text|csv|json", CMD_TRAIN,
                          "output format; default text, or as --output's .csv or .json says"},
    [OPT_TASK] = {"task", "copy|next", CMD_TRAIN,
                  "predict token t (copy, the seed's) or t + 1 of a fixed random successor "
                  "chain (next); default copy"},
    [OPT_LR] = {"lr", "R[,R...]", CMD_TRAIN,
                "Adam's learning rate, > 0; default {train_default_lr}; a list sweeps"},
    [OPT_WARMUP] = {"warmup", "N[,N...]", CMD_TRAIN,
                    "linear warm-up: lr x min(1, (t+1)/N) at step t, 0 to --steps; default 0 "
                    "(none); a list sweeps"},
    [OPT_STEPS] = {"steps", "N", CMD_TRAIN,
                   "optimiser steps, 1 to {max_steps}; default {train_default_steps}"},
    [OPT_SCHEDULE] = {"schedule", "constant|cosine", CMD_TRAIN,
                      "after warm-up: constant, or times (1 + cos(pi t / steps)) / 2; default "
                      "constant"},
    [OPT_CLIP_NORM] = {"clip-norm", "C", CMD_TRAIN,
                       "clip the global gradient norm to C > 0, as clip_grad_norm_; default "
                       "none"},
    [OPT_WEIGHT_DECAY] = {"weight-decay", "W", CMD_TRAIN,
                          "AdamW's decoupled decay, p <- p (1 - lr W), >= 0; default 0 (Adam)"},
    [OPT_TOKEN_STREAM] = {"token-stream", "FILE", CMD_TRAIN,
                          "replay a token stream: a CSV of steps x batch rows of T ids, "
                          "step-major, instead of drawing them"},
    [OPT_LAYER_STATS] = {"layer-stats", "FILE", CMD_TRAIN,
                         "also write per step and tensor its gradient norm, weight norm and "
                         "update ratio as CSV; never replaces a file without --force"},
    [OPT_SAVE] = {"save", "FILE", CMD_TRAIN,
                  "write the trained weights as safetensors (the names --weights reads), "
                  "for one run; never replaces a file without --force"},
    [OPT_TRAINING] = {"training", NULL, CMD_FIGURES,
                      "instead, the seed's training claims: train-warmup, train-depth, "
                      "train-lr and train-layers, from runs of its experiment (about a minute "
                      "on two cores)"},
    [OPT_HELP] = {"help", NULL, CMD_TRAIN | BOTH | CMD_MODELS | CMD_FIGURES | CMD_MERGE,
                  "-h: print this help and exit; after a command, that command's alone"},
    [OPT_VERSION] = {"version", NULL, CMD_TRAIN | BOTH | CMD_MODELS | CMD_FIGURES | CMD_MERGE,
                     "-V: print the version and exit"},
};
