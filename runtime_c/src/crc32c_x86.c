/* CRC-32C with SSE4.2's crc32 instruction (x86-64 builds; used when CPUID reports SSE4.2). */
#include <nmmintrin.h>
#include <string.h>
#include "internal.h"

__attribute__((target("sse4.2")))
uint32_t ep_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t c = ~crc;
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
    }
    uint32_t c32 = (uint32_t)c;
    while (len--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
