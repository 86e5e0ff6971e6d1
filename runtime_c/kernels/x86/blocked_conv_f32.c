/* AVX2+FMA kernel of CONV2D variant BLOCKED_CONV (plan_format.h): a dense convolution (groups 1), any kernel,
 * stride, dilation and pads, Y and R in C8, X in C8 or PLAIN (a stem), W^T as GEMM-B strips [ceil(M/16)][K][16].
 *
 * Direct convolution, no im2col: a register tile is np output pixels x 16 output channels (two C8 blocks of Y;
 * 6 x 16, 12 accumulators) or 12 x 8 for a strip with 8 real columns (M = 8 mod 16). The tile's pixels lie on
 * one line of the output, a row (pixel stride sw in X) or a column (stride sh rows), so that one tap (kh, kw)
 * reads the np pixels' inputs at a fixed stride: broadcast loads from X in place. X's "units" are its channel
 * blocks (C8: a tap has 8 channels, contiguous in X and consecutive rows of W^T) or its channels (PLAIN: a tap
 * has 1). The k loop of a tile runs over the units, the valid kh, the valid kw, then the unit's lanes, which is
 * W^T's row order, so every output receives its valid taps in one fixed order with FMA, from 0.
 * Borders: the taps valid for a pixel form a box [kh0, kh1) x [kw0, kw1). A row's pixels share the kh range; the
 * columns whose taps all lie inside X, [ow_lo, ow_hi), take row tiles; the border columns take column tiles
 * over runs of rows with the same kh range. Loop nest: k-blocks of whole units (BC_KR rows of W^T at most, or
 * one unit: they stay in L1), inside them the strips, inside those the tiles of a chunk of rows. A k-block that
 * is not the last stores its partial sums in Y and the next loads them (exact); the last adds the bias, the
 * residual and the activation, as the reference. Tasks are (image, row chunk, strip range): each output is
 * computed by one task with the same operations whatever the thread count. */
#include <immintrin.h>
#include "x86.h"
#include "x86_act.h"

#define BLK EP_LAYOUT_BLOCK
#define BC_NR EP_PACK_NR
#define BC_KR 256        /* rows of W^T per k-block (at least one unit) */
#define BC_PC 192        /* output pixels per row chunk, about (6 rows at least) */
#define BC_INLINE static inline __attribute__((always_inline))

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

/* The epilogue of a finished tile t[np][nb][8] (bias, residual, activation) and its stores, out of line. */
static __attribute__((noinline)) void bc_store(int np, int nb, const float *t, const bc_tile *a) {
    const ep_conv2d_params *p = a->p;
    const int act = p->act, vec = x86_act_vec(act);
    for (int j = 0; j < nb; j++) {
        const __m256 bv = a->b ? _mm256_loadu_ps(a->b + j * BLK) : _mm256_setzero_ps();
        for (int i = 0; i < np; i++) {
            const int64_t at = j * a->ys + i * a->yps;
            __m256 v = _mm256_loadu_ps(t + (i * nb + j) * BLK);
            if (a->b) v = _mm256_add_ps(v, bv);
            if (a->r) v = _mm256_add_ps(v, _mm256_loadu_ps(a->r + at));
            _mm256_storeu_ps(a->y + at, x86_act8(act, p->act_alpha, p->act_beta, v));
            if (!vec) ep_act_apply_f32(act, a->y + at, BLK, p->act_alpha, p->act_beta);
        }
    }
}

/* The tile of np pixels x nb blocks, lanes channels per unit (compile-time constants); kwc: a->nkw as a
 * compile-time constant, or 0. */
