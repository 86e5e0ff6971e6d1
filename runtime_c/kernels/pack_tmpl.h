/* Packed-GEMM drivers (blocking, im2col strip packing, tails), compiled once per ISA.
 *
 * The including file defines, before including this one:
 *   pk_tile(...)  the MR x NR micro-kernel (see pack_common.h):
 *     static void pk_tile(int mr, int64_t kc, const float *a, int64_t a_sm, int64_t a_sk,
 *                         const float *b, int64_t b_sk, float *c, int64_t ldc, int load_c, const pk_epi *e);
 *     mr in 1..MR rows; all NR columns, row k of B at b + k*b_sk (NR: a packed strip); load_c: accumulate
 *     onto C; e: NULL or the epilogue.
 *   PK_EVEN16(d, s)  d[j] = s[2j] for j < NR (reading s[0..2 NR)): stride-2 im2col rows (the stems).
 * It then exports EP_ISA_FN(conv2d_packed_f32) (CONV2D variant PACKED) and EP_ISA_FN(gemm_packed_f32)
 * (GEMM variant PACKED). Loop nest (Goto/BLIS): k-blocks of KC, row blocks of MC, NR-column strips
 * (a KC x NR strip stays in L1 while the MC x KC weight block streams from L2), MR-row panels.
 * kernels/winograd_tmpl.h (included after this file) adds EP_ISA_FN(conv2d_winograd_f32) on the same GEMM.
 *
 * Threads (op->pool): work is split into whole MR x NR tiles (N at strip boundaries, M at panel boundaries) and
 * every tile runs the same micro-kernel calls over the same k-blocks as in one pk_gemm_run over all of C, so
 * results are bit-identical for any thread count. The packed conv splits each im2col pass by strips (a thread
 * packs the strips it multiplies: no barrier) or, when output-channel panels split more evenly (few strips),
 * packs the strips in parallel, then splits the GEMM along M.
 * The shared scratch is written in disjoint strip ranges: scratch size does not depend on threads. */
#include <string.h>
#include "ep_ops.h"
#include "pack_common.h"

static inline int64_t pk_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* A tile narrower than NR: run the full-width micro-kernel on a local copy. */
static void pk_tile_partial(int mr, int nr, int64_t kc, const float *a, int64_t a_sm, int64_t a_sk,
                            const float *b, int64_t b_sk, float *c, int64_t ldc, int load_c, const pk_epi *e) {
    float tc[PK_MR * PK_NR], tr[PK_MR * PK_NR], tb[PK_MR * PK_NR];
    memset(tc, 0, sizeof(tc));
    if (load_c)
        for (int i = 0; i < mr; i++) memcpy(tc + i * PK_NR, c + i * ldc, (size_t)nr * 4);
    pk_epi te;
    if (e) {
        te = *e;
        if (e->res) {
            memset(tr, 0, sizeof(tr));
            for (int i = 0; i < mr; i++) memcpy(tr + i * PK_NR, e->res + i * e->res_ld, (size_t)nr * 4);
            te.res = tr;
            te.res_ld = PK_NR;
        }
        if (e->bias_col) {
            memset(tb, 0, sizeof(tb));
            for (int i = 0; i < mr; i++) memcpy(tb + i * PK_NR, e->bias_col + i * e->bias_col_ld, (size_t)nr * 4);
            te.bias_col = tb;
            te.bias_col_ld = PK_NR;
        }
    }
    pk_tile(mr, kc, a, a_sm, a_sk, b, b_sk, tc, PK_NR, load_c, e ? &te : NULL);
    for (int i = 0; i < mr; i++) memcpy(c + i * ldc, tc + i * PK_NR, (size_t)nr * 4);
}

#ifndef PK_CVT_F16
#define PK_CVT_F16(d, s, n) pk_cvt_f16_scalar((d), (s), (n))
#endif
#ifndef PK_CVT_BF16
#define PK_CVT_BF16(d, s, n) pk_cvt_bf16((d), (s), (n))
#endif

/* n elements of a 16-bit weight operand (dt EP_DTYPE_F16 or EP_DTYPE_BF16) as float32 in d. */
static void pk_cvt(float *d, const void *s, int64_t n, int dt) {
    if (dt == EP_DTYPE_F16)
        PK_CVT_F16(d, (const uint16_t *)s, n);
    else
        PK_CVT_BF16(d, (const uint16_t *)s, n);
}

