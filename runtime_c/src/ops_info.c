/* The opcode table: name, parameter struct size, arity and shape function. Const data only. */
#include "ep_ops.h"
#include "ep_config.h"   /* EP_HAVE_OP_*: the ops this build has (-Dkernels); absent ones are unknown opcodes */

#define VAR 0xFFFF
static const ep_op_info OPS[EP_OP_COUNT] = {
#if EP_HAVE_OP_CONV2D
    [EP_OP_CONV2D] = {"conv2d", sizeof(ep_conv2d_params), 2, 4, 1, 1, ep_shape_conv2d},
#endif
#if EP_HAVE_OP_CONV_TRANSPOSE2D
    [EP_OP_CONV_TRANSPOSE2D] = {"conv_transpose2d", sizeof(ep_conv_transpose2d_params), 2, 3, 1, 1, ep_shape_conv_transpose2d},
#endif
#if EP_HAVE_OP_GEMM
    [EP_OP_GEMM] = {"gemm", sizeof(ep_gemm_params), 2, 4, 1, 1, ep_shape_gemm},
#endif
#if EP_HAVE_OP_MATMUL
    [EP_OP_MATMUL] = {"matmul", sizeof(ep_matmul_params), 2, 2, 1, 1, ep_shape_matmul},
#endif
#if EP_HAVE_OP_UNARY
    [EP_OP_UNARY] = {"unary", sizeof(ep_unary_params), 1, 1, 1, 1, ep_shape_unary, 1},
#endif
#if EP_HAVE_OP_BINARY
    [EP_OP_BINARY] = {"binary", sizeof(ep_binary_params), 2, 2, 1, 1, ep_shape_binary, 1},
#endif
#if EP_HAVE_OP_MAXPOOL
    [EP_OP_MAXPOOL] = {"maxpool", sizeof(ep_pool_params), 1, 1, 1, 1, ep_shape_maxpool},
#endif
#if EP_HAVE_OP_AVGPOOL
    [EP_OP_AVGPOOL] = {"avgpool", sizeof(ep_pool_params), 1, 1, 1, 1, ep_shape_avgpool},
#endif
#if EP_HAVE_OP_GLOBAL_AVGPOOL
    [EP_OP_GLOBAL_AVGPOOL] = {"global_avgpool", sizeof(ep_global_pool_params), 1, 1, 1, 1, ep_shape_global_avgpool},
#endif
#if EP_HAVE_OP_CONCAT
    [EP_OP_CONCAT] = {"concat", sizeof(ep_axis_params), 1, VAR, 1, 1, ep_shape_concat},
#endif
#if EP_HAVE_OP_SPLIT
    [EP_OP_SPLIT] = {"split", sizeof(ep_axis_params), 1, 1, 1, EP_MAX_OP_OUTPUTS, ep_shape_split},
#endif
#if EP_HAVE_OP_SLICE
    [EP_OP_SLICE] = {"slice", sizeof(ep_slice_params), 1, 1, 1, 1, ep_shape_slice},
#endif
#if EP_HAVE_OP_TRANSPOSE
    [EP_OP_TRANSPOSE] = {"transpose", sizeof(ep_transpose_params), 1, 1, 1, 1, ep_shape_transpose},
#endif
#if EP_HAVE_OP_PAD
    [EP_OP_PAD] = {"pad", sizeof(ep_pad_params), 1, 1, 1, 1, ep_shape_pad},
#endif
#if EP_HAVE_OP_RESIZE
    [EP_OP_RESIZE] = {"resize", sizeof(ep_resize_params), 1, 1, 1, 1, ep_shape_resize},
#endif
#if EP_HAVE_OP_SOFTMAX
    [EP_OP_SOFTMAX] = {"softmax", sizeof(ep_softmax_params), 1, 1, 1, 1, ep_shape_softmax, 1},
#endif
#if EP_HAVE_OP_REDUCE
    [EP_OP_REDUCE] = {"reduce", sizeof(ep_reduce_params), 1, 1, 1, 1, ep_shape_reduce},
#endif
#if EP_HAVE_OP_GATHER
    [EP_OP_GATHER] = {"gather", sizeof(ep_axis_params), 2, 2, 1, 1, ep_shape_gather},
#endif
#if EP_HAVE_OP_COPY
    [EP_OP_COPY] = {"copy", sizeof(ep_axis_params), 1, 1, 1, 1, ep_shape_copy},
#endif
#if EP_HAVE_OP_LAYERNORM
    [EP_OP_LAYERNORM] = {"layernorm", sizeof(ep_layernorm_params), 2, 3, 1, 3, ep_shape_layernorm},
#endif
#if EP_HAVE_OP_WHERE
    [EP_OP_WHERE] = {"where", sizeof(ep_where_params), 3, 3, 1, 1, ep_shape_where},
#endif
#if EP_HAVE_OP_COMPARE
    [EP_OP_COMPARE] = {"compare", sizeof(ep_compare_params), 2, 2, 1, 1, ep_shape_compare},
#endif
#if EP_HAVE_OP_EXPAND
    [EP_OP_EXPAND] = {"expand", sizeof(ep_where_params), 1, 1, 1, 1, ep_shape_expand},
#endif
#if EP_HAVE_OP_CAST
    [EP_OP_CAST] = {"cast", sizeof(ep_cast_params), 1, 1, 1, 1, ep_shape_cast},
#endif
#if EP_HAVE_OP_ARGMAX
    [EP_OP_ARGMAX] = {"argmax", sizeof(ep_argmax_params), 1, 1, 1, 1, ep_shape_argmax},
#endif
#if EP_HAVE_OP_TOPK
    [EP_OP_TOPK] = {"topk", sizeof(ep_topk_params), 1, 1, 2, 2, ep_shape_topk},
#endif
#if EP_HAVE_OP_CUMSUM
    [EP_OP_CUMSUM] = {"cumsum", sizeof(ep_cumsum_params), 1, 1, 1, 1, ep_shape_cumsum},
#endif
#if EP_HAVE_OP_TRILU
    [EP_OP_TRILU] = {"trilu", sizeof(ep_trilu_params), 1, 1, 1, 1, ep_shape_trilu},
#endif
#if EP_HAVE_OP_LSTM
    [EP_OP_LSTM] = {"lstm", sizeof(ep_rnn_params), 4, 8, 3, 3, ep_shape_lstm},
#endif
#if EP_HAVE_OP_GRU
    [EP_OP_GRU] = {"gru", sizeof(ep_rnn_params), 4, 6, 2, 2, ep_shape_gru},
#endif
#if EP_HAVE_OP_SCATTERND
    [EP_OP_SCATTERND] = {"scatternd", sizeof(ep_scatternd_params), 3, 3, 1, 1, ep_shape_scatternd},
#endif
#if EP_HAVE_OP_GATHERND
    [EP_OP_GATHERND] = {"gathernd", sizeof(ep_gathernd_params), 2, 2, 1, 1, ep_shape_gathernd},
#endif
#if EP_HAVE_OP_RANGE
    [EP_OP_RANGE] = {"range", sizeof(ep_where_params), 3, 3, 1, 1, ep_shape_range, 0, 1},
#endif
#if EP_HAVE_OP_SLICE_DYN
    [EP_OP_SLICE_DYN] = {"slice_dyn", sizeof(ep_slice_dyn_params), 3, 3, 1, 1, ep_shape_slice_dyn, 0, 1},
#endif
#if EP_HAVE_OP_SHAPE
    [EP_OP_SHAPE] = {"shape", sizeof(ep_shape_params), 1, 1, 1, 1, ep_shape_shape},
#endif
#if EP_HAVE_OP_NONZERO
    [EP_OP_NONZERO] = {"nonzero", sizeof(ep_where_params), 1, 1, 1, 1, ep_shape_nonzero, 0, 1},
#endif
};

const ep_op_info *ep_op_info_get(uint32_t opcode) {
    if (opcode >= EP_OP_COUNT || !OPS[opcode].shape) return 0;
    return &OPS[opcode];
}
