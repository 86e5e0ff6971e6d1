/* Shape functions: CONCAT, SPLIT, SLICE, TRANSPOSE, REORDER, PAD, GATHER.
 * Params and shapes are untrusted plan bytes: every field is checked here so the
 * kernels can trust them. For SPLIT and SLICE the output extents come from the
 * declared output tensors; they are checked so no kernel can read out of bounds. */
#include "shape_check.h"
#include "pad_common.h"

/* A single-input op: arity, the input and the params pointer. */
static int chk_single(const ep_op *op) {
    int rc = ep_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK && !op->params) rc = EP_ERR_PLAN_PARAMS;
    return rc;
}

/* Fills s from dims; fails when an extent does not fit in int32 or the element count
 * leaves the range chk_tensor allows. */
static int set_shape(ep_shape *s, int rank, const int64_t *dims, uint8_t dtype) {
    int64_t n = 1;
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

/* CONCAT and SPLIT move whole [C_k][H][W] chunks per image: in C8 along axis 1 the same chunks hold the C_k/8
 * blocks (every C_k a multiple of 8, plan.c), so the kernels are the plain ones. All operands PLAIN, or all C8
 * with axis 1. */
static int chk_chunk_layouts(const ep_op *op, int32_t axis) {
    const uint8_t lay = op->in[0]->layout;
    for (int k = 0; k < op->n_in + op->n_out; k++) {
        const ep_tensor *t = k < op->n_in ? op->in[k] : op->out[k - op->n_in];
        if (t->layout != lay) return EP_ERR_PLAN_TENSOR;
    }
    return lay == EP_LAYOUT_PLAIN || axis == 1 ? EP_OK : EP_ERR_PLAN_TENSOR;
}

int ep_shape_concat(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 1, 0xFFFF, 1, 1);
    if (rc != EP_OK) return rc;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    if (!p) return EP_ERR_PLAN_PARAMS;
    for (int k = 0; k < op->n_in; k++)
        if ((rc = ep_chk_tensor(op->in[k])) != EP_OK) return rc;
    const ep_tensor *x0 = op->in[0];
    if (p->axis < 0 || p->axis >= x0->rank) return EP_ERR_PLAN_PARAMS;
    if ((rc = chk_chunk_layouts(op, p->axis)) != EP_OK) return rc;
    int64_t dims[EP_MAX_RANK];
    for (int i = 0; i < x0->rank; i++) dims[i] = x0->dims[i];
    dims[p->axis] = 0;
    for (int k = 0; k < op->n_in; k++) {
        const ep_tensor *x = op->in[k];
        if (x->dtype != x0->dtype) return EP_ERR_PLAN_TENSOR;
        if (x->rank != x0->rank) return EP_ERR_PLAN_SHAPE;
        for (int i = 0; i < x0->rank; i++)
            if (i != p->axis && x->dims[i] != x0->dims[i]) return EP_ERR_PLAN_SHAPE;
        dims[p->axis] += x->dims[p->axis]; /* <= 65535 * INT32_MAX: no overflow */
    }
    *scratch = 0;
    return set_shape(&out[0], x0->rank, dims, x0->dtype);
}

int ep_shape_split(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 1, 1, 1, 0xFFFF);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[0]);
    if (rc != EP_OK) return rc;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (!p || p->axis < 0 || p->axis >= x->rank) return EP_ERR_PLAN_PARAMS;
    int64_t total = 0;
    for (int k = 0; k < op->n_out; k++)
        if ((rc = ep_chk_tensor(op->out[k])) != EP_OK) return rc;
    if ((rc = chk_chunk_layouts(op, p->axis)) != EP_OK) return rc;
    for (int k = 0; k < op->n_out; k++) {
        const ep_tensor *y = op->out[k];
        if (y->rank != x->rank) return EP_ERR_PLAN_SHAPE;
        for (int i = 0; i < x->rank; i++)
            if (i != p->axis && y->dims[i] != x->dims[i]) return EP_ERR_PLAN_SHAPE;
        total += y->dims[p->axis];
        ep_shape_from_tensor(&out[k], y);
        out[k].dtype = x->dtype;
    }
    if (total != x->dims[p->axis]) return EP_ERR_PLAN_SHAPE;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_slice(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = chk_single(op);
    if (rc == EP_OK) rc = ep_chk_tensor(op->out[0]);
    if (rc != EP_OK) return rc;
    const ep_slice_params *p = (const ep_slice_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (y->rank != x->rank) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < x->rank; i++) {
        const int64_t start = p->starts[i], step = p->steps[i], n = y->dims[i];
        if (step == 0) return EP_ERR_PLAN_PARAMS;
        if (n == 0) continue;
        const int64_t last = start + (n - 1) * step; /* |.| < 2^63: no overflow */
        if (start < 0 || start >= x->dims[i] || last < 0 || last >= x->dims[i])
            return EP_ERR_PLAN_SHAPE;
    }
    ep_shape_from_tensor(&out[0], y);
    out[0].dtype = x->dtype;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_transpose(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = chk_single(op);
    if (rc != EP_OK) return rc;
    const ep_transpose_params *p = (const ep_transpose_params *)op->params;
    const ep_tensor *x = op->in[0];
    unsigned seen = 0;
    int64_t dims[EP_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        const int32_t v = p->perm[i];
        if (v < 0 || v >= x->rank || (seen >> v) & 1u) return EP_ERR_PLAN_PARAMS;
        seen |= 1u << v;
        dims[i] = x->dims[v];
    }
    *scratch = 0;
    return set_shape(&out[0], x->rank, dims, x->dtype);
}

/* REORDER: f32 [N,C,H,W] to the same dims in the other layout (PLAIN <-> C8). */
int ep_shape_reorder(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = chk_single(op);
    if (rc != EP_OK) return rc;
    const ep_reorder_params *p = (const ep_reorder_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (p->reserved[0] || p->reserved[1]) return EP_ERR_PLAN_PARAMS;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK) return rc;
    /* the plan checked that a C8 tensor is a static f32 [N,C,H,W] with C a multiple of 8 */
    if (!y || (x->layout == EP_LAYOUT_C8) + (y->layout == EP_LAYOUT_C8) != 1 || x->layout + y->layout != EP_LAYOUT_C8)
        return EP_ERR_PLAN_TENSOR;
    const int64_t dims[4] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3]};
    *scratch = 0;
    return set_shape(&out[0], 4, dims, x->dtype);
}

