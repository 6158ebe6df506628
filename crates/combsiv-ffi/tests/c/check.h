/* What the C tests share: failing loudly, hex, and the backends under test. */
#ifndef COMBSIV_TEST_CHECK_H
#define COMBSIV_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <combsiv.h>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* A call's status is `expected`; on a mismatch both codes and their descriptions. */
#define CHECK_STATUS(call, expected)                                                    \
    do {                                                                                \
        int got_ = (call);                                                              \
        if (got_ != (expected)) {                                                       \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, \
                    __LINE__, #call, got_, combsiv_error_string(got_), (expected),      \
                    combsiv_error_string(expected));                                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* Every backend combsiv has, in the order `combsiv_backend_available` is asked. */
static const char *const ALL_BACKENDS[] = {"portable", "aesni", "vaes", "avx512", "armv8"};
#define BACKEND_COUNT (sizeof ALL_BACKENDS / sizeof ALL_BACKENDS[0])

/* Fails if a backend that COMBSIV_REQUIRE_BACKENDS (comma-separated names) lists is not
 * available here: a run that silently tested fewer backends must not pass. */
static void require_backends(void) {
    const char *required = getenv("COMBSIV_REQUIRE_BACKENDS");
    if (required == NULL) return;
    char *names = strdup(required);
    CHECK(names != NULL);
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name != NULL;
         name = strtok_r(NULL, ",", &save)) {
        if (!combsiv_backend_available(name)) {
            fprintf(stderr, "required backend %s is not available\n", name);
            exit(1);
        }
    }
    free(names);
}

static int all_zero(const uint8_t *bytes, size_t len) {
    uint8_t seen = 0;
    for (size_t i = 0; i < len; i++) seen |= bytes[i];
    return seen == 0;
}

#endif
