/* MAXPOOL / AVGPOOL drivers (semantics of kernels/ref/pool_f32.c), compiled once per ISA.
 *
 * Per output row, the columns whose whole window lies inside the input ("interior", ep_pool_interior)
 * run PV_N outputs per vector, taps in the reference's (kh, kw) order: stride 1 reads contiguous
 * vectors, stride 2 de-interleaves two (the row's last vector without reading past its last even element),
 * other strides gather. A last partial vector of the interior is recomputed overlapping the previous
 * one (same values, stored twice), so only the clipped border outputs, or an interior narrower than a
 * vector, go through the reference's scalar window (pool_common.h, the same helper the reference runs).
 * MAX keeps the reference's "v > m" update from -FLT_MAX (a NaN tap is skipped, signed zeros keep the
 * first seen), AVG sums from 0.0f in tap order and divides by the row's count: both equal the reference
 * bit for bit. Threads: planes are split into contiguous ranges.
 * Narrow maps (fewer than POOL_SMALL_OW output columns) run PV_N planes at a time instead (pool_planes_small).
 * MAX with stride 1 on rows with borders (YOLO's SPPF: 5x5, pad 2, on 10x10 and 20x20 maps, where the
 * border is most of the row) instead copies the window's input rows into a stack buffer padded with
 * -FLT_MAX and runs every column as interior: a -FLT_MAX tap never passes "v > m" from -FLT_MAX, so the
 * result is the reference's bit for bit (it skips those taps). The buffer holds POOL_PADBUF floats.
 *
 * Exports EP_ISA_FN(maxpool_f32) and EP_ISA_FN(avgpool_f32) (ep_kernel.h); the including file defines
 *   PV, PV_N                    the vector type and its lanes
 *   PV_LD1(p)                   p[0..PV_N)
 *   PV_LD2(p)                   p[0], p[2], ..., p[2*(PV_N-1)] (may read p[0..2*PV_N))
 *   PV_LDS(p, s)                p[i*s], i < PV_N (reads only those)
 *   PV_LD2T(p)                  as PV_LD2, reading only p[0..2*PV_N-1) (a row's last vector; default PV_LDS(p, 2))
 *   PV_SET1(f), PV_ST(p, v)
 *   PV_MAX(v, m)                per lane v > m ? v : m
 *   PV_ADD(a, b), PV_DIV(a, b)  IEEE per lane */
#include "ep_ops.h"
#include "pool_common.h"

#ifndef PV_LD2T
#define PV_LD2T(p) PV_LDS((p), 2)
#endif

#define POOL_INLINE static inline __attribute__((always_inline))

/* nv (1 or POOL_NV) vectors of PV_N outputs of row r from interior column ow, PV_N * sw input columns apart;
 * sclass: 1 (stride 1), 2 (stride 2), 0 (other). Each output takes its taps in (kh, kw) order; the nv vectors'
 * accumulators sit side by side, so their chains of dependent max or add overlap. */
#define POOL_NV 4
POOL_INLINE void pool_vecs(const int nv, const int is_max, const int sclass, const ep_pool_geom *g,
                           const ep_pool_row *r, const float *xp, float *yr, int64_t ow, float count) {
    const int64_t w0 = ow * g->sw - g->pl;
    PV acc[POOL_NV];
#pragma GCC unroll 4
    for (int q = 0; q < nv; q++) acc[q] = PV_SET1(is_max ? -FLT_MAX : 0.0f);
    for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
        const float *xr = xp + (r->h0 + kh * g->dh) * g->W;
        for (int64_t kw = 0; kw < g->KW; kw++) {
#pragma GCC unroll 4
            for (int q = 0; q < nv; q++) {
                const int64_t c = w0 + kw * g->dw + q * PV_N * g->sw;
                PV v;
                if (sclass == 1)
                    v = PV_LD1(xr + c);
                else if (sclass == 2 && c + 2 * PV_N <= g->W)
                    v = PV_LD2(xr + c);
                else if (sclass == 2)
                    v = PV_LD2T(xr + c);
                else
                    v = PV_LDS(xr + c, g->sw);
                acc[q] = is_max ? PV_MAX(v, acc[q]) : PV_ADD(acc[q], v);
            }
        }
    }
#pragma GCC unroll 4
    for (int q = 0; q < nv; q++) {
        if (!is_max) acc[q] = count > 0.0f ? PV_DIV(acc[q], PV_SET1(count)) : PV_SET1(0.0f);
        PV_ST(yr + ow + q * PV_N, acc[q]);
    }
}

#define POOL_PADBUF 1024

/* Output row r of a stride-1 MAX through -FLT_MAX-padded copies of its input rows (OW >= PV_N, and the
 * rows fit POOL_PADBUF: pool_plane checks). */
