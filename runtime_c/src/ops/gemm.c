/* Shape function of GEMM (see ep_gemm_params in plan_format.h).
 *
 * Inputs: A[M,K], B[K,N] required; C bias optional with shape [N], [1,N] or [M,N];
 * R[M,N] residual optional. All f32. Output Y[M,N] f32. (The compiler folds ONNX Gemm's
 * transA/transB/alpha/beta into A's producer and the constant B and C.)
 * params.reserved must be 0.
 *
 * Error codes: arity/missing input -> PLAN_OP, dtype -> PLAN_TENSOR, act out of range or
 * reserved != 0 -> PLAN_PARAMS, ranks and extents -> PLAN_SHAPE. No scratch.
 * Variant EP_GEMM_VARIANT_PACKED: B is [ceil(N/NR), K, NR] (plan_format.h), N from the output; f32, or
 * f16 / bf16 (1.7, "16-bit weights").
 * Variant EP_GEMM_VARIANT_ROWS (1.5): B is [N, K], B's rows the columns of the product; f32, or f16 / bf16
 * (1.16). */
#include <stdint.h>
#include "shape_check.h"

int ep_shape_gemm(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 2 || op->n_in > 4 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *a = op->in[0], *b = op->in[1];
    const ep_tensor *c = op->n_in > 2 ? op->in[2] : NULL;
    const ep_tensor *r = op->n_in > 3 ? op->in[3] : NULL;
    int rc;
    if ((rc = ep_chk_f32(a, 2, 2)) != EP_OK) return rc;
    const int packed = op->variant == EP_GEMM_VARIANT_PACKED, rows = op->variant == EP_GEMM_VARIANT_ROWS;
    if (op->variant != EP_VARIANT_DEFAULT && !packed && !rows) return EP_ERR_PLAN_OP;
    if ((rc = packed ? ep_chk_weights(b, 3, 3) : rows ? ep_chk_weights(b, 2, 2) : ep_chk_f32(b, 2, 2)) != EP_OK)
        return rc;
    if (c && (rc = ep_chk_f32(c, 1, 2)) != EP_OK) return rc;
    if (r && (rc = ep_chk_f32(r, 2, 2)) != EP_OK) return rc;
    if (p->act < 0 || p->act >= EP_ACT_MATH_FIRST || p->reserved != 0) return EP_ERR_PLAN_PARAMS;

    const int32_t M = a->dims[0], K = a->dims[1];
    int32_t N = b->dims[1];
    if (packed) {
        /* B pre-packed as [ceil(N/NR), K, NR]: N comes from the declared output */
        const ep_tensor *y = op->out ? op->out[0] : NULL;
        if (!y) return EP_ERR_PLAN_OP;
        if (y->rank != 2 || y->dims[1] < 1) return EP_ERR_PLAN_SHAPE;
        N = y->dims[1];
        if (b->dims[0] != (N + EP_PACK_NR - 1) / EP_PACK_NR || b->dims[1] != K || b->dims[2] != EP_PACK_NR)
            return EP_ERR_PLAN_SHAPE;
    } else if (rows) {
        if (b->dims[1] != K) return EP_ERR_PLAN_SHAPE;
        N = b->dims[0];
    } else if (b->dims[0] != K) {
        return EP_ERR_PLAN_SHAPE;
    }
    if (c) {
        const int ok = c->rank == 1 ? c->dims[0] == N
                                    : (c->dims[0] == 1 || c->dims[0] == M) && c->dims[1] == N;
        if (!ok) return EP_ERR_PLAN_SHAPE;
    }
    if (r && (r->dims[0] != M || r->dims[1] != N)) return EP_ERR_PLAN_SHAPE;

    for (int i = 0; i < EP_MAX_RANK; i++) out[0].dims[i] = 0;
    out[0].dims[0] = M;
    out[0].dims[1] = N;
    out[0].rank = 2;
    out[0].dtype = EP_DTYPE_F32;
    *scratch = 0;
    return EP_OK;
}
