/* LAYERNORM driver (semantics of kernels/ref/layernorm_f32.c), compiled once per ISA.
 *
 * Rows of inner = prod(X.dims[axis:]) elements. Exports EP_ISA_FN(layernorm_f32) (ep_kernel.h); the including
 * file defines the row kernel
 *   static void ln_row(float *y, const float *x, const float *scale, const float *bias, int64_t n,
 *                      double eps, float *mean, float *inv_std);
 * which writes y[0..n) and *mean / *inv_std (as floats, each may be NULL).
 * Threads: rows are split into contiguous ranges (each row computed the same way whatever the split). */
#include "ep_ops.h"

typedef struct ln_job {
    const float *x, *sc, *bi;
    float *y, *mean, *inv;
    int64_t inner, outer, parts;
    double eps;
} ln_job;

static void ln_task(void *ctx, uint32_t t) {
    const ln_job *j = (const ln_job *)ctx;
    const ep_range r = ep_task_range(j->outer, j->parts, t);
    for (int64_t o = r.lo; o < r.hi; o++)
        ln_row(j->y + o * j->inner, j->x + o * j->inner, j->sc, j->bi, j->inner, j->eps, j->mean ? j->mean + o : NULL,
               j->inv ? j->inv + o : NULL);
}

int EP_ISA_FN(layernorm_f32)(const ep_op *op) {
    const ep_layernorm_params *p = (const ep_layernorm_params *)op->params;
    const ep_tensor *x = op->in[0];
    ln_job j = {(const float *)x->data, (const float *)op->in[1]->data,
                op->n_in > 2 && op->in[2] ? (const float *)op->in[2]->data : NULL, (float *)op->out[0]->data,
                op->n_out > 1 ? (float *)op->out[1]->data : NULL, op->n_out > 2 ? (float *)op->out[2]->data : NULL,
                1, 1, 1, (double)p->epsilon};
    for (int i = 0; i < p->axis; i++) j.outer *= x->dims[i];
    for (int i = p->axis; i < x->rank; i++) j.inner *= x->dims[i];
    if (j.outer == 0) return EP_OK;
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)(j.outer * j.inner) * 8u);
    j.parts = T < j.outer ? T : j.outer;
    ep_parallel_for(op->pool, (uint32_t)j.parts, ln_task, &j);
    return EP_OK;
}
