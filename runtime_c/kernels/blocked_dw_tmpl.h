/* CONV2D variant BLOCKED_DW (plan_format.h): depthwise convolution of C8 tensors, compiled once per ISA. A pixel's
 * 8 channels are one vector of the ISA (BD_V), so every tap of 8 channels is one vector multiply-add on data read
 * in place.
 *
 * Work runs in blocks of output pixels of a channel block that share their taps inside the input (a box of kernel
 * rows x kernel columns), one accumulator per pixel, over the box's taps (kh, then kw) with one weight load per
 * tap; a short block repeats its last pixel in the lanes past its own and stores only its own. A plane's rows go
 * in groups of consecutive rows with the same kernel rows inside the input, BD_NP rows at a time: each border
 * column (taps outside the input row) as a block of BD_NP pixels, one per row; the interior columns (all taps
 * inside) as row blocks of BD_NB pixels, a row's last block ending at its last interior column (the pixels it
 * shares with the block before are computed again, to the same values). 3x3 row blocks at stride 1 or 2
 * (dilation 1) have the kernel width and stride as constants, so that a kernel row loads each input column once.
 * An interior narrower than BD_NB goes in blocks over the group's rows with an input offset per pixel
 * (bd_region). Every output sums its taps in (kh, kw) order from 0.0f with fused multiply-adds, then adds the
 * bias and the residual; RELU and CLIP clamp the sums before the stores, the other activations run over the
 * group's finished rows (bd_act_rows), as the reference. Tasks are ranges of output rows in (image, channel
 * block, row) order: each output is computed by one task with the same operations whatever the thread count.
 *
 * The including file defines (8 floats as the ISA holds them):
 *   BD_V, BD_ZERO(), BD_SET1(f), BD_LD(p), BD_ST(p, v), BD_ADD(a, b), BD_FMA(acc, w, x) (acc + w * x, fused)
 *   BD_CLAMP(v, lo, hi)   min(max(v, lo), hi) as the ISA's RELU and CLIP compute it
 *   BD_ACT_VEC(act)       1 when BD_ACT has a vector form of the activation; BD_ACT(act, alpha, beta, v)
 * Exports EP_ISA_FN(conv2d_blocked_dw_f32) (ep_kernel.h). */

#define BLK EP_LAYOUT_BLOCK
#define BD_INLINE static inline __attribute__((always_inline))
#define BD_NB 8          /* output pixels per block */
#define BD_NP 4          /* border pixels per block (of consecutive rows) */
#define BD_GROUP 512     /* output pixels per row group, about (a multiple of BD_NB rows) */

/* One channel block of one image. */
typedef struct bd_plane {
    const float *x, *w, *r;   /* its input, its weights [KH*KW][8], its residual or NULL */
    float *y;
    BD_V bias;
} bd_plane;

typedef struct bd_job {
    const float *x, *w, *b, *r;
    float *y;
    int64_t H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t CB;               /* channel blocks per image */
    int64_t ow_lo, ow_hi;     /* the interior columns: all KW taps inside the input row */
    int64_t rows, parts;      /* output rows N * CB * OH, tasks */
    int act, clamp;           /* the activation; clamp: RELU or CLIP, as [lo, hi] */
    float alpha, beta;
    BD_V lo, hi;
    /* the row block of the interior */
    void (*row_block)(const struct bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh, int64_t oh, int64_t ow);
} bd_job;

/* The taps k in [0, K) with 0 <= i0 + k * d < n: [*k0, *k0 + *nk). */
static void bd_taps(int64_t i0, int64_t K, int64_t d, int64_t n, int64_t *k0, int64_t *nk) {
    int64_t a = -i0, b = n - i0;
    if (d != 1) a = (-i0 + d - 1) / d, b = b <= 0 ? 0 : (b - 1) / d + 1;
    if (i0 >= 0) a = 0;
    if (b > K) b = K;
    *k0 = a, *nk = b > a ? b - a : 0;
}

/* y[0, n) = act(y) for the activations other than NONE, RELU and CLIP. */
static __attribute__((noinline)) void bd_act_rows(const bd_job *j, float *y, int64_t n) {
    if (!BD_ACT_VEC(j->act)) {
        EP_ISA_ACT_APPLY(j->act, y, n, j->alpha, j->beta);
        return;
    }
    for (int64_t i = 0; i < n; i += BLK) BD_ST(y + i, BD_ACT(j->act, j->alpha, j->beta, BD_LD(y + i)));
}

