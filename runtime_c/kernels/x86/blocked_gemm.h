/* The AVX2+FMA micro-kernel of the C8 layout's GEMM-shaped convolutions, CONV2D variants BLOCKED_PW and
 * BLOCKED_CONV (plan_format.h); included by blocked_pw_f32.c (which defines BG_PW 1 first) and
 * blocked_conv_f32.c.
 *
 * A tile is 6 output pixels x 16 output channels (two C8 blocks of Y, 12 ymm accumulators, two ymm of B per row
 * of W^T) or 6 x 8 for a strip with 8 real columns. A is read from X in place, one broadcast per pixel and row:
 * pixel i's value of a row is at x + xo[i] + the row's offset. A tile's rows run over nu units (xcs floats
 * apart in X, wcs in W^T), nkh kernel rows (xrs, wrs), nkw groups (xks in X, nr * 16 floats in W^T) and the nr
 * rows of a group (consecutive in X and W^T, nr <= 8), which is W^T's row order; a pointwise convolution has
 * nkh = nkw = 1 and nr = 8. Every output sums its rows from 0 (first) or from the partial sums in Y with FMA;
 * the last k-block adds the bias and the residual and applies the activation. Those operations do not depend
 * on the tile that computes the output: a tile of np < 6 pixels repeats its last pixel's offsets (the copies
 * compute and store the same values), or for np <= 3 and 16 channels runs np 1-pixel tiles. The k loop steps 4
 * rows. */
#ifndef EP_X86_BLOCKED_GEMM_H
#define EP_X86_BLOCKED_GEMM_H
#include <immintrin.h>
#include "x86.h"
#include "x86_act.h"

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
    const int vec = x86_act_vec(p->act);
    for (int i = 0; i < a->np; i++)
        for (int j = 0; j < nb; j++) {
            float *yij = y + a->yo[i] + j * a->ys;
            if (vec) _mm256_storeu_ps(yij, x86_act8(p->act, p->act_alpha, p->act_beta, _mm256_loadu_ps(yij)));
            else ep_act_apply_f32(p->act, yij, BLK, p->act_alpha, p->act_beta);
        }
}

/* One row of W^T (W) times the np pixels' values xp[i][C] */
#define BG_ROW(C, W)                                                                        \
    do {                                                                                    \
        const __m256 b0 = _mm256_loadu_ps(W), b1 = nb > 1 ? _mm256_loadu_ps((W) + 8) : b0; \
        _Pragma("GCC unroll 6") for (int i = 0; i < np; i++) {                              \
            const __m256 av = _mm256_broadcast_ss(xp[i] + (C));                             \
            acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);                                 \
            if (nb > 1) acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);                     \
        }                                                                                   \
    } while (0)

/* The pixels' pointers at xk, opaque to the compiler: the rows' addresses stay pointer + displacement */
#define BG_PIX(XK)                                                          \
    _Pragma("GCC unroll 6") for (int i = 0; i < np; i++) {                  \
        xp[i] = (XK) + xo[i];                                               \
        __asm__("" : "+r"(xp[i]));                                          \
    }

/* a->nt tiles of np pixels x nb blocks */
BG_INLINE void bg_tile_n(const int np, const int nb, const bg_tile *a) {
    const int64_t nkh = BG_PW ? 1 : a->nkh, nkw = BG_PW ? 1 : a->nkw, nr = BG_PW ? BLK : a->nr, ys = a->ys;
    const float *xt = a->x, *rt = a->r;
    float *yt = a->y;
    for (int64_t t = 0; t < a->nt; t++, xt += a->xt, yt += a->yt, rt = rt ? rt + a->yt : NULL) {
        __m256 acc[BG_NP][2];
        int64_t xo[BG_NP];
        const float *xp[BG_NP];
#pragma GCC unroll 6
        for (int i = 0; i < np; i++) {
            xo[i] = a->xo[i];
#pragma GCC unroll 2
            for (int j = 0; j < nb; j++)
                acc[i][j] = a->first ? _mm256_setzero_ps() : _mm256_loadu_ps(yt + a->yo[i] + j * ys);
        }
        const float *x = xt, *w = a->w;
        for (int64_t u = 0; u < a->nu; u++, x += a->xcs, w += a->wcs) {
            const float *xr = x, *wr = w;
            for (int64_t kh = 0; kh < nkh; kh++, xr += a->xrs, wr += a->wrs) {
                const float *xk = xr, *wk = wr;
                for (int64_t kw = 0; kw < nkw; kw++, xk += a->xks, wk += nr * BG_NR) {
                    BG_PIX(xk)
#pragma GCC unroll 4
                    for (int c = 0; c < BLK; c++) {
                        if (!BG_PW && c >= nr) break;
                        BG_ROW(c, wk + c * BG_NR);
                    }
                }
            }
        }
        if (!a->last) {
#pragma GCC unroll 6
            for (int i = 0; i < np; i++)
#pragma GCC unroll 2
                for (int j = 0; j < nb; j++) _mm256_storeu_ps(yt + a->yo[i] + j * ys, acc[i][j]);
            continue;
        }
        /* NONE, RELU and CLIP as min(hi, max(lo, v)) (a NaN stays NaN); the others after the stores */
        const ep_conv2d_params *p = a->p;
        const int act = p->act;
        __m256 lo = _mm256_set1_ps(-__builtin_inff()), hi = _mm256_set1_ps(__builtin_inff());
        if (act == EP_ACT_RELU) lo = _mm256_setzero_ps();
        if (act == EP_ACT_CLIP) lo = _mm256_set1_ps(p->act_alpha), hi = _mm256_set1_ps(p->act_beta);
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) {
            const __m256 bv = a->b ? _mm256_loadu_ps(a->b + j * BLK) : _mm256_setzero_ps();
#pragma GCC unroll 6
            for (int i = 0; i < np; i++) {
                const int64_t at = a->yo[i] + j * ys;
                __m256 v = _mm256_add_ps(acc[i][j], bv);
                if (rt) v = _mm256_add_ps(v, _mm256_loadu_ps(rt + at));
                _mm256_storeu_ps(yt + at, _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
            }
        }
        if (act != EP_ACT_NONE && act != EP_ACT_RELU && act != EP_ACT_CLIP) bg_act(a, yt, nb);
    }
}
#undef BG_ROW
#undef BG_PIX

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
