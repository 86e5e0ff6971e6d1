/* Fills the kernel table on aarch64: reference kernels first, then the NEON overrides the CPU
 * supports (dav1d style). Used instead of dispatch.c on aarch64. Called once per ep_session_open
 * with ep_cpu_features() & the caller's mask, so a masked feature falls back to what is below it. */
#include <string.h>
#include "internal.h"
#include "neon/neon.h"

void ep_kernels_init(ep_kernel_table *t, uint64_t cpu_features) {
    memset(t, 0, sizeof(*t));
    ep_kernels_init_ref(t);
    ep_kernels_init_neon(t, cpu_features);
}
