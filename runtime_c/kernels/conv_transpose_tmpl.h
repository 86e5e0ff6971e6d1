/* CONV_TRANSPOSE2D variant PACKED (polyphase; the method and the layout in kernels/conv_transpose_packed.h), the
 * driver compiled once per ISA: packing, blocking, stores, threads. Exports EP_ISA_FN(conv_transpose2d_packed_f32)
 * (ep_kernel.h); the including file defines the MR x NR micro-kernel
 *   static void ct_tile(int64_t K, const float *a, const float *b, const float *bias, int act, float alpha,
 *                       float beta, float *t);
 *     t[i*NR + j] = act(sum_{k < K} a[k*MR + i] * b[k*NR + j] + bias[j]) for every i < MR, j < NR;
 *     a: a packed input panel [K][MR]; b: a weight strip [K][NR]; bias: NR values or NULL (nothing added);
 *     K may be 0 (a and b are then not read).
 * Loop nest per pass: column strips (a K x 16 weight strip stays in L1) over the pass's pixel panels (K x 6 each,
 * from L2). Threads (op->pool): tiles are fixed MR x NR blocks (panel p, strip s) whatever the split, so results
 * are bit-identical for any thread count. A pass is split by pixel panels (each thread packs its panels and
 * multiplies them by every strip: no barrier) or, when strips split more evenly, packed in parallel and then split
 * by strips. Scratch use does not depend on threads. */
#include <string.h>
#include "ep_ops.h"
#include "conv_transpose_packed.h"


#define CT_MR EP_PACK_MR
#define CT_NR EP_PACK_NR

static inline int64_t ct_min(int64_t a, int64_t b) { return a < b ? a : b; }


typedef struct ct_geom {
    int64_t C, H, W, M, OH, OW, R, K;
    int64_t sh, sw, dh, dw, pt, pl, Th, Tw;
    int64_t qh0, qw0, Qw, P;   /* phase grid: pixel q = (qh - qh0)*Qw + (qw - qw0), q < P */
} ct_geom;

/* Panel p (pixels p*MR .. p*MR+MR-1) of image x[C,H,W] into dst [K][MR]; pixels past P and taps outside
 * the input are 0. */
static void ct_pack_panel(float *dst, const float *x, int64_t p, const ct_geom *g) {
    int64_t qh[CT_MR] = {0}, qw[CT_MR] = {0};
    int n = 0;
    for (int i = 0; i < CT_MR; i++) {
        const int64_t q = p * CT_MR + i;
        if (q >= g->P) break;
        qh[i] = g->qh0 + q / g->Qw;
        qw[i] = g->qw0 + q % g->Qw;
        n++;
    }
    const int one_row = n == CT_MR && qh[CT_MR - 1] == qh[0];   /* then qw[i] = qw[0] + i */
    const int64_t H = g->H, W = g->W, HW = H * W, C = g->C;
    const int64_t cstep = g->Th * g->Tw * CT_MR;
    for (int64_t jh = 0; jh < g->Th; jh++) {
        const int64_t sy = ct_shift(jh, g->dh, g->sh);
        for (int64_t jw = 0; jw < g->Tw; jw++) {
            const int64_t sx = ct_shift(jw, g->dw, g->sw);
            float *d = dst + (jh * g->Tw + jw) * CT_MR;
            if (one_row) {
                const int64_t ih = qh[0] - sy, iw = qw[0] - sx;
                if (ih < 0 || ih >= H) {
                    for (int64_t c = 0; c < C; c++) memset(d + c * cstep, 0, CT_MR * sizeof(float));
                    continue;
                }
                if (iw >= 0 && iw + CT_MR <= W) {
                    const float *xs = x + ih * W + iw;
                    for (int64_t c = 0; c < C; c++) memcpy(d + c * cstep, xs + c * HW, CT_MR * sizeof(float));
                    continue;
                }
            }
            int64_t off[CT_MR];
            int ok[CT_MR];
            for (int i = 0; i < CT_MR; i++) {
                const int64_t ih = i < n ? qh[i] - sy : -1, iw = i < n ? qw[i] - sx : -1;
                ok[i] = ih >= 0 && ih < H && iw >= 0 && iw < W;
                off[i] = ok[i] ? ih * W + iw : 0;
            }
            for (int64_t c = 0; c < C; c++) {
                const float *xc = x + c * HW;
                float *dc = d + c * cstep;
                for (int i = 0; i < CT_MR; i++) dc[i] = ok[i] ? xc[off[i]] : 0.0f;
            }
        }
    }
}

