/* MAXPOOL, AVGPOOL and GLOBAL_AVGPOOL variants C8 (semantics of kernels/ref/pool_f32.c; C8 tensors:
 * plan_format.h, "Tensor layouts"), compiled once per ISA. A pixel's 8 channels are one 8-lane value of the ISA
 * (v8), so every tap of a channel block is one vector operation on data read in place.
 *
 * MAXPOOL / AVGPOOL, per output row of a channel block: the columns whose KW taps all lie in the input row
 * (ep_pool_interior) run 4 pixels at a time with one accumulator each, the border columns one pixel at a time
 * over their clipped tap range; the row's taps are its kernel rows inside the input (ep_pool_row_init). Every
 * output takes its taps in (kh, kw) order: MAX from -FLT_MAX with "v > m ? v : m" (a NaN tap is skipped, of
 * equal values the first is kept), AVG sums from 0.0f and divides by the reference's count: the reference's
 * result bit for bit.
 * MAX where it saves work (sh*KW + KH + 1 < KH*KW: 3x3 and 5x5 at stride 1, YOLO's SPPF) runs separably: each
 * input row's maxima over the KW taps of every output column (its horizontal row, kept in a ring of stack rows
 * shared by the output rows that read it), then the maximum of the KH horizontal rows. Both passes scan in tap
 * order from -FLT_MAX and the accumulator is never NaN, so the result is still the first tap, in (kh, kw)
 * order, of the window's largest value: the reference's bits.
 * GLOBAL_AVGPOOL: per channel block one vector sum over the pixels in (h, w) order from 0.0f (one block at a
 * time, the same code whatever task holds it), divided by H*W: each channel's sum in the reference's order,
 * its result bit for bit.
 * Tasks: MAX / AVG ranges of output rows in (image, channel block, row) order, GLOBAL_AVGPOOL ranges of blocks;
 * each output is computed by the same operations whatever the thread count.
 *
 * The including file defines (8 floats as the ISA holds them):
 *   v8 (the type), V8_LD(p), V8_ST(p, v), V8_SET1(f)
 *   V8_MAX(v, m)          per lane v > m ? v : m (m when either is NaN)
 *   V8_ADD(a, b), V8_DIV(a, b)   IEEE per lane
 * Exports EP_ISA_FN(maxpool_c8_f32), EP_ISA_FN(avgpool_c8_f32) and EP_ISA_FN(global_avgpool_c8_f32)
 * (ep_kernel.h). */
#include "pool_common.h"

#define C8B EP_LAYOUT_BLOCK
#define C8_INLINE static inline __attribute__((always_inline))
#define C8_BUF 8192   /* floats of the separable MAX's horizontal rows (32 KiB of stack) */
#define C8_SLOTS 32   /* at most this many horizontal rows: a window spans (KH-1)*dh + 1 <= C8_SLOTS rows */

typedef struct c8_job {
    const ep_pool_geom *g;
    const float *x;
    float *y;
    int64_t lo, hi;          /* the interior columns */
    int64_t rows, parts;     /* output rows (planes / 8) * OH, tasks */
    int is_max, sep;         /* sep: MAX through horizontal rows */
} c8_job;

/* Output pixel ow of row r from block xb (pixel (h, w) at xb[(h*W + w)*8]): its taps inside the input. */
C8_INLINE v8 c8_pixel(const int is_max, const ep_pool_geom *g, const ep_pool_row *r, const float *xb, int64_t ow) {
    const int64_t w0 = ow * g->sw - g->pl;
    int64_t kw0, kw1;
    rl_tap_range(w0, g->dw, g->KW, g->W, &kw0, &kw1);
    v8 acc = V8_SET1(is_max ? -FLT_MAX : 0.0f);
    for (int64_t kh = r->kh0; kw0 < kw1 && kh < r->kh1; kh++) {
        const float *xr = xb + ((r->h0 + kh * g->dh) * g->W + w0 + kw0 * g->dw) * C8B;   /* the first valid tap */
        for (int64_t k = 0; k < kw1 - kw0; k++) {
            const v8 v = V8_LD(xr + k * g->dw * C8B);
            acc = is_max ? V8_MAX(v, acc) : V8_ADD(acc, v);
        }
    }
    if (is_max) return acc;
    int64_t pw0, pw1;   /* the count of ep_pool_avg_at */
    rl_tap_range(w0 + g->pl, g->dw, g->KW, g->W + g->pl + g->pr, &pw0, &pw1);
    const int64_t count = g->count_include_pad ? (r->ph1 - r->ph0) * (pw1 - pw0) : (r->kh1 - r->kh0) * (kw1 - kw0);
    return count > 0 ? V8_DIV(acc, V8_SET1((float)count)) : V8_SET1(0.0f);
}

