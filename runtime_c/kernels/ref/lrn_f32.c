/* LRN f32 (plan_format.h): per position, the sum of squares over a window of channels, kept as a
 * running sum in double as the window slides along C (each element is added and removed once). */
#include <math.h>
#include "ep_ops.h"

int ep_ref_lrn_f32(const ep_op *op) {
    const ep_lrn_params *p = (const ep_lrn_params *)op->params;
    const ep_tensor *x = op->in[0];
    const int64_t n = x->dims[0], c = x->dims[1];
    int64_t inner = 1;
    for (int i = 2; i < x->rank; i++) inner *= x->dims[i];
    const int64_t before = (p->size - 1) / 2, after = p->size / 2;   /* window [k - before, k + after] */
    const double scale = (double)p->alpha / p->size;
    const float *xs = (const float *)x->data;
    float *ys = (float *)op->out[0]->data;
    for (int64_t b = 0; b < n; b++) {
        for (int64_t s = 0; s < inner; s++) {
            const float *xp = xs + b * c * inner + s;
            float *yp = ys + b * c * inner + s;
            double sum = 0.0;
            for (int64_t k = 0; k < after && k < c; k++) sum += (double)xp[k * inner] * xp[k * inner];
            for (int64_t k = 0; k < c; k++) {
                if (k + after < c) sum += (double)xp[(k + after) * inner] * xp[(k + after) * inner];
                if (k - before - 1 >= 0) {
                    const double v = xp[(k - before - 1) * inner];
                    sum -= v * v;
                }
                const double d = (double)p->bias + scale * (sum > 0.0 ? sum : 0.0);
                yp[k * inner] = (float)(xp[k * inner] / pow(d, (double)p->beta));
            }
        }
    }
    return EP_OK;
}
