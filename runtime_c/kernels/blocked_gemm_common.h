/* The tiles of the C8 layout's GEMM-shaped convolutions, CONV2D variants BLOCKED_PW and BLOCKED_CONV
 * (plan_format.h): the tile descriptor, included by each ISA's blocked_gemm.h before its micro-kernel
 * (bg_tile_n), which kernels/blocked_gemm_tmpl.h runs over the pixels.
 *
 * A tile is 6 output pixels x 16 output channels (two C8 blocks of Y) or 6 x 8 for a strip with 8 real columns.
 * A is read from X in place: pixel i's value of a row is at x + xo[i] + the row's offset. A tile's rows run
 * over nu units (xcs floats apart in X, wcs in W^T), nkh kernel rows (xrs, wrs), nkw groups (xks in X, nr * 16
 * floats in W^T) and the nr rows of a group (consecutive in X and W^T, nr <= 8), which is W^T's row order; a
 * pointwise convolution has nkh = nkw = 1 and nr = 8. Every output sums its rows from 0 (first) or from the
 * partial sums in Y with FMA; the last k-block adds the bias and the residual and applies the activation. Those
 * operations do not depend on the tile that computes the output: a tile of np < 6 pixels repeats its last
 * pixel's offsets (the copies compute and store the same values), in a 6-pixel tile, or for np <= 4 and 16
 * channels a 4-pixel one. */
#ifndef EP_BLOCKED_GEMM_COMMON_H
#define EP_BLOCKED_GEMM_COMMON_H
#include "ep_kernel.h"
#include "float_bits.h"

#define BLK EP_LAYOUT_BLOCK
#define BG_NR EP_PACK_NR
#define BG_NP 6
#define BG_INLINE static inline __attribute__((always_inline))
#ifndef BG_PW
#define BG_PW 0           /* 1: every tile has nkh = nkw = 1 */
#endif

/* 16-bit weights (1.14): W^T of dtype F16 or BF16 is converted exactly to float32, a strip's k-block (at most
 * BG_W16_ROWS rows of 16) at a time, into a buffer the tiles then read as float32 W^T: the sums are the float32
 * plan's on the converted weights, bit for bit. The ISA's blocked_gemm.h may define BG_CVT_F16(d, s, n) and
 * BG_CVT_BF16(d, s, n) (vector conversions) before including this file. */
#define BG_W16_ROWS EP_BLOCKED_W16_ROWS
#ifndef BG_CVT_F16
#define BG_CVT_F16(d, s, n) for (int64_t i_ = 0; i_ < (n); i_++) (d)[i_] = ep_f16_to_f32((s)[i_])
#endif
#ifndef BG_CVT_BF16
#define BG_CVT_BF16(d, s, n) for (int64_t i_ = 0; i_ < (n); i_++) (d)[i_] = ep_bf16_to_f32((s)[i_])
#endif

/* Rows [r, r + n) of the strips' W^T (elements 16 r .. 16 (r + n)) of dtype dt as float32: in place for F32,
 * else converted into buf (n <= BG_W16_ROWS) */
static inline const float *bg_weights(const void *w, int dt, int64_t r, int64_t n, float *buf) {
    if (dt == EP_DTYPE_F32) return (const float *)w + r * BG_NR;
    const uint16_t *s = (const uint16_t *)w + r * BG_NR;
    if (dt == EP_DTYPE_F16) {
        BG_CVT_F16(buf, s, n * BG_NR);
    } else {
        BG_CVT_BF16(buf, s, n * BG_NR);
    }
    return buf;
}

typedef struct bg_tile {
    const float *x, *w, *b, *r;   /* b at the strip's first channel or NULL; r at the tile's output or NULL */
    const float *s;               /* EP_CONV_ACT_PRELU's slopes at the strip's first channel (last k-block) */
    float *y;                     /* the tile's first output block; the second one ys floats further */
    int64_t xo[BG_NP], yo[BG_NP]; /* pixel i at x + xo[i] and y + yo[i] (xo[0] = yo[0] = 0) */
    int64_t ys, nu, xcs, wcs, nkh, xrs, wrs, nkw, xks, nr;
    int64_t nt, xt, yt;           /* tiles in the call, the next one xt floats further in X, yt in Y and R */
    int np, first, last;          /* np: the distinct pixels of a tile */
    const ep_conv2d_params *p;
} bg_tile;
#endif
