/* CRC-32C with the ARMv8 CRC32 instructions (aarch64 builds; used when HWCAP reports CRC32). */
#include <arm_acle.h>
#include <string.h>
#include "internal.h"

__attribute__((target("+crc")))
uint32_t ep_crc32c_hw(uint32_t crc, const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data;
    uint32_t c = ~crc;
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __crc32cd(c, v);
    }
    while (len--) c = __crc32cb(c, *p++);
    return ~c;
}
