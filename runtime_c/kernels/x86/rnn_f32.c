/* AVX2+FMA LSTM / GRU f32 (variant 0): kernels/rnn_tmpl.h (hoisted input projection, per-step GEMV,
 * vector gates) over the primitives below; mirrors kernels/neon/rnn_f32.c.
 *
 * rnn_nt: dot products of rows of X (or h) with rows of W (or R), both contiguous along K as ONNX lays
 * them out: register tiles of 2 x 4 rows (projection) or 1 x 8 rows (GEMV), 8 ymm accumulators, 8 lanes
 * of K per step with a masked tail, then one horizontal-add tree reducing the 8 accumulators into one
 * vector of 8 sums (the same tree for every output), bias and addend added as vectors. Gates use x86_sigmoid8 /
 * x86_tanh8 (x86_act.h: relative error <= 2e-6 against libm), clip as min / max (NaN propagates) and
 * separate multiplies and adds in the reference's order; the last partial vector is masked. */
#include <immintrin.h>
#include "x86.h"
#include "x86_act.h"

#define RNN_INLINE static inline __attribute__((always_inline))

/* Lane q: the sum of the lanes of a[q] as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), for 8
 * accumulators at once (one tree for every output, whatever the tile). */
RNN_INLINE __m256 rnn_hsum8(const __m256 *a) {
    const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

/* acc[i*nr + j] = lanes of dot(x_i, w_j) for an mr x nr tile (mr * nr <= 8), K in 8-lane steps, the
 * last partial step masked (both operands 0 past K). */
RNN_INLINE void rnn_tile(const int mr, const int nr, int64_t K, const float *x, int64_t ldx, const float *w,
                         int64_t ldw, __m256 *acc) {
    for (int a = 0; a < 8; a++) acc[a] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 xv[2];
        for (int i = 0; i < mr; i++) xv[i] = _mm256_loadu_ps(x + i * ldx + k);
        for (int j = 0; j < nr; j++) {
            const __m256 wv = _mm256_loadu_ps(w + j * ldw + k);
            for (int i = 0; i < mr; i++) acc[i * nr + j] = _mm256_fmadd_ps(xv[i], wv, acc[i * nr + j]);
        }
    }
    if (k < K) {
        const __m256i m = x86_mask8((int)(K - k));
        __m256 xv[2];
        for (int i = 0; i < mr; i++) xv[i] = _mm256_maskload_ps(x + i * ldx + k, m);
        for (int j = 0; j < nr; j++) {
            const __m256 wv = _mm256_maskload_ps(w + j * ldw + k, m);
            for (int i = 0; i < mr; i++) acc[i * nr + j] = _mm256_fmadd_ps(xv[i], wv, acc[i * nr + j]);
        }
    }
}

/* y[j..j+n) = (dots + bias) + add, n lanes of v (4 or 8) */
RNN_INLINE void rnn_put4(__m128 v, const float *bias, const float *add, float *y) {
    v = _mm_add_ps(v, _mm_loadu_ps(bias));
    if (add) v = _mm_add_ps(v, _mm_loadu_ps(add));
    _mm_storeu_ps(y, v);
}

/* Several rows of x (the projection of a chunk of timesteps): W's rows outermost, 4 at a time, so each
 * block of 4 rows is read from memory once and stays in L1 while every pair of x rows passes over it.
 * One row (the GEMV of a step): 1 x 8 tiles. */
static void rnn_nt(int64_t M, int64_t N, int64_t K, const float *x, int64_t ldx, const float *w, int64_t ldw,
                   const float *bias, const float *add, float *y, int64_t ldy) {
    __m256 acc[8];
    int64_t j = 0;
    if (M == 1) {
        for (; j + 8 <= N; j += 8) {
            rnn_tile(1, 8, K, x, ldx, w + j * ldw, ldw, acc);
            __m256 v = _mm256_add_ps(rnn_hsum8(acc), _mm256_loadu_ps(bias + j));
            if (add) v = _mm256_add_ps(v, _mm256_loadu_ps(add + j));
            _mm256_storeu_ps(y + j, v);
        }
    }
    for (; j + 4 <= N; j += 4)
        for (int64_t i = 0; i < M; i += 2) {   /* 2 x 4: rows i, i+1 in the two halves (1 x 4 for a last row) */
            const float *ai = add ? add + i * ldy + j : NULL;
            float *yi = y + i * ldy + j;
            if (M - i >= 2)
                rnn_tile(2, 4, K, x + i * ldx, ldx, w + j * ldw, ldw, acc);
            else
                rnn_tile(1, 4, K, x + i * ldx, ldx, w + j * ldw, ldw, acc);
            const __m256 v = rnn_hsum8(acc);
            rnn_put4(_mm256_castps256_ps128(v), bias + j, ai, yi);
            if (M - i >= 2) rnn_put4(_mm256_extractf128_ps(v, 1), bias + j, ai ? ai + ldy : NULL, yi + ldy);
        }
    for (; j < N; j++)   /* column tail: one accumulator per row, the same tree */
        for (int64_t i = 0; i < M; i += 2) {
            const int two = M - i >= 2;
            if (two)
                rnn_tile(2, 1, K, x + i * ldx, ldx, w + j * ldw, ldw, acc);
            else
                rnn_tile(1, 1, K, x + i * ldx, ldx, w + j * ldw, ldw, acc);
            float t[8];
            _mm256_storeu_ps(t, rnn_hsum8(acc));
            for (int r = 0; r <= two; r++) {
                const float v = t[r] + bias[j];
                y[(i + r) * ldy + j] = add ? v + add[(i + r) * ldy + j] : v;
            }
        }
}

/* clip(v) to [-c, c] when c > 0 (a NaN v stays NaN: MAXPS / MINPS return the second operand) */
RNN_INLINE __m256 rnn_clip8(__m256 v, float c) {
    if (!(c > 0.0f)) return v;
    return _mm256_min_ps(_mm256_set1_ps(c), _mm256_max_ps(_mm256_set1_ps(-c), v));
}

/* The cells of rnn_tmpl.h, 8 units per vector; n - j < 8 units at the end are masked. */
#define RV __m256
#define RV_N 8
#define RV_PART(n) const __m256i m = x86_mask8((n) < 8 ? (int)(n) : 8)
#define RV_LD(p) _mm256_maskload_ps((p), m)
#define RV_ST(p, v) _mm256_maskstore_ps((p), m, (v))
#define RV_SET1(f) _mm256_set1_ps(f)
#define RV_ADD(a, b) _mm256_add_ps((a), (b))
#define RV_SUB(a, b) _mm256_sub_ps((a), (b))
#define RV_MUL(a, b) _mm256_mul_ps((a), (b))
#define RV_SIGMOID(v) x86_sigmoid8(v)
#define RV_TANH(v) x86_tanh8(v)
#define RV_CLIP(v, c) rnn_clip8((v), (c))
#include "rnn_tmpl.h"
