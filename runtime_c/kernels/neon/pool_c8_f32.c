/* MAXPOOL, AVGPOOL and GLOBAL_AVGPOOL variants C8 on this ISA (placeholder: the reference). */
#include "ep_ops.h"

int ep_neon_maxpool_c8_f32(const ep_op *op) { return ep_ref_maxpool_c8_f32(op); }
int ep_neon_avgpool_c8_f32(const ep_op *op) { return ep_ref_avgpool_c8_f32(op); }
int ep_neon_global_avgpool_c8_f32(const ep_op *op) { return ep_ref_global_avgpool_c8_f32(op); }
