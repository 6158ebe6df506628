/* The C API's contract beyond the vectors: every error path (NULLs, short output buffers,
 * overlap, key and nonce lengths, unknown algorithms and backends), output zeroed on every
 * failed open, in-place and NULL-with-length-0 calls, threads sharing one context, the
 * stream format's files and the usage bounds. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"

static const uint8_t KEY[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t NONCE[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2};
/* An AES-GCM IV of another length. */
static const uint8_t LONG_NONCE[16] = {1};

static combsiv_aead *make(combsiv_algorithm alg) {
    combsiv_aead *ctx = NULL;
    size_t key_len = (alg == COMBSIV_AES_128_GCM_SIV || alg == COMBSIV_AES_128_GCM) ? 16 : 32;
    CHECK_STATUS(combsiv_aead_new(alg, KEY, key_len, &ctx), COMBSIV_OK);
    CHECK(ctx != NULL);
    return ctx;
}

static void new_refuses_bad_arguments(void) {
    combsiv_aead *ctx = (combsiv_aead *)&ctx; /* must be reset to NULL on failure */
    CHECK_STATUS(combsiv_aead_new(COMBSIV_AES_256_GCM_SIV, KEY, 16, &ctx), COMBSIV_EKEYLEN);
    CHECK(ctx == NULL);
    CHECK_STATUS(combsiv_aead_new(COMBSIV_AES_128_GCM, KEY, 32, &ctx), COMBSIV_EKEYLEN);
    CHECK_STATUS(combsiv_aead_new(COMBSIV_AES_128_GCM, KEY, 24, &ctx), COMBSIV_EKEYLEN);
    CHECK_STATUS(combsiv_aead_new(COMBSIV_AES_128_GCM, NULL, 0, &ctx), COMBSIV_EKEYLEN);
    CHECK_STATUS(combsiv_aead_new(COMBSIV_AES_128_GCM, NULL, 16, &ctx), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_new(COMBSIV_AES_128_GCM, KEY, 16, NULL), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_new((combsiv_algorithm)0, KEY, 16, &ctx), COMBSIV_EALGORITHM);
    CHECK_STATUS(combsiv_aead_new((combsiv_algorithm)5, KEY, 16, &ctx), COMBSIV_EALGORITHM);
    CHECK_STATUS(combsiv_aead_new((combsiv_algorithm)-1, KEY, 16, &ctx), COMBSIV_EALGORITHM);
    CHECK_STATUS(combsiv_aead_new_with_backend(COMBSIV_AES_128_GCM, KEY, 16, "sparc", &ctx),
                 COMBSIV_EBACKEND);
    CHECK_STATUS(combsiv_aead_new_with_backend(COMBSIV_AES_128_GCM, KEY, 16, NULL, &ctx),
                 COMBSIV_EINVAL);
    CHECK(ctx == NULL);
    CHECK(combsiv_backend_available("portable") == 1);
    CHECK(combsiv_backend_available("sparc") == 0);
    CHECK(combsiv_backend_available(NULL) == 0);
    CHECK(combsiv_backend_name(NULL) == NULL);
    combsiv_aead_free(NULL);
    CHECK(strcmp(combsiv_error_string(COMBSIV_EAUTH), "decryption failed: the message is not authentic") == 0);
    CHECK(strcmp(combsiv_error_string(7), "unknown status code") == 0);
    CHECK(strcmp(combsiv_version(), "0.1.0") == 0);
}

/* COMBSIV_BACKEND pins the backend of combsiv_aead_new (the test runner sets it). */
static void backend_follows_the_environment(void) {
    const char *pinned = getenv("COMBSIV_BACKEND");
    combsiv_aead *ctx = make(COMBSIV_AES_128_GCM_SIV);
    if (pinned != NULL && combsiv_backend_available(pinned)) CHECK(strcmp(combsiv_backend_name(ctx), pinned) == 0);
    printf("api: combsiv_aead_new runs on %s (COMBSIV_BACKEND=%s)\n", combsiv_backend_name(ctx),
           pinned ? pinned : "unset");
    combsiv_aead_free(ctx);
}

