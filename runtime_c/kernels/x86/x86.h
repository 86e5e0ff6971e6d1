/* x86-64 AVX2+FMA kernels (built with -mavx2 -mfma; bound only when the CPU has both). */
#ifndef EP_X86_H
#define EP_X86_H
#include "ep_kernel.h"

int ep_x86_conv2d_packed_f32(const ep_op *op);
int ep_x86_conv2d_dw_f32(const ep_op *op);
int ep_x86_conv2d_winograd_f32(const ep_op *op);
int ep_x86_gemm_packed_f32(const ep_op *op);
int ep_x86_unary_f32(const ep_op *op);
int ep_x86_binary_f32(const ep_op *op);

/* Overrides table entries with the kernels this CPU can run (EP_CPU_* bits). */
void ep_kernels_init_x86(ep_kernel_table *t, uint64_t cpu_features);

#endif
