/* AVX2 int8 kernels (docs/kernels.md "Integer kernels"): QGEMM PACKED and QCONV2D PACKED (the drivers of
 * kernels/quant_tmpl.h on an 8 x 8 block), QCONV2D DEPTHWISE, QUANTIZE, DEQUANTIZE, QADD, QLUT (at the end of the
 * file). Bit-exact with the reference:
 *   - products: int8 sign-extended to int16 (VPMOVSXBW) and VPMADDWD, exact (|a b| <= 2^14, pair sums <= 2^15);
 *     VPMADDUBSW would saturate at 16 bits on full-range data and is never used;
 *   - requantisation: qx_requant (quant_x86.h) for channels with s >= 32, ep_requant for the others;
 *   - QUANTIZE: VDIVPS (the same IEEE division as the scalar x / scale), VROUNDPS to nearest even, the zero point
 *     added in float and the clamp, as the reference orders them; NaN gives the zero point. DEQUANTIZE: the exact
 *     int32 difference converted, then one VMULPS.
 * Block of the packed product: 4 rows x 8 columns, the rows from a stream panel of int16 (QT_SR 4: A's rows or the
 * patches, sign-extended once when packed, so that a row's 4-deep K group is one VPBROADCASTQ from memory, a load
 * without a shuffle), the columns from a weight panel (two VPMOVSXBW per K group). 8 accumulators, each holding
 * two partial sums per column (the two VPMADDWD pairs of the group), folded once at the end with VPHADDD: per K
 * group 8 VPMADDWD, 8 VPADDD, 2 VPMOVSXBW, 4 broadcast loads. The convolution's block is (patches, weights):
 * acc[position][channel], requantised with per-column (m, s) and stored transposed. */
#include <math.h>
#include <string.h>
#include "x86.h"
#include "quant_common.h"
#include "quant_x86.h"

#define QT_SR 4
#define QT_ELEM int16_t
#define QT_CONV_STREAM_ROWS 1
#define QT_CUSTOM_PACK

#define QX_ROW(i)                                                                                      \
    do {                                                                                               \
        const __m256i b = _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(s + (i) * 4)));  \
        l##i = _mm256_add_epi32(_mm256_madd_epi16(b, w0), l##i);                                       \
        h##i = _mm256_add_epi32(_mm256_madd_epi16(b, w1), h##i);                                       \
    } while (0)

/* r[i][j] = sum_k sp[i, k] wp[j, k] (the 4 rows of the block, columns in order): sp a stream panel [K4][4][4] of
 * int16, wp a weight panel [K4][8][4] */
static inline void qx_block(const int16_t *sp, const int8_t *wp, int64_t K4, __m256i r[4]) {
    __m256i l0 = _mm256_setzero_si256(), l1 = l0, l2 = l0, l3 = l0, h0 = l0, h1 = l0, h2 = l0, h3 = l0;
    for (int64_t k4 = 0; k4 < K4; k4++) {
        const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wp + k4 * 32)));
        const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wp + k4 * 32 + 16)));
        const int16_t *s = sp + k4 * 16;
        QX_ROW(0);
        QX_ROW(1);
        QX_ROW(2);
        QX_ROW(3);
        /* no code: keeps each accumulator in one register across iterations (GCC 12 otherwise rotates them
         * through copies and a spill) */
        __asm__("" : "+x"(l0), "+x"(l1), "+x"(l2), "+x"(l3), "+x"(h0), "+x"(h1), "+x"(h2), "+x"(h3));
    }
    /* hadd: [c0 c1 c4 c5 | c2 c3 c6 c7]; 0xD8 puts the qwords in column order */
    r[0] = _mm256_permute4x64_epi64(_mm256_hadd_epi32(l0, h0), 0xD8);
    r[1] = _mm256_permute4x64_epi64(_mm256_hadd_epi32(l1, h1), 0xD8);
    r[2] = _mm256_permute4x64_epi64(_mm256_hadd_epi32(l2, h2), 0xD8);
    r[3] = _mm256_permute4x64_epi64(_mm256_hadd_epi32(l3, h3), 0xD8);
}

/* acc[r * 8 + j] = sum_k sp[r, k] wp[j, k] */
static void qt_block(const int16_t *sp, const int8_t *wp, int64_t K4, int32_t *acc) {
    __m256i r[4];
    qx_block(sp, wp, K4, r);
    for (int i = 0; i < 4; i++) _mm256_storeu_si256((__m256i *)(acc + 8 * i), r[i]);
}

static inline void qx_store32(int8_t *dst, int32_t v) { memcpy(dst, &v, 4); }

/* The convolution's whole tile (4 positions q0 .. q0 + 3 of 8 channels, every s >= 32), fused: the block's rows
 * requantised in registers with the columns' (bias, m, s), packed to bytes (two VPACKSSDW, one VPACKSSWB: per
 * 128-bit lane the 4 rows of 4 channels), a 4 x 4 byte transpose (VPSHUFB) so that each channel's 4 positions are
 * one dword, stored at yc[c * P]: no accumulator round trip through memory, no byte-wise transposed store. */
#define QT_CONV_TILE 1
#define QT_GEMM_TILE 1
/* The 4 requantised rows of a tile as bytes: lane 0 holds columns 0..3 of rows 0..3 (4 bytes each), lane 1 4..7 */
static inline __m256i qx_tile_bytes(const int16_t *sp, const int8_t *wp, int64_t K4, const int32_t *bias8,
                                    const int32_t *m8, const int32_t *s8, int32_t lo, int32_t hi, int32_t zp) {
    __m256i r[4];
    qx_block(sp, wp, K4, r);
    const __m256i b = _mm256_loadu_si256((const __m256i *)bias8), m = _mm256_loadu_si256((const __m256i *)m8);
    const __m256i s = _mm256_loadu_si256((const __m256i *)s8);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi), vzp = _mm256_set1_epi32(zp);
    __m256i v[4];
    for (int i = 0; i < 4; i++) v[i] = qx_requant(_mm256_add_epi32(r[i], b), m, s, vlo, vhi, vzp);
    return _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
}

/* QGEMM's whole tile (4 rows of A, 8 columns, every s >= 32), fused: the 4 rows of 8 bytes stored at y[r * N] */
static void qt_gemm_tile(const int16_t *sp, const int8_t *wp, int64_t K4, const int32_t *bias8, const int32_t *m8,
                         const int32_t *s8, int32_t lo, int32_t hi, int32_t zp, int8_t *y, int64_t N) {
    const __m256i by = qx_tile_bytes(sp, wp, K4, bias8, m8, s8, lo, hi, zp);
    /* per lane [r0 r1 r2 r3] x 4 columns: interleave the lanes' dwords into rows of 8 */
    const __m128i c03 = _mm256_castsi256_si128(by), c47 = _mm256_extracti128_si256(by, 1);
    const __m128i r01 = _mm_unpacklo_epi32(c03, c47), r23 = _mm_unpackhi_epi32(c03, c47);
    _mm_storel_epi64((__m128i *)y, r01);
    _mm_storeh_pi((__m64 *)(y + N), _mm_castsi128_ps(r01));
    _mm_storel_epi64((__m128i *)(y + 2 * N), r23);
    _mm_storeh_pi((__m64 *)(y + 3 * N), _mm_castsi128_ps(r23));
}

