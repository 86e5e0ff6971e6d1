/* CPU features where the runtime knows no way to ask: none. Flush-to-zero on 32-bit ARM with VFP. */
#include "internal.h"

uint64_t ep_cpu_features(void) { return 0; }

#if defined(__arm__) && defined(__ARM_FP)
uint64_t ep_fp_get(void) {
    uint32_t fpscr;
    __asm__ volatile("vmrs %0, fpscr" : "=r"(fpscr));
    return fpscr;
}

void ep_fp_set(uint64_t state) {
    const uint32_t fpscr = (uint32_t)state;
    __asm__ volatile("vmsr fpscr, %0" : : "r"(fpscr));
}

uint64_t ep_fp_flushing(uint64_t state) { return state | (UINT32_C(1) << 24); }   /* FZ */
#else
uint64_t ep_fp_get(void) { return 0; }

void ep_fp_set(uint64_t state) { (void)state; }

uint64_t ep_fp_flushing(uint64_t state) { return state; }
#endif
