/* Fills the kernel table: reference kernels first; ISA files override entries
 * (dav1d style). Called once per ep_session_open. */
#include <string.h>
#include "internal.h"

void ep_kernels_init(ep_kernel_table *t, uint64_t cpu_features) {
    (void)cpu_features;
    memset(t, 0, sizeof(*t));
    ep_kernels_init_ref(t);
}
