/* ATTENTION driver (semantics of kernels/ref/matmul_f32.c's ep_ref_attention_f32), compiled once per ISA.
 *
 * The including file defines two helpers and exports EP_ISA_FN(attention_f32) (ep_kernel.h):
 *   AT_GEMM(M, N, K, a, lda, b, ldb, c, ldc)   its row-major MATMUL GEMM, C = A B (products in k order
 *                                             from 0, whatever the tile: the MATMUL kernel's own values);
 *   AT_SOFTMAX_ROW(y, x, n)                    its SOFTMAX kernel's row.
 * So every element is what the ISA's MATMUL, BINARY and SOFTMAX kernels compute one after the other, bit
 * for bit, while S stays in scratch: a task takes a band of min(rows, M) rows of one batch, computes their S
 * (band x N) in its slot, scales and masks it, takes the softmax of each row in place, then multiplies the
 * band by V into Y. Threads: the (batch, band) pairs are split into contiguous ranges, one per slot. */
#include <string.h>
#include "ep_ops.h"
#include "matmul_bcast.h"

typedef struct at_job {
    const ep_tensor *qt, *kt, *vt, *mt, *yt;
    float *scratch;
    int64_t M, N, D, E, rows, bands, units, parts;
    float scale;
    int divide;
} at_job;

/* S * scale or S / scale, then + MASK, over one row (the BINARY kernels' single IEEE operations) */
static void at_scale_row(float *s, int64_t n, float scale, int divide, const float *m, int64_t col) {
    if (divide)
        for (int64_t k = 0; k < n; k++) s[k] = s[k] / scale;
    else
        for (int64_t k = 0; k < n; k++) s[k] = s[k] * scale;
    if (!m) return;
    if (col)
        for (int64_t k = 0; k < n; k++) s[k] = s[k] + m[k];
    else
        for (int64_t k = 0; k < n; k++) s[k] = s[k] + m[0];
}

static void at_task(void *ctx, uint32_t t) {
    const at_job *j = (const at_job *)ctx;
    const ep_range r = ep_task_range(j->units, j->parts, t);
    const float *q = (const float *)j->qt->data, *kt = (const float *)j->kt->data, *v = (const float *)j->vt->data;
    const float *mask = j->mt ? (const float *)j->mt->data : NULL;
    float *y = (float *)j->yt->data, *s = j->scratch + (int64_t)t * j->rows * j->N;
    for (int64_t u = r.lo; u < r.hi; u++) {
        const int64_t bi = u / j->bands, i0 = (u % j->bands) * j->rows;
        const int64_t mr = j->M - i0 < j->rows ? j->M - i0 : j->rows;
        int64_t qm, km, vm, unused;
        ep_matmul_batch(j->qt, j->kt, j->yt, bi, &qm, &km);
        ep_matmul_batch(j->vt, j->vt, j->yt, bi, &vm, &unused);
        AT_GEMM(mr, j->N, j->D, q + (qm * j->M + i0) * j->D, j->D, kt + km * j->D * j->N, j->N, s, j->N);
        for (int64_t i = 0; i < mr; i++) {
            float *si = s + i * j->N;
            int64_t col = 0;
            const float *mi = mask ? mask + ep_attention_mask_row(j->mt, j->yt, bi, i0 + i, &col) : NULL;
            at_scale_row(si, j->N, j->scale, j->divide, mi, col);
            AT_SOFTMAX_ROW(si, si, j->N);
        }
        AT_GEMM(mr, j->E, j->N, s, j->N, v + vm * j->N * j->E, j->E, y + (bi * j->M + i0) * j->E, j->E);
    }
}

int EP_ISA_FN(attention_f32)(const ep_op *op) {
    const ep_attention_params *p = (const ep_attention_params *)op->params;
    const ep_tensor *qt = op->in[0], *kt = op->in[1], *vt = op->in[2], *yt = op->out[0];
    const int ro = yt->rank;
    for (int i = 0; i < ro; i++)
        if (yt->dims[i] == 0) return EP_OK;
    at_job j = {qt, kt, vt, op->n_in > 3 ? op->in[3] : NULL, yt, (float *)op->scratch,
                yt->dims[ro - 2], kt->dims[kt->rank - 1], qt->dims[qt->rank - 1], yt->dims[ro - 1],
                p->rows, 0, 0, 1, p->scale, p->divide};
    if (j.N == 0) {   /* softmax over nothing, then an empty sum: zeros */
        memset(yt->data, 0, (size_t)ep_numel(yt) * sizeof(float));
        return EP_OK;
    }
    if (j.rows > j.M) j.rows = j.M;   /* the band: min(rows, M) rows (M >= 1 here) */
    j.bands = (j.M + j.rows - 1) / j.rows;
    j.units = ep_numel(yt) / (j.M * j.E) * j.bands;
    const uint64_t slot = (uint64_t)j.rows * (uint64_t)j.N * sizeof(float);
    const uint64_t slots = op->scratch_size / slot;   /* >= 1: the shape function asked for one */
    const uint64_t work = (uint64_t)ep_numel(yt) / (uint64_t)j.E * (uint64_t)j.N * (uint64_t)(j.D + j.E);
    uint64_t parts = ep_pool_threads_for(op->pool, work);
    if (parts > slots) parts = slots;
    if (parts > (uint64_t)j.units) parts = (uint64_t)j.units;
    j.parts = (int64_t)(parts ? parts : 1);
    ep_parallel_for(op->pool, (uint32_t)j.parts, at_task, &j);
    return EP_OK;
}
