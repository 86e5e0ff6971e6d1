/* The opcode table, from the op table (runtime_c/ops.def): name, parameter struct size, arity, shape
 * function and flags. Const data only. An op this build leaves out (-Dkernels, ep_config.h) has no
 * name and no shape function, so its opcode is unknown to ep_op_info_get. */
#include "ep_ops.h"
#include "ep_config.h"   /* EP_HAVE_OP_*: the ops this build has */

static const ep_op_info OPS[EP_OP_COUNT] = {
#define EP_OP(N, n, code, P, i0, i1, o0, o1, F, fam, since) \
    [EP_OP_##N] = {.name = EP_HAVE_OP_##N ? #n : 0, .params_size = sizeof(P), .min_in = i0, .max_in = i1, \
                   .min_out = o0, .max_out = o1, .shape = EP_HAVE_OP_##N ? ep_shape_##n : 0, \
                   .inplace = ((F) & EP_OPF_INPLACE) != 0, .data_dep = ((F) & EP_OPF_DATA_DEP) != 0, \
                   .control = ((F) & EP_OPF_CONTROL) != 0, .view = ((F) & EP_OPF_VIEW) != 0, \
                   .layout = ((F) & EP_OPF_LAYOUT) != 0},
#include "ops.def"
};

const ep_op_info *ep_op_info_get(uint32_t opcode) {
    if (opcode >= EP_OP_COUNT || !OPS[opcode].shape) return 0;
    return &OPS[opcode];
}