/* Output row r of block xb into yr (pixel ow at yr[ow*8]). */
C8_INLINE void c8_row(const int is_max, const ep_pool_geom *g, const ep_pool_row *r, const float *xb, float *yr,
                      int64_t lo, int64_t hi) {
    /* interior: every kw tap valid and inside the padded extent */
    const float count = (float)((g->count_include_pad ? r->ph1 - r->ph0 : r->kh1 - r->kh0) * g->KW);
    const v8 init = V8_SET1(is_max ? -FLT_MAX : 0.0f);
    const int64_t ps = g->sw * C8B, ts = g->dw * C8B;   /* next pixel, next tap */
    int64_t ow = 0;
    for (; ow < lo; ow++) V8_ST(yr + ow * C8B, c8_pixel(is_max, g, r, xb, ow));
    for (; ow + 4 <= hi; ow += 4) {
        v8 a0 = init, a1 = init, a2 = init, a3 = init;
        for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
            const float *xr0 = xb + ((r->h0 + kh * g->dh) * g->W + ow * g->sw - g->pl) * C8B;
            for (int64_t kw = 0; kw < g->KW; kw++) {
                const float *xr = xr0 + kw * ts;
                if (is_max) {
                    a0 = V8_MAX(V8_LD(xr), a0), a1 = V8_MAX(V8_LD(xr + ps), a1);
                    a2 = V8_MAX(V8_LD(xr + 2 * ps), a2), a3 = V8_MAX(V8_LD(xr + 3 * ps), a3);
                } else {
                    a0 = V8_ADD(a0, V8_LD(xr)), a1 = V8_ADD(a1, V8_LD(xr + ps));
                    a2 = V8_ADD(a2, V8_LD(xr + 2 * ps)), a3 = V8_ADD(a3, V8_LD(xr + 3 * ps));
                }
            }
        }
        if (!is_max) {
            const v8 d = V8_SET1(count);
            if (count > 0.0f) a0 = V8_DIV(a0, d), a1 = V8_DIV(a1, d), a2 = V8_DIV(a2, d), a3 = V8_DIV(a3, d);
            else a0 = a1 = a2 = a3 = V8_SET1(0.0f);
        }
        float *yo = yr + ow * C8B;
        V8_ST(yo, a0), V8_ST(yo + C8B, a1), V8_ST(yo + 2 * C8B, a2), V8_ST(yo + 3 * C8B, a3);
    }
    for (; ow < g->OW; ow++) V8_ST(yr + ow * C8B, c8_pixel(is_max, g, r, xb, ow));
}

/* Output rows [oh0, oh1) of block xb into yb, MAX through horizontal rows: slot ih % span holds input row ih's
 * maxima over every output column's KW taps (tag[slot] = ih); the rows of one window are distinct slots. */
static void c8_max_sep(const c8_job *j, const float *xb, float *yb, int64_t oh0, int64_t oh1) {
    const ep_pool_geom *g = j->g;
    float buf[C8_BUF];
    int64_t tag[C8_SLOTS];
    const int64_t span = (g->KH - 1) * g->dh + 1, rs = g->OW * C8B;
    for (int64_t s = 0; s < span; s++) tag[s] = -1;
    const float *hr[C8_SLOTS];
    for (int64_t oh = oh0; oh < oh1; oh++) {
        ep_pool_row r;
        ep_pool_row_init(g, oh, &r);
        for (int64_t kh = r.kh0; kh < r.kh1; kh++) {
            const int64_t ih = r.h0 + kh * g->dh, s = ih % span;
            if (tag[s] != ih) {
                const ep_pool_row one = {ih, 0, 1, 0, 1};   /* kernel row 0 at input row ih */
                c8_row(1, g, &one, xb, buf + s * rs, j->lo, j->hi);
                tag[s] = ih;
            }
            hr[kh - r.kh0] = buf + s * rs;
        }
        const int64_t n = r.kh1 - r.kh0;
        float *yr = yb + oh * rs;
        int64_t o = 0;
        for (; o + 4 * C8B <= rs; o += 4 * C8B) {
            v8 a0 = V8_SET1(-FLT_MAX), a1 = a0, a2 = a0, a3 = a0;
            for (int64_t k = 0; k < n; k++) {
                const float *h = hr[k] + o;
                a0 = V8_MAX(V8_LD(h), a0), a1 = V8_MAX(V8_LD(h + C8B), a1);
                a2 = V8_MAX(V8_LD(h + 2 * C8B), a2), a3 = V8_MAX(V8_LD(h + 3 * C8B), a3);
            }
            V8_ST(yr + o, a0), V8_ST(yr + o + C8B, a1), V8_ST(yr + o + 2 * C8B, a2), V8_ST(yr + o + 3 * C8B, a3);
        }
        for (; o < rs; o += C8B) {
            v8 acc = V8_SET1(-FLT_MAX);
            for (int64_t k = 0; k < n; k++) acc = V8_MAX(V8_LD(hr[k] + o), acc);
            V8_ST(yr + o, acc);
        }
    }
}

