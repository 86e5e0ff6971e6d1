/* NON_MAX_SUPPRESSION reference kernel (f32 boxes and scores, I64 [n, 3] output): onnxruntime's
 * algorithm and arithmetic, so that both select the same boxes in the same order, ties included.
 * Per (batch, class): the candidates (score > threshold, or all without one) sorted by score, highest
 * first, equal scores in ascending box order (a stable sort of the ascending box list: onnxruntime's
 * priority queue pops in that order); each candidate is kept unless its IoU with a box already kept is
 * above the threshold, until max_output_boxes_per_class are kept. The IoU is computed in f32 exactly as
 * onnxruntime's SuppressByIOU does (same operations, same order; the build has -ffp-contract=off).
 * The output length is data-dependent: y->dims[0] is the capacity on entry and the row count on return.
 * Scratch: 3 * B int32 (candidates, the merge buffer, the boxes kept for the class). */
#include "ep_ops.h"
#include "ref_bcast.h"

static inline float nms_max(float a, float b) { return a < b ? b : a; }   /* std::max */
static inline float nms_min(float a, float b) { return b < a ? b : a; }   /* std::min */
static inline void nms_minmax(float lhs, float rhs, float *mn, float *mx) {
    if (lhs >= rhs) {
        *mn = rhs;
        *mx = lhs;
    } else {
        *mn = lhs;
        *mx = rhs;
    }
}

/* 1 when box i (the candidate) overlaps box j (kept) with an IoU > thr. */
static int nms_suppress(const float *boxes, int64_t i, int64_t j, int center, float thr) {
    const float *a = boxes + 4 * i, *b = boxes + 4 * j;
    float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1, ix0, ix1, iy0, iy1;
    if (!center) {   /* [y1, x1, y2, x2], any diagonal pair of corners */
        nms_minmax(a[1], a[3], &ax0, &ax1);
        nms_minmax(b[1], b[3], &bx0, &bx1);
        ix0 = nms_max(ax0, bx0);
        ix1 = nms_min(ax1, bx1);
        if (ix1 <= ix0) return 0;
        nms_minmax(a[0], a[2], &ay0, &ay1);
        nms_minmax(b[0], b[2], &by0, &by1);
        iy0 = nms_max(ay0, by0);
        iy1 = nms_min(ay1, by1);
        if (iy1 <= iy0) return 0;
    } else {         /* [x_center, y_center, width, height] */
        const float aw = a[2] / 2, ah = a[3] / 2, bw = b[2] / 2, bh = b[3] / 2;
        ax0 = a[0] - aw;
        ax1 = a[0] + aw;
        bx0 = b[0] - bw;
        bx1 = b[0] + bw;
        ix0 = nms_max(ax0, bx0);
        ix1 = nms_min(ax1, bx1);
        if (ix1 <= ix0) return 0;
        ay0 = a[1] - ah;
        ay1 = a[1] + ah;
        by0 = b[1] - bh;
        by1 = b[1] + bh;
        iy0 = nms_max(ay0, by0);
        iy1 = nms_min(ay1, by1);
        if (iy1 <= iy0) return 0;
    }
    const float inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0.0f) return 0;
    const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
    const float uni = area_a + area_b - inter;
    if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return 0;
    return inter / uni > thr;
}

/* Stable bottom-up merge sort of the box indices a[0..n) by score, highest first; b is the other buffer.
 * Returns whichever of the two holds the result. */
static int32_t *nms_sort(int32_t *a, int32_t *b, int64_t n, const float *score) {
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, t = lo;
            while (i < mid && j < hi) b[t++] = score[a[j]] > score[a[i]] ? a[j++] : a[i++];
            while (i < mid) b[t++] = a[i++];
            while (j < hi) b[t++] = a[j++];
        }
        int32_t *tmp = a;
        a = b;
        b = tmp;
    }
    return a;
}

int ep_ref_non_max_suppression_f32(const ep_op *op) {
    const ep_non_max_suppression_params *p = (const ep_non_max_suppression_params *)op->params;
    const ep_tensor *boxes = op->in[0], *scores = op->in[1];
    const ep_tensor *t_max = ep_op_in(op, 2), *t_iou = ep_op_in(op, 3), *t_score = ep_op_in(op, 4);
    ep_tensor *y = op->out[0];
    int64_t max_out = t_max ? rb_load_i(t_max->data, t_max->dtype, 0) : p->max_output_boxes_per_class;
    const float iou = t_iou ? *(const float *)t_iou->data : p->iou_threshold;
    const int has_score = t_score != NULL || p->has_score_threshold;
    const float score_thr = t_score ? *(const float *)t_score->data : p->score_threshold;
    if (!(iou >= 0.0f && iou <= 1.0f)) return EP_ERR_RUN_INDEX;   /* as onnxruntime: [0, 1] */
    if (max_out < 0) max_out = 0;
    const int64_t N = boxes->dims[0], B = boxes->dims[1], C = scores->dims[1], cap = y->dims[0];
    int64_t *out = (int64_t *)y->data, k = 0;
    if (max_out > 0 && B > 0) {
        int32_t *cand = (int32_t *)op->scratch, *tmp = cand + B, *kept = tmp + B;
        for (int64_t n = 0; n < N; n++) {
            const float *bx = (const float *)boxes->data + n * B * 4;
            for (int64_t c = 0; c < C; c++) {
                const float *sc = (const float *)scores->data + (n * C + c) * B;
                int64_t nc = 0, nk = 0;
                for (int64_t b = 0; b < B; b++)
                    if (!has_score || sc[b] > score_thr) cand[nc++] = (int32_t)b;
                const int32_t *order = nms_sort(cand, tmp, nc, sc);
                for (int64_t i = 0; i < nc && nk < max_out; i++) {
                    int keep = 1;
                    for (int64_t j = 0; j < nk && keep; j++) keep = !nms_suppress(bx, order[i], kept[j], p->center_point_box, iou);
                    if (!keep) continue;
                    if (k >= cap) return EP_ERR_RUN_BOUND;
                    kept[nk++] = order[i];
                    out[3 * k] = n;
                    out[3 * k + 1] = c;
                    out[3 * k + 2] = order[i];
                    k++;
                }
            }
        }
    }
    y->dims[0] = (int32_t)k;
    return EP_OK;
}
