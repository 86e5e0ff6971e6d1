/* RESIZE variants TABLE and C8 (plan_format.h): nearest or linear resampling of the last two dims, the leading
 * dims unchanged; compiled once per ISA. Exports EP_ISA_FN(resize_table_f32) and EP_ISA_FN(resize_c8_f32)
 * (ep_kernel.h). A pixel is B floats: 1 (TABLE), or a channel block of 8 (C8, whose planes are the blocks), each
 * blended with its pixel's weights; the code is one driver instantiated for both.
 *
 * The taps of every output row and column (two source indices and two weights each) come from the reference's
 * own code (kernels/resize_common.h) and are written to the scratch once per run, so the source positions are
 * the reference's exactly. Then per plane:
 *   nearest  y[oh][ow] = x[ih(oh)][iw(ow)], a copy: equal to the reference bit for bit; an output row whose
 *            source row is the previous one's is a copy of that row;
 *   linear   each source row the plane needs is interpolated along the width once, in float
 *            (h[ow] = w0(ow) x[iw0] + w1(ow) x[iw1]), into one of two row buffers of the task's slot, and
 *            y[oh] = wh0(oh) h[ih0] + wh1(oh) h[ih1]: separable float arithmetic, within a few ulp of the
 *            reference's double sum over the four taps.
 * Threads: planes are split into one range per slot (each task has its own row buffers). */
#include <string.h>
#include "ep_ops.h"
#include "resize_common.h"

#define RT_INLINE static inline __attribute__((always_inline))

typedef struct rt_tap {
    int32_t i0, i1;   /* source indices, clamped into the input */
    float w0, w1;     /* weights (w1 0 for a single tap) */
} rt_tap;

typedef struct rt_job {
    const ep_op *op;
    const rt_tap *th, *tw;
    float *rows;          /* slots of 2 * OW floats (linear) */
    int64_t planes, parts, H, W, OH, OW;
    int linear;
} rt_job;

static void rt_axis(const rs_params *p, int d, int64_t in, int64_t out, rt_tap *t) {
    rs_axis a;
    rs_taps taps;
    taps.idx = taps.idx4;
    taps.w = taps.w4;
    rs_axis_init(p, d, in, out, &a);
    for (int64_t o = 0; o < out; o++) {
        rs_compute_taps(p, &a, o, &taps);   /* nearest / linear without exclude_outside: one or two taps */
        t[o].i0 = (int32_t)taps.idx[0];
        t[o].w0 = (float)taps.w[0];
        t[o].i1 = taps.n > 1 ? (int32_t)taps.idx[1] : t[o].i0;
        t[o].w1 = taps.n > 1 ? (float)taps.w[1] : 0.0f;
    }
}

/* Source row r of plane x (pixels of B floats) interpolated along the width into h. */
RT_INLINE void rt_hrow(float *h, const float *x, int64_t r, int64_t W, const rt_tap *tw, int64_t OW, const int64_t B) {
    const float *xr = x + r * W * B;
    for (int64_t ow = 0; ow < OW; ow++) {
        const float w0 = tw[ow].w0, w1 = tw[ow].w1, *a = xr + tw[ow].i0 * B, *b = xr + tw[ow].i1 * B;
        for (int64_t k = 0; k < B; k++) h[ow * B + k] = w0 * a[k] + w1 * b[k];
    }
}

