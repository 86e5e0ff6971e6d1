/* RANGE and NONZERO reference kernels: the output length depends on the input values. On entry the
 * output's dims are its capacity (the plan's bound); the kernel writes the actual length there.
 * More than the capacity fails with EP_ERR_RUN_BOUND before anything is written. */
#include <math.h>
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"

int ep_ref_range_any(const ep_op *op) {
    const void *ps = op->in[0]->data, *pl = op->in[1]->data, *pd = op->in[2]->data;
    ep_tensor *y = op->out[0];
    const int64_t cap = y->dims[0];
    int64_t n;
    if (y->dtype == EP_DTYPE_F32) {
        const double s = *(const float *)ps, l = *(const float *)pl, d = *(const float *)pd;
        if (d == 0.0 || !isfinite(s) || !isfinite(l) || !isfinite(d)) return EP_ERR_RUN_INDEX;
        const double c = ceil((l - s) / d);
        if (c > (double)cap) return EP_ERR_RUN_BOUND;
        n = c > 0 ? (int64_t)c : 0;
        float *o = (float *)y->data, v = *(const float *)ps;
        for (int64_t i = 0; i < n; i++, v += *(const float *)pd) o[i] = v;   /* accumulated, as onnxruntime */
    } else {
        const int64_t s = rb_load_i(ps, y->dtype, 0), l = rb_load_i(pl, y->dtype, 0), d = rb_load_i(pd, y->dtype, 0);
        if (d == 0) return EP_ERR_RUN_INDEX;
        /* ceil((l - s) / d) without overflow: both operands fit in 63 bits after the sign test */
        if ((d > 0 && l <= s) || (d < 0 && l >= s)) {
            n = 0;
        } else {
            const uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
            const uint64_t step = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
            const uint64_t c = span / step + (span % step != 0);
            if (c > (uint64_t)cap) return EP_ERR_RUN_BOUND;
            n = (int64_t)c;
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t v = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);   /* wraps like int64 */
            if (y->dtype == EP_DTYPE_I64) ((int64_t *)y->data)[i] = v;
            else ((int32_t *)y->data)[i] = (int32_t)v;
        }
    }
    y->dims[0] = (int32_t)n;
    return EP_OK;
}

static int nonzero_at(const void *p, uint8_t dt, int64_t i) {
    switch (dt) {
    case EP_DTYPE_F32: return ((const float *)p)[i] != 0.0f;
    case EP_DTYPE_I16: return ((const int16_t *)p)[i] != 0;
    case EP_DTYPE_I32: return ((const int32_t *)p)[i] != 0;
    case EP_DTYPE_I64: return ((const int64_t *)p)[i] != 0;
    default: return ((const uint8_t *)p)[i] != 0;   /* I8, U8, BOOL */
    }
}

int ep_ref_nonzero_any(const ep_op *op) {
    const ep_tensor *x = op->in[0];
    ep_tensor *y = op->out[0];
    const int64_t total = ep_numel(x), cap = y->dims[1];
    const int r = x->rank;
    int64_t n = 0;
    for (int64_t i = 0; i < total; i++) n += nonzero_at(x->data, x->dtype, i);
    if (n > cap) return EP_ERR_RUN_BOUND;
    int64_t *o = (int64_t *)y->data;
    int64_t k = 0;
    for (int64_t i = 0; i < total; i++) {
        if (!nonzero_at(x->data, x->dtype, i)) continue;
        int64_t rem = i;
        for (int d = r - 1; d >= 0; d--) {   /* row d of Y holds coordinate d; rows are n long */
            o[(int64_t)d * n + k] = rem % x->dims[d];
            rem /= x->dims[d];
        }
        k++;
    }
    y->dims[1] = (int32_t)n;
    return EP_OK;
}
