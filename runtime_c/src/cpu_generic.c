/* CPU features where the runtime knows no way to ask: none. */
#include "internal.h"

uint64_t ep_cpu_features(void) { return 0; }
