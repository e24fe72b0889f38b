// glibc's malloc keeps the memory a burst freed in its arenas; `serve` gives it back after one.
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

/// Returns the allocator's free pages to the system where the C library can (glibc); else nothing.
static inline void station_return_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
