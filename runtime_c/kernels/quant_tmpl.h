/* The packed int8 GEMM drivers (QGEMM PACKED, QCONV2D PACKED), compiled once per ISA (plan_format.h "int8").
 *
 * Both products run on the weights as the plan holds them, [ceil(R/8)][ceil(K/4)][8][4] int8, and on the other
 * operand (QGEMM: rows of A; QCONV2D: the patches of output positions) packed into scratch "stream panels" of
 * QT_SR rows, [ceil(K/4)][QT_SR][4] elements of type QT_ELEM. The including file may set (defaults in brackets):
 *   QT_SR, QT_ELEM   rows and element type of a stream panel [8, int8_t: the bytes ep_qconv_pack_patches writes];
 *       QT_SR * sizeof(QT_ELEM) == 8, so a stream panel has the bytes of a weight panel (x86: 4 rows of int16,
 *       sign-extended once at packing so that its inner loop broadcasts them straight from memory);
 *   QT_CONV_STREAM_ROWS   1: the convolution's block takes the patches as its rows and the weights as its columns
 *       (acc[position][channel], stored transposed); 0: the weights as rows [0];
 *   QT_CUSTOM_PACK   defined: the file defines qt_pack_rows and qt_pack_patches itself (after this header; the
 *       generic qt_pack_rows_c / qt_pack_patches_c are here to fall back on).
 * and must define, before including:
 *   qt_block(rp, cp, K4, acc)   acc[r * 8 + j] = sum_k rp[r, k] * cp[j, k] over one row panel rp and one 8-column
 *       panel cp (r < the row panel's rows: QT_SR for a stream panel, 8 for a weight panel), exact int32 (the
 *       shape function bounds every partial sum); QGEMM calls it as (stream panel, weight panel), QCONV2D as
 *       (weight panel, stream panel) or, with QT_CONV_STREAM_ROWS, (stream panel, weight panel);
 *   qt_requant_cols(acc8, bias8, m8, s8, vec, lo, hi, zp, dst, n)   one row of 8 accumulators plus their columns'
 *       biases, requantised with the columns' (m, s) (vec: every s of the 8 is >= 32), the first n stored as int8;
 *   qt_requant_row(acc8, bias, m, s, lo, hi, zp, dst, n)   the same with one (bias, m, s) for the 8;
 * and may define (with QT_CONV_STREAM_ROWS) QT_CONV_TILE 1 and
 *   qt_conv_tile(sp, wp, K4, bias8, m8, s8, lo, hi, zp, yc, P)   a whole convolution tile fused: the block of stream
 *       panel sp and weight panel wp, requantised (every s >= 32) and stored as qt_requant_tile stores a full one
 *       (QT_SR positions, 8 channels); likewise QT_GEMM_TILE 1 and
 *   qt_gemm_tile(sp, wp, K4, bias8, m8, s8, lo, hi, zp, y, N)   QGEMM's full tile (QT_SR rows, 8 columns, every
 *       s >= 32), rows stored at y + r * N; and QT_CONV_ROW1 1 and
 *   qt_conv_row1(sp, wp, K4, bias8, m8, s8, lo, hi, zp, yc, P)   a convolution tile of one position (a 1 x 1 map,
 *       or the last of P), 8 channels (their bias, m and s at bias8, m8, s8): only the stream panel's first
 *       row multiplied, stored at yc[c * P]; returns 0, having stored nothing, when it cannot (then the tile
 *       takes the general path).
 * Each must equal ep_requant bit for bit. It then exports EP_ISA_FN(qgemm_packed_i8), EP_ISA_FN(dqgemm_packed_i8) and
 * EP_ISA_FN(qconv2d_packed_i8).
 *
 * Scratch: op->scratch_size holds S = scratch_size / panel whole stream panels (the shape function's minimum is
 * one); the rest is unused. The streamed operand is packed S panels per pass.
 * Threads (op->pool): a pass's panels are split into contiguous ranges, a task packing and multiplying its own
 * (no barrier); when the pass has fewer panels than threads and the weights have more panels, the pass is packed
 * first (a task per panel) and the product is split along the weight panels. The accumulators are exact, so any
 * split gives the same bits; every output byte is written by exactly one task. */
#include <string.h>
#include "ep_ops.h"
#include "quant_common.h"