/* Panels [pa, pb) into dst (panel pa first, K*MR floats each). A run of full panels on one grid row is
 * packed tap by tap and channel by channel, so each input row is read as one contiguous run (per-panel
 * packing would read MR floats from each of C rows H*W apart: for 1-D inputs of a power-of-two length
 * those rows share L1 sets). Other panels go through ct_pack_panel. */
#define CT_PACK_RUN 64
static void ct_pack(float *dst, const float *x, int64_t pa, int64_t pb, const ct_geom *g) {
    const int64_t K = g->K, H = g->H, W = g->W, HW = H * W, C = g->C, cstep = g->Th * g->Tw * CT_MR;
    int64_t p = pa;
    while (p < pb) {
        const int64_t q0 = p * CT_MR, col = q0 % g->Qw;
        /* full panels from p on the same grid row, at most CT_PACK_RUN */
        int64_t n = ct_min(ct_min(pb - p, CT_PACK_RUN), (g->Qw - col) / CT_MR);
        n = ct_min(n, (g->P - q0) / CT_MR);
        if (n < 2) {
            ct_pack_panel(dst + (p - pa) * K * CT_MR, x, p, g);
            p++;
            continue;
        }
        const int64_t qh = g->qh0 + q0 / g->Qw, qw = g->qw0 + col, ps = K * CT_MR;
        float *d0 = dst + (p - pa) * ps;
        /* channel-outer, taps-inner: each panel's lines are written whole before moving on */
        for (int64_t c = 0; c < C; c++) {
            const float *xc = x + c * HW;
            float *dc = d0 + c * cstep;
            for (int64_t jh = 0; jh < g->Th; jh++) {
                const int64_t ih = qh - ct_shift(jh, g->dh, g->sh);
                for (int64_t jw = 0; jw < g->Tw; jw++) {
                    float *d = dc + (jh * g->Tw + jw) * CT_MR;
                    const int64_t iw = qw - ct_shift(jw, g->dw, g->sw);
                    if (ih < 0 || ih >= H) {
                        for (int64_t i = 0; i < n; i++) memset(d + i * ps, 0, CT_MR * sizeof(float));
                    } else if (iw >= 0 && iw + n * CT_MR <= W) {
                        const float *xs = xc + ih * W + iw;
                        for (int64_t i = 0; i < n; i++) memcpy(d + i * ps, xs + i * CT_MR, CT_MR * sizeof(float));
                    } else {
                        const float *xr = xc + ih * W;
                        for (int64_t i = 0; i < n; i++)
                            for (int j = 0; j < CT_MR; j++) {
                                const int64_t v = iw + i * CT_MR + j;
                                d[i * ps + j] = v >= 0 && v < W ? xr[v] : 0.0f;
                            }
                    }
                }
            }
        }
        p += n;
    }
}

/* Runs of one column strip: consecutive columns with the same (m, fh) are consecutive outputs of a row. */
typedef struct ct_run {
    int js, len;      /* first column in the strip, length */
    int64_t fh, fw;   /* phases of the first column */
    int64_t yoff;     /* m*OH*OW + fh*OW + fw */
} ct_run;

static int ct_runs(ct_run *runs, int64_t strip, const ct_geom *g) {
    const int64_t S = g->sh * g->sw;
    int n = 0;
    int64_t pm = -1, pfh = -1;
    for (int j = 0; j < CT_NR; j++) {
        const int64_t r = strip * CT_NR + j;
        if (r >= g->R) break;
        const int64_t m = r / S, rem = r - m * S, fh = rem / g->sw, fw = rem - fh * g->sw;
        if (n && m == pm && fh == pfh) {
            runs[n - 1].len++;
            continue;
        }
        runs[n].js = j, runs[n].len = 1, runs[n].fh = fh, runs[n].fw = fw;
        runs[n].yoff = (m * g->OH + fh) * g->OW + fw;
        n++;
        pm = m, pfh = fh;
    }
    return n;
}

