/* NEON kernels of the C8 layout (plan_format.h, "Tensor layouts"): CONV2D variant BLOCKED_PW and REORDER.
 *
 * BLOCKED_PW is the GEMM Y^T[P][M] = X^T[P][C] W^T[C][M] over the P = H*W pixels of each image. The A operand is
 * read from the blocked X in place: pixel p's channels c..c+7 (c a multiple of 8) are the 8 contiguous floats at
 * x[(c/8)*P*8 + p*8], so one q register holds 4 consecutive k of a pixel and FMLA by lane uses them; B is a
 * 16-column strip of W^T (four q per k, loaded two at a time to leave room for the accumulators); a 16-column
 * output tile is two C8 blocks of Y. Register tiles: 6 pixels x 16 channels (24 accumulators), or 8 pixels x 8
 * channels for a strip with 8 real columns (M = 8 mod 16). Loop nest, tasks and k-blocks as the AVX2 kernel's
 * (kernels/x86/blocked_pw_f32.c): every output sums its products in c order with FMA, then the bias, the
 * residual and the activation, as the reference, whatever the thread count. */
#include <arm_neon.h>
#include "neon.h"
#include "neon_act.h"

#define BLK EP_LAYOUT_BLOCK
#define BP_NR EP_PACK_NR
#define BP_KC 256        /* channels per k-block */
#define BP_PC 192        /* pixels per chunk (a multiple of the tiles' 6 and 8) */

typedef struct bp_job {
    const float *x, *w, *b, *r;
    float *y;
    int64_t C, M, P, strips;
    int64_t chunks, groups;   /* pixel chunks per image, strip ranges per chunk */
    int64_t nkb;              /* k-blocks */
    const ep_conv2d_params *p;
} bp_job;

/* One tile of np pixels x nb blocks of 8 channels over kc channels (a multiple of 8): x at the tile's first
 * pixel in the k-block's first channel block (the next block xs floats further), w at the strip's row of that
 * channel; y and r at the tile's first output block, the second one ys floats further. first: the sums start
 * at 0, else at the partial sums in y; last: the epilogue follows (bias, residual, activation). */
NEON_INLINE void bp_tile_n(const int np, const int nb, const float *x, int64_t xs, int64_t kc, const float *w, float *y,
                           int64_t ys, int first, int last, const float *b, const float *r, const ep_conv2d_params *p) {
    float32x4_t acc[8][4], a[8];
#pragma GCC unroll 8
    for (int i = 0; i < np; i++)
#pragma GCC unroll 4
        for (int q = 0; q < 2 * nb; q++)
            acc[i][q] = first ? vdupq_n_f32(0.0f) : vld1q_f32(y + (q / 2) * ys + i * BLK + (q % 2) * 4);
    for (int64_t k0 = 0; k0 < kc; k0 += BLK) {
#pragma GCC unroll 2
        for (int h = 0; h < BLK; h += 4) {
#pragma GCC unroll 8
            for (int i = 0; i < np; i++) a[i] = vld1q_f32(x + i * BLK + h);
            const float *wk = w + h * BP_NR;
#define BP_K(L)                                                                                       \
            {                                                                                         \
                const float32x4_t b0 = vld1q_f32(wk + L * BP_NR), b1 = vld1q_f32(wk + L * BP_NR + 4); \
                _Pragma("GCC unroll 8") for (int i = 0; i < np; i++) {                              \
                    acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, a[i], L);                              \
                    acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, a[i], L);                              \
                }                                                                                     \
                if (nb > 1) {                                                                         \
                    const float32x4_t b2 = vld1q_f32(wk + L * BP_NR + 8), b3 = vld1q_f32(wk + L * BP_NR + 12); \
                    _Pragma("GCC unroll 8") for (int i = 0; i < np; i++) {                          \
                        acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, a[i], L);                          \
                        acc[i][3] = vfmaq_laneq_f32(acc[i][3], b3, a[i], L);                          \
                    }                                                                                 \
                }                                                                                     \
            }
            BP_K(0) BP_K(1) BP_K(2) BP_K(3)
#undef BP_K
        }
        x += xs;
        w += BLK * BP_NR;
    }
    const int vec = neon_act_vector(p->act);
