/* UNARY f32: Y = f(X). Y may alias X exactly (in place). */
#include <string.h>
#include "ep_ops.h"

int ep_ref_unary_f32(const ep_op *op) {
    const ep_unary_params *p = (const ep_unary_params *)op->params;
    const ep_tensor *x = op->in[0];
    const ep_tensor *y = op->out[0];
    const int64_t n = ep_numel(x);
    if (n == 0) return EP_OK;
    if (y->data != x->data) memcpy(y->data, x->data, (size_t)n * sizeof(float));
    if (p->kind >= EP_ACT_MATH_FIRST) {
        ep_ref_unary_math_f32(p->kind, (float *)y->data, n);
        return EP_OK;
    }
    ep_act_apply_f32(p->kind, (float *)y->data, n, p->alpha, p->beta);
    return EP_OK;
}
