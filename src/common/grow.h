/*
 * Room in a growable host array, for the self-event rounds' scratch (src/common/self_events.c)
 * and the CUDA engine's host copies of them (src/cuda/sim_events.cu). Inline: the CUDA backend
 * reaches it without linking another backend's objects.
 */
#ifndef HB_COMMON_GROW_H
#define HB_COMMON_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* Room for n elements of `size` bytes at *p, which holds *cap: the capacity doubled (from 64)
 * until n fit, by realloc (the contents kept). 1 on success; 0 when out of memory, *p and
 * *cap as they were. */
static inline int hb_grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap) return 1;
    size_t c = *cap ? *cap : 64;
    while (c < n) c *= 2;
    void *r = realloc(*p, c * size);
    if (!r) return 0;
    *p = r;
    *cap = c;
    return 1;
}

#endif