static void seal_refuses_bad_arguments(combsiv_algorithm alg) {
    combsiv_aead *ctx = make(alg);
    uint8_t in[64] = {1}, out[64 + COMBSIV_TAG_LEN], buffer[128];
    size_t len = 777;
    memset(out, 0x5a, sizeof out);
    CHECK_STATUS(combsiv_aead_seal(NULL, out, &len, sizeof out, NONCE, 12, in, 64, NULL, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, NULL, sizeof out, NONCE, 12, in, 64, NULL, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal(ctx, NULL, &len, sizeof out, NONCE, 12, in, 64, NULL, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NONCE, 12, NULL, 64, NULL, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NONCE, 12, in, 64, NULL, 3), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NULL, 12, in, 64, NULL, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out - 1, NONCE, 12, in, 64, NULL, 0), COMBSIV_EBUFFER);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NONCE, 0, in, 64, NULL, 0), COMBSIV_ENONCELEN);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NONCE, 12, in, SIZE_MAX, NULL, 0), COMBSIV_ETOOLONG);
    int siv = alg == COMBSIV_AES_128_GCM_SIV || alg == COMBSIV_AES_256_GCM_SIV;
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NONCE, 8, in, 64, NULL, 0),
                 siv ? COMBSIV_ENONCELEN : COMBSIV_OK);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, LONG_NONCE, 16, in, 64, NULL, 0),
                 siv ? COMBSIV_ENONCELEN : COMBSIV_OK);
    /* Partial overlap, either way round; associated data overlapping the output. */
    CHECK_STATUS(combsiv_aead_seal(ctx, buffer + 1, &len, 80, NONCE, 12, buffer, 64, NULL, 0), COMBSIV_EOVERLAP);
    CHECK_STATUS(combsiv_aead_seal(ctx, buffer, &len, 80, NONCE, 12, buffer + 40, 64, NULL, 0), COMBSIV_EOVERLAP);
    CHECK_STATUS(combsiv_aead_seal(ctx, buffer, &len, 80, NONCE, 12, in, 64, buffer + 79, 1), COMBSIV_EOVERLAP);
    /* A failed seal writes nothing. */
    memset(out, 0x5a, sizeof out);
    len = 777;
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out - 1, NONCE, 12, in, 64, NULL, 0), COMBSIV_EBUFFER);
    for (size_t i = 0; i < sizeof out; i++) CHECK(out[i] == 0x5a);
    CHECK(len == 777);
    /* NULL with length 0 everywhere but the tag's room; the nonce may overlap the output. */
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, COMBSIV_TAG_LEN, NONCE, 12, NULL, 0, NULL, 0), COMBSIV_OK);
    CHECK(len == COMBSIV_TAG_LEN);
    memcpy(buffer, NONCE, 12);
    CHECK_STATUS(combsiv_aead_seal(ctx, buffer, &len, 64 + COMBSIV_TAG_LEN, buffer, 12, in, 64, NULL, 0), COMBSIV_OK);
    CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sizeof out, NONCE, 12, in, 64, NULL, 0), COMBSIV_OK);
    CHECK(memcmp(out, buffer, sizeof out) == 0);
    combsiv_aead_free(ctx);
}

