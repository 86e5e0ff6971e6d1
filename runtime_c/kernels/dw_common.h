/* Shared by the depthwise CONV2D kernels (variant DEPTHWISE) of every ISA: the padded-plane geometry and
 * the split across threads.
 *
 * A kernel pads one input plane at a time into a scratch slot of Hp * sw * PW floats (the minimum
 * scratch, checked by the shape function). The compiler may give room for several slots
 * (compiler/passes/select.py reserves min(C, 4) of them); threads then take contiguous ranges of
 * planes (n, c), one slot each, so min(threads, slots) threads run. Every plane is computed by the same
 * code whichever thread runs it: results do not depend on the thread count. */
#ifndef EP_DW_COMMON_H
#define EP_DW_COMMON_H

#include "ep_ops.h"

typedef struct dw_job {
    const ep_op *op;
    int64_t Hp, PW;      /* padded rows, padded row width of one stride phase */
    int64_t slot;        /* floats per scratch slot (Hp * sw * PW) */
    int64_t planes;      /* N * C */
    int64_t parts;       /* tasks = slots in use */
} dw_job;

/* Fills j for op; 0 when there is nothing to compute. */
static inline int dw_plan(const ep_op *op, dw_job *j) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    if (N == 0 || C == 0 || OH == 0 || OW == 0) return 0;
    const int64_t sw = p->stride[1];
    j->op = op;
    j->Hp = (OH - 1) * p->stride[0] + (int64_t)(p->kernel[0] - 1) * p->dilation[0] + 1;
    j->PW = (OW + 15) / 16 * 16 + (int64_t)(p->kernel[1] - 1) * p->dilation[1] / sw;
    j->slot = j->Hp * sw * j->PW;
    j->planes = N * C;
    int64_t parts = ep_pool_threads_for(op->pool, (uint64_t)j->planes * (uint64_t)(OH * OW) *
                                                      (uint64_t)(p->kernel[0] * p->kernel[1]));
    const int64_t slots = (int64_t)(op->scratch_size / ((uint64_t)j->slot * 4));
    if (parts > slots) parts = slots;
    if (parts > j->planes) parts = j->planes;
    j->parts = parts < 1 ? 1 : parts;
    return 1;
}

#endif
