/* GEMM variant ROWS (plan_format.h: B given as its transpose Bt[N, K]), compiled once per ISA: every output is
 * the dot product of a row of A and a row of Bt, both contiguous. Exports EP_ISA_FN(gemm_rows_f32).
 *
 * The rows of Bt are taken four at a time, each against every row of A (a logits projection has one), so Bt
 * streams from memory once when A is small; per output, two vector accumulators over K in order (lanes and
 * the pair summed at the end), then the scalar tail of K, then C and R; act over each row's range at the
 * end. Threads take ranges of Bt's rows; every output is computed by the same code whatever the split, so
 * results do not depend on the thread count.
 *
 * Bt may hold 16-bit weights (F16 or BF16, plan 1.16), converted exactly to float32 as they are loaded: the
 * float32 result on the converted values.
 *
 * The including file defines RV (a vector of RV_N floats), RV_ZERO(), RV_LD(p), RV_LDW(p, i, wt) (RV_N weights
 * from element i of p: wt 0 float32, else EP_DTYPE_F16 or EP_DTYPE_BF16), RV_FMA(acc, a, b) (acc + a b),
 * RV_ADD(a, b) and RV_HSUM(v) (the sum of the lanes, as a float). */
#include "ep_ops.h"

typedef struct gr_job {
    const ep_op *op;
    int64_t parts;
} gr_job;

/* a . b over K (b's elements wt as RV_LDW's; the callers pass a constant, so each width is its own loop) */
static inline float gr_dot(const float *a, const void *b, int64_t K, const int wt) {
    RV s0 = RV_ZERO(), s1 = RV_ZERO();
    int64_t k = 0;
    for (; k + 2 * RV_N <= K; k += 2 * RV_N) {
        s0 = RV_FMA(s0, RV_LD(a + k), RV_LDW(b, k, wt));
        s1 = RV_FMA(s1, RV_LD(a + k + RV_N), RV_LDW(b, k + RV_N, wt));
    }
    if (k + RV_N <= K) s0 = RV_FMA(s0, RV_LD(a + k), RV_LDW(b, k, wt)), k += RV_N;
    float s = RV_HSUM(RV_ADD(s0, s1));
    for (; k < K; k++) s += a[k] * ep_weight_f32(b, wt, k);
    return s;
}

/* Outputs [n0, n1) of every row of A, Bt's rows of wt as RV_LDW's. */
static inline void gr_cols(const float *a, const void *b, const float *c, int64_t c_ld, const float *r, float *y,
                           int64_t M, int64_t K, int64_t N, int64_t n0, int64_t n1, const int wt) {
    const size_t bsz = wt ? 2 : 4;
    for (; n0 < n1; n0 += 4) {
        const int64_t nb = n1 - n0 < 4 ? n1 - n0 : 4;
        for (int64_t i = 0; i < M; i++) {
            float *yr = y + i * N + n0;
            for (int64_t q = 0; q < nb; q++) {
                float v = gr_dot(a + i * K, (const char *)b + (size_t)((n0 + q) * K) * bsz, K, wt);
                if (c) v += c[i * c_ld + n0 + q];
                if (r) v += r[i * N + n0 + q];
                yr[q] = v;
            }
        }
    }
}

static void gr_task(void *ctx, uint32_t t) {
    const gr_job *j = (const gr_job *)ctx;
    const ep_op *op = j->op;
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *at = op->in[0], *bt = op->in[1], *ct = ep_op_in(op, 2), *rt = ep_op_in(op, 3);
    const int64_t M = at->dims[0], K = at->dims[1], N = bt->dims[0];
    const float *a = (const float *)at->data;
    const float *c = ct ? (const float *)ct->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    const int64_t c_ld = (ct && ct->rank == 2 && ct->dims[0] == M && M != 1) ? N : 0;
    float *y = (float *)op->out[0]->data;
    const ep_range rg = ep_task_range((N + 3) / 4, j->parts, t);
    const int64_t n1 = rg.hi * 4 < N ? rg.hi * 4 : N;
    if (bt->dtype == EP_DTYPE_F16)
        gr_cols(a, bt->data, c, c_ld, r, y, M, K, N, rg.lo * 4, n1, EP_DTYPE_F16);
    else if (bt->dtype == EP_DTYPE_BF16)
        gr_cols(a, bt->data, c, c_ld, r, y, M, K, N, rg.lo * 4, n1, EP_DTYPE_BF16);
    else
        gr_cols(a, bt->data, c, c_ld, r, y, M, K, N, rg.lo * 4, n1, 0);
    if (p->act != EP_ACT_NONE && n1 > rg.lo * 4)   /* once over each row's range, not per 4 columns */
        for (int64_t i = 0; i < M; i++)
            EP_ISA_ACT_APPLY(p->act, y + i * N + rg.lo * 4, n1 - rg.lo * 4, p->act_alpha, p->act_beta);
}

int EP_ISA_FN(gemm_rows_f32)(const ep_op *op) {
    const ep_tensor *at = op->in[0], *bt = op->in[1];
    const int64_t M = at->dims[0], K = at->dims[1], N = bt->dims[0];
    if (M == 0 || N == 0) return EP_OK;
    int64_t parts = ep_pool_threads_for(op->pool, (uint64_t)M * (uint64_t)N * (uint64_t)(K ? K : 1));
    if (parts > (N + 3) / 4) parts = (N + 3) / 4;
    gr_job j = {op, parts < 1 ? 1 : parts};
    ep_parallel_for(op->pool, (uint32_t)j.parts, gr_task, &j);
    return EP_OK;
}
