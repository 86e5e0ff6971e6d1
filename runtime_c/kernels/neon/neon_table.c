/* aarch64 overrides of the kernel table (dav1d style: ref first, then ISA entries). */
#include "neon.h"
#include "ep_config.h"   /* EP_HAVE_*: the ops/variants this build has (-Dkernels) */
#include "pack_common.h"

_Static_assert(PK_MR == 6 && PK_NR == 16, "kernels/neon/packed_f32.c is written for a 6 x 16 tile");

void ep_kernels_init_neon(ep_kernel_table *t, uint64_t cpu_features) {
    if (!(cpu_features & EP_CPU_NEON)) return;
#if EP_HAVE_UNARY_DEFAULT
    t->fn[EP_OP_UNARY][0] = ep_neon_unary_f32;
#endif
#if EP_HAVE_BINARY_DEFAULT
    t->fn[EP_OP_BINARY][0] = ep_neon_binary_f32;
#endif
#if EP_HAVE_MAXPOOL_DEFAULT
    t->fn[EP_OP_MAXPOOL][0] = ep_neon_maxpool_f32;
#endif
#if EP_HAVE_AVGPOOL_DEFAULT
    t->fn[EP_OP_AVGPOOL][0] = ep_neon_avgpool_f32;
#endif
#if EP_HAVE_GLOBAL_AVGPOOL_DEFAULT
    t->fn[EP_OP_GLOBAL_AVGPOOL][0] = ep_neon_global_avgpool_f32;
#endif
#if EP_HAVE_GEMM_DEFAULT
    t->fn[EP_OP_GEMM][0] = ep_neon_gemm_f32;
#endif
#if EP_HAVE_MATMUL_DEFAULT
    t->fn[EP_OP_MATMUL][0] = ep_neon_matmul_f32;
#endif
#if EP_HAVE_CONV2D_DEFAULT
    t->fn[EP_OP_CONV2D][0] = ep_neon_conv2d_f32;
#endif
#if EP_HAVE_CONV2D_PACKED
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_PACKED] = ep_neon_conv2d_packed_f32;
#endif
#if EP_HAVE_CONV2D_DEPTHWISE
    t->fn[EP_OP_CONV2D][EP_CONV2D_VARIANT_DEPTHWISE] = ep_neon_conv2d_dw_f32;
#endif
#if EP_HAVE_GEMM_PACKED
    t->fn[EP_OP_GEMM][EP_GEMM_VARIANT_PACKED] = ep_neon_gemm_packed_f32;
#endif
#if EP_HAVE_CONV_TRANSPOSE2D_PACKED
    t->fn[EP_OP_CONV_TRANSPOSE2D][EP_CONV_TRANSPOSE2D_VARIANT_PACKED] = ep_neon_conv_transpose2d_packed_f32;
#endif
#if EP_HAVE_SOFTMAX_DEFAULT
    t->fn[EP_OP_SOFTMAX][0] = ep_neon_softmax_f32;
#endif
#if EP_HAVE_LAYERNORM_DEFAULT
    t->fn[EP_OP_LAYERNORM][0] = ep_neon_layernorm_f32;
#endif
#if EP_HAVE_LSTM_DEFAULT
    t->fn[EP_OP_LSTM][0] = ep_neon_lstm_f32;
#endif
#if EP_HAVE_GRU_DEFAULT
    t->fn[EP_OP_GRU][0] = ep_neon_gru_f32;
#endif
}
