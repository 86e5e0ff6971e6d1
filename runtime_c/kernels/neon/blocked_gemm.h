/* The NEON micro-kernel of the C8 layout's GEMM-shaped convolutions, CONV2D variants BLOCKED_PW and
 * BLOCKED_CONV (plan_format.h); included by blocked_pw_f32.c (which defines BG_PW 1 first) and
 * blocked_conv_f32.c. The tiles, their rows and their operations are the AVX2 kernel's (kernels/x86/
 * blocked_gemm.h): 6 output pixels x 16 output channels (24 q accumulators) or 6 x 8 for a strip with 8 real
 * columns, pixel i's value of a row at x + xo[i] + the row's offset, rows in W^T's order from 0 (or the partial
 * sums in Y) with FMA, then the bias, the residual and the activation, the same whatever tile computes an
 * output. A group of 8 rows (a C8 unit) loads each pixel's 8 values as two q registers and multiplies by lane
 * (FMLA by element); a smaller group (a PLAIN X) loads each value replicated (LD1R). B is a 16-column row of
 * W^T, four q loaded two at a time. */
#ifndef EP_NEON_BLOCKED_GEMM_H
#define EP_NEON_BLOCKED_GEMM_H
#include <arm_neon.h>
#include "neon.h"
#include "neon_act.h"

#define BLK EP_LAYOUT_BLOCK
#define BG_NR EP_PACK_NR
#define BG_NP 6
#define BG_INLINE static inline __attribute__((always_inline))
#ifndef BG_PW
#define BG_PW 0           /* 1: every tile has nkh = nkw = 1 */
#endif

typedef struct bg_tile {
    const float *x, *w, *b, *r;   /* b at the strip's first channel or NULL; r at the tile's output or NULL */
    float *y;                     /* the tile's first output block; the second one ys floats further */
    int64_t xo[BG_NP], yo[BG_NP]; /* pixel i at x + xo[i] and y + yo[i] (xo[0] = yo[0] = 0) */
    int64_t ys, nu, xcs, wcs, nkh, xrs, wrs, nkw, xks, nr;
    int64_t nt, xt, yt;           /* tiles in the call, the next one xt floats further in X, yt in Y and R */
    int np, first, last;          /* np: the distinct pixels of a tile */
    const ep_conv2d_params *p;
} bg_tile;

/* The activations other than NONE, RELU and CLIP, in place on a tile's stored outputs at y. */
static __attribute__((noinline)) void bg_act(const bg_tile *a, float *y, int nb) {
    const ep_conv2d_params *p = a->p;
    const int vec = neon_act_vector(p->act);
    for (int i = 0; i < a->np; i++)
        for (int j = 0; j < nb; j++) {
            float *yij = y + a->yo[i] + j * a->ys;
            if (!vec) ep_neon_act_apply(p->act, yij, BLK, p->act_alpha, p->act_beta);
            else
                for (int h = 0; h < BLK; h += 4)
                    vst1q_f32(yij + h, neon_act4(p->act, p->act_alpha, p->act_beta, vld1q_f32(yij + h)));
        }
}

/* Lane L of a C8 group's 4 rows at W times the pixels' values av[i] */
#define BG_LANE(W, L)                                                                                     \
    do {                                                                                                  \
        const float32x4_t b0 = vld1q_f32((W) + (L) * BG_NR), b1 = vld1q_f32((W) + (L) * BG_NR + 4);       \
        _Pragma("GCC unroll 6") for (int i = 0; i < np; i++) {                                            \
            acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, av[i], L);                                         \
            acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, av[i], L);                                         \
        }                                                                                                 \
        if (nb > 1) {                                                                                     \
            const float32x4_t b2 = vld1q_f32((W) + (L) * BG_NR + 8), b3 = vld1q_f32((W) + (L) * BG_NR + 12); \
            _Pragma("GCC unroll 6") for (int i = 0; i < np; i++) {                                        \
                acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, av[i], L);                                     \
                acc[i][3] = vfmaq_laneq_f32(acc[i][3], b3, av[i], L);                                     \
            }                                                                                             \
        }                                                                                                 \
    } while (0)