static void pool_max_padded_row(const ep_pool_geom *g, const ep_pool_row *r, const float *xp, float *yr) {
    float buf[POOL_PADBUF];
    const int64_t PWb = g->OW + (g->KW - 1) * g->dw;   /* padded column i is input column i - pl */
    for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
        const float *xr = xp + (r->h0 + kh * g->dh) * g->W;
        float *d = buf + (kh - r->kh0) * PWb;
        for (int64_t i = 0; i < PWb; i++) {
            const int64_t c = i - g->pl;
            d[i] = c >= 0 && c < g->W ? xr[c] : -FLT_MAX;
        }
    }
    for (int64_t ow = 0;; ow += PV_N) {
        if (ow + PV_N > g->OW) ow = g->OW - PV_N;   /* the last vector overlaps the previous one */
        PV acc = PV_SET1(-FLT_MAX);
        for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
            const float *d = buf + (kh - r->kh0) * PWb + ow;
            for (int64_t kw = 0; kw < g->KW; kw++) acc = PV_MAX(PV_LD1(d + kw * g->dw), acc);
        }
        PV_ST(yr + ow, acc);
        if (ow + PV_N >= g->OW) break;
    }
}

/* One plane: the vector interior and the scalar borders of every row. */
POOL_INLINE void pool_plane(const int is_max, const int sclass, const ep_pool_geom *g, int64_t lo, int64_t hi,
                            const float *xp, float *yp) {
    const int padded = is_max && sclass == 1 && g->OW >= PV_N && (lo > 0 || hi < g->OW) &&
                       g->KH * (g->OW + (g->KW - 1) * g->dw) <= POOL_PADBUF;
    for (int64_t oh = 0; oh < g->OH; oh++) {
        ep_pool_row r;
        ep_pool_row_init(g, oh, &r);
        float *yr = yp + oh * g->OW;
        if (padded) {
            pool_max_padded_row(g, &r, xp, yr);
            continue;
        }
        /* interior count: every kw tap is valid and inside the padded extent */
        const float count = (float)((g->count_include_pad ? r.ph1 - r.ph0 : r.kh1 - r.kh0) * g->KW);
        int64_t ow = 0;
        if (hi - lo >= PV_N) {
            for (; ow < lo; ow++) yr[ow] = is_max ? ep_pool_max_at(g, &r, xp, ow) : ep_pool_avg_at(g, &r, xp, ow);
            if (sclass)   /* gathers (other strides) are throughput-bound already */
                for (; ow + POOL_NV * PV_N <= hi; ow += POOL_NV * PV_N)
                    pool_vecs(POOL_NV, is_max, sclass, g, &r, xp, yr, ow, count);
            for (; ow + PV_N <= hi; ow += PV_N) pool_vecs(1, is_max, sclass, g, &r, xp, yr, ow, count);
            if (ow < hi) pool_vecs(1, is_max, sclass, g, &r, xp, yr, hi - PV_N, count);   /* overlapping the last */
            ow = hi;
        }
        for (; ow < g->OW; ow++) yr[ow] = is_max ? ep_pool_max_at(g, &r, xp, ow) : ep_pool_avg_at(g, &r, xp, ow);
    }
}

/* Narrow maps (OW < POOL_SMALL_OW): a row is a vector or two plus borders, so PV_N planes run together
 * instead. Their input rows for a band of output rows are copied into a stack buffer as [rows][Wr][PV_N] (a
 * pixel's PV_N planes are one vector), outside the input filled with -FLT_MAX (MAX: such a tap never passes
 * "v > m" from -FLT_MAX) or 0.0f (AVG: a sum from 0.0f is never -0.0f, so adding +0.0f leaves it unchanged);
 * every output is then its taps in (kh, kw) order over whole vectors, AVG divided by the reference's count for
 * that position: bit for bit the reference's. POOL_SMALLBUF floats hold at least one output row's input rows
 * (pool_small_band checks). */
#define POOL_SMALLBUF 4096
#define POOL_SMALL_OW (4 * PV_N)

/* Output rows per band of the narrow-map path; 0 when it does not apply. */
static int64_t pool_small_band(const ep_pool_geom *g) {
    const int64_t Wr = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1, span = (g->KH - 1) * g->dh + 1;
    if (g->OW >= POOL_SMALL_OW || Wr > POOL_SMALLBUF / PV_N) return 0;
    const int64_t rows = POOL_SMALLBUF / (Wr * PV_N);   /* buffer rows */
    if (rows < span) return 0;
    const int64_t band = (rows - span) / g->sh + 1;
    return band < g->OH ? band : g->OH;
}

