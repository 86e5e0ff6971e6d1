/* NEON kernel of CONV2D variant BLOCKED_CONV (plan_format.h): a dense convolution (groups 1), any kernel,
 * stride, dilation and pads, Y and R in C8, X in C8 or PLAIN (a stem), W^T as GEMM-B strips [ceil(M/16)][K][16].
 *
 * Direct convolution, no im2col, organised as the AVX2 kernel (kernels/x86/blocked_conv_f32.c: row and column
 * tiles, the tap box of each, k-blocks, tasks): every output receives its valid taps in W^T's row order with
 * FMA from 0, then the bias, the residual and the activation, whatever the thread count. Register tiles: 6
 * pixels x 16 channels (24 accumulators) or 8 x 8 for a strip with 8 real columns (M = 8 mod 16). For a C8 X a
 * tap's 8 channels of a pixel are two q registers, used by lane (FMLA by element); for a PLAIN X each pixel's
 * value is loaded replicated (LD1R). B is a 16-column row of W^T, four q loaded two at a time. */
#include <arm_neon.h>
#include "neon.h"
#include "neon_act.h"

#define BLK EP_LAYOUT_BLOCK
#define BC_NR EP_PACK_NR
#define BC_KR 256        /* rows of W^T per k-block (at least one unit) */
#define BC_PC 192        /* output pixels per row chunk, about (6 rows at least) */

typedef struct bc_job {
    const float *x, *w, *b, *r;
    float *y;
    int64_t H, W, M, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t lanes, units, K;     /* channels per unit (8: C8 X, 1: PLAIN X), units per image, rows of W^T */
    int64_t ow_lo, ow_hi;        /* the columns whose taps all lie inside X */
    int64_t strips, chunks, groups, nkb;
    const ep_conv2d_params *p;
} bc_job;

/* One tile: x at its first pixel's first valid tap (kh0, kw0) in the k-block's first unit, the next pixel xps
 * floats further; nu units (xcs apart in X, wcs in W^T), nkh valid kh (xrs, wrs apart), nkw valid kw (xks apart
 * in X, lanes * 16 floats in W^T); w at the row of that tap in the strip. y (and r) at the tile's first output
 * block, the next pixel yps floats further, the second block ys. */
typedef struct bc_tile {
    const float *x, *w, *b, *r;
    float *y;
    int64_t xps, nu, xcs, wcs, nkh, xrs, wrs, nkw, xks, yps, ys;
    int first, last;
    const ep_conv2d_params *p;
} bc_tile;

/* The tile of np pixels x nb blocks, lanes channels per unit (compile-time constants); kwc: a->nkw as a
 * compile-time constant, or 0. */
