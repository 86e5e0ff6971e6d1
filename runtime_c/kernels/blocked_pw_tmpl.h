/* The kernels of the C8 layout (plan_format.h, "Tensor layouts"), CONV2D variant BLOCKED_PW and REORDER,
 * compiled once per ISA.
 *
 * BLOCKED_PW is the GEMM Y^T[P][M] = X^T[P][C] W^T[C][M] over the P = H*W pixels of each image, on the tiles of
 * blocked_gemm.h: A is read from the blocked X in place (pixel p's channels c..c+7, c a multiple of 8, are the 8
 * contiguous floats at x[(c/8)*P*8 + p*8]: a unit of 8 rows), B is a 16-column strip of W^T, a tile's pixels are
 * 8 floats apart in X and Y. Loop nest: k-blocks of at most BP_KC channels (the strip's k-block, KC x 16 floats,
 * stays in L1), inside them the strips, inside those the 6-pixel tiles of a chunk of pixels (its k-block of X
 * stays in L2). A k-block that is not the last stores its partial sums in Y and the next loads them (exact), so
 * every output sums its products in c order with FMA, then the bias, the residual and the activation, as the
 * reference. Tasks are (image, pixel chunk, strip range): each output is computed by one task with the same
 * operations whatever the thread count.
 * REORDER: tasks of one channel block of one image and a range of its pixels, transposed RO_NP pixels at a time.
 *
 * The including file defines BG_PW 1 and includes its ISA's blocked_gemm.h (the tiles and bg_run) first, and
 *   RO_NP                   pixels per transpose (8 is a multiple of it)
 *   RO_TO_C8(x, y, P, p)    pixels [p, p + RO_NP) of 8 plain rows x (P floats apart) to blocked y (y[p*8 + c])
 *   RO_FROM_C8(x, y, P, p)  the reverse: blocked x to plain y
 * Exports EP_ISA_FN(conv2d_blocked_pw_f32) and EP_ISA_FN(reorder_f32) (ep_kernel.h). */

#define BP_KC 256        /* channels per k-block */
#define BP_PC 192        /* pixels per chunk (a multiple of the tile's 6) */

typedef struct bp_job {
    const float *x, *b, *r, *s;   /* s: the PReLU slopes or NULL */
    const void *w;            /* f32, or 16-bit (converted per k-block: bg_weights) */
    float *y;
    int64_t C, M, P, strips;
    int64_t chunks, groups;   /* pixel chunks per image, strip ranges per chunk */
    int64_t nkb;              /* k-blocks */
    const ep_conv2d_params *p;
    int wdt;                  /* W's dtype */
} bp_job;
_Static_assert(BP_KC <= BG_W16_ROWS, "a k-block of 16-bit weights fits the conversion buffer");

static inline int64_t bp_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Strip s of image n's pixels [q0, q1) over k-block [c0, c0 + kc); wbuf: 16-bit weights' conversion buffer. */
static void bp_strip(const bp_job *j, int64_t n, int64_t s, int64_t q0, int64_t q1, int64_t c0, int64_t kc, int first,
                     int last, float *wbuf) {
    const int64_t C = j->C, M = j->M, P = j->P, m0 = s * BG_NR, off = n * M * P + m0 * P;
    bg_tile a = {.w = bg_weights(j->w, j->wdt, s * C + c0, kc, wbuf), .b = last && j->b ? j->b + m0 : NULL,
                 .s = last && j->s ? j->s + m0 : NULL, .ys = P * BLK,
                 .nu = kc / BLK, .xcs = P * BLK, .wcs = BLK * BG_NR, .nkh = 1, .nkw = 1, .nr = BLK,
                 .first = first, .last = last, .p = j->p};
    const int nb = M - m0 >= BG_NR ? 2 : 1;   /* 1: 8 real columns */
    a.x = j->x + n * C * P + c0 * P + q0 * BLK;
    a.y = j->y + off + q0 * BLK;
    a.r = last && j->r ? j->r + off + q0 * BLK : NULL;
    bg_run(&a, q1 - q0, nb, BLK, BLK);
}

/* Task t: image n, pixel chunk, strip range; every k-block of it. */
static void bp_task_w(const bp_job *j, uint32_t t, float *wbuf) {
    const int64_t g = t % j->groups, ch = t / j->groups % j->chunks, n = t / j->groups / j->chunks;
    const ep_range sr = ep_task_range(j->strips, j->groups, (uint32_t)g);
    const int64_t p0 = ch * BP_PC, p1 = bp_min(j->P, p0 + BP_PC);
    for (int64_t kb = 0; kb < j->nkb; kb++) {
        const ep_range kr = ep_task_range(j->C / BLK, j->nkb, (uint32_t)kb);
        const int64_t c0 = kr.lo * BLK, kc = (kr.hi - kr.lo) * BLK;
        const int first = kb == 0, last = kb == j->nkb - 1;
        for (int64_t s = sr.lo; s < sr.hi; s++) bp_strip(j, n, s, p0, p1, c0, kc, first, last, wbuf);
    }
}

