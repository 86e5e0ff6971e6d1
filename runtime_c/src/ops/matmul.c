/* Shape function of MATMUL (see ep_matmul_params in plan_format.h).
 *
 * numpy matmul of A[..., M, K] and B[..., K, N], both f32 and of rank >= 2 (the compiler
 * reshapes 1-D operands). Batch dims are aligned on the right and broadcast: each pair
 * must be equal or one of them 1 (a 1 against a 0 gives 0). Output rank = max rank,
 * Y[batch..., M, N] f32. Both reserved params must be 0.
 *
 * Error codes: arity/missing input -> PLAN_OP, dtype -> PLAN_TENSOR, reserved params ->
 * PLAN_PARAMS, ranks and extents -> PLAN_SHAPE. No scratch. */
#include <stdint.h>
#include "ep_ops.h"

static int matmul_f32_tensor(const ep_tensor *t) {
    if (!t) return EP_ERR_PLAN_OP;
    if (t->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (t->rank < 2 || t->rank > EP_MAX_RANK) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

int ep_shape_matmul(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 2 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_matmul_params *p = (const ep_matmul_params *)op->params;
    const ep_tensor *a = op->in[0], *b = op->in[1];
    int rc;
    if ((rc = matmul_f32_tensor(a)) != EP_OK) return rc;
    if ((rc = matmul_f32_tensor(b)) != EP_OK) return rc;
    if (p->reserved != 0 || p->reserved2 != 0) return EP_ERR_PLAN_PARAMS;

    const int ra = a->rank, rb = b->rank;
    const int ro = ra > rb ? ra : rb;
    if (a->dims[ra - 1] != b->dims[rb - 2]) return EP_ERR_PLAN_SHAPE;

    for (int i = 0; i < EP_MAX_RANK; i++) out[0].dims[i] = 0;
    for (int i = 0; i < ro - 2; i++) {
        /* output batch dim i, aligned on the right with A's and B's batch dims */
        const int ia = i - (ro - ra), ib = i - (ro - rb);
        const int32_t da = ia >= 0 ? a->dims[ia] : 1;
        const int32_t db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return EP_ERR_PLAN_SHAPE;
        out[0].dims[i] = da == 1 ? db : da;
    }
    out[0].dims[ro - 2] = a->dims[ra - 2];
    out[0].dims[ro - 1] = b->dims[rb - 1];
    out[0].rank = (uint8_t)ro;
    out[0].dtype = EP_DTYPE_F32;
    *scratch = 0;
    return EP_OK;
}

/* ATTENTION (see ep_attention_params): Q[..., M, D] KT[..., D, N] V[..., N, E] (+ MASK) -> Y[..., M, E].
 * S's batch dims broadcast Q's and KT's as MATMUL does; V's and MASK's must broadcast into S's (never
 * extend them). Scratch: one slot of min(rows, M) * N floats.
 * Error codes: arity -> PLAN_OP, dtypes -> PLAN_TENSOR, divide / rows / reserved -> PLAN_PARAMS, ranks and
 * extents -> PLAN_SHAPE. */
int ep_shape_attention(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 3 || op->n_in > 4 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_attention_params *p = (const ep_attention_params *)op->params;
    if ((p->divide != 0 && p->divide != 1) || p->rows < 1 || p->rows > (1 << 20) || p->reserved != 0)
        return EP_ERR_PLAN_PARAMS;
    const ep_tensor *q = op->in[0], *kt = op->in[1], *v = op->in[2], *mask = op->n_in == 4 ? op->in[3] : NULL;
    int rc;
    if ((rc = matmul_f32_tensor(q)) != EP_OK || (rc = matmul_f32_tensor(kt)) != EP_OK ||
        (rc = matmul_f32_tensor(v)) != EP_OK)
        return rc;
    const int rq = q->rank, rk = kt->rank, rv = v->rank, rs = rq > rk ? rq : rk;
    if (q->dims[rq - 1] != kt->dims[rk - 2] || v->dims[rv - 2] != kt->dims[rk - 1] || rv > rs) return EP_ERR_PLAN_SHAPE;
    int32_t sd[EP_MAX_RANK];   /* S's dims */
    for (int i = 0; i < rs - 2; i++) {
        const int iq = i - (rs - rq), ik = i - (rs - rk), iv = i - (rs - rv);
        const int32_t dq = iq >= 0 ? q->dims[iq] : 1, dk = ik >= 0 ? kt->dims[ik] : 1;
        if (dq != dk && dq != 1 && dk != 1) return EP_ERR_PLAN_SHAPE;
        sd[i] = dq == 1 ? dk : dq;
        if (iv >= 0 && v->dims[iv] != sd[i] && v->dims[iv] != 1) return EP_ERR_PLAN_SHAPE;
    }
    sd[rs - 2] = q->dims[rq - 2];
    sd[rs - 1] = kt->dims[rk - 1];
    if (mask) {
        if (mask->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
        if (mask->rank > rs) return EP_ERR_PLAN_SHAPE;
        for (int i = 0; i < mask->rank; i++) {
            const int32_t d = mask->dims[i], s = sd[i + rs - mask->rank];
            if (d != s && d != 1) return EP_ERR_PLAN_SHAPE;
        }
    }
    for (int i = 0; i < EP_MAX_RANK; i++) out[0].dims[i] = i < rs ? sd[i] : 0;
    out[0].dims[rs - 1] = v->dims[rv - 1];
    out[0].rank = (uint8_t)rs;
    out[0].dtype = EP_DTYPE_F32;
    const int64_t band = p->rows < sd[rs - 2] ? p->rows : sd[rs - 2];
    *scratch = (uint64_t)band * (uint64_t)sd[rs - 1] * sizeof(float);
    return EP_OK;
}