static void qt_conv_tile(const int16_t *sp, const int8_t *wp, int64_t K4, const int32_t *bias8, const int32_t *m8,
                         const int32_t *s8, int32_t lo, int32_t hi, int32_t zp, int8_t *yc, int64_t P) {
    const __m256i by = qx_tile_bytes(sp, wp, K4, bias8, m8, s8, lo, hi, zp);
    const __m256i tr = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                        0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i t = _mm256_shuffle_epi8(by, tr);   /* lane 0: channels 0..3, lane 1: 4..7, 4 positions each */
    const __m128i t0 = _mm256_castsi256_si128(t), t1 = _mm256_extracti128_si256(t, 1);
    qx_store32(yc, _mm_cvtsi128_si32(t0));
    qx_store32(yc + P, _mm_extract_epi32(t0, 1));
    qx_store32(yc + 2 * P, _mm_extract_epi32(t0, 2));
    qx_store32(yc + 3 * P, _mm_extract_epi32(t0, 3));
    qx_store32(yc + 4 * P, _mm_cvtsi128_si32(t1));
    qx_store32(yc + 5 * P, _mm_extract_epi32(t1, 1));
    qx_store32(yc + 6 * P, _mm_extract_epi32(t1, 2));
    qx_store32(yc + 7 * P, _mm_extract_epi32(t1, 3));
}

/* One position's tile: the stream panel's row 0 against the weight panel (per K group 2 VPMOVSXBW, 1 broadcast,
 * 2 VPMADDWD), requantised in registers (every s >= 32, else 0: the general path), the 8 channels' bytes stored
 * at yc[c * P] */
#define QT_CONV_ROW1 1
static int qt_conv_row1(const int16_t *sp, const int8_t *wp, int64_t K4, const int32_t *bias8, const int32_t *m8,
                        const int32_t *s8, int32_t lo, int32_t hi, int32_t zp, int8_t *yc, int64_t P) {
    const __m256i vs = _mm256_loadu_si256((const __m256i *)s8);
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(_mm256_set1_epi32(32), vs))) return 0;
    __m256i l = _mm256_setzero_si256(), h = l;
    for (int64_t k4 = 0; k4 < K4; k4++) {
        const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wp + k4 * 32)));
        const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wp + k4 * 32 + 16)));
        const __m256i b = _mm256_broadcastq_epi64(_mm_loadl_epi64((const __m128i *)(sp + k4 * 16)));
        l = _mm256_add_epi32(_mm256_madd_epi16(b, w0), l);
        h = _mm256_add_epi32(_mm256_madd_epi16(b, w1), h);
    }
    const __m256i r = _mm256_add_epi32(_mm256_permute4x64_epi64(_mm256_hadd_epi32(l, h), 0xD8),
                                       _mm256_loadu_si256((const __m256i *)bias8));
    const __m256i v = qx_requant(r, _mm256_loadu_si256((const __m256i *)m8), vs, _mm256_set1_epi32(lo),
                                 _mm256_set1_epi32(hi), _mm256_set1_epi32(zp));
    if (P == 1) {
        qx_store_i8(v, yc, 8);
        return 1;
    }
    int8_t t[8];
    qx_store_i8(v, t, 8);
    for (int c = 0; c < 8; c++) yc[c * P] = t[c];
    return 1;
}

static void qt_requant_cols(const int32_t *acc8, const int32_t *bias8, const int32_t *m8, const int32_t *s8, int vec,
                            int32_t lo, int32_t hi, int32_t zp, int8_t *dst, int n) {
    const __m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)acc8), _mm256_loadu_si256((const __m256i *)bias8));
    if (vec) {
        qx_store_i8(qx_requant(a, _mm256_loadu_si256((const __m256i *)m8), _mm256_loadu_si256((const __m256i *)s8),
                               _mm256_set1_epi32(lo), _mm256_set1_epi32(hi), _mm256_set1_epi32(zp)),
                    dst, n);
        return;
    }
    int32_t t[8];
    _mm256_storeu_si256((__m256i *)t, a);
    for (int i = 0; i < n; i++) dst[i] = (int8_t)ep_requant(t[i], m8[i], s8[i], lo, hi, zp);
}

static void qt_requant_row(const int32_t *acc8, int32_t bias, int32_t m, int32_t s, int32_t lo, int32_t hi, int32_t zp,
                           int8_t *dst, int n) {
    if (s >= 32) {
        const __m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)acc8), _mm256_set1_epi32(bias));
        qx_store_i8(qx_requant(a, _mm256_set1_epi32(m), _mm256_set1_epi32(s), _mm256_set1_epi32(lo),
                               _mm256_set1_epi32(hi), _mm256_set1_epi32(zp)),
                    dst, n);
        return;
    }
    for (int i = 0; i < n; i++) dst[i] = (int8_t)ep_requant(acc8[i] + bias, m, s, lo, hi, zp);
}

#include "quant_tmpl.h"

static inline __m128i qx_load32(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
}

static inline __m128i qx_load16(const int8_t *p) {   /* 16 bytes, or zeros for a row past A */
    return p ? _mm_loadu_si128((const __m128i *)p) : _mm_setzero_si128();
}
static inline __m128i qx_load32z(const int8_t *p) { return p ? qx_load32(p) : _mm_setzero_si128(); }

/* qt_pack_rows_c's bytes: 4 rows 4 K groups at a time (a 4 x 4 dword transpose, then VPMOVSXBW); the rows past A
 * (its last panel, a GEMV's one row) packed as zeros without being read */