/* a->nt tiles of np pixels x nb blocks */
BG_INLINE void bg_tile_n(const int np, const int nb, const bg_tile *a) {
    const int64_t nkh = BG_PW ? 1 : a->nkh, nkw = BG_PW ? 1 : a->nkw, nr = BG_PW ? BLK : a->nr, ys = a->ys;
    const float *xt = a->x, *rt = a->r;
    float *yt = a->y;
    for (int64_t t = 0; t < a->nt; t++, xt += a->xt, yt += a->yt, rt = rt ? rt + a->yt : NULL) {
        float32x4_t acc[BG_NP][4], av[BG_NP];
        const int64_t *xo = a->xo;
#pragma GCC unroll 6
        for (int i = 0; i < np; i++)
#pragma GCC unroll 4
            for (int q = 0; q < 2 * nb; q++)
                acc[i][q] = a->first ? vdupq_n_f32(0.0f) : vld1q_f32(yt + a->yo[i] + (q / 2) * ys + (q % 2) * 4);
        const float *x = xt, *w = a->w;
        for (int64_t u = 0; u < a->nu; u++, x += a->xcs, w += a->wcs) {
            const float *xr = x, *wr = w;
            for (int64_t kh = 0; kh < nkh; kh++, xr += a->xrs, wr += a->wrs) {
                const float *xk = xr, *wk = wr;
                for (int64_t kw = 0; kw < nkw; kw++, xk += a->xks, wk += nr * BG_NR) {
                    if (BG_PW || nr == BLK) {
                        for (int h = 0; h < BLK; h += 4) {
#pragma GCC unroll 6
                            for (int i = 0; i < np; i++) av[i] = vld1q_f32(xk + xo[i] + h);
                            const float *wh = wk + h * BG_NR;
                            BG_LANE(wh, 0);
                            BG_LANE(wh, 1);
                            BG_LANE(wh, 2);
                            BG_LANE(wh, 3);
                        }
                        continue;
                    }
                    for (int64_t c = 0; c < nr; c++) {   /* one row: each pixel's value replicated */
                        const float *wc = wk + c * BG_NR;
                        const float32x4_t b0 = vld1q_f32(wc), b1 = vld1q_f32(wc + 4);
                        const float32x4_t b2 = nb > 1 ? vld1q_f32(wc + 8) : b0, b3 = nb > 1 ? vld1q_f32(wc + 12) : b1;
#pragma GCC unroll 6
                        for (int i = 0; i < np; i++) {
                            const float32x4_t v = vld1q_dup_f32(xk + xo[i] + c);
                            acc[i][0] = vfmaq_f32(acc[i][0], b0, v);
                            acc[i][1] = vfmaq_f32(acc[i][1], b1, v);
                            if (nb > 1) {
                                acc[i][2] = vfmaq_f32(acc[i][2], b2, v);
                                acc[i][3] = vfmaq_f32(acc[i][3], b3, v);
                            }
                        }
                    }
                }
            }
        }
        if (!a->last) {
#pragma GCC unroll 6
            for (int i = 0; i < np; i++)
#pragma GCC unroll 4
                for (int q = 0; q < 2 * nb; q++) vst1q_f32(yt + a->yo[i] + (q / 2) * ys + (q % 2) * 4, acc[i][q]);
            continue;
        }
        /* NONE, RELU and CLIP as min(hi, max(lo, v)) (a NaN stays NaN); the others after the stores */
        const ep_conv2d_params *p = a->p;
        const int act = p->act;
        float32x4_t lo = vdupq_n_f32(-__builtin_inff()), hi = vdupq_n_f32(__builtin_inff());
        if (act == EP_ACT_RELU) lo = vdupq_n_f32(0.0f);
        if (act == EP_ACT_CLIP) lo = vdupq_n_f32(p->act_alpha), hi = vdupq_n_f32(p->act_beta);
#pragma GCC unroll 4
        for (int q = 0; q < 2 * nb; q++) {
            const int64_t bo = (q / 2) * ys + (q % 2) * 4;
            const float32x4_t bv = a->b ? vld1q_f32(a->b + (q / 2) * BLK + (q % 2) * 4) : vdupq_n_f32(0.0f);
#pragma GCC unroll 6
            for (int i = 0; i < np; i++) {
                const int64_t at = a->yo[i] + bo;
                float32x4_t v = vaddq_f32(acc[i][q], bv);
                if (rt) v = vaddq_f32(v, vld1q_f32(rt + at));
                vst1q_f32(yt + at, vminq_f32(vmaxq_f32(v, lo), hi));
            }
        }
        if (act != EP_ACT_NONE && act != EP_ACT_RELU && act != EP_ACT_CLIP) bg_act(a, yt, nb);
    }
}
#undef BG_LANE

static __attribute__((noinline)) void bg_tile_62(const bg_tile *a) { bg_tile_n(6, 2, a); }
static __attribute__((noinline)) void bg_tile_61(const bg_tile *a) { bg_tile_n(6, 1, a); }
static __attribute__((noinline)) void bg_tile_12(const bg_tile *a) { bg_tile_n(1, 2, a); }

/* Tiles of np distinct pixels, xps floats apart in X and yps in Y */
static void bg_pixels(bg_tile *a, int np, int64_t xps, int64_t yps) {
    for (int i = 0; i < BG_NP; i++) {
        const int k = i < np ? i : np - 1;
        a->xo[i] = k * xps, a->yo[i] = k * yps;
    }
    a->np = np;
}

/* A run of n pixels x nb (1, 2) blocks: a->x, y and r at its first pixel, the next xps (X) and yps (Y, R)
 * floats further. The tail of n % 6 pixels: one tile repeating its last pixel, or (up to 3 pixels of 16
 * channels) 1-pixel tiles. */
static void bg_run(bg_tile *a, int64_t n, int nb, int64_t xps, int64_t yps) {
    void (*full)(const bg_tile *) = nb == 2 ? bg_tile_62 : bg_tile_61;
    const int64_t done = n / BG_NP * BG_NP;
    const int tail = (int)(n - done);
    a->xt = BG_NP * xps, a->yt = BG_NP * yps;
    if (done) {
        bg_pixels(a, BG_NP, xps, yps);
        a->nt = n / BG_NP;
        full(a);
    }
    if (!tail) return;
    a->x += done * xps, a->y += done * yps, a->r = a->r ? a->r + done * yps : NULL;
    if (tail > 3 || nb == 1) {
        bg_pixels(a, tail, xps, yps);
        a->nt = 1;
        full(a);
        return;
    }
    bg_pixels(a, 1, xps, yps);
    a->nt = tail, a->xt = xps, a->yt = yps;
    bg_tile_12(a);
}
#endif