/* C[M,N] (row stride ldc) = epilogue(A[M,K] B[K,N]); A row m, column k at a + m*a_rm + k*a_sk
 * (rows of one MR panel a_sm apart); B's columns [s*NR, s*NR + NR) at b + s*b_ss, their row k b_sk further
 * on (strips [ceil(N/NR)][K][NR]: b_ss K*NR, b_sk NR; a plain row-major B: b_ss NR, b_sk its row stride,
 * each row readable to a multiple of NR). Offsets count elements of a_dt / b_dt (EP_DTYPE_F32, or 16-bit
 * weights: an A of packed panels, a_sm 1 and a_sk MR, or a B of packed strips, b_sk NR), which are converted
 * to float32 per tile k-block before the same micro-kernel calls: a 16-bit operand gives the float32 result
 * of its converted values bit for bit. e holds the epilogue's pointers for element (0,0), or is NULL
 * (plain C = A B). */
static void pk_gemm_blocks(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, int64_t a_rm, int64_t a_sm,
                           int64_t a_sk, const void *b, int b_dt, int64_t b_ss, int64_t b_sk, float *c, int64_t ldc,
                           const pk_epi *e, float *ah, float *bh) {
#ifdef PK_TILE1_W16
    /* one row of float32 A against 16-bit B (a GEMV on 16-bit weights): the ISA's one-row tile converts B in
     * registers, the same sums as its one-row tile on the converted strip */
    const int direct = M == 1 && a_dt == EP_DTYPE_F32 && b_dt != EP_DTYPE_F32;
#endif
    for (int64_t k0 = 0; k0 < K; k0 += PK_KC) {
        const int64_t kc = pk_min(PK_KC, K - k0);
        const int load_c = k0 > 0, last = k0 + kc == K;
        for (int64_t m0 = 0; m0 < M; m0 += PK_MC) {
            const int64_t m1 = pk_min(M, m0 + PK_MC);
            for (int64_t n0 = 0; n0 < N; n0 += PK_NR) {
                const int nr = (int)pk_min(PK_NR, N - n0);
#ifdef PK_TILE1_W16
                if (direct && nr == PK_NR) {
                    pk_epi te;
                    PK_TILE1_W16(kc, (const float *)a + k0 * a_sk, a_sk,
                                 (const uint16_t *)pk_off(b, b_dt, (n0 / PK_NR) * b_ss + k0 * b_sk), b_sk, c + n0,
                                 load_c, last ? pk_epi_at(&te, e, 0, n0) : NULL, b_dt);
                    continue;
                }
#endif
                const float *bs = (const float *)pk_off(b, b_dt, (n0 / PK_NR) * b_ss + k0 * b_sk);
                if (b_dt != EP_DTYPE_F32) {
                    pk_cvt(bh, bs, kc * PK_NR, b_dt);
                    bs = bh;
                }
                for (int64_t m = m0; m < m1; m += PK_MR) {
                    const int mr = (int)pk_min(PK_MR, m1 - m);
                    const float *as = (const float *)pk_off(a, a_dt, m * a_rm + k0 * a_sk);
                    if (a_dt != EP_DTYPE_F32) {
                        pk_cvt(ah, as, kc * PK_MR, a_dt);
                        as = ah;
                    }
                    float *ct = c + m * ldc + n0;
                    pk_epi te;
                    const pk_epi *tp = last ? pk_epi_at(&te, e, m, n0) : NULL;
                    if (nr == PK_NR)
                        pk_tile(mr, kc, as, a_sm, a_sk, bs, b_sk, ct, ldc, load_c, tp);
                    else
                        pk_tile_partial(mr, nr, kc, as, a_sm, a_sk, bs, b_sk, ct, ldc, load_c, tp);
                }
            }
        }
    }
}

/* pk_gemm_blocks, with the tile buffers of 16-bit operands on this call's stack (16 + 6 KiB) only when
 * there are any. */
static void pk_gemm_core_h(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, int64_t a_rm, int64_t a_sm,
                           int64_t a_sk, const void *b, int b_dt, int64_t b_ss, int64_t b_sk, float *c, int64_t ldc,
                           const pk_epi *e) {
    float ah[PK_KC * PK_MR], bh[PK_KC * PK_NR];
    pk_gemm_blocks(M, N, K, a, a_dt, a_rm, a_sm, a_sk, b, b_dt, b_ss, b_sk, c, ldc, e, ah, bh);
}