static void qt_pack_rows(const int8_t *a, int64_t R, int64_t K, int64_t r0, int16_t *dst) {
    const int64_t kf = K / EP_QPACK_K;
    const int8_t *s0 = a + r0 * K, *s1 = r0 + 1 < R ? s0 + K : NULL, *s2 = r0 + 2 < R ? s0 + 2 * K : NULL;
    const int8_t *s3 = r0 + 3 < R ? s0 + 3 * K : NULL;
    int64_t k4 = 0;
    for (; k4 + 4 <= kf; k4 += 4) {
        const __m128i x0 = _mm_loadu_si128((const __m128i *)(s0 + k4 * 4)), x1 = qx_load16(s1 ? s1 + k4 * 4 : NULL);
        const __m128i x2 = qx_load16(s2 ? s2 + k4 * 4 : NULL), x3 = qx_load16(s3 ? s3 + k4 * 4 : NULL);
        const __m128i t0 = _mm_unpacklo_epi32(x0, x1), t1 = _mm_unpacklo_epi32(x2, x3);
        const __m128i t2 = _mm_unpackhi_epi32(x0, x1), t3 = _mm_unpackhi_epi32(x2, x3);
        _mm256_storeu_si256((__m256i *)(dst + k4 * 16), _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(t0, t1)));
        _mm256_storeu_si256((__m256i *)(dst + k4 * 16 + 16), _mm256_cvtepi8_epi16(_mm_unpackhi_epi64(t0, t1)));
        _mm256_storeu_si256((__m256i *)(dst + k4 * 16 + 32), _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(t2, t3)));
        _mm256_storeu_si256((__m256i *)(dst + k4 * 16 + 48), _mm256_cvtepi8_epi16(_mm_unpackhi_epi64(t2, t3)));
    }
    for (; k4 < kf; k4++) {
        const __m128i v =
            _mm_unpacklo_epi64(_mm_unpacklo_epi32(qx_load32(s0 + k4 * 4), qx_load32z(s1 ? s1 + k4 * 4 : NULL)),
                               _mm_unpacklo_epi32(qx_load32z(s2 ? s2 + k4 * 4 : NULL), qx_load32z(s3 ? s3 + k4 * 4 : NULL)));
        _mm256_storeu_si256((__m256i *)(dst + k4 * 16), _mm256_cvtepi8_epi16(v));
    }
    if (kf * EP_QPACK_K < K) {
        const int64_t t = K - kf * EP_QPACK_K;
        for (int r = 0; r < 4; r++)
            for (int64_t i = 0; i < 4; i++)
                dst[kf * 16 + r * 4 + i] = i < t && r0 + r < R ? a[(r0 + r) * K + kf * 4 + i] : 0;
    }
}

/* qt_pack_patches_c's bytes; 1x1 kernels at stride 1 without pads and 4 positions inside the plane: channel
 * groups of 4, a 4 x 4 byte transpose (VPSHUFB) and VPMOVSXBW; other kernels: qt_pack_patches_gathered */
static void qt_pack_patches(const ep_qconv_geo *g, const int8_t *xg, int64_t q0, int16_t *dst) {
    const int64_t HW = g->H * g->W;
    if (g->KH != 1 || g->KW != 1 || g->sh != 1 || g->sw != 1 || g->pt != 0 || g->pl != 0 || g->OH != g->H ||
        g->OW != g->W || q0 + 4 > HW) {
        qt_pack_patches_gathered(g, xg, q0, dst);
        return;
    }
    const __m128i tr = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const int64_t C = g->CG, cf = C / 4;
    const int8_t *x = xg + q0;
    for (int64_t c4 = 0; c4 < cf; c4++) {
        const int8_t *xc = x + c4 * 4 * HW;
        const __m128i v = _mm_unpacklo_epi64(_mm_unpacklo_epi32(qx_load32(xc), qx_load32(xc + HW)),
                                             _mm_unpacklo_epi32(qx_load32(xc + 2 * HW), qx_load32(xc + 3 * HW)));
        _mm256_storeu_si256((__m256i *)(dst + c4 * 16), _mm256_cvtepi8_epi16(_mm_shuffle_epi8(v, tr)));
    }
    if (cf * 4 < C)
        for (int r = 0; r < 4; r++)
            for (int64_t i = 0; i < 4; i++) dst[cf * 16 + r * 4 + i] = cf * 4 + i < C ? x[(cf * 4 + i) * HW + r] : 0;
}

/* ---------------- QCONV2D DEPTHWISE ----------------
 * Per plane, 8 outputs of a row at a time where every tap of the 8 is inside the row (strides 1 and 2); each tap
 * one VPMOVSXBD and one VPMADDWD against the weight in the low half of each dword (the high half 0: x w exactly);
 * rows above or below the input add x_zero times the row's weight sum. The borders, other strides: scalar. */
typedef struct qdw_job {
    const ep_qconv_geo *g;
    const int8_t *x, *w;
    const int32_t *bias, *q;
    int8_t *y;
    int64_t C, M, planes, parts, N;
    int32_t lo, hi, zp;
} qdw_job;


/* The fast path (dilation 1, strides 1 and 2, KW <= 8): per plane, bands of output rows over a padded copy of
 * the input rows they read (x_zero outside X, so the borders need no case) held as int32 dwords that pair two
 * horizontally adjacent taps: stride 1: dword i = (x[i], x[i + 1]) as two int16; stride 2: the row as int16,
 * dword i = (x[2i], x[2i + 1]). Taps (kw, kw + 1) of 8 outputs are then one VPMADDWD of 8 consecutive dwords
 * (stride 1: at ow + kw; stride 2: at ow + kw / 2) with the pair of weights (w[kw], w[kw + 1]) broadcast (the
 * second 0 past KW): 16 exact MACs per instruction. Every output of a row is computed in vectors of 8 (the tail
 * stored partially); the plane copy is on the stack (QDW_CAP dwords), a band as tall as it holds. */
#define QDW_CAP 4096
#define QDW_RING 3     /* rows of the padded byte copy */
#define QDW_XS 2064    /* its largest row stride (rows past 2048 padded bytes take the other path) */
typedef struct qdw_rq {   /* one channel's requantisation */
    __m256i vm, vs, vlo, vhi, vzp;
    int32_t m, s, lo, hi, zp;
} qdw_rq;

/* One output row of the fast path from plane rows rb (stride PWs); inlined with KH, NP and sw constant for the
 * 3 x 3 kernels so that the tap loops unroll */
static inline __attribute__((always_inline)) void qdw_row(const int32_t *rb, int64_t PWs, __m256i (*wv)[4], int64_t KH,
                                                           int64_t NP, int64_t sw, __m256i vb, int64_t OW, int8_t *yr,
                                                           const qdw_rq *rq) {
    for (int64_t ow = 0; ow < OW; ow += 8) {
        __m256i acc = vb;
        for (int64_t kh = 0; kh < KH; kh++) {
            const int32_t *xr = rb + kh * PWs + ow;
            for (int64_t p = 0; p < NP; p++)
                acc = _mm256_add_epi32(
                    acc, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(xr + (sw == 1 ? 2 * p : p))), wv[kh][p]));
        }
        const int n = (int)qt_min(8, OW - ow);
        if (rq->s >= 32) {
            qx_store_i8(qx_requant(acc, rq->vm, rq->vs, rq->vlo, rq->vhi, rq->vzp), yr + ow, n);
        } else {
            int32_t tv[8];
            _mm256_storeu_si256((__m256i *)tv, acc);
            for (int i = 0; i < n; i++) yr[ow + i] = (int8_t)ep_requant(tv[i], rq->m, rq->s, rq->lo, rq->hi, rq->zp);
        }
    }
}

/* Plane row d of padded input row ih (its bytes xbr in the copy): the chunks whose bytes all lie in X straight from
 * the input row, the others from the copy */
