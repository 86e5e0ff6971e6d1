/* The epilogues' out-of-line vector activations (x86_act.h). */
#include "x86_act.h"

__m256 ep_x86_gelu8(__m256 v) { return x86_gelu8(v); }
