/* Reference kernels of the pre-packed variants (plan_format.h layouts), reading the packed weights in place:
 * CONV2D PACKED, GEMM PACKED and ROWS, and CONV2D WINOGRAD. Any CPU runs a plan that uses the variants with
 * these; the ISA drivers (kernels/pack_tmpl.h, kernels/gemm_rows_tmpl.h, kernels/winograd_tmpl.h) override them.
 *
 * CONV2D PACKED: W as panels [G*ceil(Mg/MR)][K][MR], group g's panels g-th (G = groups, Mg = M/G), K = Cg*KH*KW
 *   in (c, kh, kw) order over the group's Cg = C/G input channels. Each output sums x * w over k = 0..K-1
 *   from 0.0f, a tap in the padding contributing x = 0 (the im2col of the packed driver),
 *   then adds B[m], then R, then applies act: for finite weights the order and the values of variant 0
 *   (ep_ref_conv2d_f32; the padded taps add +-0 to a sum, which changes no sum), so the two agree bit for bit.
 * 16-bit weights (1.7): CONV2D PACKED's W and GEMM PACKED's B may be F16 or BF16, each element converted
 *   exactly to float32 where it is read: the float32 result on the converted weights.
 * GEMM PACKED: B as strips [ceil(N/NR)][K][NR]; GEMM ROWS: B as its transpose [N][K]. Each output sums
 *   A[i,k] * B[k,j] over k from 0.0f, then adds C, then R, then applies act: ep_ref_gemm_f32's order, bit for bit.
 * CONV2D WINOGRAD F(4x4, 3x3) (3x3, stride 1, dilation 1, groups 1): per 4x4 output tile (row-major over the
 *   output) and channel, V = B^T d B of the 6x6 input patch d (zero outside the input); per output channel m
 *   and point xi of the 36, Mo[xi] = sum_c U[xi][m/MR][c][m%MR] * V_c[xi] from 0.0f in channel order; then
 *   Y = A^T Mo A (the transforms of kernels/winograd_common.h, rows then columns), + B[m] (0 when absent),
 *   + R, then act. The transforms' constants (up to 8) grow rounding: this is not variant 0's result (within
 *   ~1e-4 of it), but every float operation the ISA driver must repeat. Scratch: 36*C floats (the V of one tile). */
#include "ep_ops.h"
#include "ref_util.h"
#include "winograd_common.h"

/* CONV2D PACKED and POINTWISE: the im2col sum of every output, weight k of output channel m at
 * wm(m) + k * step (PACKED: MR-row panels per group; POINTWISE: W^T as NR-column strips, groups 1). */
static int ref_conv_laid_out(const ep_op *op, int pointwise) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3], K = wt->dims[1];
    const int64_t KH = p->kernel[0], KW = p->kernel[1], G = pointwise ? 1 : p->groups, Cg = C / G, Mg = M / G;
    const int64_t gpanels = (Mg + EP_PACK_MR - 1) / EP_PACK_MR, step = pointwise ? EP_PACK_NR : EP_PACK_MR;
    const float *x = (const float *)xt->data;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            const int64_t g = m / Mg, mg = m % Mg;
            const int64_t wm = pointwise ? (m / EP_PACK_NR) * K * EP_PACK_NR + m % EP_PACK_NR
                                         : (g * gpanels + mg / EP_PACK_MR) * K * EP_PACK_MR + mg % EP_PACK_MR;
            const int64_t plane = (n * M + m) * OH * OW;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float s = 0.0f;
                    for (int64_t c = g * Cg, k = 0; c < (g + 1) * Cg; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++, k++) {
                                const int64_t ih = oh * p->stride[0] - p->pads[0] + kh * p->dilation[0];
                                const int64_t iw = ow * p->stride[1] - p->pads[1] + kw * p->dilation[1];
                                const int in = ih >= 0 && ih < H && iw >= 0 && iw < W;
                                s += (in ? x[((n * C + c) * H + ih) * W + iw] : 0.0f) *
                                     ep_weight_f32(wt->data, wt->dtype, wm + k * step);
                            }
                    float *yo = y + plane + oh * OW + ow;
                    *yo = s;
                    if (b) *yo += b[m];
                    if (r) *yo += r[plane + oh * OW + ow];
                }
            if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, y + plane, OH * OW, p->act_alpha, p->act_beta);
        }
    return EP_OK;
}

