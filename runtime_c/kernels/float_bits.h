/* Conversions between float32 and the 16-bit float formats a plan may hold at its edges (EP_DTYPE_F16,
 * IEEE binary16; EP_DTYPE_BF16, bfloat16), bit-exact on every target: integer arithmetic on the bit
 * patterns, no FPU half support needed. float32 -> 16 bits rounds to nearest, ties to even (numpy's
 * astype and ml_dtypes, onnxruntime's Cast); finite values past the largest become infinity; NaN stays a
 * quiet NaN of the same sign. 16 bits -> float32 is exact. */
#ifndef EP_FLOAT_BITS_H
#define EP_FLOAT_BITS_H
#include <stdint.h>
#include <string.h>

static inline uint32_t ep_f32_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}
static inline float ep_bits_f32(uint32_t x) {
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static inline uint16_t ep_f32_to_f16(float f) {
    const uint32_t x = ep_f32_bits(f), a = x & 0x7FFFFFFFu;
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);              /* NaN */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);             /* >= 65520: rounds to inf */
    uint32_t r, rem, half;
    if (a >= 0x38800000u) {                                              /* a normal half: rebias */
        r = (a - 0x38000000u) >> 13, rem = a & 0x1FFFu, half = 0x1000u;
    } else if (a >= 0x33000000u) {                                       /* a subnormal half: units of 2^-24 */
        const uint32_t shift = 126u - (a >> 23), m = (a & 0x7FFFFFu) | 0x800000u;
        r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    } else {
        return sign;                                                     /* <= 2^-25: rounds to zero */
    }
    if (rem > half || (rem == half && (r & 1u))) r++;                    /* a carry moves up one binade */
    return (uint16_t)(sign | r);
}

static inline float ep_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) return ep_bits_f32(sign | 0x7F800000u | (m << 13));   /* inf, NaN */
    if (e) return ep_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    if (!m) return ep_bits_f32(sign);
    for (e = 113u; !(m & 0x400u); m <<= 1) e--;                          /* subnormal: normalise */
    return ep_bits_f32(sign | (e << 23) | ((m & 0x3FFu) << 13));
}

static inline uint16_t ep_f32_to_bf16(float f) {
    const uint32_t x = ep_f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40u);   /* NaN: quiet */
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

static inline float ep_bf16_to_f32(uint16_t h) { return ep_bits_f32((uint32_t)h << 16); }

#endif
