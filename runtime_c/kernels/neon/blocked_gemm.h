/* The NEON micro-kernel of the C8 layout's GEMM-shaped convolutions, CONV2D variants BLOCKED_PW and
 * BLOCKED_CONV (plan_format.h; the tiles, their rows and their operations: kernels/blocked_gemm_common.h, their
 * runs: kernels/blocked_gemm_tmpl.h); included by blocked_pw_f32.c (which defines BG_PW 1 first) and
 * blocked_conv_f32.c. A tile of 6 output pixels x 16 output channels holds 24 q accumulators. A group of 8 rows
 * (a C8 unit) loads each pixel's 8 values as two q registers and multiplies by lane (FMLA by element); a smaller
 * group (a PLAIN X) loads each value replicated (LD1R). B is a 16-column row of W^T, four q loaded two at a
 * time. */
#ifndef EP_NEON_BLOCKED_GEMM_H
#define EP_NEON_BLOCKED_GEMM_H
#include <arm_neon.h>
#include "neon.h"
#include "neon_act.h"

#include "cvt16_neon.h"
#define BG_CVT_F16(d, s, n) neon_cvt_f16((d), (s), (n))
#define BG_CVT_BF16(d, s, n) neon_cvt_bf16((d), (s), (n))
#include "blocked_gemm_common.h"

/* EP_CONV_ACT_PRELU in place on a tile's stored outputs at y: v < 0 ? s v : v, s the block's 8 slopes */
static __attribute__((noinline)) void bg_prelu(const bg_tile *a, float *y, int nb) {
    const float32x4_t z = vdupq_n_f32(0.0f);
    for (int j = 0; j < nb; j++)
        for (int h = 0; h < BLK; h += 4) {
            const float32x4_t sv = vld1q_f32(a->s + j * BLK + h);
            for (int i = 0; i < a->np; i++) {
                float *yij = y + a->yo[i] + j * a->ys + h;
                const float32x4_t v = vld1q_f32(yij);
                vst1q_f32(yij, vbslq_f32(vcltq_f32(v, z), vmulq_f32(v, sv), v));
            }
        }
}

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
        if (act == EP_CONV_ACT_PRELU) bg_prelu(a, yt, nb);
        else if (act != EP_ACT_NONE && act != EP_ACT_RELU && act != EP_ACT_CLIP) bg_act(a, yt, nb);
    }
}
#undef BG_LANE

#include "blocked_gemm_tmpl.h"
#endif
