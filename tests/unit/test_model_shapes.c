/* The models table's shapes against the world: for every model with a
 * published parameter count, vp_model_parameters of its shape is held to
 * that count within 1 %; where it cannot be, the table says why. A small
 * shape is counted by hand as well, every kind of parameter in it. */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

static const char *models_path(void)
{
    const char *env = getenv("VARPROF_MODELS");
    return env && *env ? env : "data/models.csv";
}

/* A published count, or why none can be held to 1 %. outside_shape is what
 * the published network has that the table's shape does not describe (and
 * the count leaves out), added back before comparing. */
typedef struct {
    const char *name;
    double published; /* 0: not held; why_not says why */
    double outside_shape;
    const char *source;
    const char *why_not;
} published_count;

/* BERT's and RoBERTa's pooler (d x d and a bias), token-type rows and
 * embedding LayerNorm (weight and bias): in their published counts, not in
 * a stack's shape. */
#define BERT_EXTRAS(d, types) ((d) * (d) + (d) + (types) * (d) + 2.0 * (d))

/* The Pythia model card's naming table: total parameters, counted with
 * both of use_parallel_residual's LayerNorms and the untied head */
#define PYTHIA_CARD(size, total)                                                                   \
    "huggingface EleutherAI/pythia model card, naming table: Pythia-" size " " total " total "     \
    "parameters"

/* its embedding counts a vocabulary of 256128 rows; config.json's, 256000 */
#define GEMMA_2_TABLE_2 "arXiv:2408.00118 Table 2: embedding + non-embedding parameters"

/* keras-hub's Gemma 3 presets: each text-only model's parameters */
#define KERAS_GEMMA3(preset, params)                                                               \
    "github keras-team/keras-hub keras_hub/src/models/gemma3/gemma3_presets.py: " preset           \
    " params " params

/* StarCoder2's README loads the 15B in bfloat16 and prints its memory
 * footprint, 32251.33 MB: 2 bytes a parameter, and the buffers the
 * transformers of its day kept in each of the 40 layers' rotary module (cos
 * and sin for 16384 positions x 128 in bfloat16, 64 float32 inverse
 * frequencies), taken off. Only the untied head gives it: tied, 31647 MB. */
#define STARCODER2_15B_FOOTPRINT ((32251.33e6 - 40.0 * (2.0 * 16384 * 128 * 2 + 64 * 4)) / 2.0)

