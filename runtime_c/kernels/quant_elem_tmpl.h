/* The driver of the element-wise int8 kernels (QUANTIZE, DEQUANTIZE, QADD, QLUT), shared by every ISA: the
 * elements split into task ranges of whole chunks (ep_task_range over the pool's share for the op's size), each
 * range computed by one of the including file's row functions, which it defines after including this file:
 *   qe_quantize_row, qe_dequantize_row (qe_convert_job), qe_qadd_row, qe_qlut_row (qe_codes_job),
 * each over the elements [lo, hi) of its job. The results do not depend on the split (element-wise).
 * The including file defines EP_ISA (x86.h, neon.h), which names the exported kernels. */
#include "ep_kernel.h"

#define QE_CONVERT_CHUNK 1024   /* elements per task range unit of QUANTIZE / DEQUANTIZE */
#define QE_CODES_CHUNK 4096     /* of QADD / QLUT */

typedef struct qe_convert_job {   /* QUANTIZE: f32 -> codes; DEQUANTIZE: codes -> f32 */
    const ep_quant_params *p;
    const void *x;
    void *y;
    int64_t n, parts;
    int u8;                       /* the codes are U8 */
} qe_convert_job;

typedef struct qe_codes_job {     /* QADD: y = a + b (p); QLUT: y = t[a + 128] */
    const ep_qadd_params *p;
    const int8_t *a, *b, *t;
    int8_t *y;
    int64_t n, parts;
} qe_codes_job;

static void qe_quantize_row(const qe_convert_job *j, int64_t lo, int64_t hi);
static void qe_dequantize_row(const qe_convert_job *j, int64_t lo, int64_t hi);
static void qe_qadd_row(const qe_codes_job *j, int64_t lo, int64_t hi);
static void qe_qlut_row(const qe_codes_job *j, int64_t lo, int64_t hi);

/* the elements [*lo, *hi) of task t over n elements in chunks */
static inline void qe_range(int64_t n, int64_t chunk, int64_t parts, uint32_t t, int64_t *lo, int64_t *hi) {
    const ep_range r = ep_task_range((n + chunk - 1) / chunk, parts, t);
    *lo = r.lo * chunk;
    *hi = r.hi * chunk < n ? r.hi * chunk : n;
}

static void qe_quantize_task(void *ctx, uint32_t t) {
    const qe_convert_job *j = (const qe_convert_job *)ctx;
    int64_t lo, hi;
    qe_range(j->n, QE_CONVERT_CHUNK, j->parts, t, &lo, &hi);
    qe_quantize_row(j, lo, hi);
}
static void qe_dequantize_task(void *ctx, uint32_t t) {
    const qe_convert_job *j = (const qe_convert_job *)ctx;
    int64_t lo, hi;
    qe_range(j->n, QE_CONVERT_CHUNK, j->parts, t, &lo, &hi);
    qe_dequantize_row(j, lo, hi);
}
static void qe_qadd_task(void *ctx, uint32_t t) {
    const qe_codes_job *j = (const qe_codes_job *)ctx;
    int64_t lo, hi;
    qe_range(j->n, QE_CODES_CHUNK, j->parts, t, &lo, &hi);
    qe_qadd_row(j, lo, hi);
}
static void qe_qlut_task(void *ctx, uint32_t t) {
    const qe_codes_job *j = (const qe_codes_job *)ctx;
    int64_t lo, hi;
    qe_range(j->n, QE_CODES_CHUNK, j->parts, t, &lo, &hi);
    qe_qlut_row(j, lo, hi);
}

/* tasks for n elements of `cost` work units each, at most one per chunk */
static int64_t qe_parts(const ep_op *op, int64_t n, int64_t chunk, uint64_t cost) {
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)n * cost), chunks = (n + chunk - 1) / chunk;
    return T < chunks ? T : chunks;
}

static int qe_convert(const ep_op *op, int u8, ep_task_fn fn) {
    const int64_t n = ep_numel(op->in[0]);
    if (n == 0) return EP_OK;
    qe_convert_job j = {(const ep_quant_params *)op->params, op->in[0]->data, op->out[0]->data, n,
                        qe_parts(op, n, QE_CONVERT_CHUNK, 4), u8};
    ep_parallel_for(op->pool, (uint32_t)j.parts, fn, &j);
    return EP_OK;
}

static int qe_codes(const ep_op *op, const ep_qadd_params *p, const int8_t *b, const int8_t *t, ep_task_fn fn,
                    uint64_t cost) {
    const int64_t n = ep_numel(op->out[0]);
    if (n == 0) return EP_OK;
    qe_codes_job j = {p, (const int8_t *)op->in[0]->data, b, t, (int8_t *)op->out[0]->data, n,
                      qe_parts(op, n, QE_CODES_CHUNK, cost)};
    ep_parallel_for(op->pool, (uint32_t)j.parts, fn, &j);
    return EP_OK;
}

int EP_ISA_FN(quantize_f32)(const ep_op *op) {
    return qe_convert(op, ((const ep_quant_params *)op->params)->dtype == EP_DTYPE_U8, qe_quantize_task);
}
int EP_ISA_FN(dequantize_i8)(const ep_op *op) {
    return qe_convert(op, op->in[0]->dtype == EP_DTYPE_U8, qe_dequantize_task);
}
int EP_ISA_FN(qadd_i8)(const ep_op *op) {
    return qe_codes(op, (const ep_qadd_params *)op->params, (const int8_t *)op->in[1]->data, NULL, qe_qadd_task, 8);
}
int EP_ISA_FN(qlut_i8)(const ep_op *op) {
    return qe_codes(op, NULL, NULL, (const int8_t *)op->in[1]->data, qe_qlut_task, 2);
}