static inline void qdw_widen(const ep_qconv_geo *g, const int8_t *xp, const int8_t *xbr, int64_t ih, int64_t sw,
                             int64_t PWs, int32_t *d) {
    const int inside = ih >= 0 && ih < g->H;
    const int8_t *xr = inside ? xp + ih * g->W : NULL;
    if (sw == 1) {
        for (int64_t i = 0; i < PWs; i += 8) {
            const int8_t *src = inside && i >= g->pl && i - g->pl + 9 <= g->W ? xr + (i - g->pl) : xbr + i;
            const __m128i a = _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)src));
            const __m128i b = _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(src + 1)));
            _mm_storeu_si128((__m128i *)(d + i), _mm_unpacklo_epi16(a, b));
            _mm_storeu_si128((__m128i *)(d + i + 4), _mm_unpackhi_epi16(a, b));
        }
    } else {
        for (int64_t i = 0; i < PWs; i += 8) {
            const int8_t *src =
                inside && 2 * i >= g->pl && 2 * i - g->pl + 16 <= g->W ? xr + (2 * i - g->pl) : xbr + 2 * i;
            _mm256_storeu_si256((__m256i *)(d + i), _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)src)));
        }
    }
}

static int qdw_fast(const qdw_job *j, int64_t pl) {
    const ep_qconv_geo *g = j->g;
    const int64_t KH = g->KH, KW = g->KW, sw = g->sw, sh = g->sh, c = pl % j->C;
    if (g->dh != 1 || g->dw != 1 || (sw != 1 && sw != 2) || KW > 8 || KH > 16) return 0;
    const int64_t OWv = (g->OW + 7) / 8 * 8, NP = (KW + 1) / 2;   /* pairs of taps per row */
    const int64_t PWd = sw == 1 ? OWv + KW : OWv + NP + 1;          /* dwords per copied row */
    const int64_t PWs = (PWd + 7) / 8 * 8;                          /* the row stride in the copy */
    const int64_t PWx = sw == 1 ? PWs + 1 : 2 * PWs;                /* padded input bytes per row */
    const int64_t XS = PWx + 16;                                    /* a row's stride in the byte copy */
    if (QDW_CAP / PWs < KH || XS > QDW_XS) return 0;
    const int64_t band = (QDW_CAP / PWs - KH) / sh + 1;             /* output rows per band */
    int32_t plane[QDW_CAP];
    int8_t xb[QDW_RING * QDW_XS];
    const int8_t *xp = j->x + pl * g->H * g->W, *w = j->w + c * KH * KW;
    int8_t *yp = j->y + pl * g->OH * g->OW;
    const int32_t bias = j->bias[c], m = j->q[c], s = j->q[j->M + c];
    __m256i wv[16][4];
    for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t p = 0; p < NP; p++) {
            const int32_t w0 = w[kh * KW + 2 * p], w1 = 2 * p + 1 < KW ? w[kh * KW + 2 * p + 1] : 0;
            wv[kh][p] = _mm256_set1_epi32((int32_t)(((uint32_t)(uint16_t)w1 << 16) | (uint16_t)w0));
        }
    const qdw_rq rq = {_mm256_set1_epi32(m), _mm256_set1_epi32(s), _mm256_set1_epi32(j->lo), _mm256_set1_epi32(j->hi),
                       _mm256_set1_epi32(j->zp), m, s, j->lo, j->hi, j->zp};
    const __m256i vb = _mm256_set1_epi32(bias);
    const int64_t nx = qt_min(g->W, PWx - g->pl);   /* input bytes of a row in the padded copy */
    memset(xb, g->pad, (size_t)(QDW_RING * XS));    /* the pads stay; each row overwrites [pl, pl + nx) */
    for (int64_t oh0 = 0; oh0 < g->OH; oh0 += band) {
        const int64_t oh1 = qt_min(g->OH, oh0 + band), ih0 = oh0 * sh - g->pt, rows = (oh1 - 1 - oh0) * sh + KH;
        /* the byte copy is a ring of QDW_RING rows filled QDW_RING - 1 rows ahead of the widening, so that its
         * loads come long after the memcpy's stores (a load just after them fails store forwarding and stalls) */
        for (int64_t r = 0; r < rows + QDW_RING - 1; r++) {
            const int64_t ih = ih0 + r;
            if (r < rows && nx > 0) {
                int8_t *dst = xb + r % QDW_RING * XS + g->pl;
                if (ih >= 0 && ih < g->H) memcpy(dst, xp + ih * g->W, (size_t)nx);
                else memset(dst, g->pad, (size_t)nx);
            }
            if (r < QDW_RING - 1) continue;
            qdw_widen(g, xp, xb + (r - (QDW_RING - 1)) % QDW_RING * XS, ih0 + r - (QDW_RING - 1), sw, PWs,
                      plane + (r - (QDW_RING - 1)) * PWs);
        }
        for (int64_t oh = oh0; oh < oh1; oh++) {
            const int32_t *rb = plane + (oh - oh0) * sh * PWs;
            int8_t *yr = yp + oh * g->OW;
            if (KH == 3 && NP == 2 && sw == 1) qdw_row(rb, PWs, wv, 3, 2, 1, vb, g->OW, yr, &rq);
            else if (KH == 3 && NP == 2) qdw_row(rb, PWs, wv, 3, 2, 2, vb, g->OW, yr, &rq);
            else qdw_row(rb, PWs, wv, KH, NP, sw, vb, g->OW, yr, &rq);
        }
    }
    return 1;
}

/* sum a[i] b[i] over n int8 pairs: 16 at a time by VPMADDWD on the sign-extended bytes (exact), the rest scalar */
static int32_t qx_dot_i8(const int8_t *a, const int8_t *b, int64_t n) {
    __m256i acc = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i))),
                                                      _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)))));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    if (i + 8 <= n) {
        h = _mm_add_epi32(h, _mm_madd_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(a + i))),
                                            _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(b + i)))));
        i += 8;
    }
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
    int32_t r = _mm_cvtsi128_si32(h);
    for (; i < n; i++) r += a[i] * b[i];
    return r;
}

/* The accumulator of output (oh, ow) whose taps all lie inside its row (dilation 1 along W): a dot product per
 * kernel row, a row above or below the input adding x_zero times its weight sum */
static int32_t qdw_one_inside(const ep_qconv_geo *g, const int8_t *xp, const int8_t *w, int32_t bias, int64_t oh,
                              int64_t ow) {
    int32_t acc = bias;
    const int8_t *xc = xp + ow * g->sw - g->pl;
    for (int64_t kh = 0; kh < g->KH; kh++) {
        const int64_t ih = oh * g->sh - g->pt + kh * g->dh;
        const int8_t *wr = w + kh * g->KW;
        if (ih >= 0 && ih < g->H) {
            acc += qx_dot_i8(xc + ih * g->W, wr, g->KW);
        } else {
            for (int64_t kw = 0; kw < g->KW; kw++) acc += g->pad * wr[kw];
        }
    }
    return acc;
}