static const published_count counts[] = {
    {"glm-130b", 0, 0, "arXiv:2210.02414",
     "the published 130B is a rounded name with no exact total beside it; the count, 128.70e9, "
     "is 1.0 % below it"},
    {"olmo-2-13b", 13716198400.0, 0,
     "huggingface allenai/OLMo-2-1124-13B model.safetensors.index.json: total_size "
     "54864793600 bytes of F32 / 4",
     NULL},
    {"olmo-2-7b", 7.30e9, 0, "huggingface allenai/OLMo-2-1124-7B safetensors: 7.3B params", NULL},
    {"gpt-j-6b", 6053381344.0, 0,
     "github kingoflolz/mesh-transformer-jax README, GPT-J-6B n_parameters", NULL},
    {"gpt-neox-20b", 20554567680.0, 0,
     "huggingface EleutherAI/gpt-neox-20b model card (20,554,567,680 parameters)", NULL},
    {"palm-540b", 540.35e9, 0, "arXiv:2204.02311 Table 1", NULL},
    {"pythia-12b", 11846072320.0, 0,
     "huggingface EleutherAI/pythia-12b model card (11,846,072,320 total parameters)", NULL},
    {"transformer-base", 0, 0, "arXiv:1706.03762 Table 3 (65e6)",
     "65e6 counts the encoder and the decoder with its cross-attention; the row describes "
     "the encoder alone (37.9e6)"},
    {"transformer-big", 0, 0, "arXiv:1706.03762 Table 3 (213e6)",
     "213e6 counts the encoder and the decoder with its cross-attention; the row describes "
     "the encoder alone (113e6)"},
    {"bert-base", 110e6, BERT_EXTRAS(768.0, 2.0), "arXiv:1810.04805 Sec 3 (BERT-BASE 110M)", NULL},
    {"bert-large", 0, 0, "arXiv:1810.04805 Sec 3 (BERT-LARGE 340M)",
     "340M is 1.4 % above the network the paper describes: with its pooler, token types and "
     "embedding LayerNorm the count is 335,141,888, the sum of huggingface BertModel's "
     "tensors; no exact figure is published"},
    {"roberta-large", 355e6, BERT_EXTRAS(1024.0, 1.0),
     "github facebookresearch/fairseq examples/roberta README (roberta.large 355M)", NULL},
    {"gpt-2-small", 124e6, 0,
     "huggingface openai-community/gpt2 model card (124M, with tied embeddings; the paper's "
     "Table 2 says 117M, an undercount)",
     NULL},
    {"gpt-2-xl", 0, 0, "Radford et al. 2019 Table 2 (1542M); huggingface model card (1.5B)",
     "1542M repeats the paper's undercount (117M for the 124M model) and 1.5B is rounded; "
     "the count, 1,557,611,200, is the sum of huggingface gpt2-xl's tensors"},
    {"t5-base", 0, 0, "arXiv:1910.10683 Sec 3.1.1 (220M)",
     "220M counts the encoder and the decoder with its cross-attention; the row describes "
     "the encoder alone (110e6)"},
    {"gpt-3-175b", 175.0e9, 0, "arXiv:2005.14165 Table 2.1", NULL},
    {"bloom-176b", 176247271424.0, 0,
     "huggingface bigscience/bloom model card (176,247,271,424 parameters, its embedding "
     "LayerNorm among them)",
     NULL},
    {"opt-125m", 125e6, 0, "arXiv:2205.01068 Table 1 (125M)", NULL},
    {"opt-350m", 0, 0, "arXiv:2205.01068 Table 1 (350M)",
     "its embedding is word_embed_proj_dim 512 wide, mapped to the 1024-wide stream by "
     "project_in and back by project_out, and the table has no column for it: counted 1024 "
     "wide the shape gives 355,887,104, 1.7 % above the paper's 350M"},
    {"opt-1.3b", 0, 0, "arXiv:2205.01068 Table 1 (1.3B)",
     "the paper's 1.3B is rounded to two figures: the shape's 1,315,758,080 lies within that "
     "rounding but 1.2 % above 1.3B, outside the 1 % this test holds a count to"},
    {"opt-6.7b", 6.7e9, 0, "arXiv:2205.01068 Table 1 (6.7B)", NULL},
    {"opt-175b", 175e9, 0, "arXiv:2205.01068 Table 1", NULL},
    {"llama-2-70b", 68976648192.0, 0,
     "meta-llama/Llama-2-70b-hf's tensors summed (PEFT's print_trainable_parameters: all "
     "params 68,976,648,192); the paper's 70B is the name, 1.5 % above",
     NULL},
    {"llama-2-7b", 6.74e9, 0, "huggingface meta-llama/Llama-2-7b-hf safetensors: 6.74B params",
     NULL},
    {"mistral-7b", 7.24e9, 0, "huggingface mistralai/Mistral-7B-v0.1 safetensors: 7.24B params",
     NULL},
    {"deepseek-llm-67b", 67e9, 0, "arXiv:2401.02954 Table 2 (67B)", NULL},
    {"deepseek-v3", 0, 0, "arXiv:2412.19437 (671B total, 37B activated)",
     "a mixture of experts with multi-head latent attention; the row's shape is a dense model "
     "of its width, so its count (54.7e9) is neither the 671B total nor the 37B activated"},
    {"llama-3-8b", 8.03e9, 0, "huggingface meta-llama/Meta-Llama-3-8B safetensors: 8.03B params",
     NULL},
    {"llama-3.1-405b", 405e9, 0, "arXiv:2407.21783 Table 3", NULL},
    {"llama-3.1-70b", 70.6e9, 0, "huggingface meta-llama/Llama-3.1-70B safetensors: 70.6B params",
     NULL},
    {"qwen2-7b", 7.62e9, 0, "huggingface Qwen/Qwen2-7B safetensors: 7.62B params", NULL},
    {"qwen2.5-72b", 72.7e9, 0, "huggingface Qwen/Qwen2.5-72B model card: 72.7B", NULL},
    {"qwen3-0.6b", 0.6e9, 0,
     "huggingface Qwen/Qwen3-0.6B model card: 0.6B (0.44B without the embedding)", NULL},
    {"qwen3-8b", 8.2e9, 0, "huggingface Qwen/Qwen3-8B model card: 8.2B", NULL},
    {"starcoder2-3b", 3.03e9, 0, "huggingface bigcode/starcoder2-3b safetensors: 3.03B params",
     NULL},
    {"starcoder2-7b", 0, 0, "huggingface bigcode/starcoder2-7b model card (7B)",
     "7B is the rounded name with no exact total beside it; the count with its tied head, "
     "7,173,923,840, is 2.5 % above it"},
    {"starcoder2-15b", STARCODER2_15B_FOOTPRINT, 0,
     "github bigcode-project/starcoder2 README.md (a copy in github dxdyt/blog-web "
     "content/posts/starcoder2.md): StarCoder2-15B in bfloat16, get_memory_footprint() "
     "32251.33 MB",
     NULL},
    {"gemma-2-27b", 1180237824.0 + 26047480320.0, 0, GEMMA_2_TABLE_2, NULL},
    {"gemma-2-2b", 590118912.0 + 2024517888.0, 0, GEMMA_2_TABLE_2, NULL},
    {"gemma-2-9b", 917962752.0 + 8324201984.0, 0, GEMMA_2_TABLE_2, NULL},
    /* Gemma 3's text stacks as Keras counts them, exactly; its embedding has
       262144 rows where Hugging Face's multimodal checkpoints (and so the
       table) have 262208: the 64 extra rows are taken off the table's count */
    {"gemma-3-1b", 999885952.0, 0, KERAS_GEMMA3("gemma3_1b", "999885952"), NULL},
    {"gemma-3-4b", 3880099328.0, -64.0 * 2560, KERAS_GEMMA3("gemma3_4b_text", "3880099328"), NULL},
    {"gemma-3-12b", 11765788416.0, -64.0 * 3840, KERAS_GEMMA3("gemma3_12b_text", "11765788416"),
     NULL},
    {"gemma-3-27b", 27009002240.0, -64.0 * 5376, KERAS_GEMMA3("gemma3_27b_text", "27009002240"),
     NULL},
    /* the new families: Pythia's exact totals from its model card's naming table */
    {"pythia-70m", 70426624.0, 0, PYTHIA_CARD("70M", "70,426,624"), NULL},
    {"pythia-160m", 162322944.0, 0, PYTHIA_CARD("160M", "162,322,944"), NULL},
    {"pythia-410m", 405334016.0, 0, PYTHIA_CARD("410M", "405,334,016"), NULL},
    {"pythia-1b", 1011781632.0, 0, PYTHIA_CARD("1B", "1,011,781,632"), NULL},
    {"pythia-1.4b", 1414647808.0, 0, PYTHIA_CARD("1.4B", "1,414,647,808"), NULL},
    {"pythia-2.8b", 2775208960.0, 0, PYTHIA_CARD("2.8B", "2,775,208,960"), NULL},
    {"pythia-6.9b", 6857302016.0, 0, PYTHIA_CARD("6.9B", "6,857,302,016"), NULL},
    {"falcon-7b", 0, 0, "tiiuae/falcon-7b model card and apxml.com/models/falcon-7b (7B)",
     "7B is the rounded name with no exact total beside it; the count, 6,921,720,704, is "
     "1.1 % below it"},
    {"falcon-40b", 0, 0, "tiiuae/falcon-40b model card (40B)",
     "40B is the rounded name with no exact total beside it; the count with its tied head, "
     "41,303,293,952, is 3.3 % above it"},
    {"phi-2", 2779683840.0, 51200.0,
     "microsoft/phi-2's tensors summed, 2,779,683,840, in a paper's table of Hugging Face "
     "models' counts; with lm_head's bias of 51200, outside the shape",
     NULL},
    {"phi-3-mini-4k", 3821079552.0, 0,
     "microsoft/Phi-3-mini-4k-instruct's tensors summed, 3,821,079,552, in the same table", NULL},
    {"command-r", 35e9, 0,
     "huggingface CohereForAI/c4ai-command-r-v01 model card: 35 billion parameters", NULL},
    {"bloom-560m", 559214592.0, 0,
     "bigscience/bloom-560m's tensors summed, 559,214,592, in a study's table of checkpoints",
     NULL},
    {"qwen3-32b", 32.8e9, 0,
     "huggingface Qwen/Qwen3-32B model card: 32.8B, as apxml.com/models/qwen3-32b restates it",
     NULL},
};

