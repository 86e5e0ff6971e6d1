/* Plan signatures' primitives (src/sha512.c, src/ed25519.c): SHA-512 against FIPS 180's examples (fed whole and
 * in uneven pieces), Ed25519 verification against RFC 8032 section 7.1's TEST 1, 2, 3, 1024 and SHA(abc), and the
 * refusals: a flipped bit in the message (first and last byte), in R, in S or in the key, S + L (S not below L), a
 * key whose y is not below p, and a key that is not on the curve. tests/py/test_sign.py checks whole plans against
 * signatures made by `cryptography`. */
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
    static const struct { const char *key, *msg, *sig; } V[] = {   /* RFC 8032 section 7.1: TEST 1, 2, 3, 1024, SHA(abc) */
        {"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595b"
         "be24655141438e7a100b"},
        {"3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb430"
         "2aeeb00d291612bb0c00"},
        {"fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716e"
         "d28dc027beceea1ec40a"},
        /* TEST 1024: a 1,023-byte message */
        {"278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
         "08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1e355"
         "f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d658675fc"
         "6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b"
         "199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e06203b33890cc9b8"
         "32f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d"
         "206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed185ce81bd84359d44254d9562"
         "9e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40"
         "cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f27088d78b7e883c8759d2c4f5c65adb7553"
         "878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b0707e0"
         "917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128bab27af87a71314f318c782b23ebfe808b82b0ce26"
         "401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429ec96031dbcad3"
         "dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb751fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301"
         "651339e22904cc8c42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f"
         "92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34dff7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401ade"
         "bf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab4"
         "7b57f7f7276cd419c17a3ca8e1b939ae49e488acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3"
         "2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb37"
         "97aa2a2f256656168e6c496afc5fb93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba7"
         "7c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315c"
         "f4fde7cb68606937380db2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef"
         "68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0",
         "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350"
         "aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"},
        /* TEST SHA(abc): the message is SHA-512("abc") */
        {"ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
         "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d"
         "4423643ce80e2a9ac94fa54ca49f",
         "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589"
         "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"},
    };
    static const uint8_t L[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
                                  0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
    for (size_t k = 0; k < sizeof V / sizeof V[0]; k++) {
        uint8_t key[32], sig[64], msg[1024] = {0}, bad[64], badkey[32], badmsg[1024];
        unhex(key, V[k].key), unhex(sig, V[k].sig), unhex(msg, V[k].msg);
        const size_t n = strlen(V[k].msg) / 2;
        CHECK(verify(msg, n, sig, key), "RFC 8032 vector %zu (TEST 1, 2, 3, 1024, SHA(abc)) verifies", k + 1);
        if (n) {
            memcpy(badmsg, msg, n), badmsg[0] ^= 1;
            CHECK(!verify(badmsg, n, sig, key), "TEST %zu: a flipped message bit is refused", k + 1);
            memcpy(badmsg, msg, n), badmsg[n - 1] ^= 0x80;
            CHECK(!verify(badmsg, n, sig, key), "TEST %zu: a flipped bit in the last message byte is refused", k + 1);
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
