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

int ep_ref_matmul_f32(const ep_op *op) {
    const ep_tensor *at = op->in[0], *bt = op->in[1];
    const ep_tensor *yt = op->out[0];
    const int ra = at->rank, rb = bt->rank, ro = yt->rank, nb = ro - 2;
    const int64_t M = yt->dims[ro - 2], N = yt->dims[ro - 1], K = at->dims[ra - 1];
    const float *a = (const float *)at->data;
    const float *b = (const float *)bt->data;
    float *y = (float *)yt->data;
    if (rl_is_empty(yt)) return EP_OK;

    int64_t batches = 1;
    for (int d = 0; d < nb; d++) batches *= yt->dims[d];

    for (int64_t bi = 0; bi < batches; bi++) {
        /* map the flat output batch index to A's and B's batch offsets (in matrices) */
        int64_t rem = bi, a_mat = 0, b_mat = 0, a_stride = 1, b_stride = 1;
        for (int d = nb - 1; d >= 0; d--) {
            const int64_t idx = rem % yt->dims[d];
            rem /= yt->dims[d];
            const int ia = d - (ro - ra), ib = d - (ro - rb);
            const int64_t da = ia >= 0 ? at->dims[ia] : 1;
            const int64_t db = ib >= 0 ? bt->dims[ib] : 1;
            if (da != 1) a_mat += idx * a_stride;
            if (db != 1) b_mat += idx * b_stride;
            a_stride *= da;
            b_stride *= db;
        }
        const float *am = a + a_mat * M * K;
        const float *bm = b + b_mat * K * N;
        float *ym = y + bi * M * N;
        for (int64_t i = 0; i < M; i++) {
            float *yr = ym + i * N;
            const float *ar = am + i * K;
            for (int64_t j = 0; j < N; j++) yr[j] = 0.0f;
            for (int64_t k = 0; k < K; k++) {
                const float av = ar[k];
                const float *br = bm + k * N;
                for (int64_t j = 0; j < N; j++) yr[j] += av * br[j];
            }
        }
    }
    return EP_OK;
}
