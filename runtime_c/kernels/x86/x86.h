/* x86-64 AVX2+FMA kernels (built with -mavx2 -mfma; bound only when the CPU has both). */
#ifndef EP_X86_H
#define EP_X86_H
#include "ep_kernel.h"

int ep_x86_conv2d_packed_f32(const ep_op *op);
int ep_x86_conv2d_dw_f32(const ep_op *op);
int ep_x86_conv2d_winograd_f32(const ep_op *op);
int ep_x86_gemm_packed_f32(const ep_op *op);
int ep_x86_conv_transpose2d_packed_f32(const ep_op *op);   /* conv_transpose_f32.c */
int ep_x86_unary_f32(const ep_op *op);
int ep_x86_binary_f32(const ep_op *op);
/* variant 0 (issue 6): matmul_f32.c, softmax_f32.c, layernorm_f32.c, pool_f32.c, rnn_f32.c */
int ep_x86_matmul_f32(const ep_op *op);
int ep_x86_softmax_f32(const ep_op *op);
int ep_x86_layernorm_f32(const ep_op *op);
int ep_x86_maxpool_f32(const ep_op *op);
int ep_x86_avgpool_f32(const ep_op *op);
int ep_x86_lstm_f32(const ep_op *op);
int ep_x86_gru_f32(const ep_op *op);

/* Overrides table entries with the kernels this CPU can run (EP_CPU_* bits). */
void ep_kernels_init_x86(ep_kernel_table *t, uint64_t cpu_features);

#endif