RT_INLINE void rt_run(const rt_job *j, uint32_t t, const int64_t B) {
    const int64_t H = j->H, W = j->W, OH = j->OH, OW = j->OW, RW = OW * B;
    int64_t lo, hi;
    ep_split_range(j->planes, j->parts, t, &lo, &hi);
    float *buf[2] = {NULL, NULL};
    if (j->linear) {
        buf[0] = j->rows + (int64_t)t * 2 * RW;
        buf[1] = buf[0] + RW;
    }
    for (int64_t pl = lo; pl < hi; pl++) {
        const float *x = (const float *)j->op->in[0]->data + pl * H * W * B;
        float *y = (float *)j->op->out[0]->data + pl * OH * RW;
        if (!j->linear) {
            for (int64_t oh = 0; oh < OH; oh++) {
                float *yr = y + oh * RW;
                if (oh > 0 && j->th[oh].i0 == j->th[oh - 1].i0) {
                    memcpy(yr, yr - RW, (size_t)RW * 4);
                    continue;
                }
                const float *xr = x + (int64_t)j->th[oh].i0 * W * B;
                for (int64_t ow = 0; ow < OW; ow++) {
                    const float *src = xr + (int64_t)j->tw[ow].i0 * B;
                    for (int64_t k = 0; k < B; k++) yr[ow * B + k] = src[k];
                }
            }
            continue;
        }
        int64_t tag[2] = {-1, -1};   /* the source row each buffer holds, for this plane */
        for (int64_t oh = 0; oh < OH; oh++) {
            const rt_tap a = j->th[oh];
            const float *h[2];
            const int64_t want[2] = {a.i0, a.i1};
            for (int k = 0; k < 2; k++) {
                const int64_t r = want[k];
                if (tag[0] == r || tag[1] == r) {
                    h[k] = buf[tag[0] == r ? 0 : 1];
                    continue;
                }
                const int v = tag[0] == want[1 - k] ? 1 : 0;   /* keep the buffer the other tap reads */
                rt_hrow(buf[v], x, r, W, j->tw, OW, B);
                tag[v] = r;
                h[k] = buf[v];
            }
            float *yr = y + oh * RW;
            const float w0 = a.w0, w1 = a.w1;
            const float *h0 = h[0], *h1 = h[1];
            for (int64_t i = 0; i < RW; i++) yr[i] = w0 * h0[i] + w1 * h1[i];
        }
    }
}
static void rt_task(void *ctx, uint32_t t) { rt_run((const rt_job *)ctx, t, 1); }
static void rt_task_c8(void *ctx, uint32_t t) { rt_run((const rt_job *)ctx, t, EP_LAYOUT_BLOCK); }

static int rt_resize(const ep_op *op, const int64_t B) {
    const ep_resize_params *q = (const ep_resize_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int r = xt->rank;
    const int64_t H = xt->dims[r - 2], W = xt->dims[r - 1], OH = yt->dims[r - 2], OW = yt->dims[r - 1];
    const int64_t n = ep_numel(yt) / B;   /* pixels */
    if (n == 0) return EP_OK;
    const rs_params p = {.mode = q->mode, .coord_mode = q->coord_mode, .nearest_mode = q->nearest_mode,
                         .exclude_outside = 0, .antialias = 0, .A = (double)q->cubic_coeff_a,
                         .extrapolation_value = q->extrapolation_value, .scales = q->scales};
    rt_tap *th = (rt_tap *)op->scratch, *tw = th + OH;
    rt_axis(&p, r - 2, H, OH, th);
    rt_axis(&p, r - 1, W, OW, tw);
    const int linear = q->mode == EP_RESIZE_LINEAR;
    const uint64_t tables = 16u * (uint64_t)(OH + OW);
    rt_job j = {op, th, tw, (float *)(void *)(tw + OW), n / (OH * OW), 1, H, W, OH, OW, linear};
    /* nearest needs no slot; the shape function made sure linear has one */
    const int64_t slots = linear ? (int64_t)((op->scratch_size - tables) / (8u * (uint64_t)(OW * B))) : j.planes;
    int64_t T = ep_pool_threads_for(op->pool, (uint64_t)(n * B) * (linear ? 4u : 1u));
    if (T > slots) T = slots;
    if (T > j.planes) T = j.planes;
    j.parts = T < 1 ? 1 : T;
    ep_parallel_for(op->pool, (uint32_t)j.parts, B == 1 ? rt_task : rt_task_c8, &j);
    return EP_OK;
}

int EP_ISA_FN(resize_table_f32)(const ep_op *op) { return rt_resize(op, 1); }
int EP_ISA_FN(resize_c8_f32)(const ep_op *op) { return rt_resize(op, EP_LAYOUT_BLOCK); }
