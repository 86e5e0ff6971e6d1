/* The RANDOM op's generator (plan_format.h ep_random_params, docs/plan-format.md "Random numbers"):
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and
 * the float transforms of its 32-bit words. Integer arithmetic and single float operations only, each
 * rounded once (the runtime builds with -ffp-contract=off), and sqrtf, which IEEE 754 rounds correctly:
 * the same words and the same floats on every ISA, compiler and thread count. tests/py/test_ops_random.py
 * holds a numpy transcription that must match bit for bit, and tests/c/test_ref_random.c the published
 * Philox known answers. */
#ifndef EP_RANDOM_PHILOX_H
#define EP_RANDOM_PHILOX_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "float_bits.h"

#define EP_PHILOX_M0 0xD2511F53u   /* round multipliers */
#define EP_PHILOX_M1 0xCD9E8D57u
#define EP_PHILOX_W0 0x9E3779B9u   /* key schedule increments (golden ratio, sqrt(3) - 1) */
#define EP_PHILOX_W1 0xBB67AE85u

/* One block: out = Philox4x32-10(counter ctr, key key). Round r (0..9) with key (k0 + r W0, k1 + r W1):
 * (c0, c1, c2, c3) -> (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)). */
static inline void ep_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        const uint64_t p0 = (uint64_t)EP_PHILOX_M0 * c0, p1 = (uint64_t)EP_PHILOX_M1 * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
        k0 += EP_PHILOX_W0;
        k1 += EP_PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The top 24 bits of w as a float in [0, 1): exact. */
static inline float ep_rand_u01(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }

/* ln x for a normal positive float x (Box-Muller's x lies in [2^-24, 1]): x = 2^e m with m in
 * [sqrt(1/2), sqrt(2)] read from the bits, f = m - 1 (exact), s = f / (2 + f), z = s^2 and
 * ln m = 2 atanh s = 2 (s + s q), q = z (1/3 + z (1/5 + z (1/7 + z / 9))) (truncation below 3e-9
 * relative for |s| <= 0.172), ln x = e ln2 + ln m. Coefficients are the floats nearest the fractions. */
static inline float ep_rand_ln(float x) {
    const uint32_t b = ep_f32_bits(x);
    int32_t e = (int32_t)(b >> 23) - 127;
    uint32_t mb = (b & 0x7FFFFFu) | 0x3F800000u;   /* m in [1, 2) */
    if (mb > 0x3FB504F3u) {                         /* above sqrt(2): halve m */
        mb -= 0x00800000u;
        e += 1;
    }
    const float f = ep_bits_f32(mb) - 1.0f;
    const float s = f / (2.0f + f);
    const float z = s * s;
    const float q = z * (0x1.555556p-2f + z * (0x1.99999ap-3f + z * (0x1.24924ap-3f + z * 0x1.c71c72p-4f)));
    const float t = s + s * q;
    return (float)e * 0x1.62e430p-1f + (t + t);
}

/* cos and sin of 2 pi j / 2^24 for j in [0, 2^24): j is split into the quadrant n = round(j / 2^22)
 * and the rest fr = j - n 2^22 in [-2^21, 2^21) (exact integers), x = fr * (2 pi 2^-24) in [-pi/4, pi/4),
 * z = x^2, then Taylor polynomials (truncation below 2e-9):
 *   s = x + x (z (-1/6 + z (1/120 + z (-1/5040 + z / 362880))))
 *   c = 1 + z (-1/2 + z (1/24 + z (-1/720 + z (1/40320 - z / 3628800))))
 * and the quadrant n mod 4 maps (c, s) to (cos, sin): 0 (c, s), 1 (-s, c), 2 (-c, -s), 3 (s, -c). */
static inline void ep_rand_cos_sin(uint32_t j, float *cs, float *sn) {
    const uint32_t n = (j + (1u << 21)) >> 22;
    const int32_t fr = (int32_t)j - (int32_t)(n << 22);
    const float x = (float)fr * 0x1.921fb6p-22f;
    const float z = x * x;
    const float s = x + x * (z * (-0x1.555556p-3f + z * (0x1.111112p-7f + z * (-0x1.a01a02p-13f +
                                                                                z * 0x1.71de3ap-19f))));
    const float c = 1.0f + z * (-0.5f + z * (0x1.555556p-5f + z * (-0x1.6c16c2p-10f + z * (0x1.a01a02p-16f +
                                                                                         z * -0x1.27e4fcp-22f))));
    switch (n & 3u) {
    case 0: *cs = c, *sn = s; break;
    case 1: *cs = -s, *sn = c; break;
    case 2: *cs = -c, *sn = -s; break;
    default: *cs = s, *sn = -c; break;
    }
}

/* A standard normal pair from two words (Box-Muller): r = sqrt(-2 ln u1), u1 = ((v0 >> 8) + 1) 2^-24 in
 * (0, 1], and the angle 2 pi (v1 >> 8) 2^-24: *z0 = r cos, *z1 = r sin. */
static inline void ep_rand_normal_pair(uint32_t v0, uint32_t v1, float *z0, float *z1) {
    const float u1 = (float)((v0 >> 8) + 1u) * 0x1p-24f;
    const float r = sqrtf(-2.0f * ep_rand_ln(u1));
    float c, s;
    ep_rand_cos_sin(v1 >> 8, &c, &s);
    *z0 = r * c;
    *z1 = r * s;
}
#endif