static void open_refuses_and_zeroes(combsiv_algorithm alg) {
    combsiv_aead *ctx = make(alg);
    uint8_t in[64], sealed[64 + COMBSIV_TAG_LEN], out[100], ad[5] = {1, 2, 3, 4, 5};
    size_t len;
    for (int i = 0; i < 64; i++) in[i] = (uint8_t)i;
    CHECK_STATUS(combsiv_aead_seal(ctx, sealed, &len, sizeof sealed, NONCE, 12, in, 64, ad, 5), COMBSIV_OK);
    struct {
        const combsiv_aead *ctx;
        size_t max_out;
        const uint8_t *nonce;
        size_t nonce_len;
        const uint8_t *in;
        size_t in_len;
        const uint8_t *ad;
        size_t ad_len;
        int expected;
    } cases[] = {
        {NULL, 100, NONCE, 12, sealed, 80, ad, 5, COMBSIV_EINVAL},
        {ctx, 63, NONCE, 12, sealed, 80, ad, 5, COMBSIV_EBUFFER},
        {ctx, 100, NONCE, 0, sealed, 80, ad, 5, COMBSIV_ENONCELEN},
        {ctx, 100, NULL, 12, sealed, 80, ad, 5, COMBSIV_EINVAL},
        {ctx, 100, NONCE, 12, NULL, 80, ad, 5, COMBSIV_EINVAL},
        {ctx, 100, NONCE, 12, sealed, 80, NULL, 5, COMBSIV_EINVAL},
        {ctx, 100, NONCE, 12, sealed, 15, ad, 5, COMBSIV_EAUTH},
        {ctx, 100, NONCE, 12, NULL, 0, ad, 5, COMBSIV_EAUTH},
        {ctx, 100, NONCE, 12, sealed, 79, ad, 5, COMBSIV_EAUTH},
        {ctx, 100, NONCE, 12, sealed, 80, ad, 4, COMBSIV_EAUTH},
        {ctx, 100, NONCE + 1, 11, sealed, 80, ad, 5, COMBSIV_ENONCELEN},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memset(out, 0xa5, sizeof out);
        len = 777;
        int siv = alg == COMBSIV_AES_128_GCM_SIV || alg == COMBSIV_AES_256_GCM_SIV;
        int expected = cases[c].expected == COMBSIV_ENONCELEN && !siv && cases[c].nonce_len ? COMBSIV_EAUTH
                                                                                           : cases[c].expected;
        CHECK_STATUS(combsiv_aead_open(cases[c].ctx, out, &len, cases[c].max_out, cases[c].nonce,
                                       cases[c].nonce_len, cases[c].in, cases[c].in_len, cases[c].ad,
                                       cases[c].ad_len),
                     expected);
        CHECK(all_zero(out, cases[c].max_out));
        for (size_t i = cases[c].max_out; i < sizeof out; i++) CHECK(out[i] == 0xa5);
        CHECK(len == 0);
    }
    /* Each bit of the message flipped in turn: never opens, always zeroed. */
    for (size_t bit = 0; bit < 8 * sizeof sealed; bit += 7) {
        sealed[bit / 8] ^= (uint8_t)(1 << bit % 8);
        memset(out, 0xa5, sizeof out);
        CHECK_STATUS(combsiv_aead_open(ctx, out, &len, 64, NONCE, 12, sealed, 80, ad, 5), COMBSIV_EAUTH);
        CHECK(all_zero(out, 64));
        sealed[bit / 8] ^= (uint8_t)(1 << bit % 8);
    }
    /* Overlap: refused, and the output zeroed as on any failure. */
    uint8_t buffer[200];
    memcpy(buffer + 8, sealed, 80);
    CHECK_STATUS(combsiv_aead_open(ctx, buffer, &len, 64, NONCE, 12, buffer + 8, 80, ad, 5), COMBSIV_EOVERLAP);
    CHECK(all_zero(buffer, 64));
    CHECK_STATUS(combsiv_aead_open(ctx, buffer + 100, &len, 64, NONCE, 12, sealed, 80, buffer + 90, 20),
                 COMBSIV_EOVERLAP);
    /* In place, and NULL output with nothing to write. */
    memcpy(buffer, sealed, 80);
    CHECK_STATUS(combsiv_aead_open(ctx, buffer, &len, 80, NONCE, 12, buffer, 80, ad, 5), COMBSIV_OK);
    CHECK(len == 64 && memcmp(buffer, in, 64) == 0);
    CHECK_STATUS(combsiv_aead_seal(ctx, sealed, &len, COMBSIV_TAG_LEN, NONCE, 12, NULL, 0, NULL, 0), COMBSIV_OK);
    CHECK_STATUS(combsiv_aead_open(ctx, NULL, &len, 0, NONCE, 12, sealed, COMBSIV_TAG_LEN, NULL, 0), COMBSIV_OK);
    CHECK(len == 0);
    combsiv_aead_free(ctx);
}