/* One output per plane whose window is the plane's first KH whole rows, unpadded (a streaming buffer's tap: the
 * depthwise conv over the last K frames): a dot product of K = KH KW bytes per plane. Eight planes at a time
 * keep eight VPMADDWD sums, reduced together by a VPHADDD tree; the K % 8 last taps are added in scalar.
 * Planes r.lo .. up to a multiple of 8 are done; returns the first plane left. */
static int64_t qdw_dots(const qdw_job *j, ep_range r) {
    const ep_qconv_geo *g = j->g;
    if (g->OH != 1 || g->OW != 1 || g->pt || g->pl || g->dh != 1 || g->dw != 1 || g->KW != g->W || g->KH > g->H)
        return r.lo;
    const int64_t K = g->KH * g->KW, K8 = K / 8 * 8, HW = g->H * g->W;
    int64_t pl = r.lo;
    for (; pl + 8 <= r.hi; pl += 8) {
        __m256i acc[8];
        int32_t sum[8];
        for (int i = 0; i < 8; i++) {
            const int8_t *x = j->x + (pl + i) * HW, *w = j->w + (pl + i) % j->C * K;
            __m256i a = _mm256_setzero_si256();
            int64_t k = 0;
            for (; k + 16 <= K8; k += 16)
                a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(x + k))),
                                                          _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + k)))));
            if (k < K8)   /* 8 more: the upper 8 int16 lanes are zero */
                a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(x + k))),
                                                          _mm256_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(w + k)))));
            acc[i] = a;
        }
        const __m256i h01 = _mm256_hadd_epi32(acc[0], acc[1]), h23 = _mm256_hadd_epi32(acc[2], acc[3]);
        const __m256i h45 = _mm256_hadd_epi32(acc[4], acc[5]), h67 = _mm256_hadd_epi32(acc[6], acc[7]);
        const __m256i h0123 = _mm256_hadd_epi32(h01, h23), h4567 = _mm256_hadd_epi32(h45, h67);
        _mm256_storeu_si256((__m256i *)sum, _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                                                             _mm256_permute2x128_si256(h0123, h4567, 0x31)));
        const int64_t c0 = pl % j->C;
        for (int i = 0; i < 8; i++) {
            const int64_t c = (pl + i) % j->C;
            const int8_t *x = j->x + (pl + i) * HW, *w = j->w + c * K;
            int32_t v = sum[i] + j->bias[c];
            for (int64_t k = K8; k < K; k++) v += x[k] * w[k];
            sum[i] = v;
        }
        if (c0 + 8 <= j->C) {   /* eight channels in a row: their (m, s) from the table, shifts >= 32 vectorised */
            const __m256i vs = _mm256_loadu_si256((const __m256i *)(j->q + j->M + c0));
            if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(_mm256_set1_epi32(32), vs)) == 0) {
                qx_store_i8(qx_requant(_mm256_loadu_si256((const __m256i *)sum),
                                       _mm256_loadu_si256((const __m256i *)(j->q + c0)), vs, _mm256_set1_epi32(j->lo),
                                       _mm256_set1_epi32(j->hi), _mm256_set1_epi32(j->zp)),
                            j->y + pl, 8);
                continue;
            }
        }
        for (int i = 0; i < 8; i++) {
            const int64_t c = (pl + i) % j->C;
            j->y[pl + i] = (int8_t)ep_requant(sum[i], j->q[c], j->q[j->M + c], j->lo, j->hi, j->zp);
        }
    }
    return pl;
}

/* ---- the channel-interleaved path: 8 channels of one image at a time ----
 * For dilation 1, strides 1 and 2 along W, KH and KW <= 8. The plane path pays a row's setup (copy, widening,
 * tails) once per plane row and fills a vector with 8 outputs of one row; small maps (MobileNet's 14 x 14 and
 * 7 x 7) spend most of their time there. Here a vector is one output position in 8 channels: each padded input
 * row of the 8 planes becomes, per position i, the 8 dwords (x[i], x[i + 1]) of the channels as int16 pairs (an
 * 8 x 8 byte transpose, widened; x_zero outside X), so that the taps (kw, kw + 1) of an output are one VPMADDWD
 * against the channels' weight pairs, the second 0 past KW. A ring of QDW8_RING rows of these on the stack (a
 * padded row QDW8_POS positions at most); the results are requantised with the 8 channels' multipliers and
 * transposed back to the 8 planes' rows. Channels past C in the last group repeat channel c0 with zero weights
 * and are not stored. */
#define QDW8_MAX_OW 32   /* outputs per row below which the interleaved path runs (wider rows fill the plane path's vectors) */
#define QDW8_POS 72      /* (QDW8_MAX_OW - 1) * 2 + 8 rounded up: a row of the widest map, stride 2, KW 8 */
#define QDW8_RING 6      /* rows: KH + sh at most (3x3 at strides 1 and 2, 5x5 at stride 1); 14 KiB of stack */

typedef struct qdw8_group {
    const int8_t *xc[8];
    int64_t npos, cn;
    __m256i wv[8][4], vb, vm, vs;
    int vec_rq;
} qdw8_group;

/* Transposes 8 rows of 8 bytes (a[r] in the low halves) to 8 columns: the 16-byte o[k] holds columns 2k, 2k + 1. */
static inline void q8_transpose8x8(const __m128i a[8], __m128i o[4]) {
    const __m128i t0 = _mm_unpacklo_epi8(a[0], a[1]), t1 = _mm_unpacklo_epi8(a[2], a[3]);
    const __m128i t2 = _mm_unpacklo_epi8(a[4], a[5]), t3 = _mm_unpacklo_epi8(a[6], a[7]);
    const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
    const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
    o[0] = _mm_unpacklo_epi32(u0, u2), o[1] = _mm_unpackhi_epi32(u0, u2);
    o[2] = _mm_unpacklo_epi32(u1, u3), o[3] = _mm_unpackhi_epi32(u1, u3);
}

