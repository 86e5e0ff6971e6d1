/* A mock NPU driver library for the external delegate's tests (tests/py/test_delegate.py compiles it
 * with the host C compiler and loads it through ep_external_open). It runs blobs of float32 element-wise
 * steps, enough to offload part of a graph, and injects failures on request.
 *
 * Blob ("MOCK"): uint32 magic 0x4B434F4D, uint32 n_steps, then n_steps records of 8 uint32:
 *   op (1: y = max(a, 0); 2: y = a + b; 3: y = max(a + b, 0)), n (elements),
 *   a_region, a_offset, b_region, b_offset, y_region, y_offset (byte offsets)
 * regions: 0..n_inputs-1 the partition's inputs, 100 + k its output k, 200 the working memory.
 * Options (edgeplan_driver_v1's argument): "fail_load" refuses every blob; "fail_run=N" fails every
 * N-th run of a partition. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "edgeplan/external.h"

#define MOCK_MAGIC 0x4B434F4Du

typedef struct {
    const uint32_t *steps;
    uint32_t n_steps, n_in, n_out;
    ep_delegate_tensor in[16], out[16];   /* bound once at load: the arena's tensors (zero-copy) */
    void *work;
    uint64_t work_size, runs;
} mock_handle;

static int fail_load, fail_run_every;

/* Operand (r, off) of n floats, or -1 when it is not inside its region. */
static int operand(const mock_handle *h, uint32_t r, uint32_t off, uint32_t n, float **p) {
    const ep_delegate_tensor *t = r < h->n_in ? &h->in[r] : r >= 100 && r - 100 < h->n_out ? &h->out[r - 100] : NULL;
    if (t && t->dtype != 1) return -1;
    const uint64_t size = t ? t->nbytes : r == 200 ? h->work_size : 0;
    uint8_t *base = t ? (uint8_t *)t->data : (uint8_t *)h->work;
    if ((!t && r != 200) || (uint64_t)off + (uint64_t)n * 4 > size || off % 4) return -1;
    *p = (float *)(void *)(base + off);
    return 0;
}

static int32_t mock_load(const void *blob, uint64_t size, const ep_delegate_tensor *in, uint32_t n_in,
                         const ep_delegate_tensor *out, uint32_t n_out, void *work, uint64_t work_size,
                         void **handle, char *why, uint32_t why_len) {
    const uint32_t *w = (const uint32_t *)blob;
    if (fail_load) return snprintf(why, why_len, "mock: refused (fail_load)"), -401;
    if (size < 8 || w[0] != MOCK_MAGIC || size != 8 + (uint64_t)w[1] * 32 || n_in > 16 || n_out > 16)
        return snprintf(why, why_len, "mock: bad blob header"), -401;
    mock_handle *h = calloc(1, sizeof *h);
    if (!h) return -500;
    h->steps = w + 2;
    h->n_steps = w[1];
    h->n_in = n_in;
    h->n_out = n_out;
    memcpy(h->in, in, sizeof(*in) * n_in);
    memcpy(h->out, out, sizeof(*out) * n_out);
    h->work = work;
    h->work_size = work_size;
    for (uint32_t s = 0; s < h->n_steps; s++) {   /* every operand inside its region */
        const uint32_t *st = h->steps + 8 * s;
        float *p;
        if (st[0] < 1 || st[0] > 3 || operand(h, st[2], st[3], st[1], &p) ||
            (st[0] != 1 && operand(h, st[4], st[5], st[1], &p)) || operand(h, st[6], st[7], st[1], &p)) {
            free(h);
            return snprintf(why, why_len, "mock: step %u out of range", s), -401;
        }
    }
    *handle = h;
    return 0;
}

static int32_t mock_run(void *handle) {
    mock_handle *h = (mock_handle *)handle;
    h->runs++;
    if (fail_run_every && h->runs % (uint64_t)fail_run_every == 0) return -400;
    for (uint32_t s = 0; s < h->n_steps; s++) {
        const uint32_t *st = h->steps + 8 * s;
        float *a, *b = NULL, *y;
        operand(h, st[2], st[3], st[1], &a);   /* load checked every operand */
        if (st[0] != 1) operand(h, st[4], st[5], st[1], &b);
        operand(h, st[6], st[7], st[1], &y);
        for (uint32_t i = 0; i < st[1]; i++) {
            const float v = st[0] == 1 ? a[i] : a[i] + b[i];
            y[i] = st[0] == 2 ? v : (v > 0.0f ? v : 0.0f);
        }
    }
    return 0;
}

static void mock_unload(void *handle) { free(handle); }

static const ep_driver_v1 MOCK = {sizeof(ep_driver_v1), EP_DRIVER_VERSION, "mock-npu", mock_load, mock_run,
                                  mock_unload};

__attribute__((visibility("default"))) const ep_driver_v1 *edgeplan_driver_v1(const char *options) {
    fail_load = strstr(options, "fail_load") != NULL;
    const char *r = strstr(options, "fail_run=");
    fail_run_every = r ? atoi(r + 9) : 0;
    return &MOCK;
}