BC_INLINE void bc_tile_n(const int np, const int nb, const int lanes, const int kwc, const bc_tile *a) {
    const float *x = a->x, *w = a->w;
    const int64_t xps = a->xps, nu = a->nu, xcs = a->xcs, wcs = a->wcs, nkh = a->nkh, xrs = a->xrs, wrs = a->wrs;
    const int64_t nkw = kwc ? kwc : a->nkw, xks = a->xks, yps = a->yps, ys = a->ys;
    float *y = a->y;
    __m256 acc[12][2];
#pragma GCC unroll 12
    for (int i = 0; i < np; i++)
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++)
            acc[i][j] = a->first ? _mm256_setzero_ps() : _mm256_loadu_ps(y + j * ys + i * yps);
    for (int64_t u = 0; u < nu; u++, x += xcs, w += wcs) {
        const float *xr = x, *wr = w;
        for (int64_t kh = 0; kh < nkh; kh++, xr += xrs, wr += wrs) {
            const float *xk = xr, *wk = wr;
#pragma GCC unroll 7
            for (int64_t kw = 0; kw < nkw; kw++, xk += xks, wk += lanes * BC_NR) {
#pragma GCC unroll 8
                for (int ci = 0; ci < lanes; ci++) {
                    const __m256 b0 = _mm256_loadu_ps(wk + ci * BC_NR);
                    const __m256 b1 = nb > 1 ? _mm256_loadu_ps(wk + ci * BC_NR + 8) : b0;
#pragma GCC unroll 12
                    for (int i = 0; i < np; i++) {
                        const __m256 av = _mm256_broadcast_ss(xk + i * xps + ci);
                        acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
                        if (nb > 1) acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
                    }
                }
            }
        }
    }
    if (!a->last) {
#pragma GCC unroll 12
        for (int i = 0; i < np; i++)
#pragma GCC unroll 2
            for (int j = 0; j < nb; j++) _mm256_storeu_ps(y + j * ys + i * yps, acc[i][j]);
        return;
    }
    const ep_conv2d_params *p = a->p;
    if (p->act == EP_ACT_NONE || p->act == EP_ACT_RELU) {   /* the common epilogues in registers */
        const __m256 lo = p->act == EP_ACT_RELU ? _mm256_setzero_ps() : _mm256_set1_ps(-__builtin_inff());
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) {
            const __m256 bv = a->b ? _mm256_loadu_ps(a->b + j * BLK) : _mm256_setzero_ps();
#pragma GCC unroll 12
            for (int i = 0; i < np; i++) {
                __m256 v = _mm256_add_ps(acc[i][j], bv);
                if (a->r) v = _mm256_add_ps(v, _mm256_loadu_ps(a->r + j * ys + i * yps));
                _mm256_storeu_ps(y + j * ys + i * yps, _mm256_max_ps(lo, v));
            }
        }
        return;
    }
    float t[12 * 2 * BLK];
#pragma GCC unroll 12
    for (int i = 0; i < np; i++)
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) _mm256_storeu_ps(t + (i * nb + j) * BLK, acc[i][j]);
    bc_store(np, nb, t, a);
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
    static void NAME##1(int np, const bc_tile *a) {                           \
        switch (np) {                                                         \
        case 1: bc_tile_n(1, 1, LANES, 0, a); return;                         \
        case 2: bc_tile_n(2, 1, LANES, 0, a); return;                         \
        case 3: bc_tile_n(3, 1, LANES, 0, a); return;                         \
        case 4: bc_tile_n(4, 1, LANES, 0, a); return;                         \
        case 5: bc_tile_n(5, 1, LANES, 0, a); return;                         \
        case 6: bc_tile_n(6, 1, LANES, 0, a); return;                         \
        case 7: bc_tile_n(7, 1, LANES, 0, a); return;                         \
        case 8: bc_tile_n(8, 1, LANES, 0, a); return;                         \
        case 9: bc_tile_n(9, 1, LANES, 0, a); return;                         \
        case 10: bc_tile_n(10, 1, LANES, 0, a); return;                       \
        case 11: bc_tile_n(11, 1, LANES, 0, a); return;                       \
        default: bc_tile_n(12, 1, LANES, 0, a); return;                       \
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
    const int nb = j->M - m0 >= BC_NR ? 2 : 1, tn = nb == 2 ? 6 : 12;
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

int ep_x86_conv2d_blocked_conv_f32(const ep_op *op) {
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