static void pk_gemm_core(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, int64_t a_rm, int64_t a_sm,
                         int64_t a_sk, const void *b, int b_dt, int64_t b_ss, int64_t b_sk, float *c, int64_t ldc,
                         const pk_epi *e) {
    if (a_dt == EP_DTYPE_F32 && b_dt == EP_DTYPE_F32)
        pk_gemm_blocks(M, N, K, a, a_dt, a_rm, a_sm, a_sk, b, b_dt, b_ss, b_sk, c, ldc, e, NULL, NULL);
    else
        pk_gemm_core_h(M, N, K, a, a_dt, a_rm, a_sm, a_sk, b, b_dt, b_ss, b_sk, c, ldc, e);
}

/* pk_gemm_core with B as strips [ceil(N/NR)][K][NR]. */
static void pk_gemm_run(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, int64_t a_rm, int64_t a_sm,
                        int64_t a_sk, const void *b, int b_dt, float *c, int64_t ldc, const pk_epi *e) {
    pk_gemm_core(M, N, K, a, a_dt, a_rm, a_sm, a_sk, b, b_dt, K * PK_NR, PK_NR, c, ldc, e);
}

/* A pk_gemm_run split across threads: `parts` ranges of NR-strips (along_n) or of MR-panels. */
typedef struct pk_gemm_job {
    int64_t M, N, K, a_rm, a_sm, a_sk, ldc, parts;
    const void *a, *b;
    int a_dt, b_dt;
    float *c;
    const pk_epi *e;
    int along_n;
} pk_gemm_job;

static void pk_gemm_task(void *ctx, uint32_t t) {
    const pk_gemm_job *j = (const pk_gemm_job *)ctx;
    int64_t lo, hi;
    pk_epi te;
    if (j->along_n) {
        ep_split_range((j->N + PK_NR - 1) / PK_NR, j->parts, t, &lo, &hi);
        const int64_t n0 = lo * PK_NR, n1 = pk_min(j->N, hi * PK_NR);
        if (n0 < n1)
            pk_gemm_run(j->M, n1 - n0, j->K, j->a, j->a_dt, j->a_rm, j->a_sm, j->a_sk,
                        pk_off(j->b, j->b_dt, lo * j->K * PK_NR), j->b_dt, j->c + n0, j->ldc, pk_epi_at(&te, j->e, 0, n0));
    } else {
        ep_split_range((j->M + PK_MR - 1) / PK_MR, j->parts, t, &lo, &hi);
        const int64_t m0 = lo * PK_MR, m1 = pk_min(j->M, hi * PK_MR);
        if (m0 < m1)
            pk_gemm_run(m1 - m0, j->N, j->K, pk_off(j->a, j->a_dt, m0 * j->a_rm), j->a_dt, j->a_rm, j->a_sm, j->a_sk,
                        j->b, j->b_dt, j->c + m0 * j->ldc, j->ldc, pk_epi_at(&te, j->e, m0, 0));
    }
}

/* pk_gemm_run on the pool: split along N (strips) or M (panels), whichever balances better. */
static void pk_gemm_par(struct ep_pool *pool, int64_t M, int64_t N, int64_t K, const void *a, int a_dt, int64_t a_rm,
                        int64_t a_sm, int64_t a_sk, const void *b, int b_dt, float *c, int64_t ldc, const pk_epi *e) {
    const int64_t T = ep_pool_threads_for(pool, (uint64_t)M * (uint64_t)N * (uint64_t)K);
    const int64_t strips = (N + PK_NR - 1) / PK_NR, panels = (M + PK_MR - 1) / PK_MR;
    if (T <= 1 || (strips < 2 && panels < 2)) {
        pk_gemm_run(M, N, K, a, a_dt, a_rm, a_sm, a_sk, b, b_dt, c, ldc, e);
        return;
    }
    const int64_t pn = pk_min(T, strips), pm = pk_min(T, panels);
    /* the largest share of one thread: ceil(units / parts) / units; compare cross-multiplied */
    const int along_n = (strips + pn - 1) / pn * panels <= (panels + pm - 1) / pm * strips;
    pk_gemm_job j = {M, N, K, a_rm, a_sm, a_sk, ldc, along_n ? pn : pm, a, b, a_dt, b_dt, c, e, along_n};
    ep_parallel_for(pool, (uint32_t)j.parts, pk_gemm_task, &j);
}

