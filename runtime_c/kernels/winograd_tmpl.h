/* Winograd F(4x4, 3x3) convolution (CONV2D variant WINOGRAD: 3x3, stride 1, dilation 1, groups 1),
 * compiled once per ISA after kernels/pack_tmpl.h (the same micro-kernel), exported as EP_ISA_FN(conv2d_winograd_f32).
 *
 * Lavin & Gray 2016, points 0, +-1, +-2, inf: per 4x4 output tile, V = B^T d B of the 6x6 input patch d,
 * then 36 independent GEMMs Mo[xi] = U[xi] V[xi] over the channels (U = G g G^T, transformed and packed
 * by the compiler as [36][ceil(M/MR)][C][MR]), then Y = A^T Mo A, + bias, + residual, activation.
 * 36 multiplies per 16 outputs per channel pair instead of 144. Tiles (row-major over the output) are
 * processed in blocks of T (a multiple of NR) that fit the scratch:
 *   V  [36][T/NR][C][NR]   transformed input, in the GEMM's strip layout
 *   Mo [36][Mp][T]         GEMM results (Mp = ceil(M/MR)*MR)
 * Transforms work on NR tiles at a time along the contiguous tile axis, so they vectorise on every ISA.
 * Accuracy: the transforms' constants (up to 8) grow rounding error; the end-to-end check is 1e-4.
 * Threads: each block runs as three parallel phases over the shared scratch, each writing disjoint parts
 * (input transform by (strip, channel), the 36 GEMMs by xi, output transform by output channel), so the
 * scratch the plan gives is enough for any thread count and every value is computed as with one thread. */
#ifndef EP_WINOGRAD_TMPL_H
#define EP_WINOGRAD_TMPL_H
#include "winograd_common.h"

/* What both Winograd drivers (this file and kernels/winograd1d_tmpl.h) share: the GEMMs' operands and the
 * block state, the first member of each driver's job, so that one GEMM task and one block loop serve both. */
typedef struct wg_gemm {
    const float *U;              /* transformed filters [points][panels][C][MR] */
    float *V, *Mo;               /* scratch: V [points][Tb/NR][C][NR], Mo [points][Mp][Tb] */
    int64_t C, M, panels, Mp, Tb;
    int64_t t0, nb, ns, parts;   /* the block's first tile, its tiles, its NR-tile strips, the phase's tasks */
} wg_gemm;

static void wg_gemm_task(void *ctx, uint32_t xi) {   /* Mo[xi] = U[xi] V[xi] */
    const wg_gemm *g = (const wg_gemm *)ctx;
    pk_gemm_run(g->M, g->nb, g->C, g->U + xi * g->panels * g->C * PK_MR, EP_DTYPE_F32, g->C, 1, PK_MR,
                g->V + xi * g->ns * g->C * PK_NR, EP_DTYPE_F32, g->Mo + xi * g->Mp * g->Tb, g->Tb, NULL);
}

/* Per block of Tb tiles (of T), three parallel phases over the shared scratch: the input transform over
 * (strip, channel) pairs, one GEMM per transform point, the output transform over output channels. job's first
 * member is g. */
static void wg_run_blocks(struct ep_pool *pool, int64_t th, wg_gemm *g, int64_t T, uint32_t points,
                          void (*in)(void *, uint32_t), void (*out)(void *, uint32_t)) {
    for (int64_t t0 = 0; t0 < T; t0 += g->Tb) {
        g->t0 = t0;
        g->nb = pk_min(g->Tb, T - t0);
        g->ns = (g->nb + PK_NR - 1) / PK_NR;
        g->parts = pk_min(th, g->ns * g->C);
        ep_parallel_for(pool, (uint32_t)g->parts, in, g);
        ep_parallel_for(th > 1 ? pool : NULL, points, wg_gemm_task, g);
        g->parts = pk_min(th, g->M);
        ep_parallel_for(pool, (uint32_t)g->parts, out, g);
    }
}


/* V for tiles t0 .. t0+nt-1 (nt <= NR) of channel plane x into dst[xi * vstride + j]. */
static void wg_input_strip(float *dst, int64_t vstride, const float *x, int64_t H, int64_t W, int64_t TW, int64_t t0,
                           int nt, int64_t pt, int64_t pl) {
    float d[36][PK_NR], r[36][PK_NR];
    for (int j = 0; j < PK_NR; j++) {
        if (j >= nt) {
            for (int e = 0; e < 36; e++) d[e][j] = 0.0f;
            continue;
        }
        const int64_t t = t0 + j, ih0 = (t / TW) * 4 - pt, iw0 = (t % TW) * 4 - pl;
        if (ih0 >= 0 && ih0 + 6 <= H && iw0 >= 0 && iw0 + 6 <= W) {
            for (int u = 0; u < 6; u++)
                for (int v = 0; v < 6; v++) d[u * 6 + v][j] = x[(ih0 + u) * W + iw0 + v];
        } else {
            for (int u = 0; u < 6; u++)
                for (int v = 0; v < 6; v++) {
                    const int64_t ih = ih0 + u, iw = iw0 + v;
                    d[u * 6 + v][j] = ih >= 0 && ih < H && iw >= 0 && iw < W ? x[ih * W + iw] : 0.0f;
                }
        }
    }
    /* rows: r = d B (each row of the patch), then columns: V = B^T r; both along the tile axis j */
    for (int u = 0; u < 6; u++)
        for (int j = 0; j < PK_NR; j++) {
            float tmp[6];
            WG_BT(&d[u * 6][j], PK_NR, tmp, 1);
            for (int v = 0; v < 6; v++) r[u * 6 + v][j] = tmp[v];
        }
    for (int v = 0; v < 6; v++)
        for (int j = 0; j < PK_NR; j++) {
            float tmp[6];
            WG_BT(&r[v][j], 6 * PK_NR, tmp, 1);
            for (int u = 0; u < 6; u++) dst[(u * 6 + v) * vstride + j] = tmp[u];
        }
}

