/* x86-64 overrides of the kernel table (dav1d style: ref first, then ISA entries). Compiled for
 * baseline x86-64: it only stores pointers, never runs AVX2 code. */
#include "x86.h"
#include "ep_config.h"   /* EP_HAVE_*: the ops/variants this build has (-Dkernels) */

void ep_kernels_init_x86(ep_kernel_table *t, uint64_t cpu_features) {
    const uint64_t need = EP_CPU_AVX2 | EP_CPU_FMA;
    if ((cpu_features & need) != need) return;
#if EP_HAVE_UNARY_DEFAULT
    t->fn[EP_OP_UNARY][0] = ep_x86_unary_f32;
#endif
#if EP_HAVE_BINARY_DEFAULT
    t->fn[EP_OP_BINARY][0] = ep_x86_binary_f32;
#endif
#if EP_HAVE_CONV2D_PACKED
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_PACKED] = ep_x86_conv2d_packed_f32;
#endif
#if EP_HAVE_CONV2D_DEPTHWISE
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_DEPTHWISE] = ep_x86_conv2d_dw_f32;
#endif
#if EP_HAVE_CONV2D_WINOGRAD
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_WINOGRAD] = ep_x86_conv2d_winograd_f32;
#endif
#if EP_HAVE_GEMM_PACKED
    t->fn[EP_OP_GEMM][EP_GEMM_VARIANT_PACKED] = ep_x86_gemm_packed_f32;
#endif
#if EP_HAVE_CONV_TRANSPOSE2D_PACKED
    t->fn[EP_OP_CONV_TRANSPOSE2D][EP_CONV_TRANSPOSE2D_VARIANT_PACKED] = ep_x86_conv_transpose2d_packed_f32;
#endif
#if EP_HAVE_MATMUL_DEFAULT
    t->fn[EP_OP_MATMUL][0] = ep_x86_matmul_f32;
#endif
#if EP_HAVE_SOFTMAX_DEFAULT
    t->fn[EP_OP_SOFTMAX][0] = ep_x86_softmax_f32;
#endif
#if EP_HAVE_LAYERNORM_DEFAULT
    t->fn[EP_OP_LAYERNORM][0] = ep_x86_layernorm_f32;
#endif
#if EP_HAVE_MAXPOOL_DEFAULT
    t->fn[EP_OP_MAXPOOL][0] = ep_x86_maxpool_f32;
#endif
#if EP_HAVE_AVGPOOL_DEFAULT
    t->fn[EP_OP_AVGPOOL][0] = ep_x86_avgpool_f32;
#endif
#if EP_HAVE_LSTM_DEFAULT
    t->fn[EP_OP_LSTM][0] = ep_x86_lstm_f32;
#endif
#if EP_HAVE_GRU_DEFAULT
    t->fn[EP_OP_GRU][0] = ep_x86_gru_f32;
#endif
}