static void batches_check_every_job_first(void) {
    combsiv_aead *ctx = make(COMBSIV_AES_256_GCM_SIV);
    uint8_t data[2][32] = {{1}, {2}};
    combsiv_job jobs[2] = {{.data = data[0], .data_len = 32}, {.data = data[1], .data_len = 32}};
    CHECK_STATUS(combsiv_aead_seal_batch(NULL, jobs, 2, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal_batch(ctx, NULL, 2, 0), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_aead_seal_batch(ctx, NULL, 0, 0), COMBSIV_OK);
    jobs[1].ad = NULL;
    jobs[1].ad_len = 4;
    CHECK_STATUS(combsiv_aead_seal_batch(ctx, jobs, 2, 0), COMBSIV_EINVAL);
    CHECK(data[0][0] == 1 && all_zero(jobs[0].tag, 16)); /* nothing sealed */
    jobs[1].ad = data[1] + 30;
    CHECK_STATUS(combsiv_aead_seal_batch(ctx, jobs, 2, 0), COMBSIV_EOVERLAP);
    jobs[1].ad_len = 0;
    CHECK_STATUS(combsiv_aead_seal_batch(ctx, jobs, 2, 1), COMBSIV_OK);
    jobs[0].tag[0] ^= 1;
    CHECK_STATUS(combsiv_aead_open_batch(ctx, jobs, 2, 0), COMBSIV_EAUTH);
    CHECK(jobs[0].status == COMBSIV_EAUTH && all_zero(data[0], 32));
    CHECK(jobs[1].status == COMBSIV_OK && data[1][0] == 2);
    combsiv_aead_free(ctx);
}

/* Threads share one context: each seals and opens its own messages and checks them against
 * what the main thread sealed before. */
enum { THREADS = 8, ROUNDS = 300 };
static combsiv_aead *shared;
static uint8_t expected[ROUNDS][100 + COMBSIV_TAG_LEN];

static void message(int round, uint8_t *out, size_t *len) {
    *len = (size_t)(round % 100);
    for (size_t i = 0; i < *len; i++) out[i] = (uint8_t)(round * 7 + i);
}

static void *worker(void *arg) {
    (void)arg;
    for (int round = 0; round < ROUNDS; round++) {
        uint8_t plaintext[100], sealed[100 + COMBSIV_TAG_LEN], opened[100];
        size_t len, sealed_len, opened_len;
        message(round, plaintext, &len);
        CHECK_STATUS(combsiv_aead_seal(shared, sealed, &sealed_len, sizeof sealed, NONCE, 12, plaintext, len,
                                       NULL, 0),
                     COMBSIV_OK);
        CHECK(memcmp(sealed, expected[round], sealed_len) == 0);
        CHECK_STATUS(combsiv_aead_open(shared, opened, &opened_len, sizeof opened, NONCE, 12, sealed, sealed_len,
                                       NULL, 0),
                     COMBSIV_OK);
        CHECK(opened_len == len && memcmp(opened, plaintext, len) == 0);
    }
    return NULL;
}

static void threads_share_a_context(void) {
    shared = make(COMBSIV_AES_128_GCM_SIV);
    for (int round = 0; round < ROUNDS; round++) {
        uint8_t plaintext[100];
        size_t len, sealed_len;
        message(round, plaintext, &len);
        CHECK_STATUS(combsiv_aead_seal(shared, expected[round], &sealed_len, sizeof expected[round], NONCE, 12,
                                       plaintext, len, NULL, 0),
                     COMBSIV_OK);
    }
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, worker, NULL) == 0);
    for (int t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    combsiv_aead_free(shared);
}

