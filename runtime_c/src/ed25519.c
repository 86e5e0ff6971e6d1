/* Ed25519 signature verification (RFC 8032 section 5.1.7), for plan signatures: public data only, so no
 * constant-time care. Field elements of GF(2^255 - 19) are 16 signed 64-bit limbs of 16 bits each
 * (radix 2^16); 2^256 = 38 (mod p) folds the top carry back into limb 0. Points are extended
 * twisted-Edwards coordinates (X : Y : Z : T), x = X/Z, y = Y/Z, xy = T/Z, on -x^2 + y^2 = 1 + d x^2 y^2. */
#include <string.h>

#include "sign_impl.h"

typedef int64_t fe[16];
typedef struct ge { fe x, y, z, t; } ge;

/* d, 2d, sqrt(-1), the base point B (y = 4/5, x even) and the group order L, computed from their
 * definitions (RFC 8032 section 5.1) */
static const fe D = {0x78a3, 0x1359, 0x4dca, 0x75eb, 0xd8ab, 0x4141, 0x0a4d, 0x0070,
                     0xe898, 0x7779, 0x4079, 0x8cc7, 0xfe73, 0x2b6f, 0x6cee, 0x5203};
static const fe D2 = {0xf159, 0x26b2, 0x9b94, 0xebd6, 0xb156, 0x8283, 0x149a, 0x00e0,
                      0xd130, 0xeef3, 0x80f2, 0x198e, 0xfce7, 0x56df, 0xd9dc, 0x2406};
static const fe SQRTM1 = {0xa0b0, 0x4a0e, 0x1b27, 0xc4ee, 0xe478, 0xad2f, 0x1806, 0x2f43,
                          0xd7a7, 0x3dfb, 0x0099, 0x2b4d, 0xdf0b, 0x4fc1, 0x2480, 0x2b83};
static const fe BX = {0xd51a, 0x8f25, 0x2d60, 0xc956, 0xa7b2, 0x9525, 0xc760, 0x692c,
                      0xdc5c, 0xfdd6, 0xe231, 0xc0a4, 0x53fe, 0xcd6e, 0x36d3, 0x2169};
static const fe BY = {0x6658, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666,
                      0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666};
static const fe BT = {0xdda3, 0xa5b7, 0x8ab3, 0x6dde, 0x52f5, 0x7751, 0x9f80, 0x20f0,
                      0xe37d, 0x64ab, 0x4e8e, 0x66ea, 0x7665, 0xd78b, 0x5f0f, 0x6787};
static const uint8_t L_BYTES[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                    0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0, 0, 0, 0, 0x10};

/* ---- field arithmetic ---- */

static void fe_copy(fe o, const fe a) { memcpy(o, a, sizeof(fe)); }
static void fe_set(fe o, int64_t v) { memset(o, 0, sizeof(fe)); o[0] = v; }

/* One pass: every limb to [0, 2^16), the carry out of the top limb folded into limb 0 (times 38). The floor
 * division keeps negative limbs exact (a division, not a shift of a negative value). */
static void fe_carry(fe o) {
    for (int i = 0; i < 16; i++) {
        int64_t c = o[i] / 65536;
        if (o[i] - c * 65536 < 0) c--;
        o[i] -= c * 65536;
        if (i < 15) o[i + 1] += c;
        else o[0] += 38 * c;
    }
}

static void fe_add(fe o, const fe a, const fe b) { for (int i = 0; i < 16; i++) o[i] = a[i] + b[i]; }
static void fe_sub(fe o, const fe a, const fe b) { for (int i = 0; i < 16; i++) o[i] = a[i] - b[i]; }

static void fe_mul(fe o, const fe a, const fe b) {
    int64_t t[31] = {0};
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) t[i + j] += a[i] * b[j];
    for (int i = 0; i < 15; i++) t[i] += 38 * t[i + 16];    /* limb 16 + i weighs 2^256 * 2^(16 i) */
    memcpy(o, t, sizeof(fe));
    fe_carry(o);
    fe_carry(o);
}

static void fe_sq(fe o, const fe a) { fe_mul(o, a, a); }