#define TOLERANCE 0.01 /* the issue's: published figures are rounded to 3 digits or so */

static void counts_match_published_figures(void **state)
{
    (void)state;
    vp_model_table table;
    vp_error err;
    if (vp_models_read(models_path(), &table, &err) != VP_OK) {
        print_error("%s\n", err.message);
        fail();
    }
    size_t failures = 0, held = 0;
    double worst = 0.0;
    const char *worst_name = "";
    for (size_t i = 0; i < table.count; i++) {
        const vp_model *m = &table.models[i];
        const published_count *c = NULL;
        for (size_t j = 0; j < sizeof counts / sizeof *counts; j++)
            if (strcmp(counts[j].name, m->name) == 0)
                c = &counts[j];
        /* every row of the table has a line here: a figure, or why none */
        if (!c || !c->source[0] || (c->published == 0.0) == !c->why_not) {
            print_error("%s: no published count, and no reason, in this test\n", m->name);
            failures++;
            continue;
        }
        /* an encoder-decoder's or a mixture of experts' count is not the
         * model's: the table says so, and so must this test */
        if (m->shape.architecture != VP_MODEL_ARCHITECTURE_DENSE && c->published != 0.0) {
            print_error("%s is %s: its count cannot be held to the model's\n", m->name,
                        vp_model_architecture_name(m->shape.architecture));
            failures++;
        }
        double count;
        assert_int_equal(vp_model_parameters(m, &count), VP_OK);
        assert_true(count > 0.0 && count == floor(count));
        if (c->published == 0.0)
            continue;
        held++;
        const double relative = fabs(count + c->outside_shape - c->published) / c->published;
        if (relative > worst) {
            worst = relative;
            worst_name = m->name;
        }
        if (relative > TOLERANCE) {
            print_error("%s: counted %.0f + %.0f outside the shape, published %.4g (%s): "
                        "%.2f %% apart, over %.0f %%\n",
                        m->name, count, c->outside_shape, c->published, c->source, 100.0 * relative,
                        100.0 * TOLERANCE);
            failures++;
        }
    }
    print_message("%zu of %zu models held to their published counts; the widest gap %.2f %% "
                  "(%s)\n",
                  held, table.count, 100.0 * worst, worst_name);
    vp_model_table_free(&table);
    assert_int_equal(failures, 0);
}