NEON_INLINE void bc_tile_n(const int np, const int nb, const int lanes, const int kwc, const bc_tile *a) {
    const float *x = a->x, *w = a->w;
    const int64_t xps = a->xps, nu = a->nu, xcs = a->xcs, wcs = a->wcs, nkh = a->nkh, xrs = a->xrs, wrs = a->wrs;
    const int64_t nkw = kwc ? kwc : a->nkw, xks = a->xks, yps = a->yps, ys = a->ys;
    float *y = a->y;
    float32x4_t acc[8][4], av[8];
#pragma GCC unroll 8
    for (int i = 0; i < np; i++)
#pragma GCC unroll 4
        for (int q = 0; q < 2 * nb; q++)
            acc[i][q] = a->first ? vdupq_n_f32(0.0f) : vld1q_f32(y + (q / 2) * ys + i * yps + (q % 2) * 4);
    for (int64_t u = 0; u < nu; u++, x += xcs, w += wcs) {
        const float *xr = x, *wr = w;
        for (int64_t kh = 0; kh < nkh; kh++, xr += xrs, wr += wrs) {
            const float *xk = xr, *wk = wr;
#pragma GCC unroll 7
            for (int64_t kw = 0; kw < nkw; kw++, xk += xks, wk += lanes * BC_NR) {
                if (lanes == 1) {   /* one channel: each pixel's value replicated */
                    const float32x4_t b0 = vld1q_f32(wk), b1 = vld1q_f32(wk + 4);
                    const float32x4_t b2 = nb > 1 ? vld1q_f32(wk + 8) : b0, b3 = nb > 1 ? vld1q_f32(wk + 12) : b1;
#pragma GCC unroll 8
                    for (int i = 0; i < np; i++) {
                        const float32x4_t v = vld1q_dup_f32(xk + i * xps);
                        acc[i][0] = vfmaq_f32(acc[i][0], b0, v);
                        acc[i][1] = vfmaq_f32(acc[i][1], b1, v);
                        if (nb > 1) {
                            acc[i][2] = vfmaq_f32(acc[i][2], b2, v);
                            acc[i][3] = vfmaq_f32(acc[i][3], b3, v);
                        }
                    }
                    continue;
                }
#pragma GCC unroll 2
                for (int h = 0; h < BLK; h += 4) {   /* 8 channels: 4 at a time, by lane */
#pragma GCC unroll 8
                    for (int i = 0; i < np; i++) av[i] = vld1q_f32(xk + i * xps + h);
                    const float *wh = wk + h * BC_NR;
#define BC_K(L)                                                                                                        \
                    {                                                                                                  \
                        const float32x4_t b0 = vld1q_f32(wh + L * BC_NR), b1 = vld1q_f32(wh + L * BC_NR + 4);          \
                        _Pragma("GCC unroll 8") for (int i = 0; i < np; i++) {                                         \
                            acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, av[i], L);                                      \
                            acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, av[i], L);                                      \
                        }                                                                                              \
                        if (nb > 1) {                                                                                  \
                            const float32x4_t b2 = vld1q_f32(wh + L * BC_NR + 8), b3 = vld1q_f32(wh + L * BC_NR + 12); \
                            _Pragma("GCC unroll 8") for (int i = 0; i < np; i++) {                                     \
                                acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, av[i], L);                                  \
                                acc[i][3] = vfmaq_laneq_f32(acc[i][3], b3, av[i], L);                                  \
                            }                                                                                          \
                        }                                                                                              \
                    }
                    BC_K(0) BC_K(1) BC_K(2) BC_K(3)
#undef BC_K
                }
            }
        }
    }
    const ep_conv2d_params *p = a->p;
    const int last = a->last, vec = neon_act_vector(p->act);
#pragma GCC unroll 2
    for (int j = 0; j < nb; j++) {
        const float *b = a->b;
        const float32x4_t b0 = b ? vld1q_f32(b + j * BLK) : vdupq_n_f32(0.0f), b1 = b ? vld1q_f32(b + j * BLK + 4) : b0;
#pragma GCC unroll 8
        for (int i = 0; i < np; i++) {
            const int64_t at = j * ys + i * yps;
            float32x4_t v0 = acc[i][2 * j], v1 = acc[i][2 * j + 1];
            if (last) {
                if (b) v0 = vaddq_f32(v0, b0), v1 = vaddq_f32(v1, b1);
                if (a->r) v0 = vaddq_f32(v0, vld1q_f32(a->r + at)), v1 = vaddq_f32(v1, vld1q_f32(a->r + at + 4));
                if (vec) {
                    v0 = neon_act4(p->act, p->act_alpha, p->act_beta, v0);
                    v1 = neon_act4(p->act, p->act_alpha, p->act_beta, v1);
                }
            }
            vst1q_f32(y + at, v0), vst1q_f32(y + at + 4, v1);
            if (last && !vec) ep_neon_act_apply(p->act, y + at, BLK, p->act_alpha, p->act_beta);
        }
    }
}

#define BC_TILES(NAME, LANES)                                                 \
    static void NAME##2(int np, const bc_tile *a) {                           \
        switch (np) {                                                         \
        case 1: bc_tile_n(1, 2, LANES, 0, a); return;                         \
        case 2: bc_tile_n(2, 2, LANES, 0, a); return;                         \
        case 3: bc_tile_n(3, 2, LANES, 0, a); return;                         \
        case 4: bc_tile_n(4, 2, LANES, 0, a); return;                         \
        case 5: bc_tile_n(5, 2, LANES, 0, a); return;                         \
        default:                                                              \
            if (LANES == 1 && a->nkw == 3) bc_tile_n(6, 2, LANES, 3, a);      \
            else if (LANES == 1 && a->nkw == 7) bc_tile_n(6, 2, LANES, 7, a); \
            else bc_tile_n(6, 2, LANES, 0, a);                                \
            return;                                                           \
        }                                                                     \
    }                                                                         \
        static void NAME##1(int np, const bc_tile *a) {                       \
        switch (np) {                                                         \
        case 1: bc_tile_n(1, 1, LANES, 0, a); return;                         \
        case 2: bc_tile_n(2, 1, LANES, 0, a); return;                         \
        case 3: bc_tile_n(3, 1, LANES, 0, a); return;                         \
        case 4: bc_tile_n(4, 1, LANES, 0, a); return;                         \
        case 5: bc_tile_n(5, 1, LANES, 0, a); return;                         \
        case 6: bc_tile_n(6, 1, LANES, 0, a); return;                         \
        case 7: bc_tile_n(7, 1, LANES, 0, a); return;                         \
        default: bc_tile_n(8, 1, LANES, 0, a); return;                        \
        }                                                                     \
    }
