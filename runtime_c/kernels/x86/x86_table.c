/* x86-64 overrides of the kernel table (dav1d style: ref first, then ISA entries): the op table's x86
 * rows. Compiled for baseline x86-64: it only stores pointers, never runs AVX2 code. */
#include "x86.h"
#include "ep_config.h"   /* EP_HAVE_*: the ops/variants this build has (-Dkernels) */

void ep_kernels_init_x86(ep_kernel_table *t, uint64_t cpu_features) {
    const uint64_t need = EP_CPU_AVX2 | EP_CPU_FMA;
    if ((cpu_features & need) != need) return;
#define EP_KERNEL(isa, N, V, k) EP_KERNEL_##isa(N, V, k)
#define EP_KERNEL_ref(N, V, k)
#define EP_KERNEL_x86(N, V, k) EP_KERNEL_SET(t, N, V, k)
#define EP_KERNEL_neon(N, V, k)
#define EP_KERNEL_neon_dotprod(N, V, k)
#include "ops.def"
}
