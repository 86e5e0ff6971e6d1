/* The opcode table: name, parameter struct size, arity and shape function. Const data only. */
#include "ep_ops.h"

#define VAR 0xFFFF
static const ep_op_info OPS[EP_OP_COUNT] = {
    [EP_OP_CONV2D] = {"conv2d", sizeof(ep_conv2d_params), 2, 4, 1, 1, ep_shape_conv2d},
    [EP_OP_CONV_TRANSPOSE2D] = {"conv_transpose2d", sizeof(ep_conv_transpose2d_params), 2, 3, 1, 1, ep_shape_conv_transpose2d},
    [EP_OP_GEMM] = {"gemm", sizeof(ep_gemm_params), 2, 4, 1, 1, ep_shape_gemm},
    [EP_OP_MATMUL] = {"matmul", sizeof(ep_matmul_params), 2, 2, 1, 1, ep_shape_matmul},
    [EP_OP_UNARY] = {"unary", sizeof(ep_unary_params), 1, 1, 1, 1, ep_shape_unary, 1},
    [EP_OP_BINARY] = {"binary", sizeof(ep_binary_params), 2, 2, 1, 1, ep_shape_binary, 1},
    [EP_OP_MAXPOOL] = {"maxpool", sizeof(ep_pool_params), 1, 1, 1, 1, ep_shape_maxpool},
    [EP_OP_AVGPOOL] = {"avgpool", sizeof(ep_pool_params), 1, 1, 1, 1, ep_shape_avgpool},
    [EP_OP_GLOBAL_AVGPOOL] = {"global_avgpool", sizeof(ep_global_pool_params), 1, 1, 1, 1, ep_shape_global_avgpool},
    [EP_OP_CONCAT] = {"concat", sizeof(ep_axis_params), 1, VAR, 1, 1, ep_shape_concat},
    [EP_OP_SPLIT] = {"split", sizeof(ep_axis_params), 1, 1, 1, EP_MAX_OP_OUTPUTS, ep_shape_split},
    [EP_OP_SLICE] = {"slice", sizeof(ep_slice_params), 1, 1, 1, 1, ep_shape_slice},
    [EP_OP_TRANSPOSE] = {"transpose", sizeof(ep_transpose_params), 1, 1, 1, 1, ep_shape_transpose},
    [EP_OP_PAD] = {"pad", sizeof(ep_pad_params), 1, 1, 1, 1, ep_shape_pad},
    [EP_OP_RESIZE] = {"resize", sizeof(ep_resize_params), 1, 1, 1, 1, ep_shape_resize},
    [EP_OP_SOFTMAX] = {"softmax", sizeof(ep_softmax_params), 1, 1, 1, 1, ep_shape_softmax, 1},
    [EP_OP_REDUCE] = {"reduce", sizeof(ep_reduce_params), 1, 1, 1, 1, ep_shape_reduce},
    [EP_OP_GATHER] = {"gather", sizeof(ep_axis_params), 2, 2, 1, 1, ep_shape_gather},
    [EP_OP_COPY] = {"copy", sizeof(ep_axis_params), 1, 1, 1, 1, ep_shape_copy},
};

const ep_op_info *ep_op_info_get(uint32_t opcode) {
    if (opcode >= EP_OP_COUNT || !OPS[opcode].shape) return 0;
    return &OPS[opcode];
}