BC_TILES(bc_c8_, 8)
BC_TILES(bc_plain_, 1)
#undef BC_TILES

static inline int64_t bc_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* The taps k in [0, K) with 0 <= i0 + k*d < L: [*k0, *k1) (empty: *k0 == *k1). */
static inline void bc_valid(int64_t i0, int64_t d, int64_t K, int64_t L, int64_t *k0, int64_t *k1) {
    const int64_t lo = i0 >= 0 ? 0 : (-i0 + d - 1) / d, hi = i0 > L - 1 ? 0 : bc_min(K, (L - 1 - i0) / d + 1);
    *k0 = bc_min(lo, K), *k1 = hi > *k0 ? hi : *k0;
}

/* One tile of np pixels from output (oh, ow), the next pixel (down = 0) to the right or (down = 1) below, with
 * the tap box [kh0, kh0 + a->nkh) x [kw0, kw0 + a->nkw); x and w at the k-block's first unit, y and r at
 * image n's strip. */
static void bc_one(const bc_job *j, bc_tile *a, int nb, int np, int down, int64_t oh, int64_t ow, int64_t kh0,
                   int64_t kw0, const float *x, const float *w, float *y, const float *r) {
    const int64_t L = j->lanes, ih = oh * j->sh - j->pt + kh0 * j->dh, iw = ow * j->sw - j->pl + kw0 * j->dw;
    const int64_t at = (oh * j->OW + ow) * BLK;
    a->x = a->nkh && a->nkw ? x + (ih * j->W + iw) * L : x;   /* no valid tap: x is not read */
    a->w = w + (kh0 * j->KW + kw0) * L * BC_NR;
    a->xps = down ? j->sh * j->W * L : j->sw * L;
    a->yps = down ? j->OW * BLK : BLK;
    a->y = y + at;
    a->r = r ? r + at : NULL;
    if (L == BLK) {
        if (nb == 2) bc_c8_2(np, a);
        else bc_c8_1(np, a);
    } else {
        if (nb == 2) bc_plain_2(np, a);
        else bc_plain_1(np, a);
    }
}

/* Strip s of image n's output rows [r0, r1) over the k-block of units [u0, u0 + nu). */
static void bc_strip(const bc_job *j, int64_t n, int64_t s, int64_t r0, int64_t r1, int64_t u0, int64_t nu, int first,
                     int last) {
    const int64_t L = j->lanes, KH = j->KH, KW = j->KW, OW = j->OW, m0 = s * BC_NR;
    const int64_t yoff = (n * j->M + m0) * j->OH * OW;   /* the strip's first block (M is a multiple of 8) */
    const int nb = j->M - m0 >= BC_NR ? 2 : 1, tn = nb == 2 ? 6 : 8;
    const float *x = j->x + (n * j->units + u0) * j->H * j->W * L, *w = j->w + (s * j->K + u0 * KH * KW * L) * BC_NR;
    const float *r = last && j->r ? j->r + yoff : NULL;
    float *y = j->y + yoff;
    bc_tile a = {.b = last && j->b ? j->b + m0 : NULL, .nu = nu, .xcs = j->H * j->W * L, .wcs = KH * KW * L * BC_NR,
                 .xrs = j->dh * j->W * L, .wrs = KW * L * BC_NR, .xks = j->dw * L, .ys = j->OH * OW * BLK,
                 .first = first, .last = last, .p = j->p};
    int64_t kh0, kh1, kw0, kw1;
    /* row tiles over the interior columns */
    for (int64_t oh = r0; oh < r1; oh++) {
        bc_valid(oh * j->sh - j->pt, j->dh, KH, j->H, &kh0, &kh1);
        a.nkh = kh1 - kh0, a.nkw = KW;
        for (int64_t ow = j->ow_lo; ow < j->ow_hi; ow += tn)
            bc_one(j, &a, nb, (int)bc_min(tn, j->ow_hi - ow), 0, oh, ow, kh0, 0, x, w, y, r);
    }
    /* column tiles over the border columns: runs of rows with one kh range */
    for (int64_t ow = 0; ow < OW; ow++) {
        if (ow == j->ow_lo) ow = j->ow_hi;
        if (ow >= OW) break;
        bc_valid(ow * j->sw - j->pl, j->dw, KW, j->W, &kw0, &kw1);
        a.nkw = kw1 - kw0;
        for (int64_t oh = r0; oh < r1;) {
            int64_t h0, h1, run = 1;
            bc_valid(oh * j->sh - j->pt, j->dh, KH, j->H, &kh0, &kh1);
            while (run < tn && oh + run < r1) {
                bc_valid((oh + run) * j->sh - j->pt, j->dh, KH, j->H, &h0, &h1);
                if (h0 != kh0 || h1 != kh1) break;
                run++;
            }
            a.nkh = kh1 - kh0;
            bc_one(j, &a, nb, (int)run, 1, oh, ow, kh0, kw0, x, w, y, r);
            oh += run;
        }
    }
}

