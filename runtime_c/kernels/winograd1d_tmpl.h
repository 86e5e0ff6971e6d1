/* Winograd F(m, r) along W (CONV2D variant WINOGRAD_1D, plan_format.h; m = 9 - r, 3 <= r <= 7), compiled once
 * per ISA after kernels/pack_tmpl.h (its GEMM and micro-kernel), exported as EP_ISA_FN(conv2d_winograd1d_f32).
 *
 * A 1-D convolution of r taps (a TTS decoder's or a WaveNet's, dilated or not) costs r multiplies per output and
 * input channel; here 8 per m outputs: 2.25x fewer for r = 3, 2.5x for r = 4 and 5, 1.75x for r = 7. Per tile of
 * m outputs (dw apart: a dilated convolution is dw interleaved undilated ones), V = B^T z of its 8 inputs, then
 * 8 independent GEMMs Mo[xi] = U[xi] V[xi] over the channels (U = G g, transformed and packed by the compiler as
 * [8][ceil(M/MR)][C][MR]), then the m outputs A^T Mo, + bias, + residual, activation. Tiles (row-major over H,
 * then along W) are processed in blocks of Tb (a multiple of NR) that fit the scratch:
 *   V  [8][Tb/NR][C][NR]   transformed input, in the GEMM's strip layout
 *   Mo [8][Mp][Tb]         GEMM results (Mp = ceil(M/MR)*MR)
 * The transforms run on NR tiles at a time along the contiguous tile axis (kernels/winograd_common.h), so they
 * vectorise on every ISA; the outputs of a strip go through a buffer (bias, residual, then the activation over
 * it) before they are scattered to their rows. Threads: three parallel phases per block, each writing disjoint
 * parts of the shared scratch (input by (strip, channel), the 8 GEMMs by point, output by output channel), so
 * every value is computed as with one thread. */
#include "winograd_tmpl.h"   /* wg_gemm: the GEMM task and block loop both drivers share */

typedef struct w1_job {
    wg_gemm g;   /* first: the GEMM task and block loop read it */
    const ep_conv2d_params *p;
    const float *x, *bias, *res;
    float *y;
    int64_t H, W, OW, TW, m, dw;
} w1_job;

/* The first output of each of the nt tiles from tile t (o0[k], OW or past it for none) and its row's offset
 * (row[k] = h * OW): one division for the strip, then tile by tile; tiles past nt get o0 = OW. */
static void w1_strip_tiles(const w1_job *j, int64_t t, int64_t nt, int64_t *o0, int64_t *row) {
    int64_t h = t / j->TW, u = t % j->TW, b = u / j->dw, ph = u % j->dw;
    for (int64_t k = 0; k < PK_NR; k++) {
        o0[k] = k < nt ? b * j->m * j->dw + ph : j->OW;
        row[k] = h * j->OW;
        if (++ph == j->dw) ph = 0, b++;
        if (++u == j->TW) u = 0, b = 0, ph = 0, h++;
    }
}

static void w1_input_task(void *ctx, uint32_t task) {   /* V for (strip, channel) pairs */
    const w1_job *j = (const w1_job *)ctx;
    int64_t lo, hi;
    ep_split_range(j->g.ns * j->g.C, j->g.parts, task, &lo, &hi);
    const int64_t vstride = j->g.ns * j->g.C * PK_NR, pl = j->p->pads[1], dw = j->dw, plane = j->H * j->W;
    int64_t o0[PK_NR], row[PK_NR], s_at = -1, nt = 0;
    for (int64_t q = lo; q < hi; q++) {
        const int64_t s = q / j->g.C, c = q % j->g.C;
        if (s != s_at) {   /* the strip's tiles, once for its channels */
            s_at = s, nt = pk_min(PK_NR, j->g.nb - s * PK_NR);
            w1_strip_tiles(j, j->g.t0 + s * PK_NR, nt, o0, row);
            for (int64_t k = 0; k < PK_NR; k++) row[k] = row[k] / j->OW * j->W;   /* the row in X */
        }
        const float *xc = j->x + c * plane;
        float z[8][PK_NR], v[8][PK_NR];
        for (int64_t k = 0; k < PK_NR; k++) {
            const int64_t iw0 = o0[k] - pl;
            const float *xr = xc + row[k];
            if (k >= nt) {
                for (int e = 0; e < 8; e++) z[e][k] = 0.0f;
            } else if (iw0 >= 0 && iw0 + 7 * dw < j->W) {
                for (int e = 0; e < 8; e++) z[e][k] = xr[iw0 + e * dw];
            } else {
                for (int e = 0; e < 8; e++) {
                    const int64_t iw = iw0 + e * dw;
                    z[e][k] = iw >= 0 && iw < j->W ? xr[iw] : 0.0f;
                }
            }
        }
        for (int64_t k = 0; k < PK_NR; k++) W1_BT(&z[0][k], PK_NR, &v[0][k], PK_NR);
        float *d = j->g.V + (s * j->g.C + c) * PK_NR;
        for (int e = 0; e < 8; e++)
            for (int64_t k = 0; k < PK_NR; k++) d[e * vstride + k] = v[e][k];
    }
}

