/* The cost of the C API's boundary, the C side: nanoseconds per 16-byte AES-GCM-SIV seal
 * through combsiv_aead_seal in the installed shared library, timed as examples/boundary.rs
 * times the Rust API (median of 15 runs of 200 000 seals, a fresh nonce each). */
#include <combsiv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SEALS = 200000, RUNS = 15 };

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void) {
    static const struct {
        const char *name;
        combsiv_algorithm alg;
        size_t key_len;
    } algorithms[] = {{"AES-128-GCM-SIV", COMBSIV_AES_128_GCM_SIV, 16},
                      {"AES-256-GCM-SIV", COMBSIV_AES_256_GCM_SIV, 32}};
    for (size_t a = 0; a < 2; a++) {
        uint8_t key[32], message[16], out[16 + COMBSIV_TAG_LEN], nonce[12] = {0};
        memset(key, 0x42, sizeof key);
        memset(message, 7, sizeof message);
        combsiv_aead *ctx;
        if (combsiv_aead_new(algorithms[a].alg, key, algorithms[a].key_len, &ctx) != COMBSIV_OK) return 1;
        double runs[RUNS];
        size_t written;
        for (int r = 0; r < RUNS; r++) {
            double start = now_ns();
            for (uint32_t i = 0; i < SEALS; i++) {
                memcpy(nonce, &i, sizeof i);
                if (combsiv_aead_seal(ctx, out, &written, sizeof out, nonce, sizeof nonce, message,
                                      sizeof message, NULL, 0) != COMBSIV_OK)
                    return 1;
                __asm__ volatile("" : : "r"(out) : "memory");
            }
            runs[r] = (now_ns() - start) / SEALS;
        }
        qsort(runs, RUNS, sizeof runs[0], by_value);
        printf("%s 16-byte seal, combsiv_aead_seal from C through libcombsiv.so (%s): %.1f ns\n",
               algorithms[a].name, combsiv_backend_name(ctx), runs[RUNS / 2]);
        /* The same messages as one batch of 1000 (per message). */
        enum { BATCH = 1000 };
        static combsiv_job jobs[BATCH];
        static uint8_t data[BATCH][16];
        for (int r = 0; r < RUNS; r++) {
            for (uint32_t i = 0; i < BATCH; i++) {
                memcpy(jobs[i].nonce, &i, sizeof i);
                jobs[i].data = data[i];
                jobs[i].data_len = 16;
            }
            double start = now_ns();
            for (int b = 0; b < SEALS / BATCH; b++)
                if (combsiv_aead_seal_batch(ctx, jobs, BATCH, 1) != COMBSIV_OK) return 1;
            runs[r] = (now_ns() - start) / SEALS;
        }
        qsort(runs, RUNS, sizeof runs[0], by_value);
        printf("%s 16-byte seal, combsiv_aead_seal_batch from C, 1000 to a call, one thread: %.1f ns\n",
               algorithms[a].name, runs[RUNS / 2]);
        combsiv_aead_free(ctx);
    }
    return 0;
}