/* Task t: image n, row chunk, strip range; every k-block of it. */
static void bc_task(void *ctx, uint32_t t) {
    const bc_job *j = (const bc_job *)ctx;
    const int64_t g = t % j->groups, ch = t / j->groups % j->chunks, n = t / j->groups / j->chunks;
    const ep_range sr = ep_task_range(j->strips, j->groups, (uint32_t)g);
    const ep_range rr = ep_task_range(j->OH, j->chunks, (uint32_t)ch);
    for (int64_t kb = 0; kb < j->nkb; kb++) {
        const ep_range kr = ep_task_range(j->units, j->nkb, (uint32_t)kb);
        for (int64_t s = sr.lo; s < sr.hi; s++)
            bc_strip(j, n, s, rr.lo, rr.hi, kr.lo, kr.hi - kr.lo, kb == 0, kb == j->nkb - 1);
    }
}

int ep_neon_conv2d_blocked_conv_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    if (N == 0 || M == 0 || OH == 0 || OW == 0) return EP_OK;
    const int64_t L = xt->layout == EP_LAYOUT_C8 ? BLK : 1, KH = p->kernel[0], KW = p->kernel[1];
    bc_job j = {(const float *)xt->data, (const float *)op->in[1]->data, bt ? (const float *)bt->data : NULL,
                rt ? (const float *)rt->data : NULL, (float *)yt->data, xt->dims[2], xt->dims[3], M, OH, OW, KH, KW,
                p->stride[0], p->stride[1], p->dilation[0], p->dilation[1], p->pads[0], p->pads[1], L, C / L,
                C * KH * KW, 0, 0, (M + BC_NR - 1) / BC_NR, 1, 1, 1, p};
    /* interior columns: ow*sw - pl >= 0 and ow*sw - pl + (KW-1)*dw <= W-1 */
    const int64_t span = (KW - 1) * j.dw, lo = (j.pl + j.sw - 1) / j.sw;
    j.ow_lo = bc_min(lo, OW);
    j.ow_hi = j.W - 1 + j.pl - span < 0 ? 0 : bc_min(OW, (j.W - 1 + j.pl - span) / j.sw + 1);
    if (j.ow_hi < j.ow_lo) j.ow_hi = j.ow_lo;
    const int64_t per_kb = (BC_KR / (KH * KW * L)) > 0 ? BC_KR / (KH * KW * L) : 1;   /* units per k-block */
    j.nkb = (j.units + per_kb - 1) / per_kb;
    if (j.nkb < 1) j.nkb = 1;   /* C = 0: the epilogue on empty sums */
    j.chunks = bc_min((OH + 5) / 6, (OH * OW + BC_PC - 1) / BC_PC);   /* 6 rows at least: tall column tiles */
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)N * (uint64_t)M * (uint64_t)OH * (uint64_t)OW *
                                                        (uint64_t)(j.K > 0 ? j.K : 1));
    if (T > 1) {   /* about 4 tasks per thread: more row chunks, then split the strips */
        const int64_t want = 4 * T;
        if (N * j.chunks < want) j.chunks = bc_min(OH, (want + N - 1) / N);
        const int64_t units = N * j.chunks;
        if (units < want) j.groups = bc_min(j.strips, (want + units - 1) / units);
    }
    ep_parallel_for(op->pool, (uint32_t)(N * j.chunks * j.groups), bc_task, &j);
    return EP_OK;
}