static void files_round_trip(void) {
    char dir[] = "/tmp/combsiv-c-XXXXXX", plain[64], sealed[64], opened[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plain, sizeof plain, "%s/plain", dir);
    snprintf(sealed, sizeof sealed, "%s/sealed", dir);
    snprintf(opened, sizeof opened, "%s/opened", dir);
    FILE *file = fopen(plain, "wb");
    CHECK(file != NULL);
    for (int i = 0; i < 300000; i++) fputc(i * 31 % 251, file);
    fclose(file);
    combsiv_stream_options options = {.chunk_size = 4096, .key_bits = 128, .threads = 2};
    uint64_t length = 0;
    CHECK_STATUS(combsiv_stream_encrypt_file(plain, sealed, KEY, 32, &options, &length), COMBSIV_OK);
    CHECK(length == 300000);
    CHECK_STATUS(combsiv_stream_encrypt_file(plain, sealed, KEY, 32, &options, &length), COMBSIV_EEXIST);
    CHECK_STATUS(combsiv_stream_encrypt_file(plain, opened, KEY, 16, NULL, NULL), COMBSIV_EKEYLEN);
    options.key_bits = 192;
    CHECK_STATUS(combsiv_stream_encrypt_file(plain, opened, KEY, 32, &options, NULL), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_stream_encrypt_file(NULL, opened, KEY, 32, NULL, NULL), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_stream_decrypt_file(plain, opened, KEY, 32, NULL, NULL), COMBSIV_EFORMAT);
    CHECK_STATUS(combsiv_stream_decrypt_file("/nonexistent/x", opened, KEY, 32, NULL, NULL), COMBSIV_EIO);
    uint8_t wrong[32] = {0};
    CHECK_STATUS(combsiv_stream_decrypt_file(sealed, opened, wrong, 32, NULL, NULL), COMBSIV_EAUTH);
    CHECK(access(opened, F_OK) != 0); /* nothing left behind */
    CHECK_STATUS(combsiv_stream_decrypt_file(sealed, opened, KEY, 32, NULL, &length), COMBSIV_OK);
    CHECK(length == 300000);
    file = fopen(opened, "rb");
    CHECK(file != NULL);
    for (int i = 0; i < 300000; i++) CHECK(fgetc(file) == i * 31 % 251);
    CHECK(fgetc(file) == EOF);
    fclose(file);
    /* A flipped byte in a middle chunk: refused, and the old output kept. */
    file = fopen(sealed, "r+b");
    CHECK(file != NULL && fseek(file, 100000, SEEK_SET) == 0);
    int byte = fgetc(file);
    CHECK(fseek(file, 100000, SEEK_SET) == 0 && fputc(byte ^ 1, file) != EOF);
    fclose(file);
    combsiv_stream_options overwrite = {.overwrite = 1};
    CHECK_STATUS(combsiv_stream_decrypt_file(sealed, opened, KEY, 32, &overwrite, NULL), COMBSIV_EAUTH);
    file = fopen(opened, "rb");
    CHECK(file != NULL && fgetc(file) == 0);
    fclose(file);
    CHECK(remove(plain) == 0 && remove(sealed) == 0 && remove(opened) == 0 && rmdir(dir) == 0);
}

static void bounds(void) {
    double log2 = 0;
    /* 2^32 random nonces, 1 KiB messages: far below 2^-32 for AES-GCM-SIV, not for AES-GCM. */
    CHECK_STATUS(combsiv_bound_gcm_siv_random_nonces(4294967296.0, 1024, &log2), COMBSIV_OK);
    CHECK(log2 < -32);
    double gcm;
    CHECK_STATUS(combsiv_bound_gcm_random_nonces(4294967296.0, 1024, &gcm), COMBSIV_OK);
    CHECK(gcm > -34 && gcm > log2);
    CHECK_STATUS(combsiv_bound_gcm_siv_nonce_based(1e9, 1, 1 << 20, &log2), COMBSIV_OK);
    CHECK(isfinite(log2) && log2 < -32);
    CHECK_STATUS(combsiv_bound_gcm_siv_random_nonces(-1, 1024, &log2), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_bound_gcm_siv_random_nonces(NAN, 1024, &log2), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_bound_gcm_siv_random_nonces(1, 1024, NULL), COMBSIV_EINVAL);
    CHECK_STATUS(combsiv_bound_gcm_siv_random_nonces(1, UINT64_MAX, &log2), COMBSIV_ETOOLONG);
}

int main(void) {
    require_backends();
    new_refuses_bad_arguments();
    backend_follows_the_environment();
    for (combsiv_algorithm alg = COMBSIV_AES_128_GCM_SIV; alg <= COMBSIV_AES_256_GCM; alg++) {
        seal_refuses_bad_arguments(alg);
        open_refuses_and_zeroes(alg);
    }
    batches_check_every_job_first();
    threads_share_a_context();
    files_round_trip();
    bounds();
    printf("api: all checks passed\n");
    return 0;
}
