/* Shared by the INVRES shape function, its reference kernel and the ISA drivers (kernels/invres_tmpl.h): the
 * band geometry and the layout of one scratch slot (plan_format.h, ep_invres_params).
 *
 * The op runs output rows in bands of `band` rows. Band [o0, o1) of image n needs the rows
 * [o0*sh - pt, (o1-1)*sh - pt + (KH-1)*dh + 1) of E (the expanded tensor), clipped to [0, H). A task keeps the
 * last RR of E's rows in a ring (row r of E in ring row r % RR), so consecutive bands compute each row of E
 * once; a task starting at a band recomputes the rows of E that the band before it (another task's) shared.
 * Slot layout, in floats, in this order:
 *   ring  CE * RR * W        E's rows, channel by channel (with WE only: without, E is X)
 *   pexp  C * NR             the last NR-pixel strip of X's rows an expand GEMM reads when it is partial,
 *                            zero padded (with WE only: the GEMM reads whole strips of X in place)
 *   pad   RP * sw * PW       one channel of the band's padded, phase-split rows (kernels/dw_common.h)
 *   dout  CE * PP            D of the band, channel e's rows at e * PP: the project GEMM's B in place */
#ifndef EP_INVRES_COMMON_H
#define EP_INVRES_COMMON_H

#include "ep_kernel.h"

typedef struct ir_geo {
    int64_t N, C, H, W, CE, M, OH, OW;
    int64_t KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t band, bands;         /* output rows per band; bands per image */
    int64_t RP, RR, PW, PP;      /* padded rows per band, ring rows, padded row width, D's row stride */
    int64_t ring, pexp, pad, dout, slot;   /* float offsets in a slot, and its size */
    int expand;
} ir_geo;

/* a * b for non-negative operands, -1 past 2^46 (or for a negative operand) */
static inline int64_t ir_mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > ((int64_t)1 << 46) / a) return -1;
    return a * b;
}
static inline int64_t ir_add(int64_t a, int64_t b) {
    return a < 0 || b < 0 || a > ((int64_t)1 << 46) - b ? -1 : a + b;
}
static inline int64_t ir_round_up(int64_t a, int64_t m) { return a < 0 ? -1 : ir_mul((a + m - 1) / m, m); }

/* Fills g from the operand extents (X[N,C,H,W], output [N,M,OH,OW], CE expanded channels) and p; the slot
 * size in floats is g->slot, -1 when it overflows. Extents and params are already range-checked. */
static inline void ir_geo_init(ir_geo *g, const ep_invres_params *p, int64_t N, int64_t C, int64_t H, int64_t W,
                               int64_t CE, int64_t M, int64_t OH, int64_t OW, int expand) {
    g->N = N, g->C = C, g->H = H, g->W = W, g->CE = CE, g->M = M, g->OH = OH, g->OW = OW;
    g->KH = p->kernel[0], g->KW = p->kernel[1], g->sh = p->stride[0], g->sw = p->stride[1];
    g->dh = p->dilation[0], g->dw = p->dilation[1], g->pt = p->pads[0], g->pl = p->pads[1];
    g->expand = expand;
    g->band = p->band < OH ? p->band : (OH > 0 ? OH : 1);
    g->bands = OH > 0 ? (OH + g->band - 1) / g->band : 0;
    g->RP = (g->band - 1) * g->sh + (g->KH - 1) * g->dh + 1;
    g->RR = g->RP < H ? g->RP : H;
    g->PW = ir_add(ir_round_up(OW, 16), (g->KW - 1) * g->dw / g->sw);
    g->PP = ir_round_up(ir_mul(g->band, OW), EP_PACK_NR);
    const int64_t ring = expand ? ir_mul(ir_mul(CE, g->RR), W) : 0;
    const int64_t pexp = expand ? ir_mul(C, EP_PACK_NR) : 0;
    const int64_t pad = ir_mul(ir_mul(g->RP, g->sw), g->PW);
    const int64_t dout = ir_mul(CE, g->PP);
    g->ring = 0;
    g->pexp = ring;
    g->pad = ir_add(g->pexp, pexp);
    g->dout = ir_add(g->pad, pad);
    g->slot = ir_add(g->dout, dout);
    if (ring < 0 || pexp < 0 || pad < 0 || dout < 0) g->slot = -1;
}

/* Rows [*lo, *hi) of E that output rows [o0, o1) read (clipped to the input). */
static inline void ir_rows(const ir_geo *g, int64_t o0, int64_t o1, int64_t *lo, int64_t *hi) {
    int64_t a = o0 * g->sh - g->pt, b = (o1 - 1) * g->sh - g->pt + (g->KH - 1) * g->dh + 1;
    *lo = a < 0 ? 0 : a;
    *hi = b > g->H ? g->H : b;
    if (*hi < *lo) *hi = *lo;
}

#endif