/* im2col of ns strips of NR output pixels starting at pixel p0 (of P = OH*OW) of one image x[C,H,W]
 * into dst [ns][K][NR], K = C*KH*KW in (c, kh, kw) order; pixels past P and taps in the padding are 0. */
static void pk_pack_strips(float *dst, const float *x, int64_t ns, int64_t p0, int64_t P, int64_t C, int64_t H,
                           int64_t W, int64_t OW, const ep_conv2d_params *p) {
    const int64_t KH = p->kernel[0], KW = p->kernel[1], K = C * KH * KW, HW = H * W;
    const int64_t sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    const int64_t pt = p->pads[0], pl = p->pads[1];
    const int direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && P == HW;   /* pixel q is x[c, q] */
    for (int64_t s = 0; s < ns; s++) {
        float *d = dst + s * K * PK_NR;
        const int64_t q0 = p0 + s * PK_NR, cnt = pk_min(PK_NR, P - q0);
        if (direct) {
            pk_pack_plain(d, x, 1, q0, P, C, HW);
            continue;
        }
        int64_t ih0[PK_NR], iw0[PK_NR], off[PK_NR];
        int ok[PK_NR];
        for (int64_t j = 0; j < cnt; j++) {
            const int64_t q = q0 + j, oh = q / OW, ow = q % OW;
            ih0[j] = oh * sh - pt;
            iw0[j] = ow * sw - pl;
        }
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                int contiguous = cnt == PK_NR;
                for (int64_t j = 0; j < PK_NR; j++) {
                    const int64_t ih = j < cnt ? ih0[j] + kh * dh : -1, iw = j < cnt ? iw0[j] + kw * dw : -1;
                    ok[j] = ih >= 0 && ih < H && iw >= 0 && iw < W;
                    off[j] = ok[j] ? ih * W + iw : 0;
                    contiguous &= ok[j] && off[j] == off[0] + j;
                }
                float *dk = d + (kh * KW + kw) * PK_NR;
                const int64_t kstep = KH * KW * PK_NR;
                /* stride 2 along one row, the pair-load inside the plane: one de-interleave per channel */
                int even = !contiguous && cnt == PK_NR && off[0] + 2 * PK_NR <= HW;
                for (int64_t j = 0; even && j < PK_NR; j++) even = ok[j] && off[j] == off[0] + 2 * j;
                if (contiguous) {
                    for (int64_t c = 0; c < C; c++) memcpy(dk + c * kstep, x + c * HW + off[0], PK_NR * 4);
                } else if (even) {
                    for (int64_t c = 0; c < C; c++) PK_EVEN16(dk + c * kstep, x + c * HW + off[0]);
                } else {
                    for (int64_t c = 0; c < C; c++) {
                        const float *xc = x + c * HW;
                        float *dc = dk + c * kstep;
                        for (int64_t j = 0; j < PK_NR; j++) dc[j] = ok[j] ? xc[off[j]] : 0.0f;
                    }
                }
            }
    }
}

/* One im2col pass of the packed conv: strips [s0, s0 + ns) of image x into buf, times the weights. */
typedef struct pk_conv_job {
    const ep_conv2d_params *p;
    const float *x;
    const void *w;         /* packed weight panels, w_dt elements */
    float *buf, *y;
    const pk_epi *e;       /* at pixel p0 of this pass */
    int64_t M, K, C, H, W, OW, P, ns, p0, parts;
    int pack_only, w_dt;
} pk_conv_job;

/* Task t packs its own range of the pass's strips and (unless pack_only) multiplies them. */
static void pk_conv_task(void *ctx, uint32_t t) {
    const pk_conv_job *j = (const pk_conv_job *)ctx;
    const ep_range r = ep_task_range(j->ns, j->parts, t);
    const int64_t lo = r.lo, hi = r.hi;
    if (lo >= hi) return;
    const int64_t q0 = j->p0 + lo * PK_NR;
    float *b = j->buf + lo * j->K * PK_NR;
    pk_epi te;
    pk_pack_strips(b, j->x, hi - lo, q0, j->P, j->C, j->H, j->W, j->OW, j->p);
    if (!j->pack_only)
        pk_gemm_run(j->M, pk_min((hi - lo) * PK_NR, j->P - q0), j->K, j->w, j->w_dt, j->K, 1, PK_MR, b, EP_DTYPE_F32,
                    j->y + q0, j->P, pk_epi_at(&te, j->e, 0, lo * PK_NR));
}

