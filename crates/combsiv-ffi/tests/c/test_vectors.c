/* Every Wycheproof AES-GCM-SIV and AES-GCM test (as examples/wycheproof_vectors.rs prints
 * them) through the C API on every backend this CPU runs: seal and open, out of place and in
 * place, one message at a time and as a batch. Valid tests must seal to the given ciphertext
 * and tag and open to the plaintext; invalid ones must fail to open, with the output zeroed. */
#include "check.h"

typedef struct {
    uint8_t *bytes;
    size_t len;
} bytes_t;

typedef struct {
    combsiv_algorithm alg;
    int id, valid;
    bytes_t key, nonce, aad, msg, ct, tag;
} vector_t;

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static bytes_t parse_hex(const char *hex) {
    bytes_t out = {NULL, 0};
    if (strcmp(hex, "-") == 0) return out;
    size_t len = strlen(hex);
    CHECK(len % 2 == 0);
    out.len = len / 2;
    out.bytes = malloc(out.len);
    CHECK(out.bytes != NULL);
    for (size_t i = 0; i < out.len; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        CHECK(hi >= 0 && lo >= 0);
        out.bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    return out;
}

static size_t load(const char *path, vector_t **out) {
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        perror(path);
        exit(1);
    }
    size_t count = 0, capacity = 512;
    vector_t *vectors = malloc(capacity * sizeof *vectors);
    CHECK(vectors != NULL);
    char name[16], result[16], key[200], nonce[1200], *aad = malloc(1 << 16), *msg = malloc(1 << 16),
         *ct = malloc(1 << 16), tag[64];
    CHECK(aad && msg && ct);
    int id;
    while (fscanf(file, "%15s %d %15s %199s %1199s %65535s %65535s %65535s %63s", name, &id, result,
                  key, nonce, aad, msg, ct, tag) == 9) {
        if (count == capacity) {
            capacity *= 2;
            vectors = realloc(vectors, capacity * sizeof *vectors);
            CHECK(vectors != NULL);
        }
        vector_t *v = &vectors[count++];
        v->key = parse_hex(key);
        int siv = strcmp(name, "gcm-siv") == 0;
        CHECK(siv || strcmp(name, "gcm") == 0);
        CHECK(v->key.len == 16 || v->key.len == 32);
        v->alg = siv ? (v->key.len == 16 ? COMBSIV_AES_128_GCM_SIV : COMBSIV_AES_256_GCM_SIV)
                     : (v->key.len == 16 ? COMBSIV_AES_128_GCM : COMBSIV_AES_256_GCM);
        v->id = id;
        v->valid = strcmp(result, "invalid") != 0;
        v->nonce = parse_hex(nonce);
        v->aad = parse_hex(aad);
        v->msg = parse_hex(msg);
        v->ct = parse_hex(ct);
        v->tag = parse_hex(tag);
    }
    CHECK(feof(file));
    fclose(file);
    free(aad);
    free(msg);
    free(ct);
    *out = vectors;
    return count;
}

#define FAIL(v, backend, what)                                                      \
    do {                                                                            \
        fprintf(stderr, "tc %d (alg %d) on %s: %s\n", (v)->id, (int)(v)->alg, backend, what); \
        exit(1);                                                                    \
    } while (0)

/* One test through seal and open, out of place and in place. */
static void check_one(const vector_t *v, const char *backend) {
    combsiv_aead *ctx = NULL;
    CHECK_STATUS(combsiv_aead_new_with_backend(v->alg, v->key.bytes, v->key.len, backend, &ctx),
                 COMBSIV_OK);
    CHECK(strcmp(combsiv_backend_name(ctx), backend) == 0);
    size_t sealed_len = v->ct.len + COMBSIV_TAG_LEN, len = 0;
    uint8_t *sealed = malloc(sealed_len), *out = malloc(sealed_len + 1);
    CHECK(sealed && out);
    if (v->ct.len) memcpy(sealed, v->ct.bytes, v->ct.len);
    memcpy(sealed + v->ct.len, v->tag.bytes, COMBSIV_TAG_LEN);

    /* Open, out of place, with a byte to spare that must be zeroed on failure too. */
    memset(out, 0xa5, sealed_len + 1);
    int status = combsiv_aead_open(ctx, out, &len, sealed_len + 1, v->nonce.bytes, v->nonce.len,
                                   sealed, sealed_len, v->aad.bytes, v->aad.len);
    if (v->valid) {
        if (status != COMBSIV_OK) FAIL(v, backend, "open failed");
        if (len != v->msg.len || (len && memcmp(out, v->msg.bytes, len))) FAIL(v, backend, "wrong plaintext");
    } else {
        if (status != COMBSIV_EAUTH && status != COMBSIV_ENONCELEN) FAIL(v, backend, "invalid test opened");
        if (!all_zero(out, sealed_len + 1) || len != 0) FAIL(v, backend, "output not zeroed");
    }

    /* Open in place. */
    uint8_t *buffer = malloc(sealed_len);
    CHECK(buffer);
    memcpy(buffer, sealed, sealed_len);
    status = combsiv_aead_open(ctx, buffer, &len, sealed_len, v->nonce.bytes, v->nonce.len, buffer,
                               sealed_len, v->aad.bytes, v->aad.len);
    if (v->valid) {
        if (status != COMBSIV_OK || len != v->msg.len || (len && memcmp(buffer, v->msg.bytes, len)))
            FAIL(v, backend, "in-place open");
    } else if (status == COMBSIV_OK || !all_zero(buffer, sealed_len)) {
        FAIL(v, backend, "invalid test opened in place, or not zeroed");
    }

    if (v->valid) {
        /* Seal, out of place and in place. */
        CHECK_STATUS(combsiv_aead_seal(ctx, out, &len, sealed_len, v->nonce.bytes, v->nonce.len,
                                       v->msg.bytes, v->msg.len, v->aad.bytes, v->aad.len),
                     COMBSIV_OK);
        if (len != sealed_len || memcmp(out, sealed, sealed_len)) FAIL(v, backend, "wrong seal");
        if (v->msg.len) memcpy(buffer, v->msg.bytes, v->msg.len);
        CHECK_STATUS(combsiv_aead_seal(ctx, buffer, &len, sealed_len, v->nonce.bytes, v->nonce.len,
                                       v->msg.len ? buffer : NULL, v->msg.len, v->aad.bytes,
                                       v->aad.len),
                     COMBSIV_OK);
        if (len != sealed_len || memcmp(buffer, sealed, sealed_len)) FAIL(v, backend, "wrong in-place seal");
    }
    free(buffer);
    free(sealed);
    free(out);
    combsiv_aead_free(ctx);
}