static void w1_output_task(void *ctx, uint32_t task) {   /* Y for a range of output channels */
    const w1_job *j = (const w1_job *)ctx;
    int64_t lo, hi;
    ep_split_range(j->g.M, j->g.parts, task, &lo, &hi);
    const int64_t mst = j->g.Mp * j->g.Tb, m = j->m, dw = j->dw, plane = j->H * j->OW;
    const ep_conv2d_params *p = j->p;
    for (int64_t s = 0; s < j->g.ns; s++) {
        const int64_t nt = pk_min(PK_NR, j->g.nb - s * PK_NR);
        int64_t o0[PK_NR], row[PK_NR];
        w1_strip_tiles(j, j->g.t0 + s * PK_NR, nt, o0, row);
        for (int64_t mm = lo; mm < hi; mm++) {
            const float bias = j->bias ? j->bias[mm] : 0.0f;
            float *y = j->y + mm * plane;
            const float *res = j->res ? j->res + mm * plane : NULL;
            const float *mo = j->g.Mo + mm * j->g.Tb + s * PK_NR;
            float buf[6 * PK_NR];
            for (int i = 0; i < m; i++)
                for (int64_t k = 0; k < PK_NR; k++) buf[i * PK_NR + k] = w1_at(mo + k, mst, i, (int)m) + bias;
            if (res)
                for (int i = 0; i < m; i++)
                    for (int64_t k = 0; k < nt; k++)
                        if (o0[k] + i * dw < j->OW) buf[i * PK_NR + k] += res[row[k] + o0[k] + i * dw];
            if (p->act != EP_ACT_NONE) EP_ISA_ACT_APPLY(p->act, buf, m * PK_NR, p->act_alpha, p->act_beta);
            for (int64_t k = 0; k < nt; k++)
                for (int i = 0; i < m && o0[k] + i * dw < j->OW; i++) y[row[k] + o0[k] + i * dw] = buf[i * PK_NR + k];
        }
    }
}

int EP_ISA_FN(conv2d_winograd1d_f32)(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *ut = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OW = yt->dims[3];
    const int64_t panels = ut->dims[1], Mp = panels * PK_MR, m = 9 - p->kernel[1], dw = p->dilation[1];
    if (N == 0 || H == 0 || OW == 0) return EP_OK;
    const int64_t TW = (OW + m * dw - 1) / (m * dw) * dw, T = H * TW;
    const int64_t per_tile = 8 * (C + Mp) * 4;
    const int64_t Tb = pk_min((int64_t)(op->scratch_size / (uint64_t)per_tile) / PK_NR, (T + PK_NR - 1) / PK_NR) * PK_NR;
    float *V = (float *)op->scratch, *Mo = V + 8 * C * Tb;
    struct ep_pool *pool = op->pool;
    w1_job j = {{(const float *)ut->data, V, Mo, C, M, panels, Mp, Tb, 0, 0, 0, 1}, p, NULL,
                bt ? (const float *)bt->data : NULL, NULL, NULL, H, W, OW, TW, m, dw};
    const int64_t th = ep_pool_threads_for(pool, (uint64_t)N * 8 * (uint64_t)M * (uint64_t)C * (uint64_t)T);
    for (int64_t n = 0; n < N; n++) {
        j.x = (const float *)xt->data + n * C * H * W;
        j.y = (float *)yt->data + n * M * H * OW;
        j.res = rt ? (const float *)rt->data + n * M * H * OW : NULL;
        wg_run_blocks(pool, th, &j.g, T, 8, w1_input_task, w1_output_task);
    }
    return EP_OK;
}
