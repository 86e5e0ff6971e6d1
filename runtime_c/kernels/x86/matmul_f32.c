/* AVX2+FMA MATMUL f32 (variant 0: both operands at run time, row-major, batch dims broadcast as numpy);
 * mirrors kernels/neon/gemm_f32.c's row-major GEMM (no packing, no scratch).
 *
 * Blocking: k-blocks of KC = 256, then 16-column strips of B (a KC x 16 strip, 16 KiB, stays in L1
 * while every 6-row panel of A streams past it), then 6-row panels: a 6 x 16 register tile (12 ymm
 * accumulators, 2 ymm of B per k, A by scalar broadcast: 15 of 16 registers). Column tails run a
 * 6 x 8 tile, masked (vmaskmovps) below 8 columns, so no element is touched outside the matrices.
 * Each output sums its products in k order with fused multiply-add from 0.0f (the reference rounds
 * each product: they differ by rounding only), whatever the tile or the thread that computes it.
 * Threads: the (batch, 6-row panel) pairs are split into contiguous ranges, one per task. */
#include <immintrin.h>
#include <string.h>
#include "ep_ops.h"
#include "matmul_bcast.h"
#include "x86.h"
#include "x86_act.h"

#define MM_KC 256
#define MM_MR 6
#define MM_INLINE static inline __attribute__((always_inline))

static inline int64_t mm_min(int64_t a, int64_t b) { return a < b ? a : b; }

MM_INLINE void mm_tile16(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                         float *c, int64_t ldc, int load_c) {
    __m256 c0[MM_MR], c1[MM_MR];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        c0[i] = load_c ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
        c1[i] = load_c ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kc; k++) {
        const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            const __m256 av = _mm256_broadcast_ss(a + i * lda + k);
            c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
        }
        b += ldb;
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        _mm256_storeu_ps(c + i * ldc, c0[i]);
        _mm256_storeu_ps(c + i * ldc + 8, c1[i]);
    }
}

/* mr x (lanes of m) tile, at most 8 columns: masked loads of B and C, masked stores. */
MM_INLINE void mm_tile8(const int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb,
                        float *c, int64_t ldc, int load_c, __m256i m) {
    __m256 c0[MM_MR];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) c0[i] = load_c ? _mm256_maskload_ps(c + i * ldc, m) : _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        const __m256 b0 = _mm256_maskload_ps(b, m);
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) c0[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i * lda + k), b0, c0[i]);
        b += ldb;
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) _mm256_maskstore_ps(c + i * ldc, m, c0[i]);
}

#define MM_CASES(F, ...)                                                  \
    switch (mr) {                                                         \
    case 1: F(1, kc, a, lda, b, ldb, c, ldc, load_c __VA_ARGS__); return; \
    case 2: F(2, kc, a, lda, b, ldb, c, ldc, load_c __VA_ARGS__); return; \
    case 3: F(3, kc, a, lda, b, ldb, c, ldc, load_c __VA_ARGS__); return; \
    case 4: F(4, kc, a, lda, b, ldb, c, ldc, load_c __VA_ARGS__); return; \
    case 5: F(5, kc, a, lda, b, ldb, c, ldc, load_c __VA_ARGS__); return; \
    default: F(MM_MR, kc, a, lda, b, ldb, c, ldc, load_c __VA_ARGS__); return; \
    }
static void mm_t16(int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                   int64_t ldc, int load_c) {
    MM_CASES(mm_tile16, )
}
static void mm_t8(int mr, int64_t kc, const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc, int load_c, int w) {
    const __m256i m = x86_mask8(w);
    MM_CASES(mm_tile8, , m)
}

/* c[0, N) = a[0, K) B[K, N] for one row of A (K >= 1), B's rows read whole, one after the other: c[n] =
 * fma(a[k], B[k][n], c[n]) for k in order from 0.0f, the operations of mm_tile16 / mm_tile8 for one row, so the
 * same bits; but B streams row by row instead of as 16-column strips (which read each row in 64-byte pieces,
 * K rows apart: an attention's scores over a long key sequence, K^T's rows thousands of bytes long). */