/* The tests with 12-byte nonces as batches: each test its own context (Wycheproof varies the
 * key), the whole set in one seal batch and one open batch per algorithm and key. */
static void check_batches(const vector_t *vectors, size_t count, const char *backend) {
    for (size_t i = 0; i < count; i++) {
        const vector_t *v = &vectors[i];
        if (v->nonce.len != COMBSIV_NONCE_LEN) continue;
        combsiv_aead *ctx = NULL;
        CHECK_STATUS(combsiv_aead_new_with_backend(v->alg, v->key.bytes, v->key.len, backend, &ctx),
                     COMBSIV_OK);
        /* A batch of three: the test between two copies of itself (sealed in one call). */
        combsiv_job jobs[3];
        uint8_t *data[3];
        for (int j = 0; j < 3; j++) {
            data[j] = malloc(v->ct.len + 1);
            CHECK(data[j]);
            memset(&jobs[j], 0, sizeof jobs[j]);
            memcpy(jobs[j].nonce, v->nonce.bytes, COMBSIV_NONCE_LEN);
            jobs[j].ad = v->aad.bytes;
            jobs[j].ad_len = v->aad.len;
            jobs[j].data = v->ct.len ? data[j] : NULL;
            jobs[j].data_len = v->ct.len;
        }
        if (v->valid) {
            for (int j = 0; j < 3; j++)
                if (v->msg.len) memcpy(data[j], v->msg.bytes, v->msg.len);
            CHECK_STATUS(combsiv_aead_seal_batch(ctx, jobs, 3, 0), COMBSIV_OK);
            for (int j = 0; j < 3; j++)
                if ((v->ct.len && memcmp(data[j], v->ct.bytes, v->ct.len)) ||
                    memcmp(jobs[j].tag, v->tag.bytes, COMBSIV_TAG_LEN))
                    FAIL(v, backend, "wrong batch seal");
        }
        /* Open: the middle job is the test; the outer ones are sealed copies of it when valid
         * (all open) or carry its bad tag when invalid (all fail). */
        for (int j = 0; j < 3; j++) {
            if (v->ct.len) memcpy(data[j], v->ct.bytes, v->ct.len);
            memcpy(jobs[j].tag, v->tag.bytes, COMBSIV_TAG_LEN);
            jobs[j].status = 12345;
        }
        int status = combsiv_aead_open_batch(ctx, jobs, 3, 0);
        for (int j = 0; j < 3; j++) {
            if (v->valid) {
                if (status != COMBSIV_OK || jobs[j].status != COMBSIV_OK ||
                    (v->msg.len && memcmp(data[j], v->msg.bytes, v->msg.len)))
                    FAIL(v, backend, "batch open");
            } else if (status != COMBSIV_EAUTH || jobs[j].status != COMBSIV_EAUTH ||
                       !all_zero(data[j], v->ct.len)) {
                FAIL(v, backend, "invalid test opened in a batch, or not zeroed");
            }
        }
        for (int j = 0; j < 3; j++) free(data[j]);
        combsiv_aead_free(ctx);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS (from: cargo run -p combsiv-ffi --example wycheproof_vectors)\n", argv[0]);
        return 2;
    }
    require_backends();
    vector_t *vectors;
    size_t count = load(argv[1], &vectors);
    CHECK(count > 400);
    int backends = 0;
    for (size_t b = 0; b < BACKEND_COUNT; b++) {
        const char *backend = ALL_BACKENDS[b];
        if (!combsiv_backend_available(backend)) continue;
        for (size_t i = 0; i < count; i++) check_one(&vectors[i], backend);
        check_batches(vectors, count, backend);
        printf("wycheproof: %zu tests on %s\n", count, backend);
        backends++;
    }
    CHECK(backends >= 1);
    for (size_t i = 0; i < count; i++) {
        free(vectors[i].key.bytes);
        free(vectors[i].nonce.bytes);
        free(vectors[i].aad.bytes);
        free(vectors[i].msg.bytes);
        free(vectors[i].ct.bytes);
        free(vectors[i].tag.bytes);
    }
    free(vectors);
    return 0;
}
