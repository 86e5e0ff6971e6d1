/* Checks of the C8 layout's pointwise convolution (CONV2D BLOCKED_PW) and of REORDER: included by check_conv.c. */
static void gen_conv_blocked_pw(int iter) { (void)iter; }
static void gen_reorder(int iter) { (void)iter; }
