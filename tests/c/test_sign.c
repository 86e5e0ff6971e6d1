/* Plan signatures' primitives (src/sha512.c, src/ed25519.c): SHA-512 against FIPS 180's examples (fed whole and
 * in uneven pieces), Ed25519 verification against RFC 8032 section 7.1's TEST 1-3, and the refusals: a flipped
 * bit in the message, in R, in S or in the key, S + L (S not below L), a key whose y is not below p, and a key
 * that is not on the curve. tests/py/test_sign.py checks whole plans against signatures made by
 * `cryptography`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep_check.h"
#include "../../runtime_c/src/sign_impl.h"

static void unhex(uint8_t *out, const char *hex) {
    for (size_t i = 0; hex[2 * i]; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void test_sha512(void) {
    static const struct { const char *msg; size_t repeat; const char *digest; } V[] = {
        {"", 1, "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f"
                "63b931bd47417a81a538327af927da3e"},
        {"abc", 1, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3fee"
                   "bbd454d4423643ce80e2a9ac94fa54ca49f"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
         "nopqrstu", 1, "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b"
                        "5433ac7d329eeb6dd26545e96e55b874be909"},
        {"a", 1000000, "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c"
                       "31beb009c5c2c49aa2e4eadb217ad8cc09b"},
    };
    for (size_t k = 0; k < sizeof V / sizeof V[0]; k++) {
        uint8_t want[64], got[64];
        unhex(want, V[k].digest);
        const size_t n = strlen(V[k].msg) * V[k].repeat;
        uint8_t *m = malloc(n + 1);
        for (size_t i = 0; i < n; i++) m[i] = (uint8_t)V[k].msg[i % strlen(V[k].msg)];
        for (size_t piece = 0; piece < 4; piece++) {   /* whole, then pieces of 1, 127 and 129 bytes */
            static const size_t SIZES[4] = {0, 1, 127, 129};
            ep_sha512 c;
            ep_sha512_init(&c);
            if (!SIZES[piece]) ep_sha512_update(&c, m, n);
            else for (size_t i = 0; i < n; i += SIZES[piece]) ep_sha512_update(&c, m + i, n - i < SIZES[piece] ? n - i : SIZES[piece]);
            ep_sha512_final(&c, got);
            CHECK(memcmp(got, want, 64) == 0, "SHA-512 example %zu, pieces of %zu", k, SIZES[piece]);
            if (n > 100000) break;   /* the million a's only whole and in bytes would be slow under qemu */
        }
        free(m);
    }
}

static int verify(const uint8_t *msg, size_t n, const uint8_t sig[64], const uint8_t key[32]) {
    ep_sha512 c;
    ep_ed25519_begin(&c, sig, key);
    ep_sha512_update(&c, msg, n);
    return ep_ed25519_end(&c, sig, key);
}

static void test_ed25519(void) {
    static const struct { const char *key, *msg, *sig; } V[] = {   /* RFC 8032 section 7.1, TEST 1, 2, 3 */
        {"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595b"
         "be24655141438e7a100b"},
        {"3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb430"
         "2aeeb00d291612bb0c00"},
        {"fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716e"
         "d28dc027beceea1ec40a"},
    };
    static const uint8_t L[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
                                  0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
    for (size_t k = 0; k < sizeof V / sizeof V[0]; k++) {
        uint8_t key[32], sig[64], msg[8] = {0}, bad[64], badkey[32], badmsg[8];
        unhex(key, V[k].key), unhex(sig, V[k].sig), unhex(msg, V[k].msg);
        const size_t n = strlen(V[k].msg) / 2;
        CHECK(verify(msg, n, sig, key), "RFC 8032 TEST %zu verifies", k + 1);
        if (n) {
            memcpy(badmsg, msg, n), badmsg[0] ^= 1;
            CHECK(!verify(badmsg, n, sig, key), "TEST %zu: a flipped message bit is refused", k + 1);
        }
        CHECK(!verify((const uint8_t *)"x", 1, sig, key), "TEST %zu: another message is refused", k + 1);
        for (int byte = 0; byte < 64; byte += 7) {
            memcpy(bad, sig, 64), bad[byte] ^= (uint8_t)(1 << (byte % 8));
            CHECK(!verify(msg, n, bad, key), "TEST %zu: a flipped bit in signature byte %d is refused", k + 1, byte);
        }
        for (int byte = 0; byte < 32; byte += 5) {
            memcpy(badkey, key, 32), badkey[byte] ^= (uint8_t)(1 << (byte % 8));
            CHECK(!verify(msg, n, sig, badkey), "TEST %zu: a flipped bit in key byte %d is refused", k + 1, byte);
        }
        memcpy(bad, sig, 64);   /* S + L: the same point, but S not below L */
        unsigned carry = 0;
        for (int i = 0; i < 32; i++) {
            const unsigned v = bad[32 + i] + L[i] + carry;
            bad[32 + i] = (uint8_t)v, carry = v >> 8;
        }
        CHECK(!verify(msg, n, bad, key), "TEST %zu: S + L is refused", k + 1);
    }
    uint8_t key[32], sig[64];
    unhex(key, V[0].key), unhex(sig, V[0].sig);
    uint8_t big[32];   /* y = p + 1 (not canonical: y is not below p) */
    memset(big, 0xff, 32), big[0] = 0xee, big[31] = 0x7f;
    CHECK(!verify(sig, 0, sig, big), "a key with y >= p is refused");
    uint8_t off[32] = {2};   /* y = 2: (y^2 - 1) / (d y^2 + 1) has no square root */
    CHECK(!verify(sig, 0, sig, off), "a key off the curve is refused");
}

int main(void) {
    test_sha512();
    test_ed25519();
    printf("test_sign: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail ? 1 : 0;
}
