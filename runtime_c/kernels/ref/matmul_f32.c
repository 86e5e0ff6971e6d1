/* Reference MATMUL, f32 (the numerical spec; see ep_matmul_params).
 *
 *   Y[b..., i, j] = sum_k A[b'..., i, k] * B[b''..., k, j]
 * where b' and b'' are the output batch index b mapped into A's and B's batch dims
 * (aligned on the right; an extent-1 dim always reads index 0).
 *
 * Accumulation order, in float: each output starts at 0.0f and receives its products for
 * k = 0, 1, ..., K-1 (the same order as the GEMM reference).
 * Loop order: output batch, then rows, then k, then contiguous columns. */
#include "ep_ops.h"
#include "ref_util.h"
#include "matmul_bcast.h"

int ep_ref_matmul_f32(const ep_op *op) {
    const ep_tensor *at = op->in[0], *bt = op->in[1];
    const ep_tensor *yt = op->out[0];
    const int ro = yt->rank, nb = ro - 2;
    const int64_t M = yt->dims[ro - 2], N = yt->dims[ro - 1], K = at->dims[at->rank - 1];
    const float *a = (const float *)at->data;
    const float *b = (const float *)bt->data;
    float *y = (float *)yt->data;
    if (rl_is_empty(yt)) return EP_OK;

    int64_t batches = 1;
    for (int d = 0; d < nb; d++) batches *= yt->dims[d];

    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t a_mat, b_mat;   /* A's and B's matrices for output batch bi */
        ep_matmul_batch(at, bt, yt, bi, &a_mat, &b_mat);
        const float *am = a + a_mat * M * K;
        const float *bm = b + b_mat * K * N;
        float *ym = y + bi * M * N;
        for (int64_t i = 0; i < M; i++) rl_gemm_row(ym + i * N, am + i * K, bm, K, N);
    }
    return EP_OK;
}

/* Reference ATTENTION (see ep_attention_params): per output batch and row i,
 *   s = Q[i] KT (rl_gemm_row: MATMUL's order), s = s * scale (or / scale), s = s + MASK[i],
 *   s = softmax(s) (SOFTMAX's row), Y[i] = s V (rl_gemm_row),
 * which is the unfused chain's value bit for bit. Uses the first N floats of the scratch slot. */
int ep_ref_attention_f32(const ep_op *op) {
    const ep_attention_params *p = (const ep_attention_params *)op->params;
    const ep_tensor *qt = op->in[0], *kt = op->in[1], *vt = op->in[2], *yt = op->out[0];
    const ep_tensor *mt = op->n_in > 3 ? op->in[3] : NULL;
    if (rl_is_empty(yt)) return EP_OK;
    const int ro = yt->rank;
    const int64_t M = yt->dims[ro - 2], E = yt->dims[ro - 1], N = kt->dims[kt->rank - 1], D = qt->dims[qt->rank - 1];
    const float *q = (const float *)qt->data, *k = (const float *)kt->data, *v = (const float *)vt->data;
    const float *m = mt ? (const float *)mt->data : NULL;
    float *y = (float *)yt->data, *s = (float *)op->scratch;
    const int64_t batches = ep_numel(yt) / (M * E);
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t qm, km, vm, unused;
        ep_matmul_batch(qt, kt, yt, bi, &qm, &km);
        ep_matmul_batch(vt, vt, yt, bi, &vm, &unused);
        for (int64_t i = 0; i < M; i++) {
            float *yr = y + (bi * M + i) * E;
            if (N == 0) {
                for (int64_t e = 0; e < E; e++) yr[e] = 0.0f;
                continue;
            }
            rl_gemm_row(s, q + (qm * M + i) * D, k + km * D * N, D, N);
            for (int64_t n = 0; n < N; n++) s[n] = p->divide ? s[n] / p->scale : s[n] * p->scale;
            if (m) {
                int64_t col;
                const float *mr = m + ep_attention_mask_row(mt, yt, bi, i, &col);
                for (int64_t n = 0; n < N; n++) s[n] = s[n] + mr[n * col];
            }
            rl_softmax_row(s, s, N, 1, 0);
            rl_gemm_row(yr, s, v + vm * N * E, N, E);
        }
    }
    return EP_OK;
}