/* The epilogue of an output pixel: + bias, + residual (r: the pixel's, or NULL), RELU / CLIP. */
BD_INLINE BD_V bd_epi(BD_V acc, BD_V bias, const float *r, int clamp, BD_V lo, BD_V hi) {
    acc = BD_ADD(acc, bias);
    if (r) acc = BD_ADD(acc, BD_LD(r));
    if (clamp) acc = BD_CLAMP(acc, lo, hi);
    return acc;
}

/* The taps of a block: acc[i] = the sum over kernel rows [0, nkh) and columns [0, nkw) of x + o[i] (pixel i's
 * first tap) times w (kernel rows wk apart). KWC, SWC: nkw and the pixel stride as constants (dilation 1;
 * pixel i at x + i * SWC pixels), or 0. */
BD_INLINE void bd_taps_t(const bd_job *j, BD_V *acc, const float *x, const int64_t *o, const float *w, int64_t wk,
                         int64_t nkh, int64_t nkw, const int KWC, const int SWC) {
    const int64_t KW = KWC ? KWC : nkw, ts = KWC ? BLK : j->dw * BLK, xs = j->dh * j->W * BLK;
#pragma GCC unroll 8
    for (int i = 0; i < BD_NB; i++) acc[i] = BD_ZERO();
    for (int64_t kh = 0; kh < nkh; kh++, x += xs, w += wk) {
#pragma GCC unroll 4
        for (int64_t kw = 0; kw < KW; kw++) {
            const BD_V wv = BD_LD(w + kw * BLK);
            const float *t = x + kw * ts;
#pragma GCC unroll 8
            for (int i = 0; i < BD_NB; i++) acc[i] = BD_FMA(acc[i], wv, BD_LD(t + (SWC ? i * SWC * BLK : o[i])));
        }
    }
}

/* The row block of the interior output pixels (oh, ow + i), i < BD_NB; kernel rows [kh0, kh0 + nkh). */
BD_INLINE void bd_row_t(const bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh, int64_t oh, int64_t ow,
                        const int KWC, const int SWC) {
    const int64_t ih = oh * j->sh - j->pt + kh0 * j->dh, ps = j->sw * BLK, at = (oh * j->OW + ow) * BLK;
    const float *x = c->x + ((nkh ? ih * j->W : 0) + ow * j->sw - j->pl) * BLK;
    int64_t o[BD_NB];
#pragma GCC unroll 8
    for (int i = 0; i < BD_NB; i++) o[i] = i * ps;
    BD_V acc[BD_NB];
    bd_taps_t(j, acc, x, o, c->w + kh0 * j->KW * BLK, j->KW * BLK, nkh, j->KW, KWC, SWC);
    const BD_V bias = c->bias, lo = j->lo, hi = j->hi;
    const int clamp = j->clamp;
    const float *r = c->r ? c->r + at : NULL;
    float *y = c->y + at;
#pragma GCC unroll 8
    for (int i = 0; i < BD_NB; i++) BD_ST(y + i * BLK, bd_epi(acc[i], bias, r ? r + i * BLK : NULL, clamp, lo, hi));
}

static void bd_row(const bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh, int64_t oh, int64_t ow) {
    bd_row_t(j, c, kh0, nkh, oh, ow, 0, 0);
}
static void bd_row_k3s1(const bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh, int64_t oh, int64_t ow) {
    bd_row_t(j, c, kh0, nkh, oh, ow, 3, 1);
}
static void bd_row_k3s2(const bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh, int64_t oh, int64_t ow) {
    bd_row_t(j, c, kh0, nkh, oh, ow, 3, 2);
}

/* The interior output pixels [oh, oe) x [ow0, ow1), kernel rows [kh0, kh0 + nkh), in blocks of BD_NB in row-major
 * order with an input offset per pixel (a short block repeats its last pixel and stores only its own). */