/* Y tiles t0 .. t0+nt-1 of output channel m from mo[xi * mstride + j], with the epilogue. */
static void wg_output_strip(float *y, const float *res, const float *mo, int64_t mstride, int64_t OH, int64_t OW,
                            int64_t TW, int64_t t0, int nt, float bias, const ep_conv2d_params *p) {
    float s[24][PK_NR], o[16][PK_NR];
    for (int u = 0; u < 6; u++)         /* columns: s = A^T m (6x6 -> 4x6) */
        for (int j = 0; j < PK_NR; j++) {
            float tmp[4];
            WG_AT(mo + u * mstride + j, 6 * mstride, tmp, 1);
            for (int a = 0; a < 4; a++) s[a * 6 + u][j] = tmp[a];
        }
    for (int a = 0; a < 4; a++)         /* rows: o = s A (4x6 -> 4x4) */
        for (int j = 0; j < PK_NR; j++) {
            float tmp[4];
            WG_AT(&s[a * 6][j], PK_NR, tmp, 1);
            for (int b = 0; b < 4; b++) o[a * 4 + b][j] = tmp[b];
        }
    for (int j = 0; j < nt; j++) {
        const int64_t t = t0 + j, oh0 = (t / TW) * 4, ow0 = (t % TW) * 4;
        const int64_t nh = pk_min(4, OH - oh0), nw = pk_min(4, OW - ow0);
        for (int64_t a = 0; a < nh; a++) {
            float *yr = y + (oh0 + a) * OW + ow0;
            const float *rr = res ? res + (oh0 + a) * OW + ow0 : NULL;
            for (int64_t b = 0; b < nw; b++) {
                float v = o[a * 4 + b][j] + bias;
                if (rr) v += rr[b];
                yr[b] = v;
            }
            if (p->act != EP_ACT_NONE) EP_ISA_ACT_APPLY(p->act, yr, nw, p->act_alpha, p->act_beta);
        }
    }
}

/* A convolution's arguments for the three phases of its blocks. */
typedef struct wg_job {
    wg_gemm g;   /* first: the GEMM task and block loop read it */
    const ep_conv2d_params *p;
    const float *x, *bias, *res;
    float *y;
    int64_t H, W, OH, OW, TW;
} wg_job;

static void wg_input_task(void *ctx, uint32_t t) {   /* V for (strip, channel) pairs */
    const wg_job *j = (const wg_job *)ctx;
    int64_t lo, hi;
    ep_split_range(j->g.ns * j->g.C, j->g.parts, t, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
        const int64_t s = i / j->g.C, c = i % j->g.C;
        wg_input_strip(j->g.V + (s * j->g.C + c) * PK_NR, j->g.ns * j->g.C * PK_NR, j->x + c * j->H * j->W, j->H, j->W, j->TW,
                       j->g.t0 + s * PK_NR, (int)pk_min(PK_NR, j->g.nb - s * PK_NR), j->p->pads[0], j->p->pads[1]);
    }
}

static void wg_output_task(void *ctx, uint32_t t) {  /* Y for a range of output channels */
    const wg_job *j = (const wg_job *)ctx;
    int64_t lo, hi;
    ep_split_range(j->g.M, j->g.parts, t, &lo, &hi);
    const int64_t plane = j->OH * j->OW;
    for (int64_t m = lo; m < hi; m++)
        for (int64_t s = 0; s < j->g.ns; s++)
            wg_output_strip(j->y + m * plane, j->res ? j->res + m * plane : NULL, j->g.Mo + m * j->g.Tb + s * PK_NR,
                            j->g.Mp * j->g.Tb, j->OH, j->OW, j->TW, j->g.t0 + s * PK_NR,
                            (int)pk_min(PK_NR, j->g.nb - s * PK_NR), j->bias ? j->bias[m] : 0.0f, j->p);
}

int EP_ISA_FN(conv2d_winograd_f32)(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *ut = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    const int64_t panels = ut->dims[1], Mp = panels * PK_MR;
    if (N == 0 || OH == 0 || OW == 0) return EP_OK;
    const int64_t TW = (OW + 3) / 4, T = (OH + 3) / 4 * TW;
    const int64_t per_tile = 36 * (C + Mp) * 4;
    const int64_t Tb = pk_min((int64_t)(op->scratch_size / (uint64_t)per_tile) / PK_NR, (T + PK_NR - 1) / PK_NR) * PK_NR;
    float *V = (float *)op->scratch, *Mo = V + 36 * C * Tb;
    struct ep_pool *pool = op->pool;
    wg_job j = {{(const float *)ut->data, V, Mo, C, M, panels, Mp, Tb, 0, 0, 0, 1}, p, NULL,
                bt ? (const float *)bt->data : NULL, NULL, NULL, H, W, OH, OW, TW};
    const int64_t th = ep_pool_threads_for(pool, (uint64_t)N * 36 * (uint64_t)M * (uint64_t)C * (uint64_t)T);
    for (int64_t n = 0; n < N; n++) {
        j.x = (const float *)xt->data + n * C * H * W;
        j.y = (float *)yt->data + n * M * OH * OW;
        j.res = rt ? (const float *)rt->data + n * M * OH * OW : NULL;
        wg_run_blocks(pool, th, &j.g, T, 36, wg_input_task, wg_output_task);
    }
    return EP_OK;
}
#endif
