/* CONV2D variant BLOCKED_CONV (plan_format.h), compiled once per ISA: a dense convolution (groups 1), any kernel,
 * stride, dilation and pads, Y and R in C8, X in C8, PLAIN or NHWC (a stem), W^T as GEMM-B strips
 * [ceil(M/16)][K][16].
 *
 * Direct convolution, no im2col, on the tiles of blocked_gemm.h (up to 6 output pixels x 16 output channels).
 * The tile's pixels lie on one line of the output, a row (pixel stride sw in X) or a column (stride sh rows),
 * so that one tap (kh, kw) reads the pixels' inputs at a fixed stride, in place. X's "units" are its channel
 * blocks (C8: a tap has 8 channels, contiguous in X and consecutive rows of W^T), its pixels' C channels (NHWC:
 * one unit of C lanes, likewise) or its channels (PLAIN: a tap has 1). The k loop of a tile runs over the units,
 * the valid kh, the valid kw, then the unit's lanes, which is W^T's row order, so every output receives its valid
 * taps in one fixed order with FMA, from 0.
 * Borders: the taps valid for a pixel form a box [kh0, kh1) x [kw0, kw1). A row's pixels share the kh range; the
 * columns whose taps all lie inside X, [ow_lo, ow_hi), take row tiles; the border columns take column tiles
 * over runs of rows with the same kh range. Loop nest: k-blocks of whole units (BC_KR rows of W^T at most, or
 * one unit: they stay in L1), inside them the strips, inside those the tiles of a chunk of rows. A k-block that
 * is not the last stores its partial sums in Y and the next loads them (exact); the last adds the bias, the
 * residual and the activation, as the reference. Tasks are (image, row chunk, strip range): each output is
 * computed by one task with the same operations whatever the thread count.
 *
 * The including file includes its ISA's blocked_gemm.h (the tiles and bg_run) first. Exports
 * EP_ISA_FN(conv2d_blocked_conv_f32) (ep_kernel.h). */

#define BC_KR 256        /* rows of W^T per k-block (at least one unit) */
#define BC_PC 192        /* output pixels per row chunk, about (6 rows at least) */

typedef struct bc_job {
    const float *x, *b, *r, *s;  /* s: the PReLU slopes or NULL */
    const void *w;               /* f32, or 16-bit (converted per k-block: bg_weights) */
    float *y;
    int64_t H, W, M, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t lanes, units;        /* channels per unit (8: C8 X, C: NHWC X, 1: PLAIN X), units per image */
    int64_t grouped;             /* 1: a tap's lanes are consecutive in X (C8, NHWC) */
    int64_t K;                   /* rows of W^T */
    int64_t ow_lo, ow_hi;        /* the columns whose taps all lie inside X */
    int64_t strips, chunks, groups, nkb;
    const ep_conv2d_params *p;
    int wdt;                     /* W's dtype */
} bc_job;
_Static_assert(BC_KR <= BG_W16_ROWS, "a k-block of 16-bit weights fits the conversion buffer");

static inline int64_t bc_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* The taps k in [0, K) with 0 <= i0 + k*d < L: [*k0, *k1) (empty: *k0 == *k1). */
static inline void bc_valid(int64_t i0, int64_t d, int64_t K, int64_t L, int64_t *k0, int64_t *k1) {
    const int64_t lo = i0 >= 0 ? 0 : (-i0 + d - 1) / d, hi = i0 > L - 1 ? 0 : bc_min(K, (L - 1 - i0) / d + 1);
    *k0 = bc_min(lo, K), *k1 = hi > *k0 ? hi : *k0;
}

/* A run of np pixels from output (oh, ow), the next pixel (down = 0) to the right or (down = 1) below, with
 * the tap box [kh0, kh0 + a->nkh) x [kw0, kw0 + nkw); x and w at the k-block's first unit, y and r at image
 * n's strip. The tile's groups of rows consecutive in X and W^T: a C8 unit's 8 lanes for each kw, or for a
 * PLAIN X the kw of a kernel row when they are adjacent in X (dw = 1, up to 8), else each kw alone. */
