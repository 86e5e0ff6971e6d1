/* AVX2+FMA kernels of CONV2D variant PACKED and GEMM variant PACKED: the shared drivers of
 * kernels/pack_tmpl.h over a 6 x 16 register-blocked micro-kernel (12 ymm accumulators, 2 ymm of B,
 * 1 broadcast of A; NEON: 24 q accumulators, 4 q of B, A by lane). Built with -mavx2 -mfma. */
#include <immintrin.h>
#include "pack_common.h"
#include "x86.h"
#include "x86_act.h"
#include "cvt16_x86.h"

#define PK_INLINE static inline __attribute__((always_inline))

/* The stores of a finished tile t[mr][NR] into C with the epilogue (bias, residual, activation): once per
 * tile, not per k, so it is kept out of line and the 12 micro-kernel instances stay small. */
static __attribute__((noinline)) void pk_store_tile(int mr, const float *t, float *c, int64_t ldc, const pk_epi *e) {
    for (int i = 0; i < mr; i++) {
        float *ci = c + i * ldc;
        __m256 v0 = _mm256_loadu_ps(t + i * PK_NR), v1 = _mm256_loadu_ps(t + i * PK_NR + 8);
        if (e) {
            if (e->bias_row) {
                const __m256 bv = _mm256_broadcast_ss(e->bias_row + i);
                v0 = _mm256_add_ps(v0, bv);
                v1 = _mm256_add_ps(v1, bv);
            }
            if (e->bias_col) {
                const float *bc = e->bias_col + i * e->bias_col_ld;
                v0 = _mm256_add_ps(v0, _mm256_loadu_ps(bc));
                v1 = _mm256_add_ps(v1, _mm256_loadu_ps(bc + 8));
            }
            if (e->res) {
                const float *r = e->res + i * e->res_ld;
                v0 = _mm256_add_ps(v0, _mm256_loadu_ps(r));
                v1 = _mm256_add_ps(v1, _mm256_loadu_ps(r + 8));
            }
            v0 = x86_act8(e->act, e->alpha, e->beta, v0);
            v1 = x86_act8(e->act, e->alpha, e->beta, v1);
        }
        _mm256_storeu_ps(ci, v0);
        _mm256_storeu_ps(ci + 8, v1);
        if (e && !x86_act_vec(e->act)) ep_act_apply_f32(e->act, ci, PK_NR, e->alpha, e->beta);
    }
}

PK_INLINE void pk_tile_n(const int mr, int64_t kc, const float *a, const int64_t a_sm, const int64_t a_sk,
                         const float *b, const int64_t b_sk, float *c, int64_t ldc, int load_c, const pk_epi *e) {
    __m256 c0[PK_MR], c1[PK_MR];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        c0[i] = load_c ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
        c1[i] = load_c ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kc; k++) {
        const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            const __m256 av = _mm256_broadcast_ss(a + i * a_sm);
            c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
        }
        a += a_sk;
        b += b_sk;
    }
    /* spill the tile once so the epilogue's loop may index rows at run time (keeps c0/c1 in registers) */
    float t[PK_MR * PK_NR];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        _mm256_storeu_ps(t + i * PK_NR, c0[i]);
        _mm256_storeu_ps(t + i * PK_NR + 8, c1[i]);
    }
    pk_store_tile(mr, t, c, ldc, e);
}

/* A tile of one row (a GEMV's, or a convolution's last output channel): its two accumulators alone would make
 * the k loop a chain of FMA latencies (16 floats of B per latency), so four sets take k mod 4 and are added at
 * the end, (s0 + s1) + (s2 + s3): four times the B bandwidth, a different order of the same sums. */

