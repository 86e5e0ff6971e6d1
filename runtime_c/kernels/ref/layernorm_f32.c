/* LAYERNORM f32: per row of inner = prod(X.dims[axis:]) elements, two-pass mean / variance in
 * double, Y = (x - mean) * inv_std * scale + bias; optional Mean and InvStdDev outputs. */
#include <math.h>
#include "ep_ops.h"

int ep_ref_layernorm_f32(const ep_op *op) {
    const ep_layernorm_params *p = (const ep_layernorm_params *)op->params;
    const ep_tensor *x = op->in[0];
    const float *sc = (const float *)op->in[1]->data;
    const float *bi = op->n_in > 2 && op->in[2] ? (const float *)op->in[2]->data : NULL;
    float *mean_out = op->n_out > 1 ? (float *)op->out[1]->data : NULL;
    float *inv_out = op->n_out > 2 ? (float *)op->out[2]->data : NULL;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < p->axis; i++) outer *= x->dims[i];
    for (int i = p->axis; i < x->rank; i++) inner *= x->dims[i];
    if (outer == 0) return EP_OK;
    const float *xs = (const float *)x->data;
    float *ys = (float *)op->out[0]->data;
    for (int64_t o = 0; o < outer; o++) {
        const float *xr = xs + o * inner;
        float *yr = ys + o * inner;
        double s = 0.0, v = 0.0;
        for (int64_t i = 0; i < inner; i++) s += xr[i];
        const double mean = inner ? s / (double)inner : 0.0;
        for (int64_t i = 0; i < inner; i++) v += (xr[i] - mean) * (xr[i] - mean);
        const double var = inner ? v / (double)inner : 0.0;
        const double inv = 1.0 / sqrt(var + (double)p->epsilon);
        for (int64_t i = 0; i < inner; i++) {
            float t = (float)((xr[i] - mean) * inv) * sc[i];
            yr[i] = bi ? t + bi[i] : t;
        }
        if (mean_out) mean_out[o] = (float)mean;
        if (inv_out) inv_out[o] = (float)inv;
    }
    return EP_OK;
}