int EP_ISA_FN(conv2d_packed_f32)(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t OH = yt->dims[2], OW = yt->dims[3], P = OH * OW;
    const int64_t K = wt->dims[1], G = p->groups, M = yt->dims[1] / G, Cg = C / G;   /* per group */
    const int64_t gpanels = (M + PK_MR - 1) / PK_MR;
    if (N == 0 || P == 0) return EP_OK;
    const int64_t strips = (P + PK_NR - 1) / PK_NR;
    const int64_t per_pass = pk_min(strips, (int64_t)(op->scratch_size / ((uint64_t)K * PK_NR * 4)));
    float *buf = (float *)op->scratch;
    struct ep_pool *pool = op->pool;
    /* decided once for the whole op (a sleeping worker wakes during the first pass, then stays awake) */
    const int64_t T = ep_pool_threads_for(pool, (uint64_t)N * (uint64_t)G * (uint64_t)M * (uint64_t)K * (uint64_t)P);
    pk_epi e = {NULL, NULL, 0, NULL, P, p->act, p->act_alpha, p->act_beta};
    /* one GEMM per image and group: group g reads input channels g*Cg.., writes output channels g*M.. */
    for (int64_t ng = 0; ng < N * G; ng++) {
        const int64_t g = ng % G;
        const float *x = (const float *)xt->data + ng * Cg * H * W;
        const void *wg = pk_off(wt->data, wt->dtype, g * gpanels * K * PK_MR);
        float *y = (float *)yt->data + ng * M * P;
        e.bias_row = bt ? (const float *)bt->data + g * M : NULL;
        for (int64_t s0 = 0; s0 < strips; s0 += per_pass) {
            const int64_t ns = pk_min(per_pass, strips - s0), p0 = s0 * PK_NR;
            e.res = rt ? (const float *)rt->data + ng * M * P + p0 : NULL;
            pk_conv_job j = {p, x, wg, buf, y, &e, M, K, Cg, H, W, OW, P, ns, p0, pk_min(T, ns), 0, wt->dtype};
            /* by strips unless panels give threads more even shares: units / ceil(units / T), cross-multiplied */
            const int64_t panels = (M + PK_MR - 1) / PK_MR;
            if (T <= 1 || (ns >= T && ns * ((panels + T - 1) / T) >= panels * ((ns + T - 1) / T))) {
                ep_parallel_for(pool, (uint32_t)j.parts, pk_conv_task, &j);
            } else {
                j.pack_only = 1;
                ep_parallel_for(pool, (uint32_t)j.parts, pk_conv_task, &j);
                pk_gemm_par(pool, M, pk_min(ns * PK_NR, P - p0), K, wg, wt->dtype, K, 1, PK_MR, buf, EP_DTYPE_F32, y + p0,
                            P, &e);
            }
        }
    }
    return EP_OK;
}

/* ---- CONV2D POINTWISE: Y^T = X^T W^T, the pixels as the GEMM's rows ----
 * A convolution on a small map has few pixels and many channels: as C = W X its pixels are the N of the
 * GEMM, whose 16-column strips a 7x7 map (49 pixels) fills to 77 %, and a 4-pixel map (a 1-D conv over a
 * short window) to 25 %. Here the pixels are the rows (6-row panels: 91 % and 67 %) and the output channels
 * the columns (W^T packed at compile time as the strips, as GEMM PACKED packs B). Each chunk of pixels (as
 * many as the scratch holds: Pc rows of C^T after Pc*K floats of A panels, K = C*KH*KW) packs its im2col
 * rows into A panels (a tap in the padding is 0; a 1x1 stride-1 conv without pads copies runs of X), runs
 * the packed GEMM on the pool with bias and activation in the micro-kernel's epilogue, and is written back
 * to Y's planes through PK_T8 transposes; a residual is added there, before the activation. */
#ifndef PK_T8
/* d[c * ldd + i] = s[i * lds + c], i, c < 8 */
static void pk_t8_scalar(float *d, int64_t ldd, const float *s, int64_t lds) {
    for (int i = 0; i < 8; i++)
        for (int c = 0; c < 8; c++) d[c * ldd + i] = s[i * lds + c];
}
#define PK_T8(d, ldd, s, lds) pk_t8_scalar((d), (ldd), (s), (lds))
#endif

