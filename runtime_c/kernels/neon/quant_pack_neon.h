/* The NEON stream-panel packers of kernels/quant_tmpl.h (QT_CUSTOM_PACK; included after it by quant_i8.c and
 * quant_dotprod.c): the bytes of qt_pack_rows_c and qt_pack_patches_c, a panel being [K4][8][4] int8.
 *   rows: 8 rows of 4 K groups at a time, each row's 16 bytes one load, an 8 x 4 transpose of dwords by ZIP1 /
 *     ZIP2 on 32- then 64-bit lanes; rows past A are zeros, not read;
 *   patches of a 1x1 stride-1 unpadded convolution, 8 positions inside the plane: per 4 channels, 8 bytes of
 *     each channel's plane and a 4 x 8 byte transpose by ZIP1 / ZIP2 on 8- then 16-bit lanes; other patches
 *     through the template's qt_pack_patches_gathered (gathered as rows, packed as A's rows). */
#ifndef EP_QUANT_PACK_NEON_H
#define EP_QUANT_PACK_NEON_H

static inline uint32x4_t qn_row16(const int8_t *p) {   /* 16 bytes, or zeros for a row past A */
    return p ? vreinterpretq_u32_s8(vld1q_s8(p)) : vdupq_n_u32(0);
}

static void qt_pack_rows(const int8_t *a, int64_t R, int64_t K, int64_t r0, int8_t *dst) {
    const int64_t kf = K / EP_QPACK_K;
    const int8_t *s[8];
    for (int r = 0; r < 8; r++) s[r] = r0 + r < R ? a + (r0 + r) * K : NULL;
    int64_t k4 = 0;
    for (; k4 + 4 <= kf; k4 += 4) {
        uint32x4_t v[8];
        for (int r = 0; r < 8; r++) v[r] = qn_row16(s[r] ? s[r] + k4 * 4 : NULL);
        /* v[r] = groups g0..g3 of row r; out group g = rows 0..7's dword g */
        for (int h = 0; h < 2; h++) {   /* rows 4h .. 4h + 3 */
            const uint32x4_t z0 = vzip1q_u32(v[4 * h], v[4 * h + 1]), z1 = vzip2q_u32(v[4 * h], v[4 * h + 1]);
            const uint32x4_t z2 = vzip1q_u32(v[4 * h + 2], v[4 * h + 3]), z3 = vzip2q_u32(v[4 * h + 2], v[4 * h + 3]);
            const uint64x2_t a0 = vreinterpretq_u64_u32(z0), a1 = vreinterpretq_u64_u32(z1);
            const uint64x2_t b0 = vreinterpretq_u64_u32(z2), b1 = vreinterpretq_u64_u32(z3);
            vst1q_u64((uint64_t *)(void *)(dst + (k4 + 0) * 32 + h * 16), vzip1q_u64(a0, b0));
            vst1q_u64((uint64_t *)(void *)(dst + (k4 + 1) * 32 + h * 16), vzip2q_u64(a0, b0));
            vst1q_u64((uint64_t *)(void *)(dst + (k4 + 2) * 32 + h * 16), vzip1q_u64(a1, b1));
            vst1q_u64((uint64_t *)(void *)(dst + (k4 + 3) * 32 + h * 16), vzip2q_u64(a1, b1));
        }
    }
    for (; k4 < kf; k4++)
        for (int r = 0; r < 8; r++) {
            if (s[r]) memcpy(dst + k4 * 32 + r * 4, s[r] + k4 * 4, 4);
            else memset(dst + k4 * 32 + r * 4, 0, 4);
        }
    if (kf * EP_QPACK_K < K) {
        const int64_t t = K - kf * EP_QPACK_K;
        for (int r = 0; r < 8; r++)
            for (int64_t i = 0; i < 4; i++) dst[kf * 32 + r * 4 + i] = i < t && s[r] ? s[r][kf * 4 + i] : 0;
    }
}

static void qt_pack_patches(const ep_qconv_geo *g, const int8_t *xg, int64_t q0, int8_t *dst) {
    const int64_t HW = g->H * g->W;
    if (g->KH != 1 || g->KW != 1 || g->sh != 1 || g->sw != 1 || g->pt != 0 || g->pl != 0 || g->OH != g->H ||
        g->OW != g->W || q0 + 8 > HW) {
        qt_pack_patches_gathered(g, xg, q0, dst);
        return;
    }
    const int64_t C = g->CG, cf = C / 4;
    const int8_t *x = xg + q0;
    for (int64_t c4 = 0; c4 < cf; c4++) {
        const int8_t *xc = x + c4 * 4 * HW;
        const int8x8_t p0 = vld1_s8(xc), p1 = vld1_s8(xc + HW), p2 = vld1_s8(xc + 2 * HW), p3 = vld1_s8(xc + 3 * HW);
        /* [c0 c1] per position, then [c0 c1 c2 c3] per position: the 8 positions' 4 bytes in order */
        const int16x8_t e01 = vreinterpretq_s16_s8(vcombine_s8(vzip1_s8(p0, p1), vzip2_s8(p0, p1)));
        const int16x8_t e23 = vreinterpretq_s16_s8(vcombine_s8(vzip1_s8(p2, p3), vzip2_s8(p2, p3)));
        vst1q_s16((int16_t *)(void *)(dst + c4 * 32), vzip1q_s16(e01, e23));
        vst1q_s16((int16_t *)(void *)(dst + c4 * 32 + 16), vzip2q_s16(e01, e23));
    }
    if (cf * 4 < C)
        for (int r = 0; r < 8; r++)
            for (int64_t i = 0; i < 4; i++) dst[cf * 32 + r * 4 + i] = cf * 4 + i < C ? x[(cf * 4 + i) * HW + r] : 0;
}
#endif