int ep_ref_conv2d_packed_f32(const ep_op *op) { return ref_conv_laid_out(op, 0); }

/* CONV2D POINTWISE (groups 1): W^T as GEMM-B strips [ceil(M/NR)][K][NR], K = C*KH*KW in (c, kh, kw) order,
 * element (k, m) at (m / NR) * K * NR + k * NR + m % NR; PACKED's sums (k in order from 0.0f, a tap in the
 * padding contributing x = 0), so variant 0's values. */
int ep_ref_conv2d_pointwise_f32(const ep_op *op) { return ref_conv_laid_out(op, 1); }

/* GEMM PACKED and ROWS: B[k, j] at b + col(j) + k * k_step (PACKED: strips, ROWS: the rows of B's transpose). */
static int ref_gemm_laid_out(const ep_op *op, int rows) {
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *at = op->in[0], *bt = op->in[1], *ct = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = yt->dims[1];
    const float *a = (const float *)at->data;
    const float *c = ct ? (const float *)ct->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    /* a [1,N] or [N] bias is shared by every row; an [M,N] bias has its own rows */
    const int64_t c_row_stride = (ct && ct->rank == 2 && ct->dims[0] == M && M != 1) ? N : 0;
    const int64_t k_step = rows ? 1 : EP_PACK_NR;
    float *y = (float *)yt->data;
    for (int64_t i = 0; i < M; i++) {
        float *yr = y + i * N;
        for (int64_t j = 0; j < N; j++) {
            const int64_t bj = rows ? j * K : (j / EP_PACK_NR) * K * EP_PACK_NR + j % EP_PACK_NR;
            float s = 0.0f;
            for (int64_t k = 0; k < K; k++) s += a[i * K + k] * ep_weight_f32(bt->data, bt->dtype, bj + k * k_step);
            yr[j] = s;
        }
        rl_gemm_epilogue(yr, c ? c + i * c_row_stride : NULL, r ? r + i * N : NULL, N, p);
    }
    return EP_OK;
}

int ep_ref_gemm_packed_f32(const ep_op *op) { return ref_gemm_laid_out(op, 0); }
int ep_ref_gemm_rows_f32(const ep_op *op) { return ref_gemm_laid_out(op, 1); }

int ep_ref_conv2d_winograd_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *ut = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3], panels = ut->dims[1];
    const int64_t TW = (OW + 3) / 4, T = (OH + 3) / 4 * TW, pt = p->pads[0], pl = p->pads[1];
    const float *x = (const float *)xt->data, *u = (const float *)ut->data;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data, *V = (float *)op->scratch;   /* V[c][36] of one tile */
    for (int64_t n = 0; n < N; n++)
        for (int64_t t = 0; t < T; t++) {
            const int64_t oh0 = t / TW * 4, ow0 = t % TW * 4;
            for (int64_t c = 0; c < C; c++) {   /* V = B^T d B: rows, then columns */
                float d[36], rows[36];
                for (int i = 0; i < 6; i++)
                    for (int j = 0; j < 6; j++) {
                        const int64_t ih = oh0 - pt + i, iw = ow0 - pl + j;
                        const int in = ih >= 0 && ih < H && iw >= 0 && iw < W;
                        d[i * 6 + j] = in ? x[((n * C + c) * H + ih) * W + iw] : 0.0f;
                    }
                for (int i = 0; i < 6; i++) WG_BT(d + i * 6, 1, rows + i * 6, 1);
                for (int j = 0; j < 6; j++) WG_BT(rows + j, 6, V + c * 36 + j, 6);
            }
            for (int64_t m = 0; m < M; m++) {
                float mo[36], s[24], o[16];
                for (int xi = 0; xi < 36; xi++) {
                    const float *um = u + ((xi * panels + m / EP_PACK_MR) * C) * EP_PACK_MR + m % EP_PACK_MR;
                    float acc = 0.0f;
                    for (int64_t c = 0; c < C; c++) acc += um[c * EP_PACK_MR] * V[c * 36 + xi];
                    mo[xi] = acc;
                }
                for (int j = 0; j < 6; j++) WG_AT(mo + j, 6, s + j, 6);   /* Y = A^T Mo A: columns, then rows */
                for (int i = 0; i < 4; i++) WG_AT(s + i * 6, 1, o + i * 4, 1);
                const float bias = b ? b[m] : 0.0f;
                const int64_t nh = OH - oh0 < 4 ? OH - oh0 : 4, nw = OW - ow0 < 4 ? OW - ow0 : 4;
                for (int64_t i = 0; i < nh; i++) {
                    const int64_t at = ((n * M + m) * OH + oh0 + i) * OW + ow0;
                    for (int64_t j = 0; j < nw; j++) {
                        float v = o[i * 4 + j] + bias;
                        if (r) v += r[at + j];
                        y[at + j] = v;
                    }
                    if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, y + at, nw, p->act_alpha, p->act_beta);
                }
            }
        }
    return EP_OK;
}

