/* Shape function of INVRES, the fused inverted-residual block (see ep_invres_params in plan_format.h).
 *
 * Inputs: X[N,C,H,W], WE (packed [ceil(CE/MR)][C][MR], or absent), BE[CE] (optional, only with WE),
 * WD[CE,1,KH,KW], BD[CE] (optional), WP (packed [ceil(M/MR)][CE][MR]), BP[M] (optional), R[N,M,OH,OW]
 * (optional); all f32, but WE and WP may be f16 or bf16 (1.7, plan_format.h "16-bit weights"). M is the declared output's; CE is WD's first extent (C without WE). Output
 * Y[N,M,OH,OW] with OH = floor((H + pad_t + pad_b - ((KH-1)*dh + 1)) / sh) + 1 (likewise OW), >= 1.
 *
 * Error codes: arity, a missing required input or a bias without its weights -> EP_ERR_PLAN_OP; a dtype other
 * than f32 or a wrong rank -> EP_ERR_PLAN_TENSOR; kernel, stride, dilation or band < 1, pads < 0 (any of
 * them past EP_PARAM_LIMIT) or an act that is not an epilogue EP_ACT_* -> EP_ERR_PLAN_PARAMS; extents that
 * disagree with each other, the params or the declared output, an empty output, or a scratch slot past 2^46
 * floats -> EP_ERR_PLAN_SHAPE. Scratch: one slot (kernels/invres_common.h) at least. */
#include <stdint.h>
#include "invres_common.h"
#include "shape_check.h"


/* a packed weight tensor [ceil(rows/MR)][k][MR] */
static int ir_packed(const ep_tensor *w, int64_t rows, int64_t k) {
    return w->dims[0] == (rows + EP_PACK_MR - 1) / EP_PACK_MR && w->dims[1] == k && w->dims[2] == EP_PACK_MR;
}

int ep_shape_invres(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 6 || op->n_in > 8 || op->n_out != 1 || !op->out || !op->out[0]) return EP_ERR_PLAN_OP;
    const ep_invres_params *p = (const ep_invres_params *)op->params;
    const ep_tensor *x = op->in[0], *we = op->in[1], *be = op->in[2], *wd = op->in[3], *bd = op->in[4];
    const ep_tensor *wp = op->in[5], *bp = ep_op_in(op, 6), *r = ep_op_in(op, 7), *y = op->out[0];
    if (!x || !wd || !wp || (be && !we)) return EP_ERR_PLAN_OP;
    int rc;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK || (we && (rc = ep_chk_weights(we, 3, 3)) != EP_OK) ||
        (be && (rc = ep_chk_f32(be, 1, 1)) != EP_OK) || (rc = ep_chk_f32(wd, 4, 4)) != EP_OK ||
        (bd && (rc = ep_chk_f32(bd, 1, 1)) != EP_OK) || (rc = ep_chk_weights(wp, 3, 3)) != EP_OK ||
        (bp && (rc = ep_chk_f32(bp, 1, 1)) != EP_OK) || (r && (rc = ep_chk_f32(r, 4, 4)) != EP_OK))
        return rc;
    if ((rc = ep_chk_window(p->kernel, p->stride, p->dilation, p->pads)) != EP_OK) return rc;
    if (!ep_param_in_range(p->band, 1)) return EP_ERR_PLAN_PARAMS;
    for (int i = 0; i < 3; i++)
        if (p->act[i] < 0 || p->act[i] >= EP_ACT_MATH_FIRST) return EP_ERR_PLAN_PARAMS;

    const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    const int64_t CE = wd->dims[0];
    if (y->rank != 4) return EP_ERR_PLAN_SHAPE;
    const int64_t M = y->dims[1];
    if (C < 1 || CE < 1 || M < 1 || (!we && CE != C)) return EP_ERR_PLAN_SHAPE;
    if (we && !ir_packed(we, CE, C)) return EP_ERR_PLAN_SHAPE;
    if ((be && be->dims[0] != CE) || (bd && bd->dims[0] != CE) || (bp && bp->dims[0] != M)) return EP_ERR_PLAN_SHAPE;
    if (wd->dims[1] != 1 || wd->dims[2] != p->kernel[0] || wd->dims[3] != p->kernel[1]) return EP_ERR_PLAN_SHAPE;
    if (!ir_packed(wp, M, CE)) return EP_ERR_PLAN_SHAPE;
    int64_t o[2];
    if ((rc = ep_window_out(p->kernel, p->stride, p->dilation, p->pads, x->dims + 2, 1, o)) != EP_OK) return rc;
    if (r && (r->dims[0] != N || r->dims[1] != M || r->dims[2] != o[0] || r->dims[3] != o[1])) return EP_ERR_PLAN_SHAPE;
    ir_geo g;
    ir_geo_init(&g, p, N, C, H, W, CE, M, o[0], o[1], we != NULL);
    if (g.slot < 0) return EP_ERR_PLAN_SHAPE;

    ep_shape_nchw(&out[0], N, M, o[0], o[1]);
    *scratch = N == 0 ? 0 : (uint64_t)g.slot * 4;
    return EP_OK;
}
