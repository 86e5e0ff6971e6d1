/* Checks of the C8 layout's dense convolution (CONV2D BLOCKED_CONV): included by check_conv.c. */
static void gen_conv_blocked_conv(int iter) { (void)iter; }
