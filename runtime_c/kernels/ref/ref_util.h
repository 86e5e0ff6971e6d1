/* Static helpers for the convolution, matrix and pooling reference kernels
 * (no state, no allocation). All index arithmetic is int64_t. */
#ifndef EP_REF_UTIL_H
#define EP_REF_UTIL_H

#include <stdint.h>
#include "ep_kernel.h"

/* Ceiling of a / b for a >= 0, b > 0. */
static inline int64_t rl_ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The indices i in [0, count) for which start + i * step lies in [0, size), as the
 * half-open range [*lo, *hi) (empty when *lo == *hi). step >= 1, size >= 0. */
static inline void rl_tap_range(int64_t start, int64_t step, int64_t count, int64_t size,
                                int64_t *lo, int64_t *hi) {
    int64_t l = start >= 0 ? 0 : rl_ceildiv(-start, step);
    int64_t h = start >= size ? 0 : (size - 1 - start) / step + 1;
    if (h > count) h = count;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* 1 when t has a zero extent (no elements). Unlike ep_numel, never overflows: a tensor
 * with a zero extent may have other extents whose product exceeds int64. */
static inline int rl_is_empty(const ep_tensor *t) {
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] == 0) return 1;
    return 0;
}

#endif