#define MM_ROW_NB 1024   /* columns of c per pass: 4 KiB, in L1 */
static void mm_row(int64_t N, int64_t K, const float *a, const float *b, int64_t ldb, float *c) {
    for (int64_t n0 = 0; n0 < N; n0 += MM_ROW_NB) {
        const int64_t nb = mm_min(MM_ROW_NB, N - n0), n8 = nb & ~(int64_t)7;
        const __m256i m = x86_mask8((int)(nb - n8));
        float *cn = c + n0;
        memset(cn, 0, (size_t)nb * sizeof(float));
        for (int64_t k = 0; k < K; k++) {
            const __m256 av = _mm256_broadcast_ss(a + k);
            const float *bk = b + k * ldb + n0;
            int64_t j = 0;
            for (; j < n8; j += 8)
                _mm256_storeu_ps(cn + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(bk + j), _mm256_loadu_ps(cn + j)));
            if (j < nb)
                _mm256_maskstore_ps(cn + j, m, _mm256_fmadd_ps(av, _mm256_maskload_ps(bk + j, m),
                                                                _mm256_maskload_ps(cn + j, m)));
        }
    }
}

/* C[M,N] (row stride ldc) = A[M,K] B[K,N], row-major with row strides lda, ldb. */
static void mm_gemm(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc) {
    if (K <= 0) {   /* empty sum */
        for (int64_t i = 0; i < M; i++) memset(c + i * ldc, 0, (size_t)N * sizeof(float));
        return;
    }
    if (M == 1) {
        mm_row(N, K, a, b, ldb, c);
        return;
    }
    for (int64_t k0 = 0; k0 < K; k0 += MM_KC) {
        const int64_t kc = mm_min(MM_KC, K - k0);
        const int load_c = k0 > 0;
        for (int64_t n0 = 0; n0 < N;) {
            const int64_t w = N - n0 >= 16 ? 16 : mm_min(8, N - n0);
            const float *bs = b + k0 * ldb + n0;
            for (int64_t m = 0; m < M; m += MM_MR) {
                const int mr = (int)mm_min(MM_MR, M - m);
                if (w == 16)
                    mm_t16(mr, kc, a + m * lda + k0, lda, bs, ldb, c + m * ldc + n0, ldc, load_c);
                else
                    mm_t8(mr, kc, a + m * lda + k0, lda, bs, ldb, c + m * ldc + n0, ldc, load_c, (int)w);
            }
            n0 += w;
        }
    }
}

typedef struct mm_job {
    const ep_tensor *at, *bt, *yt;
    int64_t M, N, K, panels, parts;
} mm_job;

/* Task t: its contiguous range of the flattened (batch, panel) pairs, a batch at a time. */
static void mm_task(void *ctx, uint32_t t) {
    const mm_job *j = (const mm_job *)ctx;
    int64_t lo, hi;
    ep_split_range(ep_numel(j->yt) / (j->M * j->N) * j->panels, j->parts, t, &lo, &hi);
    const float *a = (const float *)j->at->data, *b = (const float *)j->bt->data;
    float *y = (float *)j->yt->data;
    while (lo < hi) {
        const int64_t bi = lo / j->panels, p0 = lo % j->panels, p1 = mm_min(j->panels, p0 + (hi - lo));
        int64_t am, bm;
        ep_matmul_batch(j->at, j->bt, j->yt, bi, &am, &bm);
        const int64_t m0 = p0 * MM_MR, m1 = mm_min(j->M, p1 * MM_MR);
        mm_gemm(m1 - m0, j->N, j->K, a + (am * j->M + m0) * j->K, j->K, b + bm * j->K * j->N, j->N,
                y + (bi * j->M + m0) * j->N, j->N);
        lo += p1 - p0;
    }
}

int ep_x86_matmul_f32(const ep_op *op) {
    const ep_tensor *at = op->in[0], *bt = op->in[1], *yt = op->out[0];
    const int ro = yt->rank;
    for (int i = 0; i < ro; i++)
        if (yt->dims[i] == 0) return EP_OK;
    mm_job j = {at, bt, yt, yt->dims[ro - 2], yt->dims[ro - 1], at->dims[at->rank - 1], 0, 1};
    j.panels = (j.M + MM_MR - 1) / MM_MR;
    const int64_t units = ep_numel(yt) / (j.M * j.N) * j.panels;
    const uint64_t work = (uint64_t)ep_numel(yt) * (uint64_t)(j.K > 0 ? j.K : 1);
    j.parts = mm_min(units, ep_pool_threads_for(op->pool, work));
    ep_parallel_for(op->pool, (uint32_t)j.parts, mm_task, &j);
    return EP_OK;
}

/* ATTENTION: this file's GEMM and SOFTMAX's row (kernels/attention_tmpl.h) */
#define AT_GEMM(M, N, K, a, lda, b, ldb, c, ldc) mm_gemm(M, N, K, a, lda, b, ldb, c, ldc)
#define AT_SOFTMAX_ROW(y, x, n) ep_x86_softmax_row(y, x, n)
#include "attention_tmpl.h"
