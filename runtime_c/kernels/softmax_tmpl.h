/* SOFTMAX / LOGSOFTMAX driver (semantics of kernels/ref/softmax_f32.c), compiled once per ISA.
 *
 * X is viewed as [outer, n, inner] around the axis. Exports EP_ISA_FN(softmax_f32) (ep_kernel.h); the
 * including file defines SM_LANES (floats per vector) and two row kernels, each of which reads
 * all of its input before writing the same elements, so Y may alias X exactly (the op is in place):
 *   static void sm_row(float *y, const float *x, int64_t n, int log_mode);
 *       one contiguous row (inner == 1, the innermost axis: attention scores, classifier outputs);
 *   static void sm_cols(float *y, const float *x, int64_t n, int64_t inner, int w, int log_mode);
 *       w (1..SM_LANES) adjacent columns of one outer block (element k of column c at x[k*inner + c]):
 *       reduced lane-wise, one column per lane, so any other axis is vectorised too.
 * Threads: the rows (or column groups) are split into contiguous ranges; each row is computed by the
 * same code whatever the split, so results do not depend on the thread count. */
#include "ep_ops.h"

typedef struct sm_job {
    const float *x;
    float *y;
    int64_t n, inner, groups, units, parts;   /* groups: column groups per outer block; units: rows or groups */
    int log_mode;
} sm_job;

static void sm_task(void *ctx, uint32_t t) {
    const sm_job *j = (const sm_job *)ctx;
    const ep_range r = ep_task_range(j->units, j->parts, t);
    for (int64_t u = r.lo; u < r.hi; u++) {
        if (j->inner == 1) {
            sm_row(j->y + u * j->n, j->x + u * j->n, j->n, j->log_mode);
            continue;
        }
        const int64_t o = u / j->groups, c0 = (u % j->groups) * SM_LANES;
        const int64_t off = o * j->n * j->inner + c0, w = j->inner - c0 < SM_LANES ? j->inner - c0 : SM_LANES;
        sm_cols(j->y + off, j->x + off, j->n, j->inner, (int)w, j->log_mode);
    }
}

int EP_ISA_FN(softmax_f32)(const ep_op *op) {
    const ep_softmax_params *p = (const ep_softmax_params *)op->params;
    const ep_tensor *tx = op->in[0];
    const int64_t n = tx->dims[p->axis];
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < p->axis; i++) outer *= tx->dims[i];
    for (int i = p->axis + 1; i < tx->rank; i++) inner *= tx->dims[i];
    if (outer == 0 || inner == 0 || n == 0) return EP_OK;
    sm_job j = {(const float *)tx->data, (float *)op->out[0]->data, n, inner, 0, outer, 1, p->log};
    if (inner > 1) {
        j.groups = (inner + SM_LANES - 1) / SM_LANES;
        j.units = outer * j.groups;
    }
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)(outer * n * inner) * 16u);   /* ~16 ops per element */
    j.parts = T < j.units ? T : j.units;
    ep_parallel_for(op->pool, (uint32_t)j.parts, sm_task, &j);
    return EP_OK;
}
