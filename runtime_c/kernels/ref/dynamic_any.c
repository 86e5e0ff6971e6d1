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
    case EP_DTYPE_I16: case EP_DTYPE_U16: return ((const uint16_t *)p)[i] != 0;
    case EP_DTYPE_I32: case EP_DTYPE_U32: return ((const uint32_t *)p)[i] != 0;
    case EP_DTYPE_I64: case EP_DTYPE_U64: return ((const uint64_t *)p)[i] != 0;
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

/* SLICE_DYN: clamp the run-time starts/ends as ONNX Slice does, set the extents, then run SLICE. */
int ep_ref_slice_dyn_any(const ep_op *op) {
    const ep_slice_dyn_params *p = (const ep_slice_dyn_params *)op->params;
    const ep_tensor *x = op->in[0], *st = op->in[1], *en = op->in[2];
    ep_tensor *y = op->out[0];
    ep_slice_params sp;
    for (int i = 0; i < EP_MAX_RANK; i++) {
        sp.starts[i] = 0;
        sp.steps[i] = 1;
    }
    int32_t ext[EP_MAX_RANK];
    for (int i = 0; i < x->rank; i++) ext[i] = x->dims[i];
    const int64_t n = ep_numel(st);
    for (int64_t k = 0; k < n; k++) {
        const int a = p->axes[k];
        const int64_t dim = x->dims[a], step = p->steps[k];
        int64_t s = rb_load_i(st->data, st->dtype, k), e = rb_load_i(en->data, en->dtype, k);
        /* negative counts from the end; saturate first so that adding dim cannot overflow */
        if (s < 0) s = (s < -dim - 1 ? -dim - 1 : s) + dim;
        if (e < 0) e = (e < -dim - 1 ? -dim - 1 : e) + dim;
        if (s < 0) s = step > 0 ? 0 : -1;
        if (e < 0) e = step > 0 ? 0 : -1;
        int64_t cnt;
        if (step > 0) {
            s = s > dim ? dim : s;
            e = e > dim ? dim : e;
            cnt = e > s ? (e - s + step - 1) / step : 0;
        } else {
            s = s > dim - 1 ? dim - 1 : s;
            e = e > dim - 1 ? dim - 1 : e;
            if (e < -1) e = -1;
            cnt = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
        if (cnt > y->dims[a]) return EP_ERR_RUN_BOUND;   /* never: cnt <= dim <= capacity */
        ext[a] = (int32_t)cnt;
        sp.starts[a] = cnt ? (int32_t)s : 0;
        sp.steps[a] = (int32_t)step;
    }
    for (int i = 0; i < x->rank; i++) y->dims[i] = ext[i];
    ep_op sub = *op;
    sub.params = &sp;
    return ep_ref_slice_any(&sub);
}

int ep_ref_shape_any(const ep_op *op) {
    const ep_shape_params *p = (const ep_shape_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    for (int k = 0; k < y->dims[0]; k++) {
        const int64_t v = p->dims[k] >= 0 ? x->dims[p->dims[k]] : p->values[k];
        if (y->dtype == EP_DTYPE_I64) ((int64_t *)y->data)[k] = v;
        else ((int32_t *)y->data)[k] = (int32_t)v;
    }
    return EP_OK;
}

/* RESHAPE_DYN: Y is X's bytes (open checked they start at the same byte); only Y's extents are set.
 * Each extent is checked against Y's capacity (its record dim, which the executor gives on entry) and
 * the product against X's element count before any is written. */
int ep_ref_reshape_dyn_any(const ep_op *op) {
    const ep_reshape_dyn_params *p = (const ep_reshape_dyn_params *)op->params;
    const ep_tensor *x = op->in[0], *s = op->in[1];
    ep_tensor *y = op->out[0];
    const int r = y->rank;
    const int64_t *v = (const int64_t *)s->data;
    const int64_t total = ep_numel(x);
    int64_t ext[EP_MAX_RANK], known = 1;
    int infer = -1;
    for (int k = 0; k < r; k++) {
        int64_t e = v[k];
        if (e == 0 && !p->allowzero) {
            if (k >= x->rank) return EP_ERR_RUN_SHAPE;
            e = x->dims[k];
        }
        if (e == -1) {
            if (infer >= 0) return EP_ERR_RUN_SHAPE;
            infer = k;
            ext[k] = 0;
            continue;
        }
        if (e < 0) return EP_ERR_RUN_SHAPE;
        if (e > y->dims[k]) return EP_ERR_RUN_BOUND;
        ext[k] = e;
        known *= e;   /* each factor <= a record dim: the product stays far inside int64 (ep_chk_tensor) */
    }
    if (infer >= 0) {
        if (known == 0 || total % known) return EP_ERR_RUN_SHAPE;
        ext[infer] = total / known;
        if (ext[infer] > y->dims[infer]) return EP_ERR_RUN_BOUND;
    } else if (known != total) {
        return EP_ERR_RUN_SHAPE;
    }
    for (int k = 0; k < r; k++) y->dims[k] = (int32_t)ext[k];
    return EP_OK;
}