/* Planes [0, np) (np <= PV_N) of x into y, bands of `band` output rows. */
static void pool_planes_small(const int is_max, const ep_pool_geom *g, const float *x, float *y, int64_t np,
                              int64_t band) {
    float buf[POOL_SMALLBUF], out[PV_N];
    const int64_t Wr = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
    const float fill = is_max ? -FLT_MAX : 0.0f;
    for (int64_t oh0 = 0; oh0 < g->OH; oh0 += band) {
        const int64_t nb = g->OH - oh0 < band ? g->OH - oh0 : band;
        const int64_t r0 = oh0 * g->sh, nr = (nb - 1) * g->sh + (g->KH - 1) * g->dh + 1;   /* padded rows */
        for (int64_t r = 0; r < nr; r++)
            for (int64_t c = 0; c < Wr; c++) {
                const int64_t ih = r0 + r - g->pt, iw = c - g->pl;
                const int in = ih >= 0 && ih < g->H && iw >= 0 && iw < g->W;
                float *d = buf + (r * Wr + c) * PV_N;
                for (int64_t q = 0; q < PV_N; q++) d[q] = in && q < np ? x[q * g->H * g->W + ih * g->W + iw] : fill;
            }
        for (int64_t oh = oh0; oh < oh0 + nb; oh++) {
            ep_pool_row r;
            ep_pool_row_init(g, oh, &r);
            for (int64_t ow = 0; ow < g->OW; ow++) {
                PV acc = PV_SET1(fill);
                for (int64_t kh = 0; kh < g->KH; kh++) {
                    const float *row = buf + (((oh - oh0) * g->sh + kh * g->dh) * Wr + ow * g->sw) * PV_N;
                    for (int64_t kw = 0; kw < g->KW; kw++) {
                        const PV v = PV_LD1(row + kw * g->dw * PV_N);
                        acc = is_max ? PV_MAX(v, acc) : PV_ADD(acc, v);
                    }
                }
                if (!is_max) {   /* the count of ep_pool_avg_at */
                    const int64_t w0 = ow * g->sw - g->pl;
                    int64_t kw0, kw1, pw0, pw1;
                    rl_tap_range(w0, g->dw, g->KW, g->W, &kw0, &kw1);
                    rl_tap_range(w0 + g->pl, g->dw, g->KW, g->W + g->pl + g->pr, &pw0, &pw1);
                    const int64_t count =
                        g->count_include_pad ? (r.ph1 - r.ph0) * (pw1 - pw0) : (r.kh1 - r.kh0) * (kw1 - kw0);
                    acc = count > 0 ? PV_DIV(acc, PV_SET1((float)count)) : PV_SET1(0.0f);
                }
                PV_ST(out, acc);
                for (int64_t q = 0; q < np; q++) y[q * g->OH * g->OW + oh * g->OW + ow] = out[q];
            }
        }
    }
}

typedef struct pool_job {
    const ep_pool_geom *g;
    const float *x;
    float *y;
    int64_t lo, hi, parts;
    int is_max;
} pool_job;

static void pool_task(void *ctx, uint32_t t) {
    const pool_job *j = (const pool_job *)ctx;
    const ep_pool_geom *g = j->g;
    int64_t p0, p1;
    ep_split_range(g->planes, j->parts, t, &p0, &p1);
    const int64_t band = pool_small_band(g);
    if (band > 0) {
        for (int64_t pl = p0; pl < p1; pl += PV_N)
            pool_planes_small(j->is_max, g, j->x + pl * g->H * g->W, j->y + pl * g->OH * g->OW,
                              p1 - pl < PV_N ? p1 - pl : PV_N, band);
        return;
    }
    for (int64_t pl = p0; pl < p1; pl++) {
        const float *xp = j->x + pl * g->H * g->W;
        float *yp = j->y + pl * g->OH * g->OW;
        if (j->is_max) {
            if (g->sw == 1) pool_plane(1, 1, g, j->lo, j->hi, xp, yp);
            else if (g->sw == 2) pool_plane(1, 2, g, j->lo, j->hi, xp, yp);
            else pool_plane(1, 0, g, j->lo, j->hi, xp, yp);
        } else {
            if (g->sw == 1) pool_plane(0, 1, g, j->lo, j->hi, xp, yp);
            else if (g->sw == 2) pool_plane(0, 2, g, j->lo, j->hi, xp, yp);
            else pool_plane(0, 0, g, j->lo, j->hi, xp, yp);
        }
    }
}

static int pool_run(const ep_op *op, int is_max) {
    ep_pool_geom g;
    ep_pool_geom_init(op, &g);
    if (rl_is_empty(op->out[0])) return EP_OK;
    pool_job j = {&g, (const float *)op->in[0]->data, (float *)op->out[0]->data, 0, 0, 1, is_max};
    ep_pool_interior(&g, &j.lo, &j.hi);
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)(g.planes * g.OH * g.OW * g.KH * g.KW));
    j.parts = T < g.planes ? T : g.planes;
    ep_parallel_for(op->pool, (uint32_t)j.parts, pool_task, &j);
    return EP_OK;
}

int EP_ISA_FN(maxpool_f32)(const ep_op *op) { return pool_run(op, 1); }
int EP_ISA_FN(avgpool_f32)(const ep_op *op) { return pool_run(op, 0); }
