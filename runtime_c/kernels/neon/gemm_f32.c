/* NEON GEMM and MATMUL f32 (variant 0: B row-major, not packed), and the row-major GEMM driver that
 * CONV2D variant 0 uses for 1x1 convolutions.
 *
 * Blocking (Goto style, no packing, no scratch): k-blocks of KC = 256, then 16-column strips of B
 * (a KC x 16 strip, 16 KiB, stays in L1 while every 6-row panel of A streams past it), then 6-row
 * panels: a 6 x 16 register tile (24 q accumulators, 4 q loads of B per k, A by scalar broadcast).
 * Column tails run 6 x 4 tiles, then single columns. Each output sums its products in k order
 * (fused multiply-add) from 0.0f, then bias, residual and activation in the reference's order. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>
#include "ep_ops.h"
#include "matmul_bcast.h"
#include "pack_common.h"
#include "neon.h"
#include "neon_act.h"
#include "neon_gemm.h"

#define RM_KC 256
#define RM_MR 6

static inline int64_t rm_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Epilogue of one row of w (4, or 1 when scalar) columns, values in v / s. */
static __attribute__((noinline)) void rm_epi4(const pk_epi *e, int i, float *ci, float32x4_t v) {
    if (e->bias_row) v = vaddq_f32(v, vdupq_n_f32(e->bias_row[i]));
    if (e->bias_col) v = vaddq_f32(v, vld1q_f32(e->bias_col + i * e->bias_col_ld));
    if (e->res) v = vaddq_f32(v, vld1q_f32(e->res + i * e->res_ld));
    if (neon_act_vector(e->act)) {
        vst1q_f32(ci, neon_act4(e->act, e->alpha, e->beta, v));
    } else {
        vst1q_f32(ci, v);
        ep_neon_act_apply(e->act, ci, 4, e->alpha, e->beta);
    }
}

NEON_INLINE void rm_tile16(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                           float *c, int64_t ldc, int load_c, const pk_epi *e) {
    float32x4_t acc[RM_MR][4];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = load_c ? vld1q_f32(c + i * ldc + 4 * j) : vdupq_n_f32(0.0f);
    for (int64_t k = 0; k < kc; k++) {
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
        for (int i = 0; i < mr; i++) {
            const float av = a[i * lda + k];
            acc[i][0] = vfmaq_n_f32(acc[i][0], b0, av);
            acc[i][1] = vfmaq_n_f32(acc[i][1], b1, av);
            acc[i][2] = vfmaq_n_f32(acc[i][2], b2, av);
            acc[i][3] = vfmaq_n_f32(acc[i][3], b3, av);
        }
        b += ldb;
    }
    for (int i = 0; i < mr; i++) {
        float *ci = c + i * ldc;
        if (!e) {
            for (int j = 0; j < 4; j++) vst1q_f32(ci + 4 * j, acc[i][j]);
            continue;
        }
        pk_epi te = *e;
        for (int j = 0; j < 4; j++) {
            rm_epi4(&te, i, ci + 4 * j, acc[i][j]);
            if (te.bias_col) te.bias_col += 4;
            if (te.res) te.res += 4;
        }
    }
}

NEON_INLINE void rm_tile4(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                          float *c, int64_t ldc, int load_c, const pk_epi *e) {
    float32x4_t acc[RM_MR];
    for (int i = 0; i < mr; i++) acc[i] = load_c ? vld1q_f32(c + i * ldc) : vdupq_n_f32(0.0f);
    for (int64_t k = 0; k < kc; k++) {
        const float32x4_t b0 = vld1q_f32(b);
        for (int i = 0; i < mr; i++) acc[i] = vfmaq_n_f32(acc[i], b0, a[i * lda + k]);
        b += ldb;
    }
    for (int i = 0; i < mr; i++) {
        if (e)
            rm_epi4(e, i, c + i * ldc, acc[i]);
        else
            vst1q_f32(c + i * ldc, acc[i]);
    }
}

static void rm_tile1(int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                     int64_t ldc, int load_c, const pk_epi *e) {
    for (int i = 0; i < mr; i++) {
        float s = load_c ? c[i * ldc] : 0.0f;
        for (int64_t k = 0; k < kc; k++) s = fmaf(a[i * lda + k], b[k * ldb], s);
        if (e) {
            if (e->bias_row) s += e->bias_row[i];
            if (e->bias_col) s += e->bias_col[i * e->bias_col_ld];
            if (e->res) s += e->res[i * e->res_ld];
            ep_neon_act_apply(e->act, &s, 1, e->alpha, e->beta);   /* rm_epi4's formula, one lane */
        }
        c[i * ldc] = s;
    }
}

#define RM_CASES(F)                                                              \
    switch (mr) {                                                                \
    case 1: F(1, kc, a, lda, b, ldb, c, ldc, load_c, e); return;                 \
    case 2: F(2, kc, a, lda, b, ldb, c, ldc, load_c, e); return;                 \
    case 3: F(3, kc, a, lda, b, ldb, c, ldc, load_c, e); return;                 \
    case 4: F(4, kc, a, lda, b, ldb, c, ldc, load_c, e); return;                 \
    case 5: F(5, kc, a, lda, b, ldb, c, ldc, load_c, e); return;                 \
    default: F(RM_MR, kc, a, lda, b, ldb, c, ldc, load_c, e); return;            \
    }
static void rm_t16(int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                   int64_t ldc, int load_c, const pk_epi *e) {
    RM_CASES(rm_tile16)
}
static void rm_t4(int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc, int load_c, const pk_epi *e) {
    RM_CASES(rm_tile4)
}