/* o = a^e, e a 255-bit exponent given little-endian */
static void fe_pow(fe o, const fe a, const uint8_t e[32]) {
    fe r;
    fe_set(r, 1);
    for (int i = 254; i >= 0; i--) {
        fe_sq(r, r);
        if (e[i / 8] >> (i % 8) & 1) fe_mul(r, r, a);
    }
    fe_copy(o, r);
}

/* p - 2 (inversion) and (p - 5) / 8 (square roots), little-endian */
static const uint8_t P_MINUS_2[32] = {0xeb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
static const uint8_t P_MINUS_5_DIV_8[32] = {0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};

/* The canonical 32-byte little-endian encoding: the value reduced to [0, p). */
static void fe_pack(uint8_t out[32], const fe a) {
    fe t;
    fe_copy(t, a);
    for (int k = 0; k < 4; k++) fe_carry(t);     /* limbs in [0, 2^16): the value in [0, 2^256) */
    for (int k = 0; k < 2; k++) {                 /* fold bit 255 and up: the value below 2^255 + 38 * 19 */
        const int64_t c = t[15] >> 15;
        t[15] &= 0x7fff;
        t[0] += 19 * c;
        for (int i = 0; i < 15; i++) { t[i + 1] += t[i] >> 16; t[i] &= 0xffff; }
    }
    fe u;                                         /* v >= p exactly when v + 19 reaches 2^255 */
    fe_copy(u, t);
    u[0] += 19;
    for (int i = 0; i < 15; i++) { u[i + 1] += u[i] >> 16; u[i] &= 0xffff; }
    if (u[15] >> 15) { u[15] &= 0x7fff; fe_copy(t, u); }
    for (int i = 0; i < 16; i++) { out[2 * i] = (uint8_t)t[i]; out[2 * i + 1] = (uint8_t)(t[i] >> 8); }
}

static void fe_unpack(fe o, const uint8_t in[32]) {
    for (int i = 0; i < 16; i++) o[i] = in[2 * i] | (int64_t)in[2 * i + 1] << 8;
    o[15] &= 0x7fff;
}

static int fe_equal(const fe a, const fe b) {
    uint8_t x[32], y[32];
    fe_pack(x, a);
    fe_pack(y, b);
    return memcmp(x, y, 32) == 0;
}

static int fe_parity(const fe a) {
    uint8_t x[32];
    fe_pack(x, a);
    return x[0] & 1;
}

/* ---- group ---- */

static void ge_identity(ge *p) { fe_set(p->x, 0), fe_set(p->y, 1), fe_set(p->z, 1), fe_set(p->t, 0); }

/* p = p + q: the unified addition of extended coordinates for a = -1 (also doubles) */
static void ge_add(ge *p, const ge *q) {
    fe a, b, c, d, e, f, g, h, t;
    fe_sub(a, p->y, p->x), fe_sub(t, q->y, q->x), fe_mul(a, a, t);
    fe_add(b, p->y, p->x), fe_add(t, q->y, q->x), fe_mul(b, b, t);
    fe_mul(c, p->t, q->t), fe_mul(c, c, D2);
    fe_mul(d, p->z, q->z), fe_add(d, d, d);
    fe_sub(e, b, a), fe_sub(f, d, c), fe_add(g, d, c), fe_add(h, b, a);
    fe_mul(p->x, e, f), fe_mul(p->y, g, h), fe_mul(p->z, f, g), fe_mul(p->t, e, h);
}

static void ge_encode(uint8_t out[32], const ge *p) {
    fe zi, x, y;
    fe_pow(zi, p->z, P_MINUS_2);
    fe_mul(x, p->x, zi), fe_mul(y, p->y, zi);
    fe_pack(out, y);
    out[31] |= (uint8_t)(fe_parity(x) << 7);
}

/* RFC 8032 section 5.1.3; 0 for an encoding that is not a point or not canonical (y >= p) */
static int ge_decode(ge *p, const uint8_t in[32]) {
    uint8_t check[32];
    fe_unpack(p->y, in);
    fe_pack(check, p->y);
    if (memcmp(check, in, 31) || check[31] != (in[31] & 0x7f)) return 0;
    fe one, y2, u, v, v3, x, t;
    fe_set(one, 1);
    fe_sq(y2, p->y);
    fe_sub(u, y2, one);                      /* u = y^2 - 1 */
    fe_mul(v, y2, D), fe_add(v, v, one);     /* v = d y^2 + 1 */
    fe_sq(v3, v), fe_mul(v3, v3, v);         /* v^3 */
    fe_sq(t, v3), fe_mul(t, t, v), fe_mul(t, t, u);   /* u v^7 */
    fe_pow(t, t, P_MINUS_5_DIV_8);
    fe_mul(x, t, v3), fe_mul(x, x, u);       /* x = u v^3 (u v^7)^((p-5)/8) */
    fe_sq(t, x), fe_mul(t, t, v);            /* v x^2 */
    if (!fe_equal(t, u)) {
        fe nu, zero;
        fe_set(zero, 0);
        fe_sub(nu, zero, u);
        if (!fe_equal(t, nu)) return 0;
        fe_mul(x, x, SQRTM1);
    }
    const int sign = in[31] >> 7;
    fe zero;
    fe_set(zero, 0);
    if (sign && fe_equal(x, zero)) return 0;
    if (fe_parity(x) != sign) fe_sub(x, zero, x);
    fe_copy(p->x, x);
    fe_set(p->z, 1);
    fe_mul(p->t, x, p->y);
    return 1;
}

/* ---- scalars ---- */

/* 1 when the 32-byte little-endian s is below L */
static int below_l(const uint8_t s[32]) {
    for (int i = 31; i >= 0; i--)
        if (s[i] != L_BYTES[i]) return s[i] < L_BYTES[i];
    return 0;
}

/* out = the 64-byte little-endian n mod L, by long division: L * 2^k subtracted wherever it fits */
static void reduce_mod_l(uint8_t out[32], const uint8_t n[64]) {
    uint32_t x[17] = {0}, l[9] = {0};
    for (int i = 0; i < 64; i++) x[i / 4] |= (uint32_t)n[i] << (8 * (i % 4));
    for (int i = 0; i < 32; i++) l[i / 4] |= (uint32_t)L_BYTES[i] << (8 * (i % 4));
    for (int k = 512 - 253; k >= 0; k--) {
        uint32_t s[17] = {0};                       /* s = L << k */
        const int w = k / 32, b = k % 32;
        for (int i = 0; i < 9 && i + w < 17; i++) {
            s[i + w] |= l[i] << b;
            if (b && i + w + 1 < 17) s[i + w + 1] |= l[i] >> (32 - b);
        }
        int ge = 1;
        for (int i = 16; i >= 0; i--)
            if (x[i] != s[i]) { ge = x[i] > s[i]; break; }
        if (!ge) continue;
        uint64_t borrow = 0;
        for (int i = 0; i < 17; i++) {
            const uint64_t d = (uint64_t)x[i] - s[i] - borrow;
            x[i] = (uint32_t)d;
            borrow = d >> 63;
        }
    }
    for (int i = 0; i < 32; i++) out[i] = (uint8_t)(x[i / 4] >> (8 * (i % 4)));
}

/* ---- verification ---- */

int ep_ed25519_begin(ep_sha512 *c, const uint8_t sig[64], const uint8_t key[32]) {
    ep_sha512_init(c);
    ep_sha512_update(c, sig, 32);
    ep_sha512_update(c, key, 32);
    return 1;
}

int ep_ed25519_end(ep_sha512 *c, const uint8_t sig[64], const uint8_t key[32]) {
    uint8_t digest[64], h[32], got[32];
    ep_sha512_final(c, digest);
    ge a, r, b;
    if (!below_l(sig + 32) || !ge_decode(&a, key)) return 0;
    reduce_mod_l(h, digest);
    fe zero;                                   /* -A */
    fe_set(zero, 0);
    fe_sub(a.x, zero, a.x), fe_sub(a.t, zero, a.t);
    fe_copy(b.x, BX), fe_copy(b.y, BY), fe_set(b.z, 1), fe_copy(b.t, BT);
    ge_identity(&r);                           /* r = [S]B + [h](-A), both scalars below 2^253 */
    for (int i = 252; i >= 0; i--) {
        ge d = r;
        ge_add(&r, &d);
        if (sig[32 + i / 8] >> (i % 8) & 1) ge_add(&r, &b);
        if (h[i / 8] >> (i % 8) & 1) ge_add(&r, &a);
    }
    ge_encode(got, &r);
    return memcmp(got, sig, 32) == 0;
}
