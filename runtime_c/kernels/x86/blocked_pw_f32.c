/* AVX2+FMA kernels of the C8 layout (plan_format.h, "Tensor layouts"): CONV2D variant BLOCKED_PW and REORDER.
 *
 * BLOCKED_PW is the GEMM Y^T[P][M] = X^T[P][C] W^T[C][M] over the P = H*W pixels of each image. The A operand is
 * read from the blocked X in place: pixel p's channels c..c+7 (c a multiple of 8) are the 8 contiguous floats at
 * x[(c/8)*P*8 + p*8], broadcast one at a time; B is a 16-column strip of W^T (two ymm per k); a 16-column output
 * tile is two C8 blocks of Y. Register tiles: 6 pixels x 16 channels (12 accumulators), or 12 pixels x 8 channels
 * for a strip with 8 real columns (M = 8 mod 16). Loop nest: k-blocks of at most BP_KC channels (the strip's
 * k-block, KC x 16 floats, stays in L1), inside them the strips, inside those the pixel tiles of a chunk of
 * pixels (its k-block of X stays in L2). A k-block that is not the last stores its partial sums in Y and the
 * next loads them (exact), so every output sums its products in c order with FMA, then the bias, the residual
 * and the activation, as the reference. Tasks are (image, pixel chunk, strip range): each output is computed
 * by one task with the same operations whatever the thread count. */
#include <immintrin.h>
#include "x86.h"
#include "x86_act.h"

#define BLK EP_LAYOUT_BLOCK
#define BP_NR EP_PACK_NR
#define BP_KC 256        /* channels per k-block */
#define BP_PC 192        /* pixels per chunk (a multiple of the tiles' 6 and 12) */
#define BP_INLINE static inline __attribute__((always_inline))

typedef struct bp_job {
    const float *x, *w, *b, *r;
    float *y;
    int64_t C, M, P, strips;
    int64_t chunks, groups;   /* pixel chunks per image, strip ranges per chunk */
    int64_t nkb;              /* k-blocks */
    const ep_conv2d_params *p;
} bp_job;

/* The epilogue of a finished tile t[np][nb][8] (bias, residual, activation) and its stores: once per tile, kept
 * out of line so that the micro-kernel instances stay small. y and r point at the tile's first output block,
 * the second one ys floats further. */
static __attribute__((noinline)) void bp_store(int np, int nb, const float *t, float *y, int64_t ys, const float *b,
                                               const float *r, const ep_conv2d_params *p) {
    const int act = p->act, vec = x86_act_vec(act);
    for (int j = 0; j < nb; j++) {
        const __m256 bv = b ? _mm256_loadu_ps(b + j * BLK) : _mm256_setzero_ps();
        float *yj = y + j * ys;
        for (int i = 0; i < np; i++) {
            __m256 v = _mm256_loadu_ps(t + (i * nb + j) * BLK);
            if (b) v = _mm256_add_ps(v, bv);
            if (r) v = _mm256_add_ps(v, _mm256_loadu_ps(r + j * ys + i * BLK));
            _mm256_storeu_ps(yj + i * BLK, x86_act8(act, p->act_alpha, p->act_beta, v));
        }
        if (!vec) ep_act_apply_f32(act, yj, np * BLK, p->act_alpha, p->act_beta);
    }
}

/* One tile of np pixels x nb blocks of 8 channels over kc channels (a multiple of 8): x at the tile's first
 * pixel in the k-block's first channel block (the next block xs floats further), w at the strip's row of that
 * channel. first: the sums start at 0, else at the partial sums in y; last: the epilogue follows. */