PK_INLINE void pk_tile_1w(int64_t kc, const float *a, const int64_t a_sk, const void *b, const int64_t b_sk, float *c,
                          int load_c, const pk_epi *e, const int wt) {
    __m256 s0[4], s1[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) s0[j] = s1[j] = _mm256_setzero_ps();
    if (load_c) s0[0] = _mm256_loadu_ps(c), s1[0] = _mm256_loadu_ps(c + 8);
    int64_t k = 0, o = 0;   /* o: row k's first element in B */
    for (; k + 4 <= kc; k += 4) {
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            const __m256 av = _mm256_broadcast_ss(a + j * a_sk);
            s0[j] = _mm256_fmadd_ps(av, x86_ldw8(b, o + j * b_sk, wt), s0[j]);
            s1[j] = _mm256_fmadd_ps(av, x86_ldw8(b, o + j * b_sk + 8, wt), s1[j]);
        }
        a += 4 * a_sk;
        o += 4 * b_sk;
    }
    for (; k < kc; k++, a += a_sk, o += b_sk) {
        const __m256 av = _mm256_broadcast_ss(a);
        s0[0] = _mm256_fmadd_ps(av, x86_ldw8(b, o, wt), s0[0]);
        s1[0] = _mm256_fmadd_ps(av, x86_ldw8(b, o + 8, wt), s1[0]);
    }
    float t[PK_NR];
    _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(s0[0], s0[1]), _mm256_add_ps(s0[2], s0[3])));
    _mm256_storeu_ps(t + 8, _mm256_add_ps(_mm256_add_ps(s1[0], s1[1]), _mm256_add_ps(s1[2], s1[3])));
    pk_store_tile(1, t, c, 0, e);
}
PK_INLINE void pk_tile_1(int64_t kc, const float *a, const int64_t a_sk, const float *b, const int64_t b_sk, float *c,
                         int load_c, const pk_epi *e) {
    pk_tile_1w(kc, a, a_sk, b, b_sk, c, load_c, e, 0);
}
/* The one-row tile on a 16-bit B strip (pack_tmpl.h), converted in registers: the same sums as pk_tile_1 on the
 * converted strip */
static void pk_tile_1_w16(int64_t kc, const float *a, int64_t a_sk, const uint16_t *b, int64_t b_sk, float *c,
                          int load_c, const pk_epi *e, int dt) {
    if (dt == EP_DTYPE_F16) pk_tile_1w(kc, a, a_sk, b, b_sk, c, load_c, e, EP_DTYPE_F16);
    else pk_tile_1w(kc, a, a_sk, b, b_sk, c, load_c, e, EP_DTYPE_BF16);
}
#define PK_TILE1_W16(kc, a, a_sk, b, b_sk, c, load_c, e, dt) pk_tile_1_w16(kc, a, a_sk, b, b_sk, c, load_c, e, dt)

/* One instantiation per row count and A access (packed panel or plain rows). */
#define PK_CASES(SM, SK)                                                          \
    switch (mr) {                                                                 \
    case 1: pk_tile_1(kc, a, SK, b, b_sk, c, load_c, e); return;                       \
    case 2: pk_tile_n(2, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;           \
    case 3: pk_tile_n(3, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;           \
    case 4: pk_tile_n(4, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;           \
    case 5: pk_tile_n(5, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;           \
    default: pk_tile_n(PK_MR, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;      \
    }

static void pk_tile(int mr, int64_t kc, const float *a, int64_t a_sm, int64_t a_sk, const float *b, int64_t b_sk,
                    float *c, int64_t ldc, int load_c, const pk_epi *e) {
    if (a_sm == 1 && a_sk == PK_MR) PK_CASES(1, PK_MR)
    PK_CASES(a_sm, a_sk)
}

/* d[j] = s[2j], j < 16 (reads s[0..32)): the stride-2 im2col row; even elements of each 128-bit half, then
 * the halves in order */
static inline void pk_even16(float *d, const float *s) {
    for (int j = 0; j < 16; j += 8) {
        const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(s + 2 * j), _mm256_loadu_ps(s + 2 * j + 8), 0x88);
        _mm256_storeu_ps(d + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
    }
}
#define PK_EVEN16(d, s) pk_even16((d), (s))

#define PK_CVT_F16(d, s, n) x86_cvt_f16((d), (s), (n))
#define PK_CVT_BF16(d, s, n) x86_cvt_bf16((d), (s), (n))

/* d[c * ldd + i] = s[i * lds + c], i, c < 8: CONV2D POINTWISE's write-back */
static inline void pk_t8_x86(float *d, int64_t ldd, const float *s, int64_t lds) {
    __m256 v[8];
    for (int i = 0; i < 8; i++) v[i] = _mm256_loadu_ps(s + i * lds);
    x86_tr8(v);
    for (int c = 0; c < 8; c++) _mm256_storeu_ps(d + c * ldd, v[c]);
}
#define PK_T8(d, ldd, s, lds) pk_t8_x86((d), (ldd), (s), (lds))

#include "pack_tmpl.h"
#include "winograd_tmpl.h"
#include "winograd1d_tmpl.h"
