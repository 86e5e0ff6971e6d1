/* Static helpers shared by the speech-op shape functions (sequence.c, logic.c, rnn.c).
 * Params and shapes are untrusted plan bytes: every field is checked before use. */
#ifndef EP_OPS_SPEECH_COMMON_H
#define EP_OPS_SPEECH_COMMON_H
#include "shape_check.h"

/* ep_chk_arity, and the params these ops all read must be present. */
static inline int sp_chk_arity(const ep_op *op, int min_in, int max_in, int min_out, int max_out) {
    int rc = ep_chk_arity(op, min_in, max_in, min_out, max_out);
    if (rc == EP_OK && !op->params) rc = EP_ERR_PLAN_PARAMS;
    return rc;
}

/* Checks inputs [0, n_req) present and every present input and every output well formed. */
static inline int sp_chk_io(const ep_op *op, int n_req) {
    int rc;
    for (int k = 0; k < op->n_in; k++) {
        if (!op->in[k]) {
            if (k < n_req) return EP_ERR_PLAN_OP;
            continue;
        }
        if ((rc = ep_chk_tensor(op->in[k])) != EP_OK) return rc;
    }
    for (int k = 0; k < op->n_out; k++)
        if ((rc = ep_chk_tensor(op->out[k])) != EP_OK) return rc;
    return EP_OK;
}

/* Fills s from dims; fails when an extent does not fit in int32 or the element count leaves
 * the range ep_chk_tensor allows. */
static inline int sp_set_shape(ep_shape *s, int rank, const int64_t *dims, uint8_t dtype) {
    int64_t n = 1;
    if (rank < 0 || rank > EP_MAX_RANK) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < EP_MAX_RANK; i++) {
        if (i < rank && (dims[i] < 0 || dims[i] > INT32_MAX)) return EP_ERR_PLAN_SHAPE;
        if (i < rank && dims[i] > 0 && n > (INT64_C(1) << 56) / dims[i]) return EP_ERR_PLAN_SHAPE;
        if (i < rank) n *= dims[i];
        s->dims[i] = i < rank ? (int32_t)dims[i] : 0;
    }
    s->rank = (uint8_t)rank;
    s->dtype = dtype;
    return EP_OK;
}

static inline int sp_is_01(int32_t v) { return v == 0 || v == 1; }
static inline int sp_is_index_dtype(uint8_t dt) { return dt == EP_DTYPE_I32 || dt == EP_DTYPE_I64; }
/* The dtypes the compare/cast kernels handle. */
static inline int sp_is_basic_dtype(uint8_t dt) {
    return dt == EP_DTYPE_F32 || dt == EP_DTYPE_I8 || dt == EP_DTYPE_U8 || dt == EP_DTYPE_I16 ||
           dt == EP_DTYPE_I32 || dt == EP_DTYPE_I64 || dt == EP_DTYPE_BOOL || dt == EP_DTYPE_U16 ||
           dt == EP_DTYPE_U32 || dt == EP_DTYPE_U64;
}
static inline int sp_is_arith_dtype(uint8_t dt) {
    return dt == EP_DTYPE_F32 || dt == EP_DTYPE_I32 || dt == EP_DTYPE_I64;
}

/* The dtypes ArgMax / ArgMin and TopK order: float32 and every integer type. */
static inline int sp_is_ordered_dtype(uint8_t dt) {
    switch (dt) {
    case EP_DTYPE_F32: case EP_DTYPE_I8: case EP_DTYPE_U8: case EP_DTYPE_I16: case EP_DTYPE_U16:
    case EP_DTYPE_I32: case EP_DTYPE_U32: case EP_DTYPE_I64: case EP_DTYPE_U64: return 1;
    default: return 0;
    }
}

/* Right-aligned numpy broadcast of a and b into s (rank max of both). */
static inline int sp_broadcast(const ep_tensor *a, const ep_tensor *b, int64_t *dims, int *rank) {
    const int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        const int ia = i - (r - a->rank), ib = i - (r - b->rank);
        const int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return EP_ERR_PLAN_SHAPE;
        dims[i] = da == 1 ? db : da;
    }
    *rank = r;
    return EP_OK;
}

#endif
