/* Static helpers for the element-wise / layout reference kernels (no state, no allocation).
 * Strides are in elements. A "loop nest" is up to EP_MAX_RANK dims, outermost first. */
#ifndef EP_REF_UTIL_ELEM_H
#define EP_REF_UTIL_ELEM_H

#include <math.h>
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

/* Right-aligned (numpy) broadcast strides of t against an output of rank r, in elements: 0 where broadcast. */
static inline void ru_bcast_strides(const ep_tensor *t, int r, int64_t *st) {
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        const int ti = i - (r - t->rank);
        st[i] = (ti < 0 || t->dims[ti] == 1) ? 0 : s;
        if (ti >= 0) s *= t->dims[ti];
    }
}

/* BINARY with C8 operands is numpy broadcasting over 5-D views of the same bytes: Y and a C8 operand of Y's dims
 * as [N, C/8, H, W, 8]; an operand of one value per (n, c) (the shape function allows no other; h = w = 1 once
 * aligned right to [n, c, h, w]) as [n, C/8, 1, 1, 8] when it has the C channels, else [n, 1, 1, 1, 1]. v[0] is
 * Y's view, v[1] A's, v[2] B's, all PLAIN. Returns 0 (no views) when Y is not C8. */
static inline int ru_bin_c8_views(const ep_tensor *ta, const ep_tensor *tb, const ep_tensor *ty, ep_tensor v[3]) {
    if (ty->layout != EP_LAYOUT_C8) return 0;
    const ep_tensor *src[3] = {ty, ta, tb};
    for (int i = 0; i < 3; i++) {
        int32_t d[4] = {1, 1, 1, 1};
        for (int k = 0; k < src[i]->rank; k++) d[4 - src[i]->rank + k] = src[i]->dims[k];
        const int blk = d[1] == ty->dims[1];
        v[i] = *src[i];
        v[i].layout = EP_LAYOUT_PLAIN;
        v[i].rank = 5;
        v[i].dims[0] = d[0], v[i].dims[1] = blk ? d[1] / EP_LAYOUT_BLOCK : 1, v[i].dims[2] = d[2];
        v[i].dims[3] = d[3], v[i].dims[4] = blk ? EP_LAYOUT_BLOCK : 1;
    }
    return 1;
}

/* The BINARY loop nest (the reference's, and the ISA kernels' through binary_rows.h): Y's shape with one element
 * stride per operand (0 where broadcast); dims of extent 1 dropped and neighbours contiguous for Y, A and B merged.
 * What is left is an odometer over the outer dims and one inner row of len elements whose A / B strides sa, sb
 * are 1 or 0 in the common cases (same shape, scalar, per-channel bias): a flat, vectorisable loop. Y is dense:
 * row k starts at element k * len. */
typedef struct ru_bin_walk {
    int64_t n[EP_MAX_RANK], st[3][EP_MAX_RANK], idx[EP_MAX_RANK];
    int last;
    int64_t len, sa, sb;   /* the inner row */
    int64_t oa, ob;        /* the current row's first elements of A and B */
} ru_bin_walk;

/* Starts the walk at the first row. Returns -1 when Y has no element, 0 when it has one (a row of one element,
 * strides 0), else the collapsed rank. */
static inline int ru_bin_begin(ru_bin_walk *w, const ep_tensor *ta, const ep_tensor *tb, const ep_tensor *ty) {
    const int r = ty->rank;
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        w->n[i] = ty->dims[i];
        w->st[0][i] = s;
        s *= w->n[i];
    }
    ru_bcast_strides(ta, r, w->st[1]);
    ru_bcast_strides(tb, r, w->st[2]);
    int cr = ru_collapse(r, w->n, 3, w->st);
    const int single = cr == 0;
    if (single) w->n[0] = 1, w->st[1][0] = w->st[2][0] = 0, cr = 1;
    if (w->n[0] == 0) return -1;
    w->last = cr - 1;
    w->len = w->n[w->last], w->sa = w->st[1][w->last], w->sb = w->st[2][w->last];
    w->oa = w->ob = 0;
    for (int i = 0; i < cr; i++) w->idx[i] = 0;
    return single ? 0 : cr;
}
/* Advances to the next row; 0 after the last. */
static inline int ru_bin_next(ru_bin_walk *w) {
    for (int i = w->last - 1; i >= 0; i--) {
        w->oa += w->st[1][i];
        w->ob += w->st[2][i];
        if (++w->idx[i] < w->n[i]) return 1;
        w->oa -= w->st[1][i] * w->n[i];
        w->ob -= w->st[2][i] * w->n[i];
        w->idx[i] = 0;
    }
    return 0;
}

/* numpy.mod / ONNX Mod fmod=0 on floats: the remainder takes b's sign (a zero one too); x mod 0 is NaN,
 * x mod +-inf is x when the signs agree, else +-inf (as numpy). */
static inline float ru_fmod_floor(float a, float b) {
    float m = fmodf(a, b);
    if (m != 0.0f) {
        if ((b < 0.0f) != (m < 0.0f)) m += b;
    } else {
        m = copysignf(0.0f, b);
    }
    return m;
}

/* One element of BINARY f32 (before the fused activation): the reference's expression of every kind; the ISA
 * rows compute the same per lane and use this for their scalar tails. */
static inline float ru_bin_f32(int kind, float a, float b) {
    switch (kind) {
    case EP_BIN_ADD: return a + b;
    case EP_BIN_SUB: return a - b;
    case EP_BIN_MUL: return a * b;
    case EP_BIN_DIV: return a / b;
    case EP_BIN_POW: return powf(a, b);
    case EP_BIN_PRELU: return a < 0.0f ? b * a : a;
    case EP_BIN_MAX: return (a > b || a != a) ? a : b; /* NaN propagates */
    case EP_BIN_MIN: return (a < b || a != a) ? a : b;
    case EP_BIN_MOD: return ru_fmod_floor(a, b);
    case EP_BIN_FMOD: return fmodf(a, b);
    default: return a;
    }
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