#pragma GCC unroll 2
    for (int j = 0; j < nb; j++) {
        float *yj = y + j * ys;
        const float32x4_t b0 = b ? vld1q_f32(b + j * BLK) : vdupq_n_f32(0.0f), b1 = b ? vld1q_f32(b + j * BLK + 4) : b0;
#pragma GCC unroll 8
        for (int i = 0; i < np; i++) {
            float32x4_t v0 = acc[i][2 * j], v1 = acc[i][2 * j + 1];
            if (last) {
                if (b) v0 = vaddq_f32(v0, b0), v1 = vaddq_f32(v1, b1);
                if (r) {
                    const float *ri = r + j * ys + i * BLK;
                    v0 = vaddq_f32(v0, vld1q_f32(ri)), v1 = vaddq_f32(v1, vld1q_f32(ri + 4));
                }
                if (vec) {
                    v0 = neon_act4(p->act, p->act_alpha, p->act_beta, v0);
                    v1 = neon_act4(p->act, p->act_alpha, p->act_beta, v1);
                }
            }
            vst1q_f32(yj + i * BLK, v0), vst1q_f32(yj + i * BLK + 4, v1);
        }
        if (last && !vec) ep_neon_act_apply(p->act, yj, np * BLK, p->act_alpha, p->act_beta);
    }
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
    default: bp_tile_n(8, 1, BP_ARGS); return;
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
        for (int64_t q = q0; q < q1; q += 8, xp += 8 * BLK, yp += 8 * BLK, rr = rr ? rr + 8 * BLK : NULL)
            bp_tile1((int)bp_min(8, q1 - q), xp, P * BLK, kc, w, yp, P * BLK, first, last, b, rr, j->p);
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

int ep_neon_conv2d_blocked_pw_f32(const ep_op *op) {
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
 * (whole groups of 8 but the last): 4 x 4 transposes, the tail pixels one at a time. */
static void ro_task(void *ctx, uint32_t t) {
    const ro_job *j = (const ro_job *)ctx;
    const int64_t P = j->P, blk = t / j->parts;
    const ep_range pr = ep_task_range((P + 7) / 8, j->parts, (uint32_t)(t % j->parts));
    const int64_t hi = bp_min(P, pr.hi * 8);
    const float *x = j->x + blk * P * BLK;
    float *y = j->y + blk * P * BLK;
    int64_t p = pr.lo * 8;
    float32x4_t v[8];
    if (j->to_c8) {
        for (; p + 4 <= hi; p += 4) {
            for (int c = 0; c < 8; c++) v[c] = vld1q_f32(x + c * P + p);
            neon_tr4(v), neon_tr4(v + 4);
            for (int i = 0; i < 4; i++) {
                vst1q_f32(y + (p + i) * BLK, v[i]);
                vst1q_f32(y + (p + i) * BLK + 4, v[i + 4]);
            }
        }
        for (; p < hi; p++)
            for (int c = 0; c < 8; c++) y[p * BLK + c] = x[c * P + p];
    } else {
        for (; p + 4 <= hi; p += 4) {
            for (int i = 0; i < 4; i++) {
                v[i] = vld1q_f32(x + (p + i) * BLK);
                v[i + 4] = vld1q_f32(x + (p + i) * BLK + 4);
            }
            neon_tr4(v), neon_tr4(v + 4);
            for (int c = 0; c < 8; c++) vst1q_f32(y + c * P + p, v[c]);
        }
        for (; p < hi; p++)
            for (int c = 0; c < 8; c++) y[c * P + p] = x[p * BLK + c];
    }
}

int ep_neon_reorder_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], P = (int64_t)xt->dims[2] * xt->dims[3];
    if (N == 0 || C == 0 || P == 0) return EP_OK;
    ro_job j = {(const float *)xt->data, (float *)yt->data, C / BLK, P, 1, yt->layout == EP_LAYOUT_C8};
    const int64_t blocks = N * j.CB, T = ep_pool_threads_for(op->pool, (uint64_t)blocks * (uint64_t)P * BLK);
    if (T > 1 && blocks < 4 * T) j.parts = bp_min((4 * T + blocks - 1) / blocks, (P + 7) / 8);
    ep_parallel_for(op->pool, (uint32_t)(blocks * j.parts), ro_task, &j);
    return EP_OK;
}