/* CONV2D WINOGRAD_1D F(m, r) along W (plan_format.h; m = 9 - r): per row and tile of m outputs dw apart, V_c =
 * B^T z of the tile's 8 inputs z (kernels/winograd_common.h W1_BT); per output channel and point xi, Mo[xi] =
 * sum_c U[xi][m/MR][c][m%MR] * V_c[xi] from 0.0f in channel order; output i = w1_at(Mo, i), + B[m], + R, then
 * act. Within ~1e-6 of variant 0 relative to the outputs (the transforms' constants up to 32), not bit for bit.
 * Scratch: 8*C floats (the V of one tile). */
int ep_ref_conv2d_winograd1d_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *ut = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OW = yt->dims[3], panels = ut->dims[1];
    const int64_t dw = p->dilation[1], pl = p->pads[1], m = 9 - p->kernel[1];
    const int64_t TW = (OW + m * dw - 1) / (m * dw) * dw;
    const float *x = (const float *)xt->data, *u = (const float *)ut->data;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data, *V = (float *)op->scratch;   /* V[c][8] of one tile */
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t t = 0; t < TW; t++) {
                const int64_t o0 = t / dw * m * dw + t % dw;
                for (int64_t c = 0; c < C; c++) {
                    const float *xr = x + ((n * C + c) * H + h) * W;
                    float z[8];
                    for (int j = 0; j < 8; j++) {
                        const int64_t iw = o0 - pl + j * dw;
                        z[j] = iw >= 0 && iw < W ? xr[iw] : 0.0f;
                    }
                    W1_BT(z, 1, V + c * 8, 1);
                }
                for (int64_t mm = 0; mm < M; mm++) {
                    float mo[8];
                    for (int xi = 0; xi < 8; xi++) {
                        const float *um = u + ((xi * panels + mm / EP_PACK_MR) * C) * EP_PACK_MR + mm % EP_PACK_MR;
                        float acc = 0.0f;
                        for (int64_t c = 0; c < C; c++) acc += um[c * EP_PACK_MR] * V[c * 8 + xi];
                        mo[xi] = acc;
                    }
                    const float bias = b ? b[mm] : 0.0f;
                    float *yr = y + ((n * M + mm) * yt->dims[2] + h) * OW;
                    const float *rr = r ? r + ((n * M + mm) * yt->dims[2] + h) * OW : NULL;
                    for (int i = 0; i < m; i++) {
                        const int64_t o = o0 + i * dw;
                        if (o >= OW) break;
                        float v = w1_at(mo, 1, i, (int)m) + bias;
                        if (rr) v += rr[o];
                        yr[o] = v;
                        if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, yr + o, 1, p->act_alpha, p->act_beta);
                    }
                }
            }
    return EP_OK;
}
