/* CPU features on aarch64 Linux, from the auxiliary vector (follows qemu's -cpu). */
#include <sys/auxv.h>
#include "internal.h"

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1 << 10)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif

uint64_t ep_cpu_features(void) {
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    uint64_t f = 0;
    if (hw & HWCAP_ASIMD) f |= EP_CPU_NEON;
    if (hw & HWCAP_ASIMDDP) f |= EP_CPU_DOTPROD;
    if (hw & HWCAP_CRC32) f |= EP_CPU_CRC32;
    if (hw & HWCAP_ASIMDHP) f |= EP_CPU_FP16;
    if (hw2 & HWCAP2_I8MM) f |= EP_CPU_I8MM;
    return f;
}

uint64_t ep_fp_get(void) {
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
}

void ep_fp_set(uint64_t state) { __asm__ volatile("msr fpcr, %0" : : "r"(state)); }

uint64_t ep_fp_flushing(uint64_t state) { return state | (UINT64_C(1) << 24); }   /* FZ */