/* Every kind of parameter once, counted by hand. */
static void a_small_shape_counted_by_hand(void **state)
{
    (void)state;
    vp_model m = {.layers = 2, .placement = VP_SANDWICH, .norm = VP_NORM_LAYERNORM, .qk_norm = 1};
    m.shape = (vp_model_shape){.known = 1,
                               .width = 8,
                               .heads = 2,
                               .kv_heads = 1,
                               .head_dim = 4,
                               .ffn_width = 16,
                               .vocab = 10,
                               .activation = VP_MLP_SWIGLU,
                               .positions = VP_MODEL_POSITIONS_LEARNED,
                               .max_positions = 5,
                               .biases = VP_MODEL_BIASES_YES,
                               .final_norm = 1};
    /* embedding 10 x 8 = 80, positions 5 x 8 = 40; per layer: q 8 x 8 = 64,
     * k and v 8 x 4 each = 64, o 64, their biases 8 + 4 + 4 + 8 = 24; gate,
     * up and down 3 x 8 x 16 = 384, biases 16 + 16 + 8 = 40; sandwich's 4
     * LayerNorms 4 x 16 = 64; QK-norm 2 x (4 + 4) = 16: 720 a layer, 1440;
     * final norm 16, untied head 80 */
    double count = 0.0;
    assert_int_equal(vp_model_parameters(&m, &count), VP_OK);
    assert_true(count == 120.0 + 1440.0 + 16.0 + 80.0);
    /* RMSNorm, no QK-norm, q/k/v biases only, a GELU MLP, tied, no final
     * norm, parallel (one norm a layer): 80 + 40 + 2 x (192 + 16 + 256 + 8) */
    m.norm = VP_NORM_RMSNORM;
    m.qk_norm = 0;
    m.placement = VP_PARALLEL;
    m.shape.biases = VP_MODEL_BIASES_QKV;
    m.shape.activation = VP_MLP_GELU;
    m.shape.tied_embeddings = 1;
    m.shape.final_norm = 0;
    assert_int_equal(vp_model_parameters(&m, &count), VP_OK);
    assert_true(count == 80.0 + 40.0 + 2.0 * (192.0 + 16.0 + 256.0 + 8.0));
    /* GPT-J's biases, the MLP's only: 16 + 8 more a layer than none */
    m.shape.biases = VP_MODEL_BIASES_MLP;
    double mlp_biased;
    assert_int_equal(vp_model_parameters(&m, &mlp_biased), VP_OK);
    m.shape.biases = VP_MODEL_BIASES_NO;
    assert_int_equal(vp_model_parameters(&m, &count), VP_OK);
    assert_true(mlp_biased - count == 2.0 * (16.0 + 8.0));
    /* parallel-two-norms: a second input RMSNorm a layer, 8 more each */
    double forms;
    m.shape.residual = VP_RESIDUAL_PARALLEL_TWO_NORMS;
    assert_int_equal(vp_model_parameters(&m, &forms), VP_OK);
    assert_true(forms - count == 2.0 * 8.0);
    /* LayerNorm's two norms a layer are 16 wide each, without their bias
     * (CohereLayerNorm) 8; an embedding LayerNorm (BLOOM's) adds 16 */
    m.norm = VP_NORM_LAYERNORM;
    double biased_norms;
    assert_int_equal(vp_model_parameters(&m, &biased_norms), VP_OK);
    assert_true(biased_norms - forms == 2.0 * 2.0 * 8.0);
    m.shape.norm_unbiased = 1;
    assert_int_equal(vp_model_parameters(&m, &forms), VP_OK);
    assert_true(biased_norms - forms == 2.0 * 2.0 * 8.0);
    assert_true(forms - count == 2.0 * 8.0);
    m.shape.norm_unbiased = 0;
    m.shape.embedding_norm = VP_EMBEDDING_NORM_LAYERNORM;
    assert_int_equal(vp_model_parameters(&m, &forms), VP_OK);
    assert_true(forms - biased_norms == 16.0);
    m.norm = VP_NORM_RMSNORM;
    m.shape.embedding_norm = VP_EMBEDDING_NORM_NONE;
    m.shape.residual = VP_RESIDUAL_SEQUENTIAL;
    /* no norms at all, rope positions: no position table */
    m.placement = VP_NO_NORM;
    m.shape.positions = VP_MODEL_POSITIONS_ROPE;
    m.shape.max_positions = 0;
    assert_int_equal(vp_model_parameters(&m, &count), VP_OK);
    assert_true(count == 80.0 + 2.0 * (192.0 + 256.0));
}

