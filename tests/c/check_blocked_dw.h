/* Checks of the C8 layout's depthwise convolution (CONV2D BLOCKED_DW): included by check_conv.c. */
static void gen_conv_blocked_dw(int iter) { (void)iter; }
