/* The reference kernel table: every opcode's variants in portable C (the op table's ref rows). */
#include "ep_ops.h"
#include "ep_config.h"   /* EP_HAVE_*: the ops/variants this build has (-Dkernels) */

void ep_kernels_init_ref(ep_kernel_table *t) {
#define EP_KERNEL(isa, N, V, k) EP_KERNEL_##isa(N, V, k)
#define EP_KERNEL_ref(N, V, k) EP_KERNEL_SET(t, N, V, k)
#define EP_KERNEL_x86(N, V, k)
#define EP_KERNEL_neon(N, V, k)
#define EP_KERNEL_neon_dotprod(N, V, k)
#include "ops.def"
}