static __attribute__((noinline)) void bd_region(const bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh,
                                                int64_t oh, int64_t oe, int64_t ow0, int64_t ow1) {
    const int64_t nc = ow1 - ow0, total = (oe - oh) * nc, OW = j->OW;
    const int64_t xr = j->sh * j->W * BLK, xc = j->sw * BLK;   /* an output row, column further in x */
    const int64_t ih = oh * j->sh - j->pt + kh0 * j->dh, iw = ow0 * j->sw - j->pl;
    const float *x = c->x + ((nkh ? ih * j->W : 0) + iw) * BLK, *w = c->w + kh0 * j->KW * BLK;
    const BD_V bias = c->bias, lo = j->lo, hi = j->hi;
    const int clamp = j->clamp;
    const float *res = c->r;
    float *y = c->y;
    int64_t r = 0, q = 0;   /* the next pixel: (oh + r, ow0 + q) */
    for (int64_t s = 0; s < total; s += BD_NB) {
        const int n = total - s < BD_NB ? (int)(total - s) : BD_NB;
        int64_t o[BD_NB], at[BD_NB];
        for (int i = 0; i < BD_NB; i++) {
            o[i] = r * xr + q * xc, at[i] = ((oh + r) * OW + ow0 + q) * BLK;
            if (i + 1 < n && ++q == nc) q = 0, r++;
        }
        if (++q == nc) q = 0, r++;
        BD_V acc[BD_NB];
        float v[BD_NB * BLK];
        bd_taps_t(j, acc, x, o, w, j->KW * BLK, nkh, j->KW, 0, 0);
#pragma GCC unroll 8
        for (int i = 0; i < BD_NB; i++) BD_ST(v + i * BLK, acc[i]);
        for (int i = 0; i < n; i++)
            BD_ST(y + at[i], bd_epi(BD_LD(v + i * BLK), bias, res ? res + at[i] : NULL, clamp, lo, hi));
    }
}

/* Border output pixels (oh + i, ow), i < m <= BD_NP, with the same kernel rows [kh0, kh0 + nkh): their taps inside
 * the input, one accumulator per pixel (the lanes past m repeat pixel m - 1 and are not stored). */
static __attribute__((noinline)) void bd_column(const bd_job *j, const bd_plane *c, int64_t kh0, int64_t nkh,
                                                int64_t oh, int m, int64_t ow) {
    int64_t kw0, nkw;
    bd_taps(ow * j->sw - j->pl, j->KW, j->dw, j->W, &kw0, &nkw);
    const int64_t ih = oh * j->sh - j->pt + kh0 * j->dh, iw = ow * j->sw - j->pl + kw0 * j->dw;
    const int64_t xs = j->dh * j->W * BLK, ts = j->dw * BLK, xr = j->sh * j->W * BLK, OW = j->OW;
    const float *x = c->x + (nkh && nkw ? (ih * j->W + iw) * BLK : 0), *w = c->w + (kh0 * j->KW + kw0) * BLK;
    int64_t o[BD_NP];
    BD_V acc[BD_NP];
#pragma GCC unroll 4
    for (int i = 0; i < BD_NP; i++) o[i] = (i < m ? i : m - 1) * xr, acc[i] = BD_ZERO();
    for (int64_t kh = 0; kh < nkh; kh++, x += xs, w += j->KW * BLK)
        for (int64_t kw = 0; kw < nkw; kw++) {
            const BD_V wv = BD_LD(w + kw * BLK);
#pragma GCC unroll 4
            for (int i = 0; i < BD_NP; i++) acc[i] = BD_FMA(acc[i], wv, BD_LD(x + kw * ts + o[i]));
        }
    const BD_V bias = c->bias, lo = j->lo, hi = j->hi;
    const int clamp = j->clamp;
    const float *r = c->r;
    float *y = c->y;
#pragma GCC unroll 4
    for (int i = 0; i < BD_NP; i++) {
        const int64_t at = ((oh + i) * OW + ow) * BLK;
        if (i < m) BD_ST(y + at, bd_epi(acc[i], bias, r ? r + at : NULL, clamp, lo, hi));
    }
}

/* Output rows [oh0, oh1) of channel block nb (= n * CB + cb). */
static void bd_rows(const bd_job *j, int64_t nb, int64_t oh0, int64_t oh1) {
    const int64_t OW = j->OW, KW = j->KW, lo = j->ow_lo, hi = j->ow_hi, cb = nb % j->CB;
    const int64_t full = lo + (hi - lo) / BD_NB * BD_NB;   /* [lo, full): whole row blocks */
    const int64_t gr = BD_GROUP / (OW * BD_NB) > 1 ? BD_GROUP / (OW * BD_NB) * BD_NB : BD_NB;   /* rows per group */
    bd_plane c;
    c.x = j->x + nb * j->H * j->W * BLK, c.w = j->w + cb * j->KH * KW * BLK;
    c.y = j->y + nb * j->OH * OW * BLK, c.r = j->r ? j->r + nb * j->OH * OW * BLK : NULL;
    c.bias = j->b ? BD_LD(j->b + cb * BLK) : BD_ZERO();
    for (int64_t oh = oh0, oe; oh < oh1; oh = oe) {
        /* the group [oh, oe): rows with the same kernel rows inside the input */
        int64_t kh0, nkh, k0, nk;
        bd_taps(oh * j->sh - j->pt, j->KH, j->dh, j->H, &kh0, &nkh);
        for (oe = oh + 1; oe < oh1 && oe - oh < gr; oe++) {
            bd_taps(oe * j->sh - j->pt, j->KH, j->dh, j->H, &k0, &nk);
            if (k0 != kh0 || nk != nkh) break;
        }
        for (int64_t r = oh; r < oe; r += BD_NP) {   /* BD_NP rows at a time: the border columns, the blocks */
            const int m = oe - r < BD_NP ? (int)(oe - r) : BD_NP;
            for (int64_t ow = 0; ow < lo; ow++) bd_column(j, &c, kh0, nkh, r, m, ow);
            for (int64_t q = r; q < r + m && full > lo; q++) {   /* a row's last block ends at hi (its first
                                                                   * pixels again: the same values) */
                for (int64_t ow = lo; ow < full; ow += BD_NB) j->row_block(j, &c, kh0, nkh, q, ow);
                if (full < hi) j->row_block(j, &c, kh0, nkh, q, hi - BD_NB);
            }
            for (int64_t ow = hi; ow < OW; ow++) bd_column(j, &c, kh0, nkh, r, m, ow);
        }
        if (full == lo && lo < hi) bd_region(j, &c, kh0, nkh, oh, oe, lo, hi);   /* narrower than a block */
        if (j->act != EP_ACT_NONE && !j->clamp) bd_act_rows(j, c.y + oh * OW * BLK, (oe - oh) * OW * BLK);
    }
}