static void c8_pool_task(void *ctx, uint32_t t) {
    const c8_job *j = (const c8_job *)ctx;
    const ep_pool_geom *g = j->g;
    const ep_range rg = ep_task_range(j->rows, j->parts, t);
    for (int64_t i = rg.lo; i < rg.hi;) {   /* rows [oh0, oh1) of block b */
        const int64_t b = i / g->OH, oh0 = i % g->OH, oh1 = oh0 + (rg.hi - i < g->OH - oh0 ? rg.hi - i : g->OH - oh0);
        const float *xb = j->x + b * g->H * g->W * C8B;
        float *yb = j->y + b * g->OH * g->OW * C8B;
        i += oh1 - oh0;
        if (j->sep) {
            c8_max_sep(j, xb, yb, oh0, oh1);
            continue;
        }
        for (int64_t oh = oh0; oh < oh1; oh++) {
            ep_pool_row r;
            ep_pool_row_init(g, oh, &r);
            if (j->is_max) c8_row(1, g, &r, xb, yb + oh * g->OW * C8B, j->lo, j->hi);
            else c8_row(0, g, &r, xb, yb + oh * g->OW * C8B, j->lo, j->hi);
        }
    }
}

static int c8_pool_run(const ep_op *op, int is_max) {
    ep_pool_geom g;
    ep_pool_geom_init(op, &g);
    if (rl_is_empty(op->out[0])) return EP_OK;
    c8_job j = {&g, (const float *)op->in[0]->data, (float *)op->out[0]->data, 0, 0, g.planes / C8B * g.OH, 1,
                is_max, 0};
    ep_pool_interior(&g, &j.lo, &j.hi);
    const int64_t span = (g.KH - 1) * g.dh + 1;
    j.sep = is_max && g.sh * g.KW + g.KH + 1 < g.KH * g.KW && span <= C8_SLOTS && span * g.OW * C8B <= C8_BUF;
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)(g.planes * g.OH * g.OW * g.KH * g.KW));
    j.parts = T < j.rows ? T : j.rows;
    ep_parallel_for(op->pool, (uint32_t)j.parts, c8_pool_task, &j);
    return EP_OK;
}

typedef struct c8_gjob {
    const float *x;
    float *y;
    int64_t size, blocks, parts;
} c8_gjob;

/* Blocks [b0, b0 + NB) of x: y[b*8 + lane] = the block's (h, w)-ordered sum of its lane / size. */
C8_INLINE void c8_gavg_blocks(const c8_gjob *j, int64_t b0, const int NB) {
    v8 acc[4];
    const float *xb = j->x + b0 * j->size * C8B;
    for (int k = 0; k < NB; k++) acc[k] = V8_SET1(0.0f);
    for (int64_t i = 0; i < j->size; i++)
        for (int k = 0; k < NB; k++) acc[k] = V8_ADD(acc[k], V8_LD(xb + (k * j->size + i) * C8B));
    const v8 d = V8_SET1((float)j->size);
    for (int k = 0; k < NB; k++) V8_ST(j->y + (b0 + k) * C8B, j->size > 0 ? V8_DIV(acc[k], d) : V8_SET1(0.0f));
}

static void c8_gavg_task(void *ctx, uint32_t t) {
    const c8_gjob *j = (const c8_gjob *)ctx;
    const ep_range rg = ep_task_range(j->blocks, j->parts, t);
    int64_t b = rg.lo;
    for (; b < rg.hi; b++) c8_gavg_blocks(j, b, 1);
}

static int c8_gavg_run(const ep_op *op) {
    const ep_tensor *x = op->in[0];
    c8_gjob j = {(const float *)x->data, (float *)op->out[0]->data, (int64_t)x->dims[2] * x->dims[3],
                 (int64_t)x->dims[0] * x->dims[1] / C8B, 1};
    if (j.blocks == 0) return EP_OK;
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)(j.blocks * j.size * C8B));
    j.parts = T < j.blocks ? T : j.blocks;
    ep_parallel_for(op->pool, (uint32_t)j.parts, c8_gavg_task, &j);
    return EP_OK;
}

int EP_ISA_FN(maxpool_c8_f32)(const ep_op *op) { return c8_pool_run(op, 1); }
int EP_ISA_FN(avgpool_c8_f32)(const ep_op *op) { return c8_pool_run(op, 0); }
int EP_ISA_FN(global_avgpool_c8_f32)(const ep_op *op) { return c8_gavg_run(op); }