/* the conversion buffer (16 KiB) on the stack only for 16-bit weights */
static __attribute__((noinline)) void bp_task_w16(const bp_job *j, uint32_t t) {
    float wbuf[BG_W16_ROWS * BG_NR];
    bp_task_w(j, t, wbuf);
}

static void bp_task(void *ctx, uint32_t t) {
    const bp_job *j = (const bp_job *)ctx;
    if (j->wdt == EP_DTYPE_F32) bp_task_w(j, t, NULL);
    else bp_task_w16(j, t);
}

int EP_ISA_FN(conv2d_blocked_pw_f32)(const ep_op *op) {
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], P = (int64_t)xt->dims[2] * xt->dims[3], M = yt->dims[1];
    if (N == 0 || M == 0 || P == 0) return EP_OK;
    const ep_tensor *st = ep_op_in(op, 4);
    bp_job j = {(const float *)xt->data, bt ? (const float *)bt->data : NULL, rt ? (const float *)rt->data : NULL,
                st ? (const float *)st->data : NULL, op->in[1]->data, (float *)yt->data, C, M, P,
                (M + BG_NR - 1) / BG_NR, (P + BP_PC - 1) / BP_PC, 1,
                (C / BLK + BP_KC / BLK - 1) / (BP_KC / BLK), (const ep_conv2d_params *)op->params,
                op->in[1]->dtype};
    if (j.nkb < 1) j.nkb = 1;   /* C = 0: the epilogue on empty sums */
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)N * (uint64_t)M * (uint64_t)C * (uint64_t)P);
    if (T > 1) {   /* about 4 tasks per thread: split the strips when images and chunks are too few */
        const int64_t units = N * j.chunks, want = 4 * T;
        if (units < want) j.groups = bp_min(j.strips, (want + units - 1) / units);
    }
    /* one thread: the tasks inline, without waking the pool's sleeping workers */
    ep_parallel_for(T > 1 ? op->pool : NULL, (uint32_t)(N * j.chunks * j.groups), bp_task, &j);
    return EP_OK;
}

/* ---------------- REORDER ---------------- */
typedef struct ro_job {
    const float *x;
    float *y;
    int64_t CB, P, parts;   /* channel blocks per image, pixels, pixel ranges per block */
    int to_c8;
} ro_job;

/* Task t: one channel block of one image (8 plain rows of P pixels <-> P x 8 blocked), a range of its pixels
 * (whole groups of 8 but the last): RO_NP-pixel transposes, the tail pixels one at a time. */
static void ro_task(void *ctx, uint32_t t) {
    const ro_job *j = (const ro_job *)ctx;
    const int64_t P = j->P, blk = t / j->parts;
    const ep_range pr = ep_task_range((P + 7) / 8, j->parts, (uint32_t)(t % j->parts));
    const int64_t hi = bp_min(P, pr.hi * 8);
    const float *x = j->x + blk * P * BLK;
    float *y = j->y + blk * P * BLK;
    int64_t p = pr.lo * 8;
    if (j->to_c8) {
        for (; p + RO_NP <= hi; p += RO_NP) RO_TO_C8(x, y, P, p);
        for (; p < hi; p++)
            for (int c = 0; c < 8; c++) y[p * BLK + c] = x[c * P + p];
    } else {
        for (; p + RO_NP <= hi; p += RO_NP) RO_FROM_C8(x, y, P, p);
        for (; p < hi; p++)
            for (int c = 0; c < 8; c++) y[c * P + p] = x[p * BLK + c];
    }
}

int EP_ISA_FN(reorder_f32)(const ep_op *op) {
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], P = (int64_t)xt->dims[2] * xt->dims[3];
    if (N == 0 || C == 0 || P == 0) return EP_OK;
    ro_job j = {(const float *)xt->data, (float *)yt->data, C / BLK, P, 1, yt->layout == EP_LAYOUT_C8};
    const int64_t blocks = N * j.CB, T = ep_pool_threads_for(op->pool, (uint64_t)blocks * (uint64_t)P * BLK);
    if (T > 1 && blocks < 4 * T) j.parts = bp_min((4 * T + blocks - 1) / blocks, (P + 7) / 8);
    ep_parallel_for(T > 1 ? op->pool : NULL, (uint32_t)(blocks * j.parts), ro_task, &j);
    return EP_OK;
}