typedef struct pk_pw_job {
    const float *ct, *res;   /* C^T [pc][M]; the residual at the chunk's first pixel, or NULL */
    float *y;                /* Y at the chunk's first pixel of channel 0 */
    int64_t M, P, pc, parts;
    const ep_conv2d_params *p;
    int act_after;
} pk_pw_job;

/* Channels [lo, hi) of a chunk: C^T's columns to Y's rows, then residual and activation. */
static void pk_pw_write(void *ctx, uint32_t t) {
    const pk_pw_job *j = (const pk_pw_job *)ctx;
    int64_t lo, hi;
    ep_split_range((j->M + 7) / 8, j->parts, t, &lo, &hi);
    lo *= 8, hi = pk_min(hi * 8, j->M);
    const int64_t M = j->M, P = j->P, pc = j->pc;
    int64_t m = lo;
    for (; m + 8 <= hi; m += 8) {
        int64_t i = 0;
        for (; i + 8 <= pc; i += 8) PK_T8(j->y + m * P + i, P, j->ct + i * M + m, M);
        for (; i < pc; i++)
            for (int64_t c = 0; c < 8; c++) j->y[(m + c) * P + i] = j->ct[i * M + m + c];
    }
    for (; m < hi; m++)
        for (int64_t i = 0; i < pc; i++) j->y[m * P + i] = j->ct[i * M + m];
    if (!j->act_after) return;
    for (m = lo; m < hi; m++) {
        float *yr = j->y + m * P;
        if (j->res)
            for (int64_t i = 0; i < pc; i++) yr[i] += j->res[m * P + i];
        EP_ISA_ACT_APPLY(j->p->act, yr, pc, j->p->act_alpha, j->p->act_beta);
    }
}

int EP_ISA_FN(conv2d_pointwise_f32)(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OW = yt->dims[3], P = yt->dims[2] * OW;
    const int64_t KH = p->kernel[0], KW = p->kernel[1], K = C * KH * KW;
    if (N == 0 || M == 0 || P == 0) return EP_OK;
    const int plain = KH == 1 && KW == 1 && p->stride[0] == 1 && p->stride[1] == 1 &&
                      !p->pads[0] && !p->pads[1] && !p->pads[2] && !p->pads[3];
    /* Pc pixels per chunk, a multiple of MR: Pc * K floats of A panels, then Pc * M of C^T */
    int64_t Pc = (int64_t)(op->scratch_size / ((uint64_t)(K + M) * 4)) / PK_MR * PK_MR;
    if (Pc > (P + PK_MR - 1) / PK_MR * PK_MR) Pc = (P + PK_MR - 1) / PK_MR * PK_MR;
    float *apan = (float *)op->scratch, *ct = apan + Pc * K;
    const float *bias = bt ? (const float *)bt->data : NULL;
    const int act_after = rt != NULL || K == 0;   /* the residual comes before the activation */
    pk_epi e = {NULL, bias, 0, NULL, M, act_after ? EP_ACT_NONE : p->act, p->act_alpha, p->act_beta};
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)N * (uint64_t)M * (uint64_t)K * (uint64_t)P);
    for (int64_t n = 0; n < N; n++) {
        const float *x = (const float *)xt->data + n * C * H * W;
        for (int64_t p0 = 0; p0 < P; p0 += Pc) {
            const int64_t pc = pk_min(Pc, P - p0);
            /* A panels [pc/MR][K][MR]: panel q, element (k, i) = pixel p0 + q*MR + i's tap k, zero past pc */
            for (int64_t q = 0; q * PK_MR < pc; q++) {
                float *d = apan + q * K * PK_MR;
                const int64_t i0 = p0 + q * PK_MR, cnt = pk_min(PK_MR, P - i0);
                if (plain) {   /* 1x1, stride 1, no pads: the output's pixels are the input's */
                    for (int64_t c = 0; c < C; c++) {
                        const float *src = x + c * H * W + i0;
                        for (int64_t i = 0; i < cnt; i++) d[c * PK_MR + i] = src[i];
                        for (int64_t i = cnt; i < PK_MR; i++) d[c * PK_MR + i] = 0.0f;
                    }
                    continue;
                }
                int64_t ih0[PK_MR], iw0[PK_MR];   /* each pixel's window corner in the input */
                for (int64_t i = 0; i < cnt; i++) {
                    ih0[i] = (i0 + i) / OW * p->stride[0] - p->pads[0];
                    iw0[i] = (i0 + i) % OW * p->stride[1] - p->pads[1];
                }
                for (int64_t c = 0, k = 0; c < C; c++)
                    for (int64_t kh = 0; kh < KH; kh++)
                        for (int64_t kw = 0; kw < KW; kw++, k++) {
                            const float *xc = x + c * H * W;
                            float *dk = d + k * PK_MR;
                            for (int64_t i = 0; i < cnt; i++) {
                                const int64_t ih = ih0[i] + kh * p->dilation[0], iw = iw0[i] + kw * p->dilation[1];
                                dk[i] = ih >= 0 && ih < H && iw >= 0 && iw < W ? xc[ih * W + iw] : 0.0f;
                            }
                            for (int64_t i = cnt; i < PK_MR; i++) dk[i] = 0.0f;
                        }
            }
            if (K > 0) {
                pk_gemm_par(op->pool, pc, M, K, apan, EP_DTYPE_F32, K, 1, PK_MR, wt->data, wt->dtype, ct, M, &e);
            } else {   /* an empty sum: the bias alone */
                for (int64_t i = 0; i < pc; i++)
                    for (int64_t m = 0; m < M; m++) ct[i * M + m] = bias ? bias[m] : 0.0f;
            }
            pk_pw_job j = {ct, rt ? (const float *)rt->data + n * M * P + p0 : NULL,
                           (float *)yt->data + n * M * P + p0, M, P, pc, pk_min(T, (M + 7) / 8), p, act_after};
            ep_parallel_for(op->pool, (uint32_t)j.parts, pk_pw_write, &j);
        }
    }
    return EP_OK;
}