/* Padded input row r (ih = r - pt) of the group as npos pair vectors d[i] = (x[i], x[i + 1]) per channel */
static void q8_row(const ep_qconv_geo *g, const qdw8_group *k, int64_t r, __m256i *d) {
    __m128i R[QDW8_POS + 1];
    const int64_t ih = r - g->pt, n = k->npos + 1;
    const __m128i zr = _mm_set1_epi16(g->pad);
    int64_t i = 0;
    if (ih >= 0 && ih < g->H) {
        for (; i < n && i < g->pl; i++) R[i] = zr;
        const int64_t off = ih * g->W - g->pl;
        for (; i + 8 <= n && i - g->pl + 8 <= g->W; i += 8) {
            __m128i a[8], o[4];
            for (int c = 0; c < 8; c++) a[c] = _mm_loadl_epi64((const __m128i *)(k->xc[c] + off + i));
            q8_transpose8x8(a, o);
            for (int q = 0; q < 4; q++) {
                R[i + 2 * q] = _mm_cvtepi8_epi16(o[q]);
                R[i + 2 * q + 1] = _mm_cvtepi8_epi16(_mm_srli_si128(o[q], 8));
            }
        }
        for (; i < n && i - g->pl < g->W; i++) {
            int16_t t[8];
            for (int c = 0; c < 8; c++) t[c] = k->xc[c][off + i];
            R[i] = _mm_loadu_si128((const __m128i *)t);
        }
    }
    for (; i < n; i++) R[i] = zr;
    for (i = 0; i < k->npos; i++)
        d[i] = _mm256_set_m128i(_mm_unpackhi_epi16(R[i], R[i + 1]), _mm_unpacklo_epi16(R[i], R[i + 1]));
}

/* One output row: acc per position from the ring rows of its KH taps, requantised into T (8 bytes a position) */
static inline __attribute__((always_inline)) void q8_out_row(const qdw8_group *k, const __m256i *const *rows,
                                                             int64_t KH, int64_t NP, int64_t sw, int64_t OW,
                                                             const __m256i *rq, int8_t *T) {
    for (int64_t ow = 0; ow < OW; ow++) {
        __m256i acc = k->vb;
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t p = 0; p < NP; p++)
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_load_si256(rows[kh] + ow * sw + 2 * p), k->wv[kh][p]));
        if (k->vec_rq) {
            const __m256i v = qx_requant(acc, k->vm, k->vs, rq[0], rq[1], rq[2]);
            const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            _mm_storel_epi64((__m128i *)(T + ow * 8), _mm_packs_epi16(w, w));
        } else {
            int32_t a[8], m[8], s[8];
            _mm256_storeu_si256((__m256i *)a, acc);
            _mm256_storeu_si256((__m256i *)m, k->vm);
            _mm256_storeu_si256((__m256i *)s, k->vs);
            for (int c = 0; c < 8; c++)
                T[ow * 8 + c] = (int8_t)ep_requant(a[c], m[c], s[c], _mm256_extract_epi32(rq[0], 0),
                                                   _mm256_extract_epi32(rq[1], 0), _mm256_extract_epi32(rq[2], 0));
        }
    }
}

static int qdw8_fits(const ep_qconv_geo *g) {
    if (g->dh != 1 || g->dw != 1 || (g->sw != 1 && g->sw != 2) || g->KW > 8 || g->KH > 8 ||
        g->KH + g->sh > QDW8_RING)
        return 0;
    return (g->OW - 1) * g->sw + g->KW <= QDW8_POS;
}

/* Groups [r.lo, r.hi) of 8 channels (group q: image q / groups_per_image) */
static void qdw8_task(void *ctx, uint32_t t) {
    const qdw_job *j = (const qdw_job *)ctx;
    const ep_qconv_geo *g = j->g;
    const int64_t G = (j->C + 7) / 8, KH = g->KH, KW = g->KW, NP = (KW + 1) / 2, sw = g->sw, OW = g->OW;
    const ep_range r = ep_task_range(j->N * G, j->parts, t);
    _Alignas(32) __m256i ring[QDW8_RING][QDW8_POS];
    int8_t T[QDW8_MAX_OW * 8 + 64];
    const __m256i rq[3] = {_mm256_set1_epi32(j->lo), _mm256_set1_epi32(j->hi), _mm256_set1_epi32(j->zp)};
    for (int64_t q = r.lo; q < r.hi; q++) {
        const int64_t n = q / G, c0 = q % G * 8;
        qdw8_group k;
        k.cn = qt_min(8, j->C - c0);
        k.npos = (OW - 1) * sw + KW;
        int32_t b[8], m[8], sh[8];
        int vec = 1;
        for (int c = 0; c < 8; c++) {
            const int ok = c < k.cn;
            const int64_t cc = c0 + (ok ? c : 0);
            k.xc[c] = j->x + (n * j->C + cc) * g->H * g->W;
            b[c] = ok ? j->bias[cc] : 0, m[c] = ok ? j->q[cc] : 0, sh[c] = ok ? j->q[j->M + cc] : 32;
            vec &= sh[c] >= 32;
        }
        k.vb = _mm256_loadu_si256((const __m256i *)b), k.vm = _mm256_loadu_si256((const __m256i *)m);
        k.vs = _mm256_loadu_si256((const __m256i *)sh), k.vec_rq = vec;
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t p = 0; p < NP; p++) {
                int32_t wp[8];
                for (int c = 0; c < 8; c++) {
                    const int8_t *w = j->w + (c0 + c) * KH * KW + kh * KW;
                    const int32_t w0 = c < k.cn ? w[2 * p] : 0, w1 = c < k.cn && 2 * p + 1 < KW ? w[2 * p + 1] : 0;
                    wp[c] = (int32_t)(((uint32_t)(uint16_t)w1 << 16) | (uint16_t)w0);
                }
                k.wv[kh][p] = _mm256_loadu_si256((const __m256i *)wp);
            }
        int64_t next = 0;   /* the next padded input row to widen into the ring */
        for (int64_t oh = 0; oh < g->OH; oh++) {
            const int64_t top = oh * g->sh;
            for (; next < top + KH; next++) q8_row(g, &k, next, ring[next % QDW8_RING]);
            const __m256i *rows[8];
            for (int64_t kh = 0; kh < KH; kh++) rows[kh] = ring[(top + kh) % QDW8_RING];
            if (KH == 3 && NP == 2 && sw == 1) q8_out_row(&k, rows, 3, 2, 1, OW, rq, T);
            else if (KH == 3 && NP == 2) q8_out_row(&k, rows, 3, 2, 2, OW, rq, T);
            else q8_out_row(&k, rows, KH, NP, sw, OW, rq, T);
            int8_t *yb = j->y + (n * j->M + c0) * g->OH * OW + oh * OW;
            int64_t ow = 0;
            for (; ow + 8 <= OW; ow += 8) {   /* 8 positions x 8 channels back to the channels' rows */
                __m128i a[8], o[4];
                for (int p = 0; p < 8; p++) a[p] = _mm_loadl_epi64((const __m128i *)(T + (ow + p) * 8));
                q8_transpose8x8(a, o);
                for (int c = 0; c < k.cn; c++)
                    _mm_storel_epi64((__m128i *)(yb + c * g->OH * OW + ow), c & 1 ? _mm_srli_si128(o[c / 2], 8) : o[c / 2]);
            }
            for (; ow < OW; ow++)
                for (int c = 0; c < k.cn; c++) yb[c * g->OH * OW + ow] = T[ow * 8 + c];
        }
    }
}