#ifndef QT_SR
#define QT_SR EP_QPACK_R
#define QT_ELEM int8_t
#endif
#ifndef QT_CONV_STREAM_ROWS
#define QT_CONV_STREAM_ROWS 0
#endif
#ifndef QT_CONV_TILE
#define QT_CONV_TILE 0
#define qt_conv_tile(sp, wp, K4, bias8, m8, s8, lo, hi, zp, yc, P) ((void)0)
#endif
#ifndef QT_CONV_ROW1
#define QT_CONV_ROW1 0
#define qt_conv_row1(sp, wp, K4, bias8, m8, s8, lo, hi, zp, yc, P) 0
#endif
#ifndef QT_GEMM_TILE
#define QT_GEMM_TILE 0
#define qt_gemm_tile(sp, wp, K4, bias8, m8, s8, lo, hi, zp, y, N) ((void)0)
#endif
_Static_assert(QT_SR * sizeof(QT_ELEM) == EP_QPACK_R, "a stream panel has the bytes of a weight panel");

#define QT_PANEL(K4) ((int64_t)(K4) * EP_QPACK_R * EP_QPACK_K)   /* bytes of a weight or a stream panel */

static inline int64_t qt_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Rows r0 .. r0 + QT_SR - 1 of the row-major int8 matrix a [R, K] (rows past R and k past K zero) as one stream
 * panel [K4][QT_SR][4]. */
static inline void qt_pack_rows_c(const int8_t *a, int64_t R, int64_t K, int64_t r0, QT_ELEM *dst) {
    const int64_t K4 = (K + EP_QPACK_K - 1) / EP_QPACK_K;
    for (int r = 0; r < QT_SR; r++) {
        QT_ELEM *d = dst + r * EP_QPACK_K;
        const int8_t *s = r0 + r < R ? a + (r0 + r) * K : NULL;
        for (int64_t k = 0; k < K4 * EP_QPACK_K; k++)
            d[(k >> 2) * (QT_SR * EP_QPACK_K) + (k & 3)] = (QT_ELEM)(s && k < K ? s[k] : 0);
    }
}

/* The patches of output positions q0 .. q0 + QT_SR - 1 as one stream panel: ep_qconv_pack_patches's values
 * (zero past the plane and past K) without a division per element. */
static inline void qt_pack_patches_c(const ep_qconv_geo *g, const int8_t *xg, int64_t q0, QT_ELEM *dst) {
    const int64_t K4 = (g->K + EP_QPACK_K - 1) / EP_QPACK_K, Q = g->OH * g->OW;
    for (int r = 0; r < QT_SR; r++) {
        QT_ELEM *d = dst + r * EP_QPACK_K;
        const int64_t q = q0 + r;
        int64_t k = 0;
        if (q < Q) {
            const int64_t ih0 = q / g->OW * g->sh - g->pt, iw0 = q % g->OW * g->sw - g->pl;
            for (int64_t c = 0; c < g->CG; c++) {
                const int8_t *xc = xg + c * g->H * g->W;
                for (int64_t kh = 0; kh < g->KH; kh++) {
                    const int64_t ih = ih0 + kh * g->dh;
                    const int rok = ih >= 0 && ih < g->H;
                    const int8_t *xr = xc + ih * g->W;
                    for (int64_t kw = 0; kw < g->KW; kw++, k++) {
                        const int64_t iw = iw0 + kw * g->dw;
                        d[(k >> 2) * (QT_SR * EP_QPACK_K) + (k & 3)] = rok && iw >= 0 && iw < g->W ? xr[iw] : g->pad;
                    }
                }
            }
        }
        for (; k < K4 * EP_QPACK_K; k++) d[(k >> 2) * (QT_SR * EP_QPACK_K) + (k & 3)] = 0;
    }
}

#ifdef QT_CUSTOM_PACK
static void qt_pack_rows(const int8_t *a, int64_t R, int64_t K, int64_t r0, QT_ELEM *dst);
static void qt_pack_patches(const ep_qconv_geo *g, const int8_t *xg, int64_t q0, QT_ELEM *dst);

