/* NEON LSTM / GRU f32 (variant 0): kernels/rnn_tmpl.h (hoisted input projection, per-step GEMV, vector
 * gates) over the primitives below; the structure of kernels/x86/rnn_f32.c over 4 lanes.
 *
 * rnn_nt: dot products of rows of X (or h) with rows of W (or R), both contiguous along K: register
 * tiles of 2 x 4 rows (projection) or 1 x 8 rows (GEMV), 8 q accumulators, 4 lanes of K per step, the
 * lanes summed pairwise (FADDP), then the K % 4 tail added with scalar fused multiply-adds. Gates use
 * neon_sigmoid4 / neon_tanh4 (neon_math.h: the x86 algorithms, relative error <= 2e-6 against libm),
 * clip as FMAX / FMIN (NaN propagates), separate multiplies and adds in the reference's order; a last
 * partial vector goes through a padded copy. */
#include <arm_neon.h>
#include <math.h>
#include "neon.h"
#include "neon_math.h"

#define RNN_INLINE static inline __attribute__((always_inline))

/* out[i][j] = dot(x_i, w_j) for an mr x nr tile (mr * nr <= 8 accumulators). */
RNN_INLINE void rnn_tile(const int mr, const int nr, int64_t K, const float *x, int64_t ldx, const float *w,
                         int64_t ldw, float *out) {
    float32x4_t acc[8];
    for (int a = 0; a < mr * nr; a++) acc[a] = vdupq_n_f32(0.0f);
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        float32x4_t xv[2];
        for (int i = 0; i < mr; i++) xv[i] = vld1q_f32(x + i * ldx + k);
        for (int j = 0; j < nr; j++) {
            const float32x4_t wv = vld1q_f32(w + j * ldw + k);
            for (int i = 0; i < mr; i++) acc[i * nr + j] = vfmaq_f32(acc[i * nr + j], xv[i], wv);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            float s = vaddvq_f32(acc[i * nr + j]);
            for (int64_t q = k; q < K; q++) s = fmaf(x[i * ldx + q], w[j * ldw + q], s);
            out[i * nr + j] = s;
        }
}

RNN_INLINE void rnn_put(const int mr, const int nr, const float *t, const float *bias, const float *add, float *y,
                        int64_t ldy) {
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            const float v = t[i * nr + j] + bias[j];
            y[i * ldy + j] = add ? v + add[i * ldy + j] : v;
        }
}

/* Columns [j, j + nr) of every row pair of x: 2 x nr tiles (1 x nr for a last row). */
RNN_INLINE void rnn_cols(const int nr, int64_t M, int64_t j, int64_t K, const float *x, int64_t ldx, const float *w,
                         int64_t ldw, const float *bias, const float *add, float *y, int64_t ldy) {
    float t[8];
    for (int64_t i = 0; i < M; i += 2) {
        const float *ai = add ? add + i * ldy + j : NULL;
        if (M - i >= 2) {
            rnn_tile(2, nr, K, x + i * ldx, ldx, w + j * ldw, ldw, t);
            rnn_put(2, nr, t, bias + j, ai, y + i * ldy + j, ldy);
        } else {
            rnn_tile(1, nr, K, x + i * ldx, ldx, w + j * ldw, ldw, t);
            rnn_put(1, nr, t, bias + j, ai, y + i * ldy + j, ldy);
        }
    }
}

/* Several rows of x (the projection of a chunk of timesteps): W's rows outermost, 4 at a time, so each
 * block of 4 rows is read from memory once and stays in L1 while every pair of x rows passes over it.
 * One row (the GEMV of a step): 1 x 8 tiles. */
static void rnn_nt(int64_t M, int64_t N, int64_t K, const float *x, int64_t ldx, const float *w, int64_t ldw,
                   const float *bias, const float *add, float *y, int64_t ldy) {
    float t[8];
    int64_t j = 0;
    if (M == 1)
        for (; j + 8 <= N; j += 8) {
            rnn_tile(1, 8, K, x, ldx, w + j * ldw, ldw, t);
            rnn_put(1, 8, t, bias + j, add ? add + j : NULL, y + j, ldy);
        }
    for (; j + 4 <= N; j += 4) rnn_cols(4, M, j, K, x, ldx, w, ldw, bias, add, y, ldy);
    for (; j < N; j++) rnn_cols(1, M, j, K, x, ldx, w, ldw, bias, add, y, ldy);
}

RNN_INLINE float32x4_t rnn_clip4(float32x4_t v, float c) {
    if (!(c > 0.0f)) return v;
    return vminq_f32(vdupq_n_f32(c), vmaxq_f32(vdupq_n_f32(-c), v));
}

/* The cells of rnn_tmpl.h, 4 units per vector; the last n - j < 4 go through a padded copy. */
#define RV float32x4_t
#define RV_N 4
#define RV_PART(n) const int cnt = (n) < 4 ? (int)(n) : 4
#define RV_LD(p) (cnt == 4 ? vld1q_f32(p) : neon_ld_part((p), cnt, 0.0f))
#define RV_ST(p, v) (cnt == 4 ? vst1q_f32((p), (v)) : neon_st_part((p), (v), cnt))
#define RV_SET1(f) vdupq_n_f32(f)
#define RV_ADD(a, b) vaddq_f32((a), (b))
#define RV_SUB(a, b) vsubq_f32((a), (b))
#define RV_MUL(a, b) vmulq_f32((a), (b))
#define RV_SIGMOID(v) neon_sigmoid4(v)
#define RV_TANH(v) neon_tanh4(v)
#define RV_CLIP(v, c) rnn_clip4((v), (c))
#include "rnn_tmpl.h"
