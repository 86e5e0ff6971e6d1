/* NEON dotprod (armv8.2-a+dotprod, SDOT) int8 kernels: QGEMM PACKED and QCONV2D PACKED on the drivers of
 * kernels/quant_tmpl.h (docs/kernels.md "Integer kernels"). Built alone with -march=armv8.2-a+dotprod (its own
 * static library) and bound by ep_kernels_init_neon only when the CPU reports EP_CPU_DOTPROD; the rest of the
 * runtime stays armv8-a. The packed layout [K4][8][4] is SDOT's: one 16-byte load is 4 rows (or columns) x a
 * 4-deep K group, and SDOT (by element) adds the 4-term dot of each column with one row into a lane, exactly in
 * int32. Block: 8 x 8, 16 accumulators, 16 SDOT and 4 loads per K group. Requantisation: quant_neon.h, the
 * baseline's (the same bits). */
#include <string.h>
#include "ep_ops.h"
#include "quant_common.h"
#include "quant_neon.h"

#define EP_ISA neon_dotprod   /* the template's kernels are ep_neon_dotprod_<name> */

#define QD_ROW(i, rv, l)                               \
    do {                                               \
        a##i##0 = vdotq_laneq_s32(a##i##0, c0, rv, l); \
        a##i##1 = vdotq_laneq_s32(a##i##1, c1, rv, l); \
    } while (0)
#define QD_OUT(i)                                  \
    do {                                           \
        vst1q_s32(acc + (i) * 8, a##i##0);         \
        vst1q_s32(acc + (i) * 8 + 4, a##i##1);     \
    } while (0)

/* acc[r * 8 + j] = sum_k rp[r, k] cp[j, k] over [K4][8][4] panels */
static void qt_block(const int8_t *rp, const int8_t *cp, int64_t K4, int32_t *acc) {
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z;
    int32x4_t a40 = z, a41 = z, a50 = z, a51 = z, a60 = z, a61 = z, a70 = z, a71 = z;
    for (int64_t k4 = 0; k4 < K4; k4++) {
        const int8x16_t c0 = vld1q_s8(cp + k4 * 32), c1 = vld1q_s8(cp + k4 * 32 + 16);   /* columns 0-3, 4-7 */
        const int8x16_t r0 = vld1q_s8(rp + k4 * 32), r1 = vld1q_s8(rp + k4 * 32 + 16);   /* rows 0-3, 4-7 */
        QD_ROW(0, r0, 0);
        QD_ROW(1, r0, 1);
        QD_ROW(2, r0, 2);
        QD_ROW(3, r0, 3);
        QD_ROW(4, r1, 0);
        QD_ROW(5, r1, 1);
        QD_ROW(6, r1, 2);
        QD_ROW(7, r1, 3);
    }
    QD_OUT(0);
    QD_OUT(1);
    QD_OUT(2);
    QD_OUT(3);
    QD_OUT(4);
    QD_OUT(5);
    QD_OUT(6);
    QD_OUT(7);
}

#define QT_CUSTOM_PACK   /* qt_pack_rows, qt_pack_patches: quant_pack_neon.h */

/* One position's tile (kernels/quant_tmpl.h QT_CONV_ROW1): the stream panel's row 0 against the weight panel,
 * 2 SDOT per K group instead of 16 */
#define QT_CONV_ROW1 1
static int qt_conv_row1(const int8_t *sp, const int8_t *wp, int64_t K4, const int32_t *bias8, const int32_t *m8,
                        const int32_t *s8, int32_t lo, int32_t hi, int32_t zp, int8_t *yc, int64_t P) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
    for (int64_t k4 = 0; k4 < K4; k4++) {
        const int8x16_t c0 = vld1q_s8(wp + k4 * 32), c1 = vld1q_s8(wp + k4 * 32 + 16);
        int32_t v;
        memcpy(&v, sp + k4 * 32, 4);
        const int8x16_t r = vreinterpretq_s8_s32(vdupq_n_s32(v));
        a0 = vdotq_s32(a0, c0, r);
        a1 = vdotq_s32(a1, c1, r);
    }
    return qn_row1_store(a0, a1, bias8, m8, s8, lo, hi, zp, yc, P);
}

#include "quant_tmpl.h"
#include "quant_pack_neon.h"
