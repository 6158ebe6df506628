/* The README's C example: seal a message with AES-256-GCM-SIV and open it again.
 * cc seal.c $(pkg-config --cflags --libs combsiv) */
#include <combsiv.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    const uint8_t key[32] = {0x42}; /* from a key store, not the source */
    const uint8_t nonce[COMBSIV_NONCE_LEN] = {0};
    const char *message = "plaintext";
    combsiv_aead *aead;
    int status = combsiv_aead_new(COMBSIV_AES_256_GCM_SIV, key, sizeof key, &aead);
    if (status != COMBSIV_OK) {
        fprintf(stderr, "combsiv: %s\n", combsiv_error_string(status));
        return 1;
    }
    uint8_t sealed[64], opened[64];
    size_t sealed_len, opened_len;
    status = combsiv_aead_seal(aead, sealed, &sealed_len, sizeof sealed, nonce, sizeof nonce,
                               (const uint8_t *)message, strlen(message), (const uint8_t *)"ad", 2);
    if (status == COMBSIV_OK)
        status = combsiv_aead_open(aead, opened, &opened_len, sizeof opened, nonce, sizeof nonce,
                                   sealed, sealed_len, (const uint8_t *)"ad", 2);
    if (status != COMBSIV_OK) { /* COMBSIV_EAUTH: not authentic, and `opened` is zeroed */
        fprintf(stderr, "combsiv: %s\n", combsiv_error_string(status));
        combsiv_aead_free(aead);
        return 1;
    }
    printf("%.*s on %s\n", (int)opened_len, opened, combsiv_backend_name(aead));
    combsiv_aead_free(aead); /* wipes the key */
    return 0;
}
