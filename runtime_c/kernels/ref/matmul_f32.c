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
