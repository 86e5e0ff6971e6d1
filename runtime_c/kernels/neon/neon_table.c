/* aarch64 overrides of the kernel table (dav1d style: ref first, then ISA entries): the op table's neon
 * rows, then its neon_dotprod rows when the CPU has dotprod (kernels/neon/quant_dotprod.c, built with
 * -march=armv8.2-a+dotprod; this file stays armv8-a and only stores their pointers). */
#include "neon.h"
#include "ep_config.h"   /* EP_HAVE_*: the ops/variants this build has (-Dkernels) */
#include "pack_common.h"

_Static_assert(PK_MR == 6 && PK_NR == 16, "kernels/neon/packed_f32.c is written for a 6 x 16 tile");

void ep_kernels_init_neon(ep_kernel_table *t, uint64_t cpu_features) {
    if (!(cpu_features & EP_CPU_NEON)) return;
#define EP_KERNEL(isa, N, V, k) EP_KERNEL_##isa(N, V, k)
#define EP_KERNEL_ref(N, V, k)
#define EP_KERNEL_x86(N, V, k)
#define EP_KERNEL_neon(N, V, k) EP_KERNEL_SET(t, N, V, k)
#define EP_KERNEL_neon_dotprod(N, V, k)
#include "ops.def"
#undef EP_KERNEL_neon
#undef EP_KERNEL_neon_dotprod
    if (!(cpu_features & EP_CPU_DOTPROD)) return;
#define EP_KERNEL(isa, N, V, k) EP_KERNEL_##isa(N, V, k)
#define EP_KERNEL_neon(N, V, k)
#define EP_KERNEL_neon_dotprod(N, V, k) EP_KERNEL_SET(t, N, V, k)
#include "ops.def"
}
