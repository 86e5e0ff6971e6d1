/* The ISA-neutral part of the vector REDUCE kernels (AVX2, NEON): MAX and MIN over contiguous runs. The
 * other kinds, integer dtypes, NaN and general boxes go to the reference kernel (ref/reduce_f32.c), whose
 * values these equal bit for bit. */
#ifndef EP_REDUCE_COMMON_H
#define EP_REDUCE_COMMON_H
#include "ep_ops.h"

/* When every reduced dim of X (extent > 1) follows every kept one, each output element reduces one
 * contiguous run of X: sets *runs (the output count) and *len, returns 1; otherwise 0. */
static inline int ep_reduce_runs(const ep_op *op, int64_t *runs, int64_t *len) {
    const ep_reduce_params *p = (const ep_reduce_params *)op->params;
    const ep_tensor *x = op->in[0];
    int64_t keep = 1, red = 1;
    int seen_red = 0;
    for (int i = 0; i < x->rank; i++) {
        const int64_t n = x->dims[i];
        if ((p->axes_mask >> i) & 1u) {
            red *= n;
            seen_red |= n != 1;
        } else {
            keep *= n;
            if (n != 1 && seen_red) return 0;
        }
    }
    if (red == 0 || keep == 0) return 0;
    *runs = keep;
    *len = red;
    return 1;
}

/* Finishes a run whose first k elements reduced to r: the tail one element at a time, then the value the
 * reference's element-by-element loop keeps (the first of equal values): equal values share their bits
 * except zeros, so a zero result is the run's first zero. Returns 0 when the run holds a NaN (*nan set by
 * the vector part, or found here): the reference then computes the op. */
static inline int ep_minmax_finish(int kind, const float *p, int64_t k, int64_t len, float r, int nan, float *out) {
    for (; k < len; k++) {
        const float v = p[k];
        nan |= v != v;
        r = kind == EP_REDUCE_MAX ? (v > r ? v : r) : (v < r ? v : r);
    }
    if (nan) return 0;
    if (r == 0.0f)
        for (k = 0; k < len; k++)
            if (p[k] == 0.0f) {
                r = p[k];
                break;
            }
    *out = r;
    return 1;
}

/* Runs MAX / MIN over the runs with the ISA's run function (run(kind, p, len, &out), 0 on a NaN), or the
 * whole op through the reference. */
static inline int ep_reduce_minmax(const ep_op *op, int (*run)(int, const float *, int64_t, float *)) {
    const ep_reduce_params *p = (const ep_reduce_params *)op->params;
    int64_t runs, len;
    if (op->in[0]->dtype != EP_DTYPE_F32 || (p->kind != EP_REDUCE_MAX && p->kind != EP_REDUCE_MIN) ||
        !ep_reduce_runs(op, &runs, &len) || len < 16)
        return ep_ref_reduce_f32(op);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    for (int64_t o = 0; o < runs; o++)
        if (!run(p->kind, x + o * len, len, y + o)) return ep_ref_reduce_f32(op);
    return EP_OK;
}
#endif
