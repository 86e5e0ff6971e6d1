/* RANDOM f32 (plan_format.h ep_random_params): element e of Y from word e % 4 of the Philox4x32-10 block
 * with counter (e / 4, lo32(run), hi32(run), stream) under the key (the op's seed, or the session's).
 * Each element depends only on its index, the key and the run, never on the order of the loop. */
#include "ep_ops.h"
#include "random_philox.h"

int ep_ref_random_f32(const ep_op *op) {
    const ep_random_params *p = (const ep_random_params *)op->params;
    const uint64_t seed = p->has_seed ? p->seed : op->run ? op->run->seed : 0;
    const uint64_t run = op->run ? op->run->run : 0;
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const int64_t n = ep_numel(op->out[0]);
    const float *prob = p->kind == EP_RANDOM_BERNOULLI ? (const float *)op->in[0]->data : NULL;
    float *y = (float *)op->out[0]->data;
    const float a = p->a, b = p->b, width = p->b - p->a;
    for (int64_t e0 = 0; e0 < n; e0 += 4) {
        const uint32_t ctr[4] = {(uint32_t)(e0 / 4), (uint32_t)run, (uint32_t)(run >> 32), p->stream};
        uint32_t w[4];
        float v[4];
        ep_philox4x32_10(ctr, key, w);
        const int64_t m = n - e0 < 4 ? n - e0 : 4;
        if (p->kind == EP_RANDOM_NORMAL) {
            float z[4];
            ep_rand_normal_pair(w[0], w[1], &z[0], &z[1]);
            ep_rand_normal_pair(w[2], w[3], &z[2], &z[3]);
            for (int k = 0; k < 4; k++) v[k] = a + b * z[k];
        } else if (p->kind == EP_RANDOM_UNIFORM) {
            for (int k = 0; k < 4; k++) v[k] = a + width * ep_rand_u01(w[k]);
        } else {
            for (int k = 0; k < m; k++) v[k] = ep_rand_u01(w[k]) < prob[e0 + k] ? 1.0f : 0.0f;
        }
        for (int64_t k = 0; k < m; k++) y[e0 + k] = v[k];
    }
    return EP_OK;
}
