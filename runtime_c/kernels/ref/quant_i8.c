/* Reference int8 kernels (the numerical spec; plan_format.h "int8"): QUANTIZE, DEQUANTIZE, QCONV2D and QGEMM.
 *
 * Every accumulator is an exact int32 sum (the shape functions bound it), so the order of the products does
 * not matter; each output is then requantised once (ep_requant, quant_common.h). The PACKED variants read the
 * packed weights in place and equal variant 0 on the same weights bit for bit. QUANTIZE divides in float32 and
 * rounds half to even (nearbyintf in the default rounding mode, which the session keeps). */
#include <math.h>
#include "ep_ops.h"
#include "quant_common.h"
#include "ref_util.h"

int ep_ref_quantize_f32(const ep_op *op) {
    const ep_quant_params *p = (const ep_quant_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const float *x = (const float *)xt->data;
    const int64_t n = ep_numel(xt);
    const float lo = p->dtype == EP_DTYPE_U8 ? 0.0f : -128.0f, hi = p->dtype == EP_DTYPE_U8 ? 255.0f : 127.0f;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] != x[i] ? (float)p->zero_point : nearbyintf(x[i] / p->scale) + (float)p->zero_point;
        v = v < lo ? lo : v > hi ? hi : v;
        if (p->dtype == EP_DTYPE_U8) ((uint8_t *)yt->data)[i] = (uint8_t)v;
        else ((int8_t *)yt->data)[i] = (int8_t)v;
    }
    return EP_OK;
}

int ep_ref_dequantize_i8(const ep_op *op) {
    const ep_quant_params *p = (const ep_quant_params *)op->params;
    const ep_tensor *xt = op->in[0];
    float *y = (float *)op->out[0]->data;
    const int64_t n = ep_numel(xt);
    for (int64_t i = 0; i < n; i++) {
        const int32_t q = xt->dtype == EP_DTYPE_U8 ? ((const uint8_t *)xt->data)[i] : ((const int8_t *)xt->data)[i];
        y[i] = (float)(q - p->zero_point) * p->scale;
    }
    return EP_OK;
}

/* QCONV2D weight of output channel m (within its group: mg) at reduction index k, in either layout. */
static int32_t qconv_weight(const ep_op *op, const ep_qconv_geo *g, int64_t m, int64_t MG, int64_t k) {
    const int8_t *w = (const int8_t *)op->in[1]->data;
    if (op->variant != EP_QCONV2D_VARIANT_PACKED) return w[m * g->K + k];
    const int64_t grp = m / MG, mg = m % MG, K4 = rl_ceildiv(g->K, EP_QPACK_K);
    const int64_t panel = grp * rl_ceildiv(MG, EP_QPACK_R) + mg / EP_QPACK_R;
    return w[((panel * K4 + k / EP_QPACK_K) * EP_QPACK_R + mg % EP_QPACK_R) * EP_QPACK_K + k % EP_QPACK_K];
}

static int qconv2d(const ep_op *op) {
    const ep_qconv2d_params *p = (const ep_qconv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    if (rl_is_empty(yt)) return EP_OK;
    ep_qconv_geo g;
    ep_qconv_geo_init(&g, p, xt, yt);
    const int64_t N = xt->dims[0], C = xt->dims[1], M = yt->dims[1], MG = M / p->groups;
    const int32_t *bias = (const int32_t *)op->in[2]->data, *q = (const int32_t *)op->in[3]->data;
    const int8_t *x = (const int8_t *)xt->data;
    int8_t *y = (int8_t *)yt->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            const int8_t *xg = x + (n * C + m / MG * g.CG) * g.H * g.W;
            int8_t *yp = y + (n * M + m) * g.OH * g.OW;
            for (int64_t oh = 0; oh < g.OH; oh++)
                for (int64_t ow = 0; ow < g.OW; ow++) {
                    int32_t acc = bias[m];
                    for (int64_t k = 0; k < g.K; k++)
                        acc += qconv_weight(op, &g, m, MG, k) * ep_qconv_tap(&g, xg, oh, ow, k);
                    yp[oh * g.OW + ow] = (int8_t)ep_requant(acc, q[m], q[M + m], p->y_min - p->y_zero,
                                                            p->y_max - p->y_zero, p->y_zero);
                }
        }
    return EP_OK;
}

int ep_ref_qconv2d_i8(const ep_op *op) { return qconv2d(op); }
int ep_ref_qconv2d_packed_i8(const ep_op *op) { return qconv2d(op); }