static void bd_task(void *ctx, uint32_t t) {
    const bd_job *j = (const bd_job *)ctx;
    const ep_range rg = ep_task_range(j->rows, j->parts, t);
    for (int64_t u = rg.lo; u < rg.hi;) {   /* u = (n * CB + cb) * OH + oh */
        const int64_t nb = u / j->OH, oh0 = u % j->OH;
        const int64_t oh1 = j->OH - oh0 < rg.hi - u ? j->OH : oh0 + (rg.hi - u);
        bd_rows(j, nb, oh0, oh1);
        u += oh1 - oh0;
    }
}

int EP_ISA_FN(conv2d_blocked_dw_f32)(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    bd_job j;
    j.x = (const float *)xt->data, j.w = (const float *)op->in[1]->data;
    j.b = bt ? (const float *)bt->data : NULL, j.r = rt ? (const float *)rt->data : NULL;
    j.y = (float *)yt->data;
    const int64_t N = xt->dims[0], C = xt->dims[1];
    j.H = xt->dims[2], j.W = xt->dims[3], j.OH = yt->dims[2], j.OW = yt->dims[3];
    j.KH = p->kernel[0], j.KW = p->kernel[1], j.sh = p->stride[0], j.sw = p->stride[1];
    j.dh = p->dilation[0], j.dw = p->dilation[1], j.pt = p->pads[0], j.pl = p->pads[1];
    j.CB = C / BLK;
    j.rows = N * j.CB * j.OH;
    if (j.rows == 0 || j.OW == 0) return EP_OK;
    /* interior: ow * sw - pl >= 0 and ow * sw - pl + (KW - 1) * dw <= W - 1 */
    const int64_t span = j.W - 1 + j.pl - (j.KW - 1) * j.dw;
    j.ow_lo = (j.pl + j.sw - 1) / j.sw;
    j.ow_hi = span < 0 ? 0 : span / j.sw + 1;
    if (j.ow_lo > j.OW) j.ow_lo = j.OW;
    if (j.ow_hi > j.OW) j.ow_hi = j.OW;
    if (j.ow_hi < j.ow_lo) j.ow_hi = j.ow_lo;
    j.act = p->act, j.alpha = p->act_alpha, j.beta = p->act_beta;
    j.clamp = p->act == EP_ACT_RELU || p->act == EP_ACT_CLIP;
    j.lo = BD_SET1(p->act == EP_ACT_CLIP ? p->act_alpha : 0.0f);
    j.hi = BD_SET1(p->act == EP_ACT_CLIP ? p->act_beta : __builtin_inff());
    j.row_block = bd_row;
    if (j.KW == 3 && j.dw == 1 && (j.sw == 1 || j.sw == 2)) j.row_block = j.sw == 1 ? bd_row_k3s1 : bd_row_k3s2;
    const int64_t work = N * C * j.OH * j.OW * j.KH * j.KW;
    const int64_t threads = ep_pool_threads_for(op->pool, (uint64_t)work);
    /* 4 tasks per thread (the pool hands them out in turn), at most one per output row */
    int64_t parts = threads > 1 ? threads * 4 : 1;
    if (parts > j.rows) parts = j.rows;
    j.parts = parts;
    ep_parallel_for(op->pool, (uint32_t)parts, bd_task, &j);
    return EP_OK;
}