static void unknown_shapes_are_refused(void **state)
{
    (void)state;
    vp_model m = {.layers = 2, .placement = VP_PRE_NORM, .norm = VP_NORM_RMSNORM};
    double count = -1.0;
    assert_int_equal(vp_model_parameters(&m, &count), VP_EINVAL);
    assert_true(count == -1.0);
    assert_int_equal(vp_model_parameters(NULL, &count), VP_EINVAL);
    m.shape.known = 1;
    assert_int_equal(vp_model_parameters(&m, NULL), VP_EINVAL);
    assert_string_equal(vp_mlp_name(VP_MLP_GEGLU), "geglu");
    assert_string_equal(vp_model_positions_name(VP_MODEL_POSITIONS_ALIBI), "alibi");
    assert_string_equal(vp_model_biases_name(VP_MODEL_BIASES_QKV), "qkv");
    assert_string_equal(vp_model_biases_name(VP_MODEL_BIASES_COUNT), "?");
    assert_string_equal(vp_model_architecture_name(VP_MODEL_ARCHITECTURE_ENCODER_DECODER),
                        "encoder-decoder");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_match_published_figures),
        cmocka_unit_test(a_small_shape_counted_by_hand),
        cmocka_unit_test(unknown_shapes_are_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the models' shapes", tests, NULL, NULL);
}
