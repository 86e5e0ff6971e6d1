/* Shape functions: GATHER_ELEMENTS, SCATTER_ELEMENTS, REVERSE_SEQUENCE, NON_MAX_SUPPRESSION, COMPRESS
 * (plan 1.2). Params and shapes are untrusted plan bytes: every field and operand is checked here, so the
 * kernels (kernels/ref/<op>_*.c) trust them; index values are run-time data the kernels check. */
#include "speech_common.h"

/* The element-wise index operand shared by GATHER_ELEMENTS and SCATTER_ELEMENTS: Indices (I32/I64) of
 * Data's rank (1..8), no larger than Data off the axis. */
static int elements_index_ok(const ep_tensor *data, const ep_tensor *ind, int32_t axis) {
    if (!sp_is_index_dtype(ind->dtype)) return EP_ERR_PLAN_TENSOR;
    if (data->rank < 1 || ind->rank != data->rank) return EP_ERR_PLAN_SHAPE;
    if (axis < 0 || axis >= data->rank) return EP_ERR_PLAN_PARAMS;
    for (int d = 0; d < data->rank; d++)
        if (d != axis && ind->dims[d] > data->dims[d]) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

int ep_shape_gather_elements(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1];
    if (p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    if ((rc = elements_index_ok(data, ind, p->axis)) != EP_OK) return rc;
    ep_shape_from_tensor(&out[0], ind);
    out[0].dtype = data->dtype;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_scatter_elements(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 3, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    const ep_scatter_elements_params *p = (const ep_scatter_elements_params *)op->params;
    const ep_tensor *data = op->in[0], *ind = op->in[1], *upd = op->in[2];
    if (p->reduction < EP_SCATTER_NONE || p->reduction > EP_SCATTER_MIN) return EP_ERR_PLAN_PARAMS;
    if ((rc = elements_index_ok(data, ind, p->axis)) != EP_OK) return rc;
    if (upd->dtype != data->dtype) return EP_ERR_PLAN_TENSOR;
    if (p->reduction != EP_SCATTER_NONE && !sp_is_arith_dtype(data->dtype)) return EP_ERR_PLAN_TENSOR;
    if (upd->rank != ind->rank) return EP_ERR_PLAN_SHAPE;
    for (int d = 0; d < ind->rank; d++)
        if (upd->dims[d] != ind->dims[d]) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], data);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_reverse_sequence(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_reverse_sequence_params *p = (const ep_reverse_sequence_params *)op->params;
    const ep_tensor *x = op->in[0], *lens = op->in[1];
    if (!sp_is_01(p->batch_axis) || p->time_axis != 1 - p->batch_axis) return EP_ERR_PLAN_PARAMS;
    if (!sp_is_index_dtype(lens->dtype)) return EP_ERR_PLAN_TENSOR;
    if (x->rank < 2 || lens->rank != 1 || lens->dims[0] != x->dims[p->batch_axis]) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], x);
    *scratch = 0;
    return EP_OK;
}

/* Optional input k of NON_MAX_SUPPRESSION: absent, or one element of the given dtype(s). */
static int nms_scalar_ok(const ep_op *op, int k, uint8_t dt, uint8_t dt2) {
    const ep_tensor *t = ep_op_in(op, k);
    if (!t) return EP_OK;
    if (t->dtype != dt && t->dtype != dt2) return EP_ERR_PLAN_TENSOR;
    return ep_numel(t) == 1 ? EP_OK : EP_ERR_PLAN_SHAPE;
}

int ep_shape_non_max_suppression(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 5, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_non_max_suppression_params *p = (const ep_non_max_suppression_params *)op->params;
    const ep_tensor *boxes = op->in[0], *scores = op->in[1], *y = op->out[0];
    if (!sp_is_01(p->center_point_box) || !sp_is_01(p->has_score_threshold) || p->max_output_boxes_per_class < 0 ||
        !(p->iou_threshold >= 0.0f && p->iou_threshold <= 1.0f))
        return EP_ERR_PLAN_PARAMS;
    if (boxes->dtype != EP_DTYPE_F32 || scores->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (boxes->rank != 3 || scores->rank != 3 || boxes->dims[2] != 4 || scores->dims[0] != boxes->dims[0] ||
        scores->dims[2] != boxes->dims[1])
        return EP_ERR_PLAN_SHAPE;
    if ((rc = nms_scalar_ok(op, 2, EP_DTYPE_I64, EP_DTYPE_I32)) != EP_OK) return rc;
    if ((rc = nms_scalar_ok(op, 3, EP_DTYPE_F32, EP_DTYPE_F32)) != EP_OK) return rc;
    if ((rc = nms_scalar_ok(op, 4, EP_DTYPE_F32, EP_DTYPE_F32)) != EP_OK) return rc;
    if (y->dtype != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    if (y->rank != 2 || y->dims[1] != 3) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);   /* data-dependent: dim 0 is the declared capacity */
    *scratch = (uint64_t)3 * (uint64_t)boxes->dims[1] * sizeof(int32_t);
    return EP_OK;
}

int ep_shape_compress(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0], *cond = op->in[1], *y = op->out[0];
    if (p->reserved != 0 || p->axis < 0 || p->axis >= x->rank) return EP_ERR_PLAN_PARAMS;
    if (cond->dtype != EP_DTYPE_BOOL) return EP_ERR_PLAN_TENSOR;
    if (cond->rank != 1 || y->rank != x->rank) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], x);
    out[0].dims[p->axis] = y->dims[p->axis];   /* data-dependent: the declared capacity */
    *scratch = 0;
    return EP_OK;
}
