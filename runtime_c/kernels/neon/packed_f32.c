/* NEON kernels of CONV2D variants PACKED and WINOGRAD and GEMM variant PACKED: the shared drivers of
 * kernels/pack_tmpl.h and kernels/winograd_tmpl.h (same packing and blocking as ref and x86) over a 6 x 16 register-blocked
 * micro-kernel: 24 q accumulators, 4 q of B per k, A by lane (packed panels: one q + one d load
 * per k, FMLA by element). Each output sums its products in k order with fused multiply-add (the
 * reference rounds each product), then bias, residual and activation in the reference's order. */
#include <arm_neon.h>
#include "pack_common.h"
#include "neon.h"
#include "neon_act.h"
#include "cvt16_neon.h"

/* Once per tile row, not per k: kept out of line so the 12 micro-kernel instances stay small. */
static __attribute__((noinline)) void pk_epi_row(const pk_epi *e, int i, float *ci, float32x4_t *v) {
    if (e->bias_row) {
        const float32x4_t bv = vdupq_n_f32(e->bias_row[i]);
        for (int j = 0; j < 4; j++) v[j] = vaddq_f32(v[j], bv);
    }
    if (e->bias_col) {
        const float *bc = e->bias_col + i * e->bias_col_ld;
        for (int j = 0; j < 4; j++) v[j] = vaddq_f32(v[j], vld1q_f32(bc + 4 * j));
    }
    if (e->res) {
        const float *r = e->res + i * e->res_ld;
        for (int j = 0; j < 4; j++) v[j] = vaddq_f32(v[j], vld1q_f32(r + 4 * j));
    }
    if (neon_act_vector(e->act)) {
        for (int j = 0; j < 4; j++) vst1q_f32(ci + 4 * j, neon_act4(e->act, e->alpha, e->beta, v[j]));
    } else {
        for (int j = 0; j < 4; j++) vst1q_f32(ci + 4 * j, v[j]);
        ep_neon_act_apply(e->act, ci, PK_NR, e->alpha, e->beta);
    }
}

/* mr is a compile-time constant in every instantiation; packed: A is an MR panel (a_sm 1, a_sk MR). */
NEON_INLINE void pk_tile_n(const int mr, const int packed, int64_t kc, const float *a, const int64_t a_sm,
                           const int64_t a_sk, const float *b, const int64_t b_sk, float *c, int64_t ldc, int load_c, const pk_epi *e) {
    float32x4_t acc[PK_MR][4];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = load_c ? vld1q_f32(c + i * ldc + 4 * j) : vdupq_n_f32(0.0f);
    for (int64_t k = 0; k < kc; k++) {
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
        if (packed) {
            const float32x4_t a03 = vld1q_f32(a);
            const float32x2_t a45 = vld1_f32(a + 4);
#define PK_ROW_LQ(i, L)                                    \
            if (mr > i) {                                  \
                acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, a03, L); \
                acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, a03, L); \
                acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, a03, L); \
                acc[i][3] = vfmaq_laneq_f32(acc[i][3], b3, a03, L); \
            }
#define PK_ROW_L(i, L)                                     \
            if (mr > i) {                                  \
                acc[i][0] = vfmaq_lane_f32(acc[i][0], b0, a45, L); \
                acc[i][1] = vfmaq_lane_f32(acc[i][1], b1, a45, L); \
                acc[i][2] = vfmaq_lane_f32(acc[i][2], b2, a45, L); \
                acc[i][3] = vfmaq_lane_f32(acc[i][3], b3, a45, L); \
            }
            PK_ROW_LQ(0, 0) PK_ROW_LQ(1, 1) PK_ROW_LQ(2, 2) PK_ROW_LQ(3, 3) PK_ROW_L(4, 0) PK_ROW_L(5, 1)
#undef PK_ROW_LQ
#undef PK_ROW_L
        } else {
            for (int i = 0; i < mr; i++) {
                const float av = a[i * a_sm];
                acc[i][0] = vfmaq_n_f32(acc[i][0], b0, av);
                acc[i][1] = vfmaq_n_f32(acc[i][1], b1, av);
                acc[i][2] = vfmaq_n_f32(acc[i][2], b2, av);
                acc[i][3] = vfmaq_n_f32(acc[i][3], b3, av);
            }
        }
        a += a_sk;
        b += b_sk;
    }
    for (int i = 0; i < mr; i++) {
        float *ci = c + i * ldc;
        if (e) {
            pk_epi_row(e, i, ci, acc[i]);
        } else {
            for (int j = 0; j < 4; j++) vst1q_f32(ci + 4 * j, acc[i][j]);
        }
    }
}