static void bc_one(const bc_job *j, bg_tile *a, int nb, int64_t np, int down, int64_t oh, int64_t ow, int64_t kh0,
                   int64_t kw0, int64_t nkw, const float *x, const float *w, float *y, const float *r) {
    const int64_t L = j->lanes, ih = oh * j->sh - j->pt + kh0 * j->dh, iw = ow * j->sw - j->pl + kw0 * j->dw;
    const int64_t at = (oh * j->OW + ow) * BLK;
    const int row = !j->grouped && j->dw == 1 && nkw <= BLK;
    a->nr = j->grouped ? L : row ? nkw : 1;
    a->nkw = row ? nkw > 0 : nkw;
    a->x = a->nkh && nkw ? x + (ih * j->W + iw) * L : x;   /* no valid tap: x is not read */
    a->w = w + (kh0 * j->KW + kw0) * L * BG_NR;
    a->y = y + at;
    a->r = r ? r + at : NULL;
    bg_run(a, np, nb, down ? j->sh * j->W * L : j->sw * L, down ? j->OW * BLK : BLK);
}

/* Strip s of image n's output rows [r0, r1) over the k-block of units [u0, u0 + nu); wbuf: 16-bit weights'
 * conversion buffer. */
static void bc_strip(const bc_job *j, int64_t n, int64_t s, int64_t r0, int64_t r1, int64_t u0, int64_t nu, int first,
                     int last, float *wbuf) {
    const int64_t L = j->lanes, KH = j->KH, KW = j->KW, OW = j->OW, m0 = s * BG_NR;
    const int64_t yoff = (n * j->M + m0) * j->OH * OW;   /* the strip's first block (M is a multiple of 8) */
    const int nb = j->M - m0 >= BG_NR ? 2 : 1;
    const float *x = j->x + (n * j->units + u0) * j->H * j->W * L;
    const float *w = bg_weights(j->w, j->wdt, s * j->K + u0 * KH * KW * L, nu * KH * KW * L, wbuf);
    const float *r = last && j->r ? j->r + yoff : NULL;
    float *y = j->y + yoff;
    bg_tile a = {.b = last && j->b ? j->b + m0 : NULL, .s = last && j->s ? j->s + m0 : NULL, .nu = nu,
                 .xcs = j->H * j->W * L, .wcs = KH * KW * L * BG_NR,
                 .xrs = j->dh * j->W * L, .wrs = KW * L * BG_NR, .xks = j->dw * L, .ys = j->OH * OW * BLK,
                 .first = first, .last = last, .p = j->p};
    int64_t kh0, kh1, kw0, kw1;
    /* row tiles over the interior columns */
    for (int64_t oh = r0; oh < r1; oh++) {
        bc_valid(oh * j->sh - j->pt, j->dh, KH, j->H, &kh0, &kh1);
        a.nkh = kh1 - kh0;
        if (j->ow_hi > j->ow_lo) bc_one(j, &a, nb, j->ow_hi - j->ow_lo, 0, oh, j->ow_lo, kh0, 0, KW, x, w, y, r);
    }
    /* column tiles over the border columns: runs of rows with one kh range */
    for (int64_t ow = 0; ow < OW; ow++) {
        if (ow == j->ow_lo) ow = j->ow_hi;
        if (ow >= OW) break;
        bc_valid(ow * j->sw - j->pl, j->dw, KW, j->W, &kw0, &kw1);
        for (int64_t oh = r0; oh < r1;) {
            int64_t h0, h1, run = 1;
            bc_valid(oh * j->sh - j->pt, j->dh, KH, j->H, &kh0, &kh1);
            while (oh + run < r1) {
                bc_valid((oh + run) * j->sh - j->pt, j->dh, KH, j->H, &h0, &h1);
                if (h0 != kh0 || h1 != kh1) break;
                run++;
            }
            a.nkh = kh1 - kh0;
            bc_one(j, &a, nb, run, 1, oh, ow, kh0, kw0, kw1 - kw0, x, w, y, r);
            oh += run;
        }
    }
}