/* For an ISA's qt_pack_patches, the patches it has no fast case for: each position's patch gathered as a
 * contiguous int8 row (ep_qconv_gather; the positions past the plane are not gathered) and the QT_SR rows
 * packed as A's rows by qt_pack_rows, while QT_SR patches fit a 9 KiB stack buffer; longer ones element by
 * element (qt_pack_patches_c). The bytes of qt_pack_patches_c either way. */
#define QT_GATHER_BYTES 9216
static void qt_pack_patches_gathered(const ep_qconv_geo *g, const int8_t *xg, int64_t q0, QT_ELEM *dst) {
    const int64_t KP = (g->K + EP_QPACK_K - 1) / EP_QPACK_K * EP_QPACK_K, Q = g->OH * g->OW;
    if (KP > QT_GATHER_BYTES / QT_SR) {
        qt_pack_patches_c(g, xg, q0, dst);
        return;
    }
    int8_t rows[QT_GATHER_BYTES];
    const int nr = Q - q0 < QT_SR ? (int)(Q - q0) : QT_SR;
    for (int r = 0; r < nr; r++) ep_qconv_gather(g, xg, q0 + r, KP, rows + r * KP);
    qt_pack_rows(rows, nr, KP, 0, dst);
}
#else
#define qt_pack_rows qt_pack_rows_c
#define qt_pack_patches qt_pack_patches_c
#endif

/* Stream panel i of a pass in scratch */
#define QT_SPANEL(buf, K4, i) ((QT_ELEM *)((buf) + (i) * QT_PANEL(K4)))

/* The 8 columns' bias, m, s of weight panel n0 (nc of them; the rest 0, 0, 32) and whether every s is >= 32 */
static inline int qt_cols(const int32_t *bias, const int32_t *mq, const int32_t *sq, int64_t n0, int64_t nc,
                          int32_t *bias8, int32_t *m8, int32_t *s8) {
    int vec = 1;
    for (int c = 0; c < 8; c++) bias8[c] = 0, m8[c] = 0, s8[c] = 32;
    for (int64_t c = 0; c < nc; c++) {
        bias8[c] = bias[n0 + c], m8[c] = mq[n0 + c], s8[c] = sq[n0 + c];
        vec &= s8[c] >= 32;
    }
    return vec;
}

/* ---------------- QGEMM PACKED and DQGEMM PACKED ----------------
 * One driver: the same panels, passes and blocks; QGEMM requantises each block to int8, DQGEMM (dq) passes each
 * accumulator through ep_dq_out (quant_common.h), the float epilogue the reference applies, so every ISA gives
 * the reference's bits. */
typedef struct qt_gemm_job {
    const ep_op *op;
    const int8_t *a, *b;
    const int32_t *bias, *mq, *sq;         /* QGEMM */
    const float *sa, *sb;                  /* DQGEMM: the row and column scales */
    int8_t *buf, *y;
    float *yf;                             /* DQGEMM's output */
    int64_t M, K, N, K4, ap0, np, parts;   /* this pass: A panels [ap0, ap0 + np) in buf slots 0.. */
    int32_t lo, hi, zp;
    int dq;
    int mode;                              /* 0: pack + multiply own panels; 1: pack only; 2: multiply B panels */
} qt_gemm_job;

static void qt_dq_block(const qt_gemm_job *j, const int32_t *acc, int64_t m0, int64_t mr, int64_t n0, int64_t nc) {
    const ep_op *op = j->op;
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *c = op->n_in > 4 ? op->in[4] : NULL, *r = op->n_in > 5 ? op->in[5] : NULL;
    for (int64_t i = 0; i < mr; i++)
        for (int64_t jj = 0; jj < nc; jj++)
            j->yf[(m0 + i) * j->N + n0 + jj] =
                ep_dq_out(p, acc[i * EP_QPACK_R + jj], j->sa[m0 + i], j->sb[n0 + jj], c, r, m0 + i, n0 + jj, j->N);
}

