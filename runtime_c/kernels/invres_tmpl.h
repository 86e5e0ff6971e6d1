/* INVRES driver (the fused inverted-residual block, ep_invres_params), compiled once per ISA: included by the
 * ISA's depthwise file after kernels/dwconv_tmpl.h, whose functions run the depthwise stage, with the 1x1
 * stages on the ISA's packed GEMM (EP_ISA_FN(pk_gemm_panels_f32), kernels/pack_tmpl.h). Exports
 * EP_ISA_FN(invres_f32).
 *
 * Each task owns one scratch slot (kernels/invres_common.h) and a contiguous range of bands, over the images
 * in order. Per band [o0, o1):
 *   1. expand: the rows of E the band reads that are not yet in the ring, as GEMMs reading X's rows in place
 *      (one per contiguous run of ring rows; a last partial strip of pixels is copied out, zero padded),
 *      writing the ring with bias and act;
 *   2. depthwise, channel by channel: the band's padded rows from the ring (or from X without expand) into the
 *      pad region, the band's output rows (dw_plane_rows) into channel e's row of dout;
 *   3. project: one GEMM over the band's pixels, reading dout in place, into Y's rows o0.., with bias,
 *      residual and act.
 * Every element goes through the same micro-kernel calls and the same depthwise row code as in the three
 * CONV2D ops (PACKED, DEPTHWISE, PACKED): the block equals them bit for bit, at any thread count and band. */
#include "invres_common.h"
#include "pack_common.h"

void EP_ISA_FN(pk_gemm_panels_f32)(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, const float *b,
                                   int64_t ldb, float *c, int64_t ldc, const pk_epi *e);

typedef struct ir_job {
    const ep_op *op;
    ir_geo g;
    ep_conv2d_params dwp;   /* the depthwise stage as the CONV2D it equals */
    int64_t parts;
} ir_job;