/* Task t: image n, row chunk, strip range; every k-block of it. */
static void bc_task_w(const bc_job *j, uint32_t t, float *wbuf) {
    const int64_t g = t % j->groups, ch = t / j->groups % j->chunks, n = t / j->groups / j->chunks;
    const ep_range sr = ep_task_range(j->strips, j->groups, (uint32_t)g);
    const ep_range rr = ep_task_range(j->OH, j->chunks, (uint32_t)ch);
    for (int64_t kb = 0; kb < j->nkb; kb++) {
        const ep_range kr = ep_task_range(j->units, j->nkb, (uint32_t)kb);
        for (int64_t s = sr.lo; s < sr.hi; s++)
            bc_strip(j, n, s, rr.lo, rr.hi, kr.lo, kr.hi - kr.lo, kb == 0, kb == j->nkb - 1, wbuf);
    }
}

/* the conversion buffer (16 KiB) on the stack only for 16-bit weights */
static __attribute__((noinline)) void bc_task_w16(const bc_job *j, uint32_t t) {
    float wbuf[BG_W16_ROWS * BG_NR];
    bc_task_w(j, t, wbuf);
}

static void bc_task(void *ctx, uint32_t t) {
    const bc_job *j = (const bc_job *)ctx;
    if (j->wdt == EP_DTYPE_F32) bc_task_w(j, t, NULL);
    else bc_task_w16(j, t);
}

int EP_ISA_FN(conv2d_blocked_conv_f32)(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    if (N == 0 || M == 0 || OH == 0 || OW == 0) return EP_OK;
    /* a unit: a C8 block (8 lanes), an NHWC pixel's C channels (C lanes, one unit), or a PLAIN channel (1) */
    const int64_t L = xt->layout == EP_LAYOUT_C8 ? BLK : xt->layout == EP_LAYOUT_NHWC && C > 0 ? C : 1;
    const int64_t KH = p->kernel[0], KW = p->kernel[1];
    const ep_tensor *st = ep_op_in(op, 4);
    bc_job j = {(const float *)xt->data, bt ? (const float *)bt->data : NULL, rt ? (const float *)rt->data : NULL,
                st ? (const float *)st->data : NULL, op->in[1]->data, (float *)yt->data, xt->dims[2], xt->dims[3], M,
                OH, OW, KH, KW,
                p->stride[0], p->stride[1], p->dilation[0], p->dilation[1], p->pads[0], p->pads[1], L, C / L,
                xt->layout != EP_LAYOUT_PLAIN,
                C * KH * KW, 0, 0, (M + BG_NR - 1) / BG_NR, 1, 1, 1, p, op->in[1]->dtype};
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
    if (T > 1) {   /* about 4 tasks per thread: row chunks while they keep 6 rows, then split the strips */
        const int64_t want = 4 * T, tall = OH / 6 > 1 ? OH / 6 : 1;
        if (N * j.chunks < want && tall > j.chunks) j.chunks = bc_min(tall, (want + N - 1) / N);
        j.groups = bc_min(j.strips, (want + N * j.chunks - 1) / (N * j.chunks));
        /* too few strips to go round (a small map with few output channels): shorter row chunks too, although a
         * chunk of fewer rows splits the border columns' tiles */
        if (N * j.chunks * j.groups < want) j.chunks = bc_min(OH, (want + N * j.groups - 1) / (N * j.groups));
    }
    /* one thread: the tasks inline, without waking the pool's sleeping workers */
    ep_parallel_for(T > 1 ? op->pool : NULL, (uint32_t)(N * j.chunks * j.groups), bc_task, &j);
    return EP_OK;
}