static void qt_gemm_mul(const qt_gemm_job *j, int64_t a_lo, int64_t a_hi, int64_t b_lo, int64_t b_hi) {
    const int64_t panel = QT_PANEL(j->K4);
    int32_t acc[EP_QPACK_R * EP_QPACK_R];
    for (int64_t bp = b_lo; bp < b_hi; bp++) {
        const int64_t n0 = bp * EP_QPACK_R, nc = qt_min(EP_QPACK_R, j->N - n0);
        int32_t bias8[8], m8[8], s8[8];
        const int vec = j->dq ? 0 : qt_cols(j->bias, j->mq, j->sq, n0, nc, bias8, m8, s8);
        for (int64_t ap = a_lo; ap < a_hi; ap++) {
            const int64_t m0 = (j->ap0 + ap) * QT_SR, mr = qt_min(QT_SR, j->M - m0);
            if (QT_GEMM_TILE && vec && mr == QT_SR && nc == EP_QPACK_R) {
                qt_gemm_tile(QT_SPANEL(j->buf, j->K4, ap), j->b + bp * panel, j->K4, bias8, m8, s8, j->lo, j->hi,
                             j->zp, j->y + m0 * j->N + n0, j->N);
                continue;
            }
            qt_block(QT_SPANEL(j->buf, j->K4, ap), j->b + bp * panel, j->K4, acc);
            if (j->dq) {
                qt_dq_block(j, acc, m0, mr, n0, nc);
                continue;
            }
            for (int64_t r = 0; r < mr; r++)
                qt_requant_cols(acc + r * EP_QPACK_R, bias8, m8, s8, vec, j->lo, j->hi, j->zp,
                                j->y + (m0 + r) * j->N + n0, (int)nc);
        }
    }
}

static void qt_gemm_task(void *ctx, uint32_t t) {
    const qt_gemm_job *j = (const qt_gemm_job *)ctx;
    const int64_t BP = (j->N + EP_QPACK_R - 1) / EP_QPACK_R;
    if (j->mode == 2) {
        const ep_range r = ep_task_range(BP, j->parts, t);
        qt_gemm_mul(j, 0, j->np, r.lo, r.hi);
        return;
    }
    const ep_range r = ep_task_range(j->np, j->parts, t);
    for (int64_t ap = r.lo; ap < r.hi; ap++)
        qt_pack_rows(j->a, j->M, j->K, (j->ap0 + ap) * QT_SR, QT_SPANEL(j->buf, j->K4, ap));
    if (j->mode == 0 && r.lo < r.hi) qt_gemm_mul(j, r.lo, r.hi, 0, BP);
}

/* The passes over A's panels (as many as the scratch holds), each split across the threads. */
static void qt_gemm_run(qt_gemm_job *j, const ep_op *op) {
    const int64_t AP = (j->M + QT_SR - 1) / QT_SR, BP = (j->N + EP_QPACK_R - 1) / EP_QPACK_R;
    const int64_t S = qt_min(AP, (int64_t)(op->scratch_size / (uint64_t)QT_PANEL(j->K4)));
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)j->M * (uint64_t)j->N * (uint64_t)j->K);
    for (int64_t ap0 = 0; ap0 < AP; ap0 += S) {
        j->ap0 = ap0, j->np = qt_min(S, AP - ap0);
        if (T <= 1 || j->np >= T || BP <= j->np) {
            j->mode = 0, j->parts = qt_min(T, j->np);
            ep_parallel_for(op->pool, (uint32_t)j->parts, qt_gemm_task, j);
        } else {
            j->mode = 1, j->parts = j->np;
            ep_parallel_for(op->pool, (uint32_t)j->parts, qt_gemm_task, j);
            j->mode = 2, j->parts = qt_min(T, BP);
            ep_parallel_for(op->pool, (uint32_t)j->parts, qt_gemm_task, j);
        }
    }
}

int EP_ISA_FN(qgemm_packed_i8)(const ep_op *op) {
    const ep_qgemm_params *p = (const ep_qgemm_params *)op->params;
    const ep_tensor *at = op->in[0], *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = yt->dims[1];
    if (M == 0 || N == 0) return EP_OK;
    const int32_t *q = (const int32_t *)op->in[3]->data;
    qt_gemm_job j = {0};
    j.op = op, j.a = (const int8_t *)at->data, j.b = (const int8_t *)op->in[1]->data;
    j.bias = (const int32_t *)op->in[2]->data, j.mq = q, j.sq = q + N;
    j.buf = (int8_t *)op->scratch, j.y = (int8_t *)yt->data;
    j.M = M, j.K = K, j.N = N, j.K4 = (K + EP_QPACK_K - 1) / EP_QPACK_K;
    j.lo = p->y_min - p->y_zero, j.hi = p->y_max - p->y_zero, j.zp = p->y_zero;
    qt_gemm_run(&j, op);
    return EP_OK;
}