static int pad_int_dtype(uint8_t dt) {
    return dt == EP_DTYPE_I8 || dt == EP_DTYPE_U8 || dt == EP_DTYPE_BOOL || dt == EP_DTYPE_I16 || dt == EP_DTYPE_U16 ||
           dt == EP_DTYPE_I32 || dt == EP_DTYPE_U32 || dt == EP_DTYPE_I64 || dt == EP_DTYPE_U64;
}

/* The constant value converts to the integer dtype without overflow (the conversion is then defined) */
static int pad_value_fits(uint8_t dt, float v) {
    double lo = 0.0, hi = 0.0;
    switch (dt) {
    case EP_DTYPE_BOOL: return v == v;
    case EP_DTYPE_I8: lo = -128.0, hi = 127.0; break;
    case EP_DTYPE_U8: hi = 255.0; break;
    case EP_DTYPE_I16: lo = -32768.0, hi = 32767.0; break;
    case EP_DTYPE_U16: hi = 65535.0; break;
    case EP_DTYPE_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case EP_DTYPE_U32: hi = 4294967295.0; break;
    case EP_DTYPE_I64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
    default: hi = 18446744073709551615.0; break;   /* U64 */
    }
    return (double)v >= lo && (double)v < hi + 1.0;
}

int ep_shape_pad(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = chk_single(op);
    if (rc != EP_OK) return rc;
    const ep_pad_params *p = (const ep_pad_params *)op->params;
    const ep_tensor *x = op->in[0];
    const int r = x->rank;
    if (ep_pad_check_mode(p, r) != EP_OK) return EP_ERR_PLAN_PARAMS;
    if (x->dtype != EP_DTYPE_F32 && !pad_int_dtype(x->dtype)) return EP_ERR_PLAN_TENSOR;
    if (x->dtype != EP_DTYPE_F32 && !pad_value_fits(x->dtype, p->value)) return EP_ERR_PLAN_PARAMS;
    int64_t dims[EP_MAX_RANK], pb[EP_MAX_RANK], pe[EP_MAX_RANK];
    int empty = 0, no_source = 0;
    ep_pad_amounts(p, x, pb, pe);
    for (int i = 0; i < r; i++) {
        const int64_t b = pb[i], e = pe[i];
        /* negative pads crop first; the crop cannot exceed the input */
        const int64_t m = x->dims[i] - (b < 0 ? -b : 0) - (e < 0 ? -e : 0);
        if (m < 0) return EP_ERR_PLAN_SHAPE;
        dims[i] = x->dims[i] + b + e;
        if (dims[i] > INT32_MAX) return EP_ERR_PLAN_SHAPE;
        empty |= dims[i] == 0;
        no_source |= m == 0;
    }
    /* edge/reflect/wrap need an element to replicate wherever Y is non-empty */
    if (ep_pad_base_mode(p) != EP_PAD_CONSTANT && no_source && !empty) return EP_ERR_PLAN_SHAPE;
    /* C8 (1.14): X and Y both C8 (plan.c: static f32 [N,C,H,W], C a multiple of 8), the kernel padding the
     * [N, C/8, H, W, 8] view: channel pads (and crops) of whole blocks, none in a mode other than constant, no
     * pad-to-multiple bits */
    if (!op->out || !op->out[0]) return EP_ERR_PLAN_OP;
    if (x->layout != op->out[0]->layout) return EP_ERR_PLAN_TENSOR;
    if (x->layout == EP_LAYOUT_C8 &&
        (r != 4 || (p->mode & ~EP_PAD_MODE_MASK) || p->pads[1] % EP_LAYOUT_BLOCK || p->pads[5] % EP_LAYOUT_BLOCK ||
         (ep_pad_base_mode(p) != EP_PAD_CONSTANT && (p->pads[1] || p->pads[5]))))
        return EP_ERR_PLAN_PARAMS;
    *scratch = 0;
    return set_shape(&out[0], r, dims, x->dtype);
}

int ep_shape_gather(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[1]);
    if (rc != EP_OK) return rc;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0], *ind = op->in[1];
    if (!p || p->axis < 0 || p->axis >= x->rank) return EP_ERR_PLAN_PARAMS;
    if (ind->dtype != EP_DTYPE_I32 && ind->dtype != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    const int r = x->rank - 1 + ind->rank;
    if (r > EP_MAX_RANK) return EP_ERR_PLAN_SHAPE;
    int64_t dims[EP_MAX_RANK];
    int d = 0;
    for (int i = 0; i < p->axis; i++) dims[d++] = x->dims[i];
    for (int i = 0; i < ind->rank; i++) dims[d++] = ind->dims[i];
    for (int i = p->axis + 1; i < x->rank; i++) dims[d++] = x->dims[i];
    *scratch = 0;
    return set_shape(&out[0], r, dims, x->dtype);
}
