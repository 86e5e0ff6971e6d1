/* Fills the kernel table on x86-64: reference kernels first, then the AVX2+FMA overrides the CPU
 * supports (dav1d style). Used instead of dispatch.c on x86_64. Called once per ep_session_open. */
#include <string.h>
#include "internal.h"
#include "x86/x86.h"

void ep_kernels_init(ep_kernel_table *t, uint64_t cpu_features) {
    memset(t, 0, sizeof(*t));
    ep_kernels_init_ref(t);
    ep_kernels_init_x86(t, cpu_features);
}
