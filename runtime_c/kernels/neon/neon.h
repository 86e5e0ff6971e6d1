/* aarch64 NEON kernels (baseline armv8-a: Advanced SIMD is architectural, no extra -march flags).
 * Bound by ep_kernels_init_neon only when the CPU reports EP_CPU_NEON (cpu_features_mask can clear it,
 * which leaves the reference kernels in place). */
#ifndef EP_NEON_H
#define EP_NEON_H
#include "ep_kernel.h"

/* variant 0 (plain layouts) */
int ep_neon_unary_f32(const ep_op *op);
int ep_neon_binary_f32(const ep_op *op);
int ep_neon_maxpool_f32(const ep_op *op);
int ep_neon_avgpool_f32(const ep_op *op);
int ep_neon_global_avgpool_f32(const ep_op *op);
int ep_neon_gemm_f32(const ep_op *op);
int ep_neon_matmul_f32(const ep_op *op);
int ep_neon_conv2d_f32(const ep_op *op);   /* 1x1 -> GEMM, depthwise 3x3/5x5, direct otherwise */
int ep_neon_softmax_f32(const ep_op *op);     /* softmax_f32.c (issue 6) */
int ep_neon_layernorm_f32(const ep_op *op);   /* layernorm_f32.c */
int ep_neon_lstm_f32(const ep_op *op);        /* rnn_f32.c */
int ep_neon_gru_f32(const ep_op *op);
/* packed variants (plan_format.h EP_*_VARIANT_*, same packing as ref and x86) */
int ep_neon_conv2d_packed_f32(const ep_op *op);
int ep_neon_gemm_packed_f32(const ep_op *op);
int ep_neon_conv_transpose2d_packed_f32(const ep_op *op);   /* conv_transpose_f32.c */
int ep_neon_conv2d_dw_f32(const ep_op *op);

/* Overrides table entries with the NEON kernels this CPU can run (EP_CPU_* bits). */
void ep_kernels_init_neon(ep_kernel_table *t, uint64_t cpu_features);

#endif
