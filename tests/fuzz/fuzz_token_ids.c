/* The token-ids reader (--token-ids FILE): the first byte picks the vocab,
 * the rest is the file. */
#include <limits.h>

#include "fuzz_common.h"
#include "varprof/forward.h"
#include "varprof/token_ids.h"

/* First bytes 0..239 are the vocab itself (0 is refused); the rest pick
 * vocabularies from real models up to the forward engine's limit. */
static size_t pick_vocab(uint8_t b)
{
    static const size_t big[] = {256,     1000,   32000,   50257,   65535,
                                 65536,   65537,  100000,  151936,  256000,
                                 262144,  500000, 1000000, 1048575, VP_FORWARD_MAX_VOCAB,
                                 1u << 16};
    return b < 240 ? b : big[b - 240];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const size_t vocab = pick_vocab(data[0]);
    const char *path = fuzz_write_file(data + 1, size - 1);
    unsigned *ids = NULL;
    size_t batch = 0, tokens = 0;
    vp_error err;
    if (vp_token_ids_read(path, vocab, &ids, &batch, &tokens, &err) == VP_OK) {
        FUZZ_CHECK(ids != NULL);
        FUZZ_CHECK(batch >= 1 && tokens >= 1);
        FUZZ_CHECK(tokens <= VP_MAX_TOKEN_IDS / batch);
        for (size_t i = 0; i < batch * tokens; i++)
            FUZZ_CHECK(ids[i] < vocab);
    } else {
        FUZZ_CHECK(ids == NULL);
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    }
    free(ids);
    return 0;
}