/* c[0, N) = a[0, K) B[K, N] for one row of A (K >= 1, no epilogue), B's rows read whole, one after the other:
 * c[n] = fma(a[k], B[k][n], c[n]) for k in order from 0.0f, the operations of the tiles for one row, so the
 * same bits; but B streams row by row instead of as 16-column strips (which read each row in 64-byte pieces,
 * K rows apart: an attention's scores over a long key sequence, K^T's rows thousands of bytes long). */
#define RM_ROW_NB 1024   /* columns of c per pass: 4 KiB, in L1 */
static void rm_row(int64_t N, int64_t K, const float *a, const float *b, int64_t ldb, float *c) {
    for (int64_t n0 = 0; n0 < N; n0 += RM_ROW_NB) {
        const int64_t nb = rm_min(RM_ROW_NB, N - n0), n4 = nb & ~(int64_t)3;
        float *cn = c + n0;
        for (int64_t j = 0; j < nb; j++) cn[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            const float av = a[k];
            const float *bk = b + k * ldb + n0;
            int64_t j = 0;
            for (; j < n4; j += 4) vst1q_f32(cn + j, vfmaq_n_f32(vld1q_f32(cn + j), vld1q_f32(bk + j), av));
            for (; j < nb; j++) cn[j] = fmaf(av, bk[j], cn[j]);
        }
    }
}

void ep_neon_gemm_rm(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                     float *c, int64_t ldc, const pk_epi *e) {
    if (M <= 0 || N <= 0) return;
    if (M == 1 && K > 0 && !e) {
        rm_row(N, K, a, b, ldb, c);
        return;
    }
    if (K <= 0) {   /* empty sum: zeros, then the epilogue */
        for (int64_t i = 0; i < M; i++) {
            float *ci = c + i * ldc;
            memset(ci, 0, (size_t)N * sizeof(float));
            if (!e) continue;
            for (int64_t j = 0; j < N; j++) {
                float s = 0.0f;
                if (e->bias_row) s += e->bias_row[i];
                if (e->bias_col) s += e->bias_col[i * e->bias_col_ld + j];
                if (e->res) s += e->res[i * e->res_ld + j];
                ci[j] = s;
                ep_neon_act_apply(e->act, ci + j, 1, e->alpha, e->beta);
            }
        }
        return;
    }
    for (int64_t k0 = 0; k0 < K; k0 += RM_KC) {
        const int64_t kc = rm_min(RM_KC, K - k0);
        const int load_c = k0 > 0, last = k0 + kc == K;
        for (int64_t n0 = 0; n0 < N;) {
            const int64_t w = N - n0 >= 16 ? 16 : (N - n0 >= 4 ? 4 : 1);
            const float *bs = b + k0 * ldb + n0;
            for (int64_t m = 0; m < M; m += RM_MR) {
                const int mr = (int)rm_min(RM_MR, M - m);
                const float *as = a + m * lda + k0;
                float *ct = c + m * ldc + n0;
                pk_epi te;
                const pk_epi *tp = last ? pk_epi_at(&te, e, m, n0) : NULL;
                if (w == 16)
                    rm_t16(mr, kc, as, lda, bs, ldb, ct, ldc, load_c, tp);
                else if (w == 4)
                    rm_t4(mr, kc, as, lda, bs, ldb, ct, ldc, load_c, tp);
                else
                    rm_tile1(mr, kc, as, lda, bs, ldb, ct, ldc, load_c, tp);
            }
            n0 += w;
        }
    }
}

int ep_neon_gemm_f32(const ep_op *op) {
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *at = op->in[0], *bt = op->in[1], *ct = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = bt->dims[1];
    const pk_epi e = {NULL, ct ? (const float *)ct->data : NULL,
                      (ct && ct->rank == 2 && ct->dims[0] == M && M != 1) ? N : 0,
                      rt ? (const float *)rt->data : NULL, N, p->act, p->act_alpha, p->act_beta};
    ep_neon_gemm_rm(M, N, K, (const float *)at->data, K, (const float *)bt->data, N, (float *)yt->data, N, &e);
    return EP_OK;
}

int ep_neon_matmul_f32(const ep_op *op) {
    const ep_tensor *at = op->in[0], *bt = op->in[1], *yt = op->out[0];
    const int ro = yt->rank, nb = ro - 2;
    const int64_t M = yt->dims[ro - 2], N = yt->dims[ro - 1], K = at->dims[at->rank - 1];
    for (int i = 0; i < ro; i++)
        if (yt->dims[i] == 0) return EP_OK;
    int64_t batches = 1;
    for (int d = 0; d < nb; d++) batches *= yt->dims[d];
    const float *a = (const float *)at->data, *b = (const float *)bt->data;
    float *y = (float *)yt->data;
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t a_mat, b_mat;
        ep_matmul_batch(at, bt, yt, bi, &a_mat, &b_mat);
        ep_neon_gemm_rm(M, N, K, a + a_mat * M * K, K, b + b_mat * K * N, N, y + bi * M * N, N, NULL);
    }
    return EP_OK;
}

/* ATTENTION: MATMUL's GEMM and SOFTMAX's row (kernels/attention_tmpl.h) */
#define AT_GEMM(M, N, K, a, lda, b, ldb, c, ldc) ep_neon_gemm_rm(M, N, K, a, lda, b, ldb, c, ldc, NULL)
#define AT_SOFTMAX_ROW(y, x, n) ep_neon_softmax_row(y, x, n)
#include "attention_tmpl.h"