/* A tile of one row (a GEMV's, or a convolution's last output channel): its four accumulators alone would make
 * the k loop a chain of FMLA latencies, so four sets take k mod 4 and are added at the end, (s0 + s1) + (s2 + s3):
 * a different order of the same sums. */

NEON_INLINE void pk_tile_1w(int64_t kc, const float *a, const int64_t a_sk, const void *b, const int64_t b_sk, float *c,
                            int load_c, const pk_epi *e, const int wt) {
    float32x4_t s[4][4];
    for (int u = 0; u < 4; u++)
        for (int j = 0; j < 4; j++) s[u][j] = load_c && u == 0 ? vld1q_f32(c + 4 * j) : vdupq_n_f32(0.0f);
    int64_t k = 0, o = 0;   /* o: row k's first element in B */
    for (; k + 4 <= kc; k += 4) {
        for (int u = 0; u < 4; u++) {
            const float av = a[u * a_sk];
            for (int j = 0; j < 4; j++) s[u][j] = vfmaq_n_f32(s[u][j], neon_ldw4(b, o + u * b_sk + 4 * j, wt), av);
        }
        a += 4 * a_sk;
        o += 4 * b_sk;
    }
    for (; k < kc; k++, a += a_sk, o += b_sk)
        for (int j = 0; j < 4; j++) s[0][j] = vfmaq_n_f32(s[0][j], neon_ldw4(b, o + 4 * j, wt), a[0]);
    float32x4_t v[4];
    for (int j = 0; j < 4; j++) v[j] = vaddq_f32(vaddq_f32(s[0][j], s[1][j]), vaddq_f32(s[2][j], s[3][j]));
    if (e) {
        pk_epi_row(e, 0, c, v);
    } else {
        for (int j = 0; j < 4; j++) vst1q_f32(c + 4 * j, v[j]);
    }
}
NEON_INLINE void pk_tile_1(int64_t kc, const float *a, const int64_t a_sk, const float *b, const int64_t b_sk, float *c,
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

#define PK_CASES(P, SM, SK)                                                          \
    switch (mr) {                                                                    \
    case 1: pk_tile_1(kc, a, SK, b, b_sk, c, load_c, e); return;                           \
    case 2: pk_tile_n(2, P, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;            \
    case 3: pk_tile_n(3, P, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;            \
    case 4: pk_tile_n(4, P, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;            \
    case 5: pk_tile_n(5, P, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;            \
    default: pk_tile_n(PK_MR, P, kc, a, SM, SK, b, b_sk, c, ldc, load_c, e); return;       \
    }

static void pk_tile(int mr, int64_t kc, const float *a, int64_t a_sm, int64_t a_sk, const float *b, int64_t b_sk,
                    float *c, int64_t ldc, int load_c, const pk_epi *e) {
    if (a_sm == 1 && a_sk == PK_MR) PK_CASES(1, 1, PK_MR)
    PK_CASES(0, a_sm, a_sk)
}

/* d[j] = s[2j], j < 16 (reads s[0..32)): the stride-2 im2col row */
static inline void pk_even16(float *d, const float *s) {
    for (int j = 0; j < 16; j += 4) vst1q_f32(d + j, vld2q_f32(s + 2 * j).val[0]);
}
#define PK_EVEN16(d, s) pk_even16((d), (s))

#define PK_CVT_F16(d, s, n) neon_cvt_f16((d), (s), (n))
#define PK_CVT_BF16(d, s, n) neon_cvt_bf16((d), (s), (n))

/* d[c * ldd + i] = s[i * lds + c], i, c < 8, as four 4 x 4 blocks: CONV2D POINTWISE's write-back */
static inline void pk_t8_neon(float *d, int64_t ldd, const float *s, int64_t lds) {
    for (int bi = 0; bi < 8; bi += 4)
        for (int bc = 0; bc < 8; bc += 4) {
            float32x4_t v[4];
            for (int i = 0; i < 4; i++) v[i] = vld1q_f32(s + (bi + i) * lds + bc);
            neon_tr4(v);
            for (int c = 0; c < 4; c++) vst1q_f32(d + (bc + c) * ldd + bi, v[c]);
        }
}
#define PK_T8(d, ldd, s, lds) pk_t8_neon((d), (ldd), (s), (lds))

#include "pack_tmpl.h"
#include "winograd_tmpl.h"
#include "winograd1d_tmpl.h"