int EP_ISA_FN(dqgemm_packed_i8)(const ep_op *op) {
    const ep_tensor *at = op->in[0], *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = yt->dims[1];
    if (M == 0 || N == 0) return EP_OK;
    qt_gemm_job j = {0};
    j.op = op, j.a = (const int8_t *)at->data, j.b = (const int8_t *)op->in[2]->data;
    j.sa = (const float *)op->in[1]->data, j.sb = (const float *)op->in[3]->data;
    j.buf = (int8_t *)op->scratch, j.yf = (float *)yt->data, j.dq = 1;
    j.M = M, j.K = K, j.N = N, j.K4 = (K + EP_QPACK_K - 1) / EP_QPACK_K;
    qt_gemm_run(&j, op);
    return EP_OK;
}

/* ---------------- QCONV2D PACKED ---------------- */
typedef struct qt_conv_job {
    const ep_qconv_geo *g;
    const int8_t *xg, *wg;                 /* this image's group: its input planes, its weight panels */
    const int32_t *bias, *mq, *sq;         /* the group's first output channel's */
    int8_t *buf, *yg;                      /* yg: the group's first output plane */
    int64_t MG, K4, P, pp0, np, parts;     /* this pass: patch panels [pp0, pp0 + np) in buf slots 0.. */
    int32_t lo, hi, zp;
    int mode;
} qt_conv_job;

/* acc[r * 8 + j] (r < nq positions q0 + r, j < mr channels m0 + j) requantised with the channels' (bias, m, s),
 * stored transposed into the channels' planes yc[j * P + r] */
static inline void qt_requant_tile(const int32_t *acc, const int32_t *bias8, const int32_t *m8, const int32_t *s8,
                                   int vec, int32_t lo, int32_t hi, int32_t zp, int8_t *yc, int64_t P, int64_t nq,
                                   int64_t mr) {
    int8_t t[QT_SR][8];
    for (int64_t r = 0; r < nq; r++) qt_requant_cols(acc + r * EP_QPACK_R, bias8, m8, s8, vec, lo, hi, zp, t[r], 8);
    for (int64_t c = 0; c < mr; c++)
        for (int64_t r = 0; r < nq; r++) yc[c * P + r] = t[r][c];
}

/* the convolution's block of weight panel w and stream panel s */
#if QT_CONV_STREAM_ROWS
#define QT_CONV_BLOCK(w, s, K4, acc) qt_block(s, w, K4, acc)
#else
#define QT_CONV_BLOCK(w, s, K4, acc) qt_block(w, s, K4, acc)
#endif

static void qt_conv_mul(const qt_conv_job *j, int64_t c_lo, int64_t c_hi, int64_t w_lo, int64_t w_hi) {
    const int64_t panel = QT_PANEL(j->K4);
    int32_t acc[EP_QPACK_R * EP_QPACK_R];
    for (int64_t wp = w_lo; wp < w_hi; wp++) {
        const int64_t m0 = wp * EP_QPACK_R, mr = qt_min(EP_QPACK_R, j->MG - m0);
        int32_t bias8[8], m8[8], s8[8];
        const int vec = QT_CONV_STREAM_ROWS ? qt_cols(j->bias, j->mq, j->sq, m0, mr, bias8, m8, s8) : 0;
        for (int64_t cp = c_lo; cp < c_hi; cp++) {
            const int64_t q0 = (j->pp0 + cp) * QT_SR, nq = qt_min(QT_SR, j->P - q0);
            if (QT_CONV_TILE && vec && nq == QT_SR && mr == EP_QPACK_R) {
                qt_conv_tile(QT_SPANEL(j->buf, j->K4, cp), j->wg + wp * panel, j->K4, bias8, m8, s8, j->lo, j->hi,
                             j->zp, j->yg + m0 * j->P + q0, j->P);
                continue;
            }
            if (QT_CONV_ROW1 && nq == 1 && mr == EP_QPACK_R &&
                qt_conv_row1(QT_SPANEL(j->buf, j->K4, cp), j->wg + wp * panel, j->K4, j->bias + m0, j->mq + m0,
                             j->sq + m0, j->lo, j->hi, j->zp, j->yg + m0 * j->P + q0, j->P))
                continue;
            QT_CONV_BLOCK(j->wg + wp * panel, QT_SPANEL(j->buf, j->K4, cp), j->K4, acc);
            if (QT_CONV_STREAM_ROWS) {
                qt_requant_tile(acc, bias8, m8, s8, vec, j->lo, j->hi, j->zp, j->yg + m0 * j->P + q0, j->P, nq, mr);
                continue;
            }
            for (int64_t r = 0; r < mr; r++) {
                const int64_t m = m0 + r;
                qt_requant_row(acc + r * EP_QPACK_R, j->bias[m], j->mq[m], j->sq[m], j->lo, j->hi, j->zp,
                               j->yg + m * j->P + q0, (int)nq);
            }
        }
    }
}

