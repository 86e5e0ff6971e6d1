/* Polyphase packed CONV_TRANSPOSE2D (plan_format.h EP_CONV_TRANSPOSE2D_VARIANT_PACKED): one portable driver
 * (packing, blocking, stores, threads; kernels/ref/conv_transpose_packed_f32.c) and one MR x NR micro-kernel
 * per ISA (ref, kernels/x86/conv_transpose_f32.c, kernels/neon/conv_transpose_f32.c), passed to the driver.
 * A tile is K >= ~64 multiply-add steps of 12 vector FMAs, so the indirect call per tile costs nothing,
 * and the driver exists once in a build instead of once per ISA.
 *
 * The method (sub-pixel / polyphase decomposition; see docs/kernels.md). Along one axis, with stride s,
 * dilation d, pad p: output o = i*s - p + k*d, so t = o + p splits into the grid position q = t / s and the
 * phase f = t % s. Tap k reaches phase f iff k*d % s == f, from input i = q - floor(k*d / s). The
 * distinct shifts floor(k*d / s) are D(j) = d >= s ? j*d/s : j for j < T (T = d >= s ? KH : (KH-1)*d/s + 1),
 * so every output is a plain stride-1 sum over (c, jh, jw) on the phase grid:
 *   Y[m, qh*sh + fh - pt, qw*sw + fw - pl] = act(B[m] + sum_{c,jh,jw} X[c, qh - Dh(jh), qw - Dw(jw)]
 *                                                                  * Wp[(c, jh, jw), (m, fh, fw)])
 * with Wp zero where no tap exists. That is one GEMM per image: rows = phase-grid pixels (q), columns =
 * (m, fh, fw) (R = M*sh*sw), depth K = C*Th*Tw. The compiler packs Wp as GEMM B strips [ceil(R/NR)][K][NR];
 * here the input is packed into pixel panels [K][MR] (zero outside the input: the "im2col" of a stride-1
 * correlation with shifts -D), a pass of panels at a time in scratch. For a fixed pixel and m, the phases
 * fw are sw consecutive outputs of Y, so a tile row stores runs of contiguous floats (8 for HiFi-GAN's
 * x8, 4 for x4): no col2im accumulation, no scatter-add, every output written exactly once.
 * Loop nest per pass: column strips (a K x 16 weight strip stays in L1) over the pass's pixel panels
 * (K x 6 each, from L2).
 *
 * Threads (op->pool): tiles are fixed MR x NR blocks (panel p, strip s) whatever the split, so results are
 * bit-identical for any thread count. A pass is split by pixel panels (each thread packs its panels and
 * multiplies them by every strip: no barrier) or, when strips split more evenly, packed in parallel and
 * then split by strips. Scratch use does not depend on threads. */
#ifndef EP_CONV_TRANSPOSE_PACKED_H
#define EP_CONV_TRANSPOSE_PACKED_H
#include "ep_kernel.h"

/* The micro-kernel (MR 6 pixels x NR 16 columns):
 *   t[i*NR + j] = act(sum_{k < K} a[k*MR + i] * b[k*NR + j] + bias[j]) for every i < MR, j < NR
 * a: a packed input panel [K][MR]; b: a weight strip [K][NR]; bias: NR values or NULL (nothing added);
 * K may be 0 (a and b are then not read). */
typedef void (*ep_ct_tile_fn)(int64_t K, const float *a, const float *b, const float *bias, int act, float alpha,
                              float beta, float *t);

/* Runs the op with `tile`, on `pool`'s threads (NULL: the calling thread only). */
int ep_conv_transpose2d_packed_run(const ep_op *op, ep_ct_tile_fn tile, struct ep_pool *pool);

#endif
