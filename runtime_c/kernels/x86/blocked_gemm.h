/* The AVX2+FMA micro-kernel of the C8 layout's GEMM-shaped convolutions, CONV2D variants BLOCKED_PW and
 * BLOCKED_CONV (plan_format.h; the tiles: kernels/blocked_gemm_common.h, their runs: kernels/blocked_gemm_tmpl.h);
 * included by blocked_pw_f32.c (which defines BG_PW 1 first) and blocked_conv_f32.c.
 *
 * A tile of 6 output pixels x 16 output channels holds 12 ymm accumulators and loads two ymm of B per row of W^T
 * (6 x 8: 6 accumulators, one ymm). A is read from X in place, one broadcast per pixel and row. The k loop steps
 * 4 rows. */
#ifndef EP_X86_BLOCKED_GEMM_H
#define EP_X86_BLOCKED_GEMM_H
#include <immintrin.h>
#include "x86.h"
#include "x86_act.h"

#include "cvt16_x86.h"
#define BG_CVT_F16(d, s, n) x86_cvt_f16((d), (s), (n))
#define BG_CVT_BF16(d, s, n) x86_cvt_bf16((d), (s), (n))
#include "blocked_gemm_common.h"

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

/* EP_CONV_ACT_PRELU in place on a tile's stored outputs at y: v < 0 ? s v : v, s the block's 8 slopes */
static __attribute__((noinline)) void bg_prelu(const bg_tile *a, float *y, int nb) {
    const __m256 z = _mm256_setzero_ps();
    for (int j = 0; j < nb; j++) {
        const __m256 sv = _mm256_loadu_ps(a->s + j * BLK);
        for (int i = 0; i < a->np; i++) {
            float *yij = y + a->yo[i] + j * a->ys;
            const __m256 v = _mm256_loadu_ps(yij);
            _mm256_storeu_ps(yij, _mm256_blendv_ps(v, _mm256_mul_ps(v, sv), _mm256_cmp_ps(v, z, _CMP_LT_OQ)));
        }
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
        if (act == EP_CONV_ACT_PRELU) bg_prelu(a, yt, nb);
        else if (act != EP_ACT_NONE && act != EP_ACT_RELU && act != EP_ACT_CLIP) bg_act(a, yt, nb);
    }
}
#undef BG_ROW
#undef BG_PIX

#include "blocked_gemm_tmpl.h"
#endif