static void qdw_task(void *ctx, uint32_t t) {
    const qdw_job *j = (const qdw_job *)ctx;
    const ep_qconv_geo *g = j->g;
    ep_range r = ep_task_range(j->planes, j->parts, t);
    const int64_t KH = g->KH, KW = g->KW, sw = g->sw;
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 9, 11, 13, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    r.lo = qdw_dots(j, r);
    for (int64_t pl = r.lo; pl < r.hi; pl++) {
        if (g->OW >= 4 && qdw_fast(j, pl)) continue;   /* narrower rows waste most lanes: scalar */
        const int64_t c = pl % j->C;
        const int8_t *xp = j->x + pl * g->H * g->W, *w = j->w + c * KH * KW;
        int8_t *yp = j->y + pl * g->OH * g->OW;
        const int32_t bias = j->bias[c], m = j->q[c], s = j->q[j->M + c];
        /* ow with every tap inside the row: ow sw - pl >= 0 and ow sw - pl + (KW - 1) dw <= W - 1 */
        int64_t o_lo = (g->pl + sw - 1) / sw, o_hi = 0;
        const int64_t last = g->W - 1 - (KW - 1) * g->dw + g->pl;
        if (last >= 0) o_hi = last / sw + 1;
        if (o_hi > g->OW) o_hi = g->OW;
        if (o_lo > o_hi || (sw != 1 && sw != 2)) o_lo = o_hi = 0;
        __m256i wv[64];
        int32_t rowsum[32];
        const int vec = KH * KW <= 64 && KH <= 32 && o_hi - o_lo >= 8;
        if (vec) {
            for (int64_t k = 0; k < KH * KW; k++) wv[k] = _mm256_set1_epi32(w[k] & 0xFFFF);
            for (int64_t kh = 0; kh < KH; kh++) {
                rowsum[kh] = 0;
                for (int64_t kw = 0; kw < KW; kw++) rowsum[kh] += w[kh * KW + kw];
                rowsum[kh] *= g->pad;
            }
        }
        const __m256i vlo = _mm256_set1_epi32(j->lo), vhi = _mm256_set1_epi32(j->hi), vzp = _mm256_set1_epi32(j->zp);
        const __m256i vm = _mm256_set1_epi32(m), vs = _mm256_set1_epi32(s);
        for (int64_t oh = 0; oh < g->OH; oh++) {
            int8_t *yr = yp + oh * g->OW;
            int64_t ow = 0;
            if (vec) {
                for (; ow < o_lo; ow++)
                    yr[ow] = (int8_t)ep_requant(ep_qdw_one(g, xp, w, bias, oh, ow), m, s, j->lo, j->hi, j->zp);
                for (; ow + 8 <= o_hi; ow += 8) {
                    __m256i acc = _mm256_set1_epi32(bias);
                    for (int64_t kh = 0; kh < KH; kh++) {
                        const int64_t ih = oh * g->sh - g->pt + kh * g->dh;
                        if (ih < 0 || ih >= g->H) {
                            acc = _mm256_add_epi32(acc, _mm256_set1_epi32(rowsum[kh]));
                            continue;
                        }
                        const int8_t *xr = xp + ih * g->W + ow * sw - g->pl;
                        for (int64_t kw = 0; kw < KW; kw++) {
                            const int8_t *s0 = xr + kw * g->dw;
                            __m128i b;
                            if (sw == 1) {
                                b = _mm_loadl_epi64((const __m128i *)s0);
                            } else {   /* s0[0, 2, .., 14] from two 8-byte loads (never past s0[14]) */
                                b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)s0),
                                                       _mm_loadl_epi64((const __m128i *)(s0 + 7)));
                                b = _mm_shuffle_epi8(b, even);
                            }
                            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_cvtepi8_epi32(b), wv[kh * KW + kw]));
                        }
                    }
                    if (s >= 32) {
                        qx_store_i8(qx_requant(acc, vm, vs, vlo, vhi, vzp), yr + ow, 8);
                    } else {
                        int32_t tv[8];
                        _mm256_storeu_si256((__m256i *)tv, acc);
                        for (int i = 0; i < 8; i++) yr[ow + i] = (int8_t)ep_requant(tv[i], m, s, j->lo, j->hi, j->zp);
                    }
                }
            }
            for (; ow < g->OW; ow++) {
                const int64_t iw = ow * sw - g->pl;
                const int32_t acc = g->dw == 1 && iw >= 0 && iw + KW <= g->W ? qdw_one_inside(g, xp, w, bias, oh, ow)
                                                                           : ep_qdw_one(g, xp, w, bias, oh, ow);
                yr[ow] = (int8_t)ep_requant(acc, m, s, j->lo, j->hi, j->zp);
            }
        }
    }
}

int ep_x86_qconv2d_dw_i8(const ep_op *op) {
    const ep_qconv2d_params *p = (const ep_qconv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    ep_qconv_geo g;
    ep_qconv_geo_init(&g, p, xt, yt);
    ep_qconv_geo_column_as_row(&g);
    const int64_t N = xt->dims[0], C = xt->dims[1], planes = N * C;
    if (planes == 0 || g.OH * g.OW == 0) return EP_OK;
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)planes * (uint64_t)(g.OH * g.OW) * (uint64_t)g.K);
    qdw_job j = {&g, (const int8_t *)xt->data, (const int8_t *)op->in[1]->data, (const int32_t *)op->in[2]->data,
                 (const int32_t *)op->in[3]->data, (int8_t *)yt->data, C, yt->dims[1], planes, T < planes ? T : planes,
                 N, p->y_min - p->y_zero, p->y_max - p->y_zero, p->y_zero};
    const int dots = g.OH == 1 && g.OW == 1 && !g.pt && !g.pl && g.KW == g.W;   /* qdw_dots' windows */
    if (!dots && g.OW < QDW8_MAX_OW && qdw8_fits(&g)) {
        const int64_t groups = N * ((C + 7) / 8);
        j.parts = T < groups ? T : groups;
        ep_parallel_for(op->pool, (uint32_t)j.parts, qdw8_task, &j);
        return EP_OK;
    }
    ep_parallel_for(op->pool, (uint32_t)j.parts, qdw_task, &j);
    return EP_OK;
}

/* ---------------- QUANTIZE / DEQUANTIZE ---------------- */
#include "quant_elem_tmpl.h"

