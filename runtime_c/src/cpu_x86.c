/* CPU features on x86-64 (built only there). */
#include <cpuid.h>
#include "internal.h"

uint64_t ep_cpu_features(void) {
    unsigned a, b, c, d;
    uint64_t f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if ((c >> 20) & 1) f |= EP_CPU_CRC32;   /* SSE4.2 */
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
    if (!(osxsave && avx)) return f;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return f;   /* OS does not save YMM state */
    if (fma) f |= EP_CPU_FMA;
    /* the AVX2 kernels convert 16-bit weights with F16C, which every AVX2 CPU has */
    if (f16c && __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((b >> 5) & 1)) f |= EP_CPU_AVX2;
    return f;
}

uint64_t ep_fp_get(void) {
    unsigned csr;
    __asm__ volatile("stmxcsr %0" : "=m"(csr));
    return csr;
}

void ep_fp_set(uint64_t state) {
    const unsigned csr = (unsigned)state;
    __asm__ volatile("ldmxcsr %0" : : "m"(csr));
}

uint64_t ep_fp_flushing(uint64_t state) { return state | 0x8000u; }   /* FTZ (bit 15); inputs stay exact (no DAZ) */