BP_INLINE void bp_tile_n(const int np, const int nb, const float *x, int64_t xs, int64_t kc, const float *w, float *y,
                         int64_t ys, int first, int last, const float *b, const float *r, const ep_conv2d_params *p) {
    __m256 acc[12][2];
#pragma GCC unroll 12
    for (int i = 0; i < np; i++)
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) acc[i][j] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(y + j * ys + i * BLK);
    for (int64_t k0 = 0; k0 < kc; k0 += BLK) {
#pragma GCC unroll 8
        for (int ci = 0; ci < BLK; ci++) {
            const __m256 b0 = _mm256_loadu_ps(w + ci * BP_NR);
            const __m256 b1 = nb > 1 ? _mm256_loadu_ps(w + ci * BP_NR + 8) : b0;
#pragma GCC unroll 12
            for (int i = 0; i < np; i++) {
                const __m256 av = _mm256_broadcast_ss(x + i * BLK + ci);
                acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
                if (nb > 1) acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
            }
        }
        x += xs;
        w += BLK * BP_NR;
    }
    if (!last) {
#pragma GCC unroll 12
        for (int i = 0; i < np; i++)
#pragma GCC unroll 2
            for (int j = 0; j < nb; j++) _mm256_storeu_ps(y + j * ys + i * BLK, acc[i][j]);
        return;
    }
    if (p->act == EP_ACT_NONE || p->act == EP_ACT_RELU) {   /* the common epilogues in registers */
        const __m256 lo = p->act == EP_ACT_RELU ? _mm256_setzero_ps() : _mm256_set1_ps(-__builtin_inff());
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) {
            const __m256 bv = b ? _mm256_loadu_ps(b + j * BLK) : _mm256_setzero_ps();
#pragma GCC unroll 12
            for (int i = 0; i < np; i++) {
                __m256 v = _mm256_add_ps(acc[i][j], bv);
                if (r) v = _mm256_add_ps(v, _mm256_loadu_ps(r + j * ys + i * BLK));
                _mm256_storeu_ps(y + j * ys + i * BLK, _mm256_max_ps(lo, v));
            }
        }
        return;
    }
    float t[12 * 2 * BLK];
#pragma GCC unroll 12
    for (int i = 0; i < np; i++)
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) _mm256_storeu_ps(t + (i * nb + j) * BLK, acc[i][j]);
    bp_store(np, nb, t, y, ys, b, r, p);
}

#define BP_ARGS x, xs, kc, w, y, ys, first, last, b, r, p
static void bp_tile2(int np, const float *x, int64_t xs, int64_t kc, const float *w, float *y, int64_t ys, int first,
                     int last, const float *b, const float *r, const ep_conv2d_params *p) {
    switch (np) {
    case 1: bp_tile_n(1, 2, BP_ARGS); return;
    case 2: bp_tile_n(2, 2, BP_ARGS); return;
    case 3: bp_tile_n(3, 2, BP_ARGS); return;
    case 4: bp_tile_n(4, 2, BP_ARGS); return;
    case 5: bp_tile_n(5, 2, BP_ARGS); return;
    default: bp_tile_n(6, 2, BP_ARGS); return;
    }
}
static void bp_tile1(int np, const float *x, int64_t xs, int64_t kc, const float *w, float *y, int64_t ys, int first,
                     int last, const float *b, const float *r, const ep_conv2d_params *p) {
    switch (np) {
    case 1: bp_tile_n(1, 1, BP_ARGS); return;
    case 2: bp_tile_n(2, 1, BP_ARGS); return;
    case 3: bp_tile_n(3, 1, BP_ARGS); return;
    case 4: bp_tile_n(4, 1, BP_ARGS); return;
    case 5: bp_tile_n(5, 1, BP_ARGS); return;
    case 6: bp_tile_n(6, 1, BP_ARGS); return;
    case 7: bp_tile_n(7, 1, BP_ARGS); return;
    case 8: bp_tile_n(8, 1, BP_ARGS); return;
    case 9: bp_tile_n(9, 1, BP_ARGS); return;
    case 10: bp_tile_n(10, 1, BP_ARGS); return;
    case 11: bp_tile_n(11, 1, BP_ARGS); return;
    default: bp_tile_n(12, 1, BP_ARGS); return;
    }
}
#undef BP_ARGS

static inline int64_t bp_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Strip s of image n's pixels [q0, q1) over k-block [c0, c0 + kc). */
static void bp_strip(const bp_job *j, int64_t n, int64_t s, int64_t q0, int64_t q1, int64_t c0, int64_t kc, int first,
                     int last) {
    const int64_t C = j->C, M = j->M, P = j->P, m0 = s * BP_NR, off = n * M * P + m0 * P + q0 * BLK;
    const float *w = j->w + (s * C + c0) * BP_NR, *xp = j->x + n * C * P + c0 * P + q0 * BLK;
    const float *b = last && j->b ? j->b + m0 : NULL, *rr = last && j->r ? j->r + off : NULL;
    float *yp = j->y + off;
    if (M - m0 >= BP_NR) {
        for (int64_t q = q0; q < q1; q += 6, xp += 6 * BLK, yp += 6 * BLK, rr = rr ? rr + 6 * BLK : NULL)
            bp_tile2((int)bp_min(6, q1 - q), xp, P * BLK, kc, w, yp, P * BLK, first, last, b, rr, j->p);
    } else {   /* 8 real columns: the strip's first block only */
        for (int64_t q = q0; q < q1; q += 12, xp += 12 * BLK, yp += 12 * BLK, rr = rr ? rr + 12 * BLK : NULL)
            bp_tile1((int)bp_min(12, q1 - q), xp, P * BLK, kc, w, yp, P * BLK, first, last, b, rr, j->p);
    }
}

