/* Static helpers for the element-wise / layout reference kernels (no state, no allocation).
 * Strides are in elements. A "loop nest" is up to EP_MAX_RANK dims, outermost first. */
#ifndef EP_REF_UTIL_ELEM_H
#define EP_REF_UTIL_ELEM_H

#include <stdint.h>
#include <string.h>
#include "ep_kernel.h"

/* Dense row-major strides of t, in elements. */
static inline void ru_dense_strides(const ep_tensor *t, int64_t *stride) {
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= t->dims[i];
    }
}

/* Drops extent-1 dims and merges neighbours that are contiguous in every one of the
 * k stride arrays st[0..k-1] (each indexed by dim). Returns the new rank (>= 0); a
 * zero extent anywhere makes n[0] == 0 with rank 1 so loops do nothing. */
static inline int ru_collapse(int rank, int64_t *n, int k, int64_t st[][EP_MAX_RANK]) {
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (n[i] == 0) {
            n[0] = 0;
            return 1;
        }
        if (n[i] == 1) continue;
        int merge = r > 0;
        for (int j = 0; j < k && merge; j++) merge = st[j][r - 1] == st[j][i] * n[i];
        if (merge) {
            n[r - 1] *= n[i];
            for (int j = 0; j < k; j++) st[j][r - 1] = st[j][i];
        } else {
            n[r] = n[i];
            for (int j = 0; j < k; j++) st[j][r] = st[j][i];
            r++;
        }
    }
    return r;
}

/* Copies count elements of esize bytes from src (element stride ss) to dense dst. */
static inline void ru_copy_row(char *dst, const char *src, int64_t count, int64_t ss, size_t esize) {
    if (ss == 1) {
        memcpy(dst, src, (size_t)count * esize);
        return;
    }
    switch (esize) {
    case 1: for (int64_t i = 0; i < count; i++) dst[i] = src[i * ss]; break;
    case 2: for (int64_t i = 0; i < count; i++) memcpy(dst + i * 2, src + i * ss * 2, 2); break;
    case 4: for (int64_t i = 0; i < count; i++) memcpy(dst + i * 4, src + i * ss * 4, 4); break;
    case 8: for (int64_t i = 0; i < count; i++) memcpy(dst + i * 8, src + i * ss * 8, 8); break;
    default:
        for (int64_t i = 0; i < count; i++) memcpy(dst + i * esize, src + i * ss * (int64_t)esize, esize);
        break;
    }
}

/* dst (dense, row-major over n[]) = src read with element strides sst[] (may be negative).
 * n and sst are modified (collapsed). */
static inline void ru_gather_strided(void *dst, const void *src, int rank, int64_t *n,
                                     int64_t *sst, size_t esize) {
    int64_t st[2][EP_MAX_RANK];
    int64_t dense = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[0][i] = dense;
        st[1][i] = sst[i];
        dense *= n[i];
    }
    rank = ru_collapse(rank, n, 2, st);
    if (rank == 0) {
        memcpy(dst, src, esize);
        return;
    }
    if (n[0] == 0) return;
    const int last = rank - 1;
    int64_t idx[EP_MAX_RANK] = {0};
    int64_t soff = 0;
    char *d = (char *)dst;
    const char *s = (const char *)src;
    for (;;) {
        ru_copy_row(d, s + soff * (int64_t)esize, n[last], st[1][last], esize);
        d += n[last] * (int64_t)esize;
        int i = last - 1;
        for (; i >= 0; i--) {
            soff += st[1][i];
            if (++idx[i] < n[i]) break;
            soff -= st[1][i] * n[i];
            idx[i] = 0;
        }
        if (i < 0) return;
    }
}

#endif