static int qgemm(const ep_op *op) {
    const ep_qgemm_params *p = (const ep_qgemm_params *)op->params;
    const ep_tensor *at = op->in[0], *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = yt->dims[1], K4 = rl_ceildiv(K, EP_QPACK_K);
    const int8_t *a = (const int8_t *)at->data, *b = (const int8_t *)op->in[1]->data;
    const int32_t *c = (const int32_t *)op->in[2]->data, *q = (const int32_t *)op->in[3]->data;
    int8_t *y = (int8_t *)yt->data;
    const int packed = op->variant == EP_QGEMM_VARIANT_PACKED;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int32_t acc = c[j];
            for (int64_t k = 0; k < K; k++) {
                const int8_t bv = packed ? b[((j / EP_QPACK_R * K4 + k / EP_QPACK_K) * EP_QPACK_R + j % EP_QPACK_R) *
                                                 EP_QPACK_K + k % EP_QPACK_K]
                                         : b[k * N + j];
                acc += a[i * K + k] * bv;
            }
            y[i * N + j] = (int8_t)ep_requant(acc, q[j], q[N + j], p->y_min - p->y_zero, p->y_max - p->y_zero, p->y_zero);
        }
    return EP_OK;
}

int ep_ref_qgemm_i8(const ep_op *op) { return qgemm(op); }
int ep_ref_qgemm_packed_i8(const ep_op *op) { return qgemm(op); }

int ep_ref_qadd_i8(const ep_op *op) {
    const ep_qadd_params *p = (const ep_qadd_params *)op->params;
    const int8_t *a = (const int8_t *)op->in[0]->data, *b = (const int8_t *)op->in[1]->data;
    int8_t *y = (int8_t *)op->out[0]->data;
    const int64_t n = ep_numel(op->out[0]);
    for (int64_t i = 0; i < n; i++) y[i] = ep_qadd1(p, a[i], b[i]);
    return EP_OK;
}

int ep_ref_qlut_i8(const ep_op *op) {
    const int8_t *x = (const int8_t *)op->in[0]->data, *t = (const int8_t *)op->in[1]->data;
    int8_t *y = (int8_t *)op->out[0]->data;
    const int64_t n = ep_numel(op->out[0]);
    for (int64_t i = 0; i < n; i++) y[i] = t[x[i] + 128];
    return EP_OK;
}

/* QUANTIZE_ROWS: each row's codes against its own largest magnitude (plan_format.h "Dynamic int8"). */
int ep_ref_quantize_rows_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0];
    const int64_t M = xt->dims[0], K = xt->dims[1];
    const float *x = (const float *)xt->data;
    int8_t *q = (int8_t *)op->out[0]->data;
    float *s = (float *)op->out[1]->data;
    for (int64_t m = 0; m < M; m++) {
        const float *xr = x + m * K;
        ep_quantize_row(xr, K, q + m * K, s + m);
    }
    return EP_OK;
}

/* DQGEMM: the exact int32 products, then each output's float epilogue (ep_dq_out, quant_common.h). */
static int dqgemm(const ep_op *op) {
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *at = op->in[0], *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = yt->dims[1], K4 = rl_ceildiv(K, EP_QPACK_K);
    const int8_t *a = (const int8_t *)at->data, *b = (const int8_t *)op->in[2]->data;
    const float *sa = (const float *)op->in[1]->data, *sb = (const float *)op->in[3]->data;
    const ep_tensor *c = op->n_in > 4 ? op->in[4] : NULL, *r = op->n_in > 5 ? op->in[5] : NULL;
    float *y = (float *)yt->data;
    const int packed = op->variant == EP_DQGEMM_VARIANT_PACKED;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int32_t acc = 0;
            for (int64_t k = 0; k < K; k++) {
                const int8_t bv = packed ? b[((j / EP_QPACK_R * K4 + k / EP_QPACK_K) * EP_QPACK_R + j % EP_QPACK_R) *
                                                 EP_QPACK_K + k % EP_QPACK_K]
                                         : b[k * N + j];
                acc += a[i * K + k] * bv;
            }
            y[i * N + j] = ep_dq_out(p, acc, sa[i], sb[j], c, r, i, j, N);
        }
    return EP_OK;
}

int ep_ref_dqgemm_i8(const ep_op *op) { return dqgemm(op); }
int ep_ref_dqgemm_packed_i8(const ep_op *op) { return dqgemm(op); }
