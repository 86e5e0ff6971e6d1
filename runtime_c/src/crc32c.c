/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the CPU's CRC instructions where it has them
 * (crc32c_<isa>.c), else byte-wise through a table. */
#include "internal.h"

#define CRC32C_POLY 0x82F63B78u

static uint32_t crc_bits(uint32_t c) {   /* eight bit steps: one byte's worth of the division */
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1u)));
    return c;
}

/* Without CRC instructions: byte-wise through a 256-entry table that is built on the stack per call
 * (2,048 bit steps, a few microseconds), which costs no rodata in the binary; inputs shorter than the
 * table go bit by bit. */
uint32_t ep_crc32c_sw(uint32_t crc, const void *data, size_t len) {
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    if (len < 256) {
        while (len--) crc = crc_bits(crc ^ *p++);
        return ~crc;
    }
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) table[i] = crc_bits(i);
    while (len--) crc = table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

uint32_t ep_crc32c_update(uint32_t crc, const void *data, size_t len) {
    if (ep_cpu_features() & EP_CPU_CRC32) return ep_crc32c_hw(crc, data, len);
    return ep_crc32c_sw(crc, data, len);
}