static void ir_task(void *ctx, uint32_t t) {
    const ir_job *j = (const ir_job *)ctx;
    const ir_geo *g = &j->g;
    const ep_op *op = j->op;
    const ep_invres_params *p = (const ep_invres_params *)op->params;
    const ep_tensor *bet = op->in[2], *bdt = op->in[4], *bpt = ep_op_in(op, 6), *rt = ep_op_in(op, 7);
    const float *x = (const float *)op->in[0]->data, *wd = (const float *)op->in[3]->data;
    const void *we = g->expand ? op->in[1]->data : NULL, *wp = op->in[5]->data;   /* f32, f16 or bf16 */
    const int we_dt = g->expand ? op->in[1]->dtype : EP_DTYPE_F32, wp_dt = op->in[5]->dtype;
    const float *bd = bdt ? (const float *)bdt->data : NULL;
    float *y = (float *)op->out[0]->data;
    const int64_t C = g->C, H = g->H, W = g->W, CE = g->CE, M = g->M, OH = g->OH, OW = g->OW, RR = g->RR;
    float *slot = (float *)op->scratch + (int64_t)t * g->slot;
    float *ring = slot + g->ring, *pexp = slot + g->pexp, *pad = slot + g->pad, *dout = slot + g->dout;
    const ep_range r = ep_task_range(g->N * g->bands, j->parts, t);
    dw_tail tail;
    dw_tail_init(&tail, OW);
    int64_t kwo[32];
    const int small = dw_tap_offsets(kwo, &j->dwp, g->PW);
    const pk_epi ee = {bet ? (const float *)bet->data : NULL, NULL, 0, NULL, 0, p->act[0], p->act_alpha[0],
                       p->act_beta[0]};
    int64_t image = -1, done = 0;   /* E's rows [.., done) of this image are in the ring */
    int64_t filled = 0;             /* pad rows [0, filled) were filled once (their side columns are zero) */
    for (int64_t b = r.lo; b < r.hi; b++) {
        const int64_t n = b / g->bands, o0 = b % g->bands * g->band;
        const int64_t o1 = o0 + g->band < OH ? o0 + g->band : OH, nb = o1 - o0, np = nb * OW;
        const float *xn = x + n * C * H * W;
        if (n != image) image = n, done = 0;
        int64_t lo, hi;
        ir_rows(g, o0, o1, &lo, &hi);
        if (we) {
            for (int64_t a = done > lo ? done : lo; a < hi;) {
                const int64_t pos = a % RR, seg = hi - a < RR - pos ? hi - a : RR - pos, px = seg * W;
                const int64_t full = px / PK_NR * PK_NR;
                if (full > 0) EP_ISA_FN(pk_gemm_panels_f32)(CE, full, C, we, we_dt, xn + a * W, H * W, ring + pos * W, RR * W, &ee);
                if (px > full) {
                    pk_pack_plain(pexp, xn + a * W, 1, full, px, C, H * W);
                    EP_ISA_FN(pk_gemm_panels_f32)(CE, px - full, C, we, we_dt, pexp, PK_NR, ring + pos * W + full, RR * W, &ee);
                }
                a += seg;
            }
            if (hi > done) done = hi;
        }
        const int64_t nr = (nb - 1) * g->sh + (g->KH - 1) * g->dh + 1;
        for (int64_t e = 0; e < CE; e++) {
            /* channel 0 refills the band's rows (rows filled before have zero side columns); the others find
             * the band's rows outside the input zero too */
            const int zeroed = e > 0 ? 2 : nr <= filled;
            if (we)
                dw_fill(pad, ring + e * RR * W, RR, H, W, o0 * g->sh, nr, g->sw, g->PW, g->pt, g->pl, zeroed);
            else
                dw_fill(pad, xn + e * H * W, 0, H, W, o0 * g->sh, nr, g->sw, g->PW, g->pt, g->pl, zeroed);
            if (nr > filled) filled = nr;
            float *de = dout + e * g->PP;
            dw_plane_rows(pad, wd + e * g->KH * g->KW, DV_SET1(bd ? bd[e] : 0.0f), de, NULL, nb, OW, g->PW, kwo,
                          small, &tail, &j->dwp);
            for (int64_t i = np; i < (np + PK_NR - 1) / PK_NR * PK_NR; i++) de[i] = 0.0f;   /* the GEMM reads whole strips */
        }
        const int64_t at = n * M * OH * OW + o0 * OW;
        const pk_epi ep = {bpt ? (const float *)bpt->data : NULL, NULL, 0, rt ? (const float *)rt->data + at : NULL,
                           OH * OW, p->act[2], p->act_alpha[2], p->act_beta[2]};
        EP_ISA_FN(pk_gemm_panels_f32)(M, np, CE, wp, wp_dt, dout, g->PP, y + at, OH * OW, &ep);
    }
}

int EP_ISA_FN(invres_f32)(const ep_op *op) {
    const ep_invres_params *p = (const ep_invres_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    ir_job j;
    j.op = op;
    ir_geo_init(&j.g, p, xt->dims[0], xt->dims[1], xt->dims[2], xt->dims[3], op->in[3]->dims[0], yt->dims[1],
                yt->dims[2], yt->dims[3], op->in[1] != NULL);
    const ir_geo *g = &j.g;
    const int64_t units = g->N * g->bands;
    if (units == 0) return EP_OK;
    const ep_conv2d_params dwp = {{p->kernel[0], p->kernel[1]}, {p->stride[0], p->stride[1]},
                                  {p->dilation[0], p->dilation[1]}, {p->pads[0], p->pads[1], p->pads[2], p->pads[3]},
                                  (int32_t)g->CE, p->act[1], p->act_alpha[1], p->act_beta[1]};
    j.dwp = dwp;
    const uint64_t macs = (uint64_t)g->N * (uint64_t)(g->OH * g->OW) *
                          (uint64_t)(g->CE * (g->C + g->KH * g->KW + g->M));
    int64_t parts = ep_pool_threads_for(op->pool, macs);
    const int64_t slots = (int64_t)(op->scratch_size / ((uint64_t)g->slot * 4));
    if (parts > slots) parts = slots;
    if (parts > units) parts = units;
    j.parts = parts < 1 ? 1 : parts;
    ep_parallel_for(op->pool, (uint32_t)j.parts, ir_task, &j);
    return EP_OK;
}
