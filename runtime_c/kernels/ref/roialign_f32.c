/* ROIALIGN reference kernel (f32; plan_format.h ep_roialign_params): the ONNX reference implementation's
 * arithmetic and order (onnx/reference/ops/op_roi_align.py, which is onnxruntime's): per ROI, bin and
 * sample (row-major over the bin's g_h x g_w grid) the four corner positions and f32 weights, the same for
 * every channel; AVG sums w1 x1 + w2 x2 + w3 x3 + w4 x4 over the samples in order and divides by
 * max(g_h g_w, 1), MAX keeps the largest max_i(w_i x_i) (the first of equal ones). A sample more than one
 * pixel off the map (or NaN) has weights 0 at position 0, as in the reference.
 * Every batch index and every ROI's sampling grid is checked before anything is written. */
#include <math.h>
#include "ep_ops.h"
#include "ref_bcast.h"

typedef struct ra_roi {
    float start_h, start_w, bin_h, bin_w;
    int64_t grid_h, grid_w;   /* samples per bin side, >= 0 */
} ra_roi;

/* The bin's sample count along one side: sampling_ratio, or ceil(extent / bins) clamped below at 0; -1 when
 * that is NaN or above EP_ROIALIGN_MAX_GRID. */
static int64_t ra_grid(const ep_roialign_params *p, float extent, int32_t bins) {
    if (p->sampling_ratio > 0) return p->sampling_ratio;
    const float g = ceilf(extent / (float)bins);
    if (!(g <= (float)EP_ROIALIGN_MAX_GRID)) return -1;
    return g > 0.0f ? (int64_t)g : 0;
}

static int ra_geometry(const ep_roialign_params *p, const float *roi, ra_roi *r) {
    const float off = p->half_pixel ? 0.5f : 0.0f, scale = p->spatial_scale;
    const float sw = roi[0] * scale - off, sh = roi[1] * scale - off;
    const float ew = roi[2] * scale - off, eh = roi[3] * scale - off;
    float rw = ew - sw, rh = eh - sh;
    if (!p->half_pixel) {   /* malformed ROIs become 1 x 1 */
        rw = 1.0f > rw ? 1.0f : rw;
        rh = 1.0f > rh ? 1.0f : rh;
    }
    r->start_h = sh;
    r->start_w = sw;
    r->bin_h = rh / (float)p->output_height;
    r->bin_w = rw / (float)p->output_width;
    r->grid_h = ra_grid(p, rh, p->output_height);
    r->grid_w = ra_grid(p, rw, p->output_width);
    return r->grid_h < 0 || r->grid_w < 0 ? EP_ERR_RUN_BOUND : EP_OK;
}

/* The bilinear corners (offsets in the H x W plane) and weights of sample (y, x). */
static void ra_sample(float y, float x, int64_t H, int64_t W, int64_t pos[4], float w[4]) {
    if (!(y >= -1.0f && y <= (float)H && x >= -1.0f && x <= (float)W)) {
        for (int i = 0; i < 4; i++) {
            pos[i] = 0;
            w[i] = 0.0f;
        }
        return;
    }
    if (y < 0.0f) y = 0.0f;
    if (x < 0.0f) x = 0.0f;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) {
        y1 = y0 = H - 1;
        y = (float)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= W - 1) {
        x1 = x0 = W - 1;
        x = (float)x0;
    } else {
        x1 = x0 + 1;
    }
    const float ly = y - (float)y0, lx = x - (float)x0, hy = 1.0f - ly, hx = 1.0f - lx;
    w[0] = hy * hx;
    w[1] = hy * lx;
    w[2] = ly * hx;
    w[3] = ly * lx;
    pos[0] = y0 * W + x0;
    pos[1] = y0 * W + x1;
    pos[2] = y1 * W + x0;
    pos[3] = y1 * W + x1;
}

int ep_ref_roialign_f32(const ep_op *op) {
    const ep_roialign_params *p = (const ep_roialign_params *)op->params;
    const ep_tensor *xt = op->in[0], *rt = op->in[1], *bt = op->in[2], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], R = rt->dims[0];
    const int64_t PH = p->output_height, PW = p->output_width, bins = PH * PW;
    const float *X = (const float *)xt->data, *rois = (const float *)rt->data;
    float *Y = (float *)yt->data;
    ra_roi g;
    for (int64_t r = 0; r < R; r++) {
        const int64_t b = rb_load_i(bt->data, bt->dtype, r);
        if (b < 0 || b >= N) return EP_ERR_RUN_INDEX;
        const int rc = ra_geometry(p, rois + 4 * r, &g);
        if (rc != EP_OK) return rc;
    }
    const int is_max = p->mode == EP_ROIALIGN_MAX;
    for (int64_t r = 0; r < R; r++) {
        const int64_t b = rb_load_i(bt->data, bt->dtype, r);
        ra_geometry(p, rois + 4 * r, &g);
        const int64_t count = g.grid_h * g.grid_w > 1 ? g.grid_h * g.grid_w : 1;
        for (int64_t ph = 0; ph < PH; ph++) {
            for (int64_t pw = 0; pw < PW; pw++) {
                float *y = Y + r * C * bins + ph * PW + pw;   /* channel c at y[c * bins] */
                for (int64_t c = 0; c < C; c++) y[c * bins] = 0.0f;
                for (int64_t iy = 0; iy < g.grid_h; iy++) {
                    const float yy = g.start_h + (float)ph * g.bin_h + ((float)iy + 0.5f) * g.bin_h / (float)g.grid_h;
                    for (int64_t ix = 0; ix < g.grid_w; ix++) {
                        const float xx =
                            g.start_w + (float)pw * g.bin_w + ((float)ix + 0.5f) * g.bin_w / (float)g.grid_w;
                        const int first = iy == 0 && ix == 0;
                        int64_t pos[4];
                        float w[4];
                        ra_sample(yy, xx, H, W, pos, w);
                        for (int64_t c = 0; c < C; c++) {
                            const float *x = X + (b * C + c) * H * W;
                            if (is_max) {
                                float v = w[0] * x[pos[0]];
                                for (int i = 1; i < 4; i++)
                                    if (w[i] * x[pos[i]] > v) v = w[i] * x[pos[i]];
                                if (first || v > y[c * bins]) y[c * bins] = v;
                            } else {
                                y[c * bins] += w[0] * x[pos[0]] + w[1] * x[pos[1]] + w[2] * x[pos[2]] + w[3] * x[pos[3]];
                            }
                        }
                    }
                }
                if (!is_max)
                    for (int64_t c = 0; c < C; c++) y[c * bins] /= (float)count;
            }
        }
    }
    return EP_OK;
}