/* Task t: image n, pixel chunk, strip range; every k-block of it. */
static void bp_task(void *ctx, uint32_t t) {
    const bp_job *j = (const bp_job *)ctx;
    const int64_t g = t % j->groups, ch = t / j->groups % j->chunks, n = t / j->groups / j->chunks;
    const ep_range sr = ep_task_range(j->strips, j->groups, (uint32_t)g);
    const int64_t p0 = ch * BP_PC, p1 = bp_min(j->P, p0 + BP_PC);
    for (int64_t kb = 0; kb < j->nkb; kb++) {
        const ep_range kr = ep_task_range(j->C / BLK, j->nkb, (uint32_t)kb);
        const int64_t c0 = kr.lo * BLK, kc = (kr.hi - kr.lo) * BLK;
        const int first = kb == 0, last = kb == j->nkb - 1;
        for (int64_t s = sr.lo; s < sr.hi; s++) bp_strip(j, n, s, p0, p1, c0, kc, first, last);
    }
}

int ep_x86_conv2d_blocked_pw_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], P = (int64_t)xt->dims[2] * xt->dims[3], M = yt->dims[1];
    if (N == 0 || M == 0 || P == 0) return EP_OK;
    bp_job j = {(const float *)xt->data, (const float *)op->in[1]->data, bt ? (const float *)bt->data : NULL,
                rt ? (const float *)rt->data : NULL, (float *)yt->data, C, M, P, (M + BP_NR - 1) / BP_NR,
                (P + BP_PC - 1) / BP_PC, 1, (C / BLK + BP_KC / BLK - 1) / (BP_KC / BLK),
                (const ep_conv2d_params *)op->params};
    if (j.nkb < 1) j.nkb = 1;   /* C = 0: the epilogue on empty sums */
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)N * (uint64_t)M * (uint64_t)C * (uint64_t)P);
    if (T > 1) {   /* about 4 tasks per thread: split the strips when images and chunks are too few */
        const int64_t units = N * j.chunks, want = 4 * T;
        if (units < want) j.groups = bp_min(j.strips, (want + units - 1) / units);
    }
    ep_parallel_for(op->pool, (uint32_t)(N * j.chunks * j.groups), bp_task, &j);
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
 * (whole groups of 8 but the last): 8 x 8 transposes, the tail pixels one at a time. */
static void ro_task(void *ctx, uint32_t t) {
    const ro_job *j = (const ro_job *)ctx;
    const int64_t P = j->P, blk = t / j->parts;
    const ep_range pr = ep_task_range((P + 7) / 8, j->parts, (uint32_t)(t % j->parts));
    const int64_t hi = bp_min(P, pr.hi * 8);
    const float *x = j->x + blk * P * BLK;
    float *y = j->y + blk * P * BLK;
    int64_t p = pr.lo * 8;
    __m256 v[8];
    if (j->to_c8) {
        for (; p + 8 <= hi; p += 8) {
            for (int c = 0; c < 8; c++) v[c] = _mm256_loadu_ps(x + c * P + p);
            x86_tr8(v);
            for (int i = 0; i < 8; i++) _mm256_storeu_ps(y + (p + i) * BLK, v[i]);
        }
        for (; p < hi; p++)
            for (int c = 0; c < 8; c++) y[p * BLK + c] = x[c * P + p];
    } else {
        for (; p + 8 <= hi; p += 8) {
            for (int i = 0; i < 8; i++) v[i] = _mm256_loadu_ps(x + (p + i) * BLK);
            x86_tr8(v);
            for (int c = 0; c < 8; c++) _mm256_storeu_ps(y + c * P + p, v[c]);
        }
        for (; p < hi; p++)
            for (int c = 0; c < 8; c++) y[c * P + p] = x[p * BLK + c];
    }
}

int ep_x86_reorder_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], P = (int64_t)xt->dims[2] * xt->dims[3];
    if (N == 0 || C == 0 || P == 0) return EP_OK;
    ro_job j = {(const float *)xt->data, (float *)yt->data, C / BLK, P, 1, yt->layout == EP_LAYOUT_C8};
    const int64_t blocks = N * j.CB, T = ep_pool_threads_for(op->pool, (uint64_t)blocks * (uint64_t)P * BLK);
    if (T > 1 && blocks < 4 * T) j.parts = bp_min((4 * T + blocks - 1) / blocks, (P + 7) / 8);
    ep_parallel_for(op->pool, (uint32_t)(blocks * j.parts), ro_task, &j);
    return EP_OK;
}
