/* Reference GEMM, f32 (the numerical spec; see ep_gemm_params).
 *
 *   Y[i,j] = act( (sum_k A[i,k] * B[k,j]) + C[j] or C[i,j] + R[i,j] )
 *
 * Accumulation order, in float: each output starts at 0.0f and receives A[i,k]*B[k,j]
 * for k = 0, 1, ..., K-1; then C is added, then R, then act is applied.
 * Loop order: one output row at a time, k outer, j inner (contiguous rows of B). */
#include "ep_ops.h"
#include "ref_util.h"

int ep_ref_gemm_f32(const ep_op *op) {
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *at = op->in[0], *bt = op->in[1], *ct = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = bt->dims[1];
    const float *a = (const float *)at->data;
    const float *b = (const float *)bt->data;
    const float *c = ct ? (const float *)ct->data : NULL;
    /* a [1,N] or [N] bias is shared by every row; an [M,N] bias has its own rows */
    const int64_t c_row_stride = (ct && ct->rank == 2 && ct->dims[0] == M && M != 1) ? N : 0;
    const float *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    if (M == 0 || N == 0) return EP_OK;

    for (int64_t i = 0; i < M; i++) {
        float *yr = y + i * N;
        rl_gemm_row(yr, a + i * K, b, K, N);
        rl_gemm_epilogue(yr, c ? c + i * c_row_stride : NULL, r ? r + i * N : NULL, N, p);
    }
    return EP_OK;
}
