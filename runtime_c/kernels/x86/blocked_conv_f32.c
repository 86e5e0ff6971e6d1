/* CONV2D BLOCKED_CONV on this ISA (placeholder: the reference). */
#include "ep_ops.h"

int ep_x86_conv2d_blocked_conv_f32(const ep_op *op) { return ep_ref_conv2d_blocked_conv_f32(op); }
