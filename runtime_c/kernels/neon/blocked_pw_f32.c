/* CONV2D BLOCKED_PW and REORDER on this ISA (placeholder: the reference). */
#include "ep_ops.h"

int ep_neon_conv2d_blocked_pw_f32(const ep_op *op) { return ep_ref_conv2d_blocked_pw_f32(op); }
int ep_neon_reorder_f32(const ep_op *op) { return ep_ref_reorder_f32(op); }