static void qe_quantize_row(const qe_convert_job *j, int64_t lo_i, int64_t hi_i) {
    const float *x = (const float *)j->x;
    const float lo = j->u8 ? 0.0f : -128.0f, hi = j->u8 ? 255.0f : 127.0f, zpf = (float)j->p->zero_point;
    const __m256 vs = _mm256_set1_ps(j->p->scale), vz = _mm256_set1_ps(zpf), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    int64_t i = lo_i;
    for (; i + 8 <= hi_i; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i);
        __m256 v = _mm256_add_ps(_mm256_round_ps(_mm256_div_ps(xv, vs), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
        v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
        v = _mm256_blendv_ps(v, vz, _mm256_cmp_ps(xv, xv, _CMP_UNORD_Q));
        const __m256i iv = _mm256_cvtps_epi32(v);
        const __m128i a = _mm256_castsi256_si128(iv), b = _mm256_extracti128_si256(iv, 1);
        const __m128i w = j->u8 ? _mm_packus_epi32(a, b) : _mm_packs_epi32(a, b);
        _mm_storel_epi64((__m128i *)((int8_t *)j->y + i), j->u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w));
    }
    for (; i < hi_i; i++) {   /* the reference's expression */
        float v = x[i] != x[i] ? zpf : nearbyintf(x[i] / j->p->scale) + zpf;
        v = v < lo ? lo : v > hi ? hi : v;
        if (j->u8) ((uint8_t *)j->y)[i] = (uint8_t)v;
        else ((int8_t *)j->y)[i] = (int8_t)v;
    }
}

static void qe_dequantize_row(const qe_convert_job *j, int64_t lo_i, int64_t hi_i) {
    float *y = (float *)j->y;
    const __m256i vz = _mm256_set1_epi32(j->p->zero_point);
    const __m256 vs = _mm256_set1_ps(j->p->scale);
    int64_t i = lo_i;
    for (; i + 8 <= hi_i; i += 8) {
        const __m128i b = _mm_loadl_epi64((const __m128i *)((const int8_t *)j->x + i));
        const __m256i q = j->u8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, vz)), vs));
    }
    for (; i < hi_i; i++) {
        const int32_t q = j->u8 ? ((const uint8_t *)j->x)[i] : ((const int8_t *)j->x)[i];
        y[i] = (float)(q - j->p->zero_point) * j->p->scale;
    }
}


/* ---------------- QADD / QLUT ----------------
 * QADD (ep_qadd1, quant_common.h): per input, d = A - a_zero (|d| <= 255), the exact product d * a_mult by
 * VPMULDQ (|d m| < 2^39), then, since a_shift >= 31 > 20,
 *   ((d 2^20) m + 2^(a_shift-1)) >> a_shift = (d m + 2^(sa-1)) >> sa,  sa = a_shift - 20 in [11, 42],
 * (floor((x 2^20 + 2^(as-1)) / 2^as) = floor((x + 2^(as-21)) / 2^(as-20)): the 2^20 divides both terms). AVX2 has
 * no 64-bit arithmetic shift, so 2^42 is added first (d m + 2^(sa-1) + 2^42 lies in (0, 2^43)): the logical
 * shift by sa then gives floor(...) + 2^(62 - a_shift) exactly (sa <= 42), and the result (|a| < 2^28, the
 * multiplier being below 1) is the low dword minus 2^(62 - a_shift), mod 2^32. a + b (|a + b| < 2^29) is then
 * requantised by qx_requant when y_shift >= 32; an op with y_shift < 32 runs ep_qadd1 on every element. In place
 * (Y exactly A or B) is safe: each vector of Y is stored after its inputs are loaded.
 * QLUT: Y = T[X + 128] as 16 VPSHUFB over the table's 16-byte slices: for slice i the index u - 16 i (u = X + 128,
 * wrapping) plus 0x70 with unsigned saturation keeps bit 7 clear exactly when u is in [16 i, 16 i + 16), so the
 * slice's shuffle gives T[u] there and zero elsewhere, and the 16 results are ORed. */

/* a's rescaled value (above) for 8 codes x: mv the multiplier in the low dword of each qword, c = 2^(sa-1) + 2^42,
 * off = 2^(62 - a_shift) as a dword */
static inline __m256i qx_qadd_in(__m256i x, __m256i zp, __m256i mv, __m256i c, __m128i sa, __m256i off) {
    const __m256i d = _mm256_sub_epi32(x, zp);
    const __m256i pe = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(d, mv), c), sa);
    const __m256i po = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(d, 32), mv), c), sa);
    return _mm256_sub_epi32(_mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA), off);
}

static void qe_qadd_row(const qe_codes_job *j, int64_t lo_i, int64_t hi_i) {
    const ep_qadd_params *p = j->p;
    int64_t i = lo_i;
    if (p->y_shift >= 32) {
        const __m256i za = _mm256_set1_epi32(p->a_zero), zb = _mm256_set1_epi32(p->b_zero);
        const __m256i ma = _mm256_set1_epi64x(p->a_mult), mb = _mm256_set1_epi64x(p->b_mult);
        const __m256i ca = _mm256_set1_epi64x(((int64_t)1 << (p->a_shift - 21)) + ((int64_t)1 << 42));
        const __m256i cb = _mm256_set1_epi64x(((int64_t)1 << (p->b_shift - 21)) + ((int64_t)1 << 42));
        const __m128i sa = _mm_cvtsi32_si128(p->a_shift - 20), sb = _mm_cvtsi32_si128(p->b_shift - 20);
        const __m256i oa = _mm256_set1_epi32((int32_t)(1u << (62 - p->a_shift))),
                      ob = _mm256_set1_epi32((int32_t)(1u << (62 - p->b_shift)));
        const __m256i ym = _mm256_set1_epi32(p->y_mult), ys = _mm256_set1_epi32(p->y_shift);
        const __m256i lo = _mm256_set1_epi32(p->y_min - p->y_zero), hi = _mm256_set1_epi32(p->y_max - p->y_zero);
        const __m256i yz = _mm256_set1_epi32(p->y_zero);
        for (; i + 8 <= hi_i; i += 8) {
            const __m256i xa = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(j->a + i)));
            const __m256i xb = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(j->b + i)));
            const __m256i s = _mm256_add_epi32(qx_qadd_in(xa, za, ma, ca, sa, oa), qx_qadd_in(xb, zb, mb, cb, sb, ob));
            qx_store_i8(qx_requant(s, ym, ys, lo, hi, yz), j->y + i, 8);
        }
    }
    for (; i < hi_i; i++) j->y[i] = ep_qadd1(p, j->a[i], j->b[i]);
}

static void qe_qlut_row(const qe_codes_job *j, int64_t lo_i, int64_t hi_i) {
    __m256i tab[16];
    for (int k = 0; k < 16; k++)
        tab[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(j->t + 16 * k)));
    const __m256i bias = _mm256_set1_epi8((char)0x80), sat = _mm256_set1_epi8(0x70), step = _mm256_set1_epi8(16);
    int64_t i = lo_i;
    for (; i + 32 <= hi_i; i += 32) {
        __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(j->a + i)), bias), v = _mm256_setzero_si256();
        for (int k = 0; k < 16; k++) {
            v = _mm256_or_si256(v, _mm256_shuffle_epi8(tab[k], _mm256_adds_epu8(u, sat)));
            u = _mm256_sub_epi8(u, step);
        }
        _mm256_storeu_si256((__m256i *)(j->y + i), v);
    }
    for (; i < hi_i; i++) j->y[i] = j->t[j->a[i] + 128];
}

