/* Plan signatures (sign.c): SHA-512 (FIPS 180-4, sha512.c) and Ed25519 verification (RFC 8032, ed25519.c),
 * portable C, libc only, no heap. Internal to the runtime. */
#ifndef EP_SIGN_IMPL_H
#define EP_SIGN_IMPL_H

#include <stddef.h>
#include <stdint.h>

typedef struct ep_sha512 {
    uint64_t h[8];
    uint64_t total;          /* bytes hashed so far */
    uint8_t buf[128];
    size_t fill;
} ep_sha512;

void ep_sha512_init(ep_sha512 *c);
void ep_sha512_update(ep_sha512 *c, const void *data, size_t len);
void ep_sha512_final(ep_sha512 *c, uint8_t out[64]);

/* The message streamed in pieces: the caller hashes R || A first through ep_ed25519_begin, then the message
 * with ep_sha512_update, then ep_ed25519_end checks. Returns 1 when the signature is valid. */
int ep_ed25519_begin(ep_sha512 *c, const uint8_t sig[64], const uint8_t key[32]);
int ep_ed25519_end(ep_sha512 *c, const uint8_t sig[64], const uint8_t key[32]);

#endif
