/* Checks shared by the shape functions. Params and shapes are untrusted plan bytes; the executor has
 * already checked every tensor record and the op's arity, and these re-checks keep each shape function
 * safe on its own (unit tests and fuzzers call them directly). */
#ifndef EP_OPS_SHAPE_CHECK_H
#define EP_OPS_SHAPE_CHECK_H
#include "ep_ops.h"

/* EP_OK when t is present and well formed: rank <= 8, dims >= 0, known dtype, and an element
 * count that cannot overflow int64 byte arithmetic. */
static inline int ep_chk_tensor(const ep_tensor *t) {
    if (!t) return EP_ERR_PLAN_OP;
    if (t->rank > EP_MAX_RANK) return EP_ERR_PLAN_SHAPE;
    if (ep_dtype_size(t->dtype) == 0) return EP_ERR_PLAN_TENSOR;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return EP_ERR_PLAN_SHAPE;
        if (t->dims[i] > 0 && n > (INT64_C(1) << 56) / t->dims[i]) return EP_ERR_PLAN_SHAPE;
        n *= t->dims[i];
    }
    return EP_OK;
}

static inline int ep_chk_arity(const ep_op *op, int min_in, int max_in, int min_out, int max_out) {
    if (op->n_in < min_in || op->n_in > max_in || op->n_out < min_out || op->n_out > max_out)
        return EP_ERR_PLAN_OP;
    return EP_OK;
}
/* Present, f32, rank in [rank_lo, rank_hi]. */
static inline int ep_chk_f32(const ep_tensor *t, int rank_lo, int rank_hi) {
    if (!t) return EP_ERR_PLAN_OP;
    if (t->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (t->rank < rank_lo || t->rank > rank_hi) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

/* Present, rank in [rank_lo, rank_hi], f32 or (plan_format.h "16-bit weights", 1.7) f16 / bf16: the packed
 * weights of CONV2D PACKED and GEMM PACKED. */
static inline int ep_chk_weights(const ep_tensor *t, int rank_lo, int rank_hi) {
    if (!t) return EP_ERR_PLAN_OP;
    if (t->dtype != EP_DTYPE_F32 && t->dtype != EP_DTYPE_F16 && t->dtype != EP_DTYPE_BF16) return EP_ERR_PLAN_TENSOR;
    if (t->rank < rank_lo || t->rank > rank_hi) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

/* Upper bound on window parameters (kernel, stride, dilation, pads): keeps every product of them
 * with a tensor extent far inside int64. */
#define EP_PARAM_LIMIT (1 << 20)
static inline int ep_param_in_range(int32_t v, int32_t lo) { return v >= lo && v <= EP_PARAM_LIMIT; }

/* EP_OK when a 2-D window's kernel, stride and dilation are in [1, EP_PARAM_LIMIT] and its four pads
 * (top, left, bottom, right) in [0, EP_PARAM_LIMIT]; else EP_ERR_PLAN_PARAMS. */
static inline int ep_chk_window(const int32_t kernel[2], const int32_t stride[2], const int32_t dilation[2],
                                const int32_t pads[4]) {
    for (int i = 0; i < 2; i++)
        if (!ep_param_in_range(kernel[i], 1) || !ep_param_in_range(stride[i], 1) || !ep_param_in_range(dilation[i], 1))
            return EP_ERR_PLAN_PARAMS;
    for (int i = 0; i < 4; i++)
        if (!ep_param_in_range(pads[i], 0)) return EP_ERR_PLAN_PARAMS;
    return EP_OK;
}

/* floor(a / b) for b > 0 (C division truncates toward zero). */
static inline int64_t ep_floordiv(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The output extents o[2] of a 2-D window (ep_chk_window's ranges) over spatial extents in[2]:
 * floor((in + pad_begin + pad_end - ((k - 1) d + 1)) / s) + 1 per axis (pads top, left, bottom, right).
 * EP_ERR_PLAN_SHAPE when one is below `least` or above INT32_MAX. */
static inline int ep_window_out(const int32_t kernel[2], const int32_t stride[2], const int32_t dilation[2],
                                const int32_t pads[4], const int32_t in[2], int64_t least, int64_t o[2]) {
    for (int i = 0; i < 2; i++) {
        const int64_t span = (int64_t)in[i] + pads[i] + pads[i + 2] - ((int64_t)(kernel[i] - 1) * dilation[i] + 1);
        o[i] = ep_floordiv(span, stride[i]) + 1;
        if (o[i] < least || o[i] > INT32_MAX) return EP_ERR_PLAN_SHAPE;
    }
    return EP_OK;
}

/* An f32 output [N, C, H, W] (extents already checked to fit int32). */
static inline void ep_shape_nchw(ep_shape *out, int64_t N, int64_t C, int64_t H, int64_t W) {
    for (int i = 0; i < EP_MAX_RANK; i++) out->dims[i] = 0;
    out->dims[0] = (int32_t)N;
    out->dims[1] = (int32_t)C;
    out->dims[2] = (int32_t)H;
    out->dims[3] = (int32_t)W;
    out->rank = 4;
    out->dtype = EP_DTYPE_F32;
}
#endif
