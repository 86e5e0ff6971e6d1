/* Shape functions: WHERE, COMPARE, EXPAND, CAST, SCATTERND, GATHERND.
 * Params and shapes are untrusted plan bytes: every field is checked here so the kernels can
 * trust them. */
#include "speech_common.h"

int ep_shape_where(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 3, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    const ep_tensor *c = op->in[0], *x = op->in[1], *y = op->in[2];
    if (c->dtype != EP_DTYPE_BOOL || x->dtype != y->dtype) return EP_ERR_PLAN_TENSOR;
    int64_t d1[EP_MAX_RANK], d2[EP_MAX_RANK];
    int r1, r2;
    if ((rc = sp_broadcast(x, y, d1, &r1)) != EP_OK) return rc;
    ep_tensor xy = *x; /* the broadcast of x and y, as a tensor shape */
    if ((rc = sp_set_shape(&out[0], r1, d1, x->dtype)) != EP_OK) return rc;
    xy.rank = (uint8_t)r1;
    for (int i = 0; i < r1; i++) xy.dims[i] = out[0].dims[i];
    if ((rc = sp_broadcast(c, &xy, d2, &r2)) != EP_OK) return rc;
    *scratch = 0;
    return sp_set_shape(&out[0], r2, d2, x->dtype);
}

int ep_shape_compare(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_compare_params *p = (const ep_compare_params *)op->params;
    const ep_tensor *a = op->in[0], *b = op->in[1];
    if (p->kind < 0 || p->kind >= EP_CMP_COUNT) return EP_ERR_PLAN_PARAMS;
    if (a->dtype != b->dtype || !sp_is_basic_dtype(a->dtype)) return EP_ERR_PLAN_TENSOR;
    if (p->kind >= EP_CMP_AND && a->dtype != EP_DTYPE_BOOL) return EP_ERR_PLAN_TENSOR;
    int64_t d[EP_MAX_RANK];
    int r;
    if ((rc = sp_broadcast(a, b, d, &r)) != EP_OK) return rc;
    *scratch = 0;
    return sp_set_shape(&out[0], r, d, EP_DTYPE_BOOL);
}

int ep_shape_expand(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (y->rank < x->rank) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < x->rank; i++) {
        const int32_t dx = x->dims[i], dy = y->dims[i + (y->rank - x->rank)];
        if (dx != 1 && dx != dy) return EP_ERR_PLAN_SHAPE;
    }
    ep_shape_from_tensor(&out[0], y);
    out[0].dtype = x->dtype;
    *scratch = 0;
    return EP_OK;
}

/* CAST converts between the basic dtypes and the float formats a plan holds only at its edges */
static int cast_dtype(uint8_t dt) {
    return sp_is_basic_dtype(dt) || dt == EP_DTYPE_F16 || dt == EP_DTYPE_BF16 || dt == EP_DTYPE_F64;
}

int ep_shape_cast(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_cast_params *p = (const ep_cast_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (p->to < 0 || p->to > 255 || !cast_dtype((uint8_t)p->to)) return EP_ERR_PLAN_PARAMS;
    if (!cast_dtype(x->dtype)) return EP_ERR_PLAN_TENSOR;
    ep_shape_from_tensor(&out[0], x);
    out[0].dtype = (uint8_t)p->to;
    *scratch = 0;
    return EP_OK;
}

/* The ND-index part shared by SCATTERND and GATHERND: indices [..., q] with 1 <= q <= rank - b. */
static int nd_index_ok(const ep_tensor *data, const ep_tensor *ind, int b) {
    if (!sp_is_index_dtype(ind->dtype)) return EP_ERR_PLAN_TENSOR;
    if (ind->rank < 1 || b < 0 || b >= ind->rank || b > data->rank) return EP_ERR_PLAN_SHAPE;
    const int32_t q = ind->dims[ind->rank - 1];
    if (q < 1 || q > data->rank - b) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < b; i++)
        if (ind->dims[i] != data->dims[i]) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

int ep_shape_scatternd(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 3, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    const ep_scatternd_params *p = (const ep_scatternd_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1], *upd = op->in[2];
    if (p->reduction < EP_SCATTER_NONE || p->reduction > EP_SCATTER_MIN) return EP_ERR_PLAN_PARAMS;
    if ((rc = nd_index_ok(data, ind, 0)) != EP_OK) return rc;
    if (upd->dtype != data->dtype) return EP_ERR_PLAN_TENSOR;
    if (p->reduction != EP_SCATTER_NONE && !sp_is_arith_dtype(data->dtype)) return EP_ERR_PLAN_TENSOR;
    const int q = ind->dims[ind->rank - 1];
    const int ur = ind->rank - 1 + data->rank - q;
    if (upd->rank != ur) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < ind->rank - 1; i++)
        if (upd->dims[i] != ind->dims[i]) return EP_ERR_PLAN_SHAPE;
    for (int i = q; i < data->rank; i++)
        if (upd->dims[ind->rank - 1 + i - q] != data->dims[i]) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], data);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_gathernd(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_gathernd_params *p = (const ep_gathernd_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1];
    if ((rc = nd_index_ok(data, ind, p->batch_dims)) != EP_OK) return rc;
    const int b = p->batch_dims, q = ind->dims[ind->rank - 1];
    int64_t dims[2 * EP_MAX_RANK];
    int r = 0;
    for (int i = 0; i < ind->rank - 1; i++) dims[r++] = ind->dims[i];
    for (int i = b + q; i < data->rank; i++) dims[r++] = data->dims[i];
    if (r > EP_MAX_RANK) return EP_ERR_PLAN_SHAPE;
    *scratch = 0;
    return sp_set_shape(&out[0], r, dims, data->dtype);
}