/* n contiguous floats (fixed sizes become vector moves) */
static inline void ct_copy(float *d, const float *s, int n) {
    switch (n) {
    case 16: memcpy(d, s, 16 * sizeof(float)); return;
    case 8: memcpy(d, s, 8 * sizeof(float)); return;
    case 4: memcpy(d, s, 4 * sizeof(float)); return;
    case 2: memcpy(d, s, 2 * sizeof(float)); return;
    default:
        for (int l = 0; l < n; l++) d[l] = s[l];
    }
}

/* Writes tile t (panel p, one strip's runs) into Y[M,OH,OW] of one image. */
static void ct_store(float *y, const float *t, int64_t p, const ct_run *runs, int nrun, const ct_geom *g) {
    const int64_t q0 = p * CT_MR, OH = g->OH, OW = g->OW, sh = g->sh, sw = g->sw;
    int64_t qh = g->qh0 + q0 / g->Qw, qwi = q0 % g->Qw;
    const int64_t oh = qh * sh - g->pt, ow = (g->qw0 + qwi) * sw - g->pl;
    if (q0 + CT_MR <= g->P && qwi + CT_MR <= g->Qw && oh >= 0 && oh + sh <= OH && ow >= 0 &&
        ow + CT_MR * sw <= OW) {
        /* interior: the MR pixels are consecutive on one grid row and every phase lands inside Y */
        float *base = y + oh * OW + ow;
        for (int r = 0; r < nrun; r++) {
            float *d = base + runs[r].yoff;
            const float *s = t + runs[r].js;
            const int len = runs[r].len;
            switch (len) {
            case 8:
                for (int i = 0; i < CT_MR; i++) memcpy(d + i * sw, s + i * CT_NR, 8 * sizeof(float));
                break;
            case 4:
                for (int i = 0; i < CT_MR; i++) memcpy(d + i * sw, s + i * CT_NR, 4 * sizeof(float));
                break;
            default:
                for (int i = 0; i < CT_MR; i++) ct_copy(d + i * sw, s + i * CT_NR, len);
            }
        }
        return;
    }
    for (int i = 0; i < CT_MR && q0 + i < g->P; i++) {
        if (i && ++qwi == g->Qw) qwi = 0, qh++;
        const int64_t oh_i = qh * sh - g->pt, ow_i = (g->qw0 + qwi) * sw - g->pl;
        const float *ti = t + i * CT_NR;
        for (int r = 0; r < nrun; r++) {
            const int64_t o_h = oh_i + runs[r].fh, o_w = ow_i + runs[r].fw;
            if (o_h < 0 || o_h >= OH) continue;
            const int64_t lo = o_w < 0 ? -o_w : 0, hi = ct_min(runs[r].len, OW - o_w);
            float *d = y + runs[r].yoff + oh_i * OW + ow_i;
            const float *s = ti + runs[r].js;
            if (lo == 0 && hi == runs[r].len) {
                ct_copy(d, s, runs[r].len);
            } else {
                for (int64_t l = lo; l < hi; l++) d[l] = s[l];
            }
        }
    }
}

/* One pass: panels [pan0, pan0 + npan) of one image, packed into buf. */
typedef struct ct_job {
    const ct_geom *g;
    const float *x, *w, *bias;
    float *y, *buf;
    int64_t pan0, npan, strips, parts;
    int mode;   /* 0: split by panels, pack + multiply; 1: split by panels, pack only; 2: split by strips */
    int act;
    float alpha, beta;
} ct_job;

/* Tiles of panels [pa, pb) x strips [sa, sb), strip-major (a weight strip stays in L1). */
static void ct_multiply(const ct_job *j, int64_t pa, int64_t pb, int64_t sa, int64_t sb) {
    const ct_geom *g = j->g;
    const int64_t K = g->K, S = g->sh * g->sw;
    float t[CT_MR * CT_NR], bias16[CT_NR];
    ct_run runs[CT_NR];
    for (int64_t s = sa; s < sb; s++) {
        const int nrun = ct_runs(runs, s, g);
        if (j->bias)
            for (int jj = 0; jj < CT_NR; jj++) {
                const int64_t r = s * CT_NR + jj;
                bias16[jj] = r < g->R ? j->bias[r / S] : 0.0f;
            }
        const float *b = K ? j->w + s * K * CT_NR : NULL;
        for (int64_t p = pa; p < pb; p++) {
            ct_tile(K, K ? j->buf + (p - j->pan0) * K * CT_MR : NULL, b, j->bias ? bias16 : NULL, j->act, j->alpha,
                    j->beta, t);
            ct_store(j->y, t, p, runs, nrun, g);
        }
    }
}