static void qt_conv_task(void *ctx, uint32_t t) {
    const qt_conv_job *j = (const qt_conv_job *)ctx;
    const int64_t WP = (j->MG + EP_QPACK_R - 1) / EP_QPACK_R;
    if (j->mode == 2) {
        const ep_range r = ep_task_range(WP, j->parts, t);
        qt_conv_mul(j, 0, j->np, r.lo, r.hi);
        return;
    }
    const ep_range r = ep_task_range(j->np, j->parts, t);
    for (int64_t cp = r.lo; cp < r.hi; cp++)
        qt_pack_patches(j->g, j->xg, (j->pp0 + cp) * QT_SR, QT_SPANEL(j->buf, j->K4, cp));
    if (j->mode == 0 && r.lo < r.hi) qt_conv_mul(j, r.lo, r.hi, 0, WP);
}

int EP_ISA_FN(qconv2d_packed_i8)(const ep_op *op) {
    const ep_qconv2d_params *p = (const ep_qconv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    ep_qconv_geo g;
    ep_qconv_geo_init(&g, p, xt, yt);
    const int64_t N = xt->dims[0], C = xt->dims[1], M = yt->dims[1], G = p->groups, MG = M / G, P = g.OH * g.OW;
    if (N == 0 || P == 0) return EP_OK;
    const int64_t K4 = (g.K + EP_QPACK_K - 1) / EP_QPACK_K, WP = (MG + EP_QPACK_R - 1) / EP_QPACK_R;
    const int64_t PP = (P + QT_SR - 1) / QT_SR;
    const int64_t S = qt_min(PP, (int64_t)(op->scratch_size / (uint64_t)QT_PANEL(K4)));
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)N * (uint64_t)M * (uint64_t)g.K * (uint64_t)P);
    const int32_t *bias = (const int32_t *)op->in[2]->data, *q = (const int32_t *)op->in[3]->data;
    const int8_t *x = (const int8_t *)xt->data, *w = (const int8_t *)op->in[1]->data;
    int8_t *y = (int8_t *)yt->data;
    for (int64_t ng = 0; ng < N * G; ng++) {
        const int64_t n = ng / G, gi = ng % G;
        qt_conv_job j = {&g, x + (n * C + gi * g.CG) * g.H * g.W, w + gi * WP * QT_PANEL(K4), bias + gi * MG,
                         q + gi * MG, q + M + gi * MG, (int8_t *)op->scratch, y + (n * M + gi * MG) * P, MG, K4, P,
                         0, 0, 1, p->y_min - p->y_zero, p->y_max - p->y_zero, p->y_zero, 0};
        for (int64_t pp0 = 0; pp0 < PP; pp0 += S) {
            j.pp0 = pp0, j.np = qt_min(S, PP - pp0);
            if (T <= 1 || j.np >= T || WP <= j.np) {
                j.mode = 0, j.parts = qt_min(T, j.np);
                ep_parallel_for(op->pool, (uint32_t)j.parts, qt_conv_task, &j);
            } else {
                j.mode = 1, j.parts = j.np;
                ep_parallel_for(op->pool, (uint32_t)j.parts, qt_conv_task, &j);
                j.mode = 2, j.parts = qt_min(T, WP);
                ep_parallel_for(op->pool, (uint32_t)j.parts, qt_conv_task, &j);
            }
        }
    }
    return EP_OK;
}