int EP_ISA_FN(gemm_packed_f32)(const ep_op *op) {
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *at = op->in[0], *bt = op->in[1], *ct = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t M = at->dims[0], K = at->dims[1], N = yt->dims[1];
    if (M == 0) return EP_OK;
    float *y = (float *)yt->data;
    if (K == 0) {   /* empty sum: the epilogue alone, through a zero strip-free path */
        for (int64_t i = 0; i < M * N; i++) y[i] = 0.0f;
    }
    pk_epi e = {NULL, ct ? (const float *)ct->data : NULL,
                (ct && ct->rank == 2 && ct->dims[0] == M && M != 1) ? N : 0,
                rt ? (const float *)rt->data : NULL, N, p->act, p->act_alpha, p->act_beta};
    if (K == 0) {
        for (int64_t i = 0; i < M; i++) {
            float *yr = y + i * N;
            if (e.bias_col)
                for (int64_t j = 0; j < N; j++) yr[j] += e.bias_col[i * e.bias_col_ld + j];
            if (e.res)
                for (int64_t j = 0; j < N; j++) yr[j] += e.res[i * N + j];
            if (p->act != EP_ACT_NONE) EP_ISA_ACT_APPLY(p->act, yr, N, p->act_alpha, p->act_beta);
        }
        return EP_OK;
    }
    pk_gemm_par(op->pool, M, N, K, at->data, EP_DTYPE_F32, K, K, 1, bt->data, bt->dtype, y, N, &e);
    return EP_OK;
}

/* C[M,N] (row stride ldc) = epilogue(A B) on the calling thread, A packed weight panels [ceil(M/MR)][K][MR]
 * (a_dt elements: f32, or 16-bit weights), B
 * plain rows (row k at b + k*ldb, readable to column ceil(N/NR)*NR): the 1x1 stages of kernels/invres_tmpl.h,
 * which compute each element exactly as the packed conv does (the same micro-kernel calls on the same values). */
void EP_ISA_FN(pk_gemm_panels_f32)(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, const float *b,
                                   int64_t ldb, float *c, int64_t ldc, const pk_epi *e);
void EP_ISA_FN(pk_gemm_panels_f32)(int64_t M, int64_t N, int64_t K, const void *a, int a_dt, const float *b,
                                   int64_t ldb, float *c, int64_t ldc, const pk_epi *e) {
    pk_gemm_core(M, N, K, a, a_dt, K, 1, PK_MR, b, EP_DTYPE_F32, PK_NR, ldb, c, ldc, e);
}