static void ct_task(void *ctx, uint32_t t) {
    const ct_job *j = (const ct_job *)ctx;
    int64_t lo, hi;
    if (j->mode == 2) {
        ep_split_range(j->strips, j->parts, t, &lo, &hi);
        if (lo < hi) ct_multiply(j, j->pan0, j->pan0 + j->npan, lo, hi);
        return;
    }
    ep_split_range(j->npan, j->parts, t, &lo, &hi);
    if (lo >= hi) return;
    if (j->g->K) ct_pack(j->buf + lo * j->g->K * CT_MR, j->x, j->pan0 + lo, j->pan0 + hi, j->g);
    if (j->mode == 0) ct_multiply(j, j->pan0 + lo, j->pan0 + hi, 0, j->strips);
}

int EP_ISA_FN(conv_transpose2d_packed_f32)(const ep_op *op) {
    const ep_conv_transpose2d_params *p = (const ep_conv_transpose2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *yt = op->out[0];
    struct ep_pool *pool = op->pool;
    ct_geom g;
    const int64_t N = xt->dims[0];
    g.C = xt->dims[1], g.H = xt->dims[2], g.W = xt->dims[3];
    g.M = yt->dims[1], g.OH = yt->dims[2], g.OW = yt->dims[3];
    if (N == 0 || g.M == 0 || g.OH == 0 || g.OW == 0) return EP_OK;
    g.sh = p->stride[0], g.sw = p->stride[1], g.dh = p->dilation[0], g.dw = p->dilation[1];
    g.pt = p->pads[0], g.pl = p->pads[1];
    const int64_t KH = p->kernel[0], KW = p->kernel[1];
    g.Th = ct_taps(KH, g.dh, g.sh);
    g.Tw = ct_taps(KW, g.dw, g.sw);
    g.K = g.C * g.Th * g.Tw;
    g.R = g.M * g.sh * g.sw;
    g.qh0 = g.pt / g.sh;
    g.qw0 = g.pl / g.sw;
    const int64_t Qh = (g.pt + g.OH - 1) / g.sh - g.qh0 + 1;
    g.Qw = (g.pl + g.OW - 1) / g.sw - g.qw0 + 1;
    g.P = Qh * g.Qw;
    const int64_t panels = (g.P + CT_MR - 1) / CT_MR, strips = (g.R + CT_NR - 1) / CT_NR;
    const uint64_t slot = (uint64_t)g.K * CT_MR * sizeof(float);
    const int64_t per_pass = slot ? ct_min(panels, (int64_t)(op->scratch_size / slot)) : panels;
    if (per_pass < 1) return EP_ERR_INTERNAL;   /* the shape function demands one panel */
    for (int64_t n = 0; n < N; n++) {
        ct_job j;
        j.g = &g;
        j.x = (const float *)xt->data + n * g.C * g.H * g.W;
        j.w = (const float *)wt->data;
        j.bias = bt ? (const float *)bt->data : NULL;
        j.y = (float *)yt->data + n * g.M * g.OH * g.OW;
        j.buf = (float *)op->scratch;
        j.strips = strips;
        j.act = p->act, j.alpha = p->act_alpha, j.beta = p->act_beta;
        for (int64_t p0 = 0; p0 < panels; p0 += per_pass) {
            j.pan0 = p0;
            j.npan = ct_min(per_pass, panels - p0);
            const uint64_t work = (uint64_t)g.R * (uint64_t)(g.K + 1) * (uint64_t)(j.npan * CT_MR);
            const int64_t T = ep_pool_threads_for(pool, work);
            /* by panels unless strips give threads more even shares: units / ceil(units / T), cross-multiplied */
            if (T <= 1 || (j.npan >= T && j.npan * ((strips + T - 1) / T) >= strips * ((j.npan + T - 1) / T))) {
                j.mode = 0;
                j.parts = ct_min(T, j.npan);
                ep_parallel_for(pool, (uint32_t)j.parts, ct_task, &j);
            } else {
                j.mode = 1;
                j.parts = ct_min(T, j.npan);
                ep_parallel_for(pool, (uint32_t)j.parts, ct_task, &j);
                j.mode = 2;
                j.parts = ct_min(T, strips);
                ep_parallel_for(pool, (uint32_t)j.parts, ct_task, &j);
            }
        }
    }
    return EP_OK;
}
