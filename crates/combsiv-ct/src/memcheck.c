/* Valgrind memcheck client requests for the constant-time harness. Each is a few no-op
 * instructions that valgrind recognises; outside valgrind they do nothing and return 0.
 * Without valgrind's headers the shim still builds and reports itself unavailable. */
#include <stddef.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HAVE_MEMCHECK 1
#endif
#endif

#ifdef HAVE_MEMCHECK
int combsiv_ct_available(void) { return 1; }
int combsiv_ct_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
void combsiv_ct_secret(const void *addr, size_t len) { VALGRIND_MAKE_MEM_UNDEFINED(addr, len); }
void combsiv_ct_public(const void *addr, size_t len) { VALGRIND_MAKE_MEM_DEFINED(addr, len); }
unsigned long combsiv_ct_errors(void) { return VALGRIND_COUNT_ERRORS; }
#else
int combsiv_ct_available(void) { return 0; }
int combsiv_ct_on_valgrind(void) { return 0; }
void combsiv_ct_secret(const void *addr, size_t len) { (void)addr; (void)len; }
void combsiv_ct_public(const void *addr, size_t len) { (void)addr; (void)len; }
unsigned long combsiv_ct_errors(void) { return 0; }
#endif
