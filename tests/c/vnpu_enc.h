/* A small EPN-1 assembler for the C tests (check_vnpu.c): command words, a constant payload, the I/O table and a
 * sealed header (docs/npu.md "The EPN-1 blob"). The compiler's encoder is pyapi/edgeplan/compiler/partition/
 * vnpu_encode.py; this one builds blobs by hand, valid or deliberately not. */
#ifndef VNPU_ENC_H
#define VNPU_ENC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "edgeplan/vnpu.h"

#define VN_MAX_CMD 8192
#define VN_MAX_CONST (1u << 20)

typedef struct vn_blob {
    uint32_t cmd[VN_MAX_CMD];
    uint32_t n_cmd;
    uint8_t *consts;            /* VN_MAX_CONST bytes */
    uint32_t n_const;
    ep_vnpu_io io[2 * EP_DELEGATE_MAX_IO];
    uint32_t n_in, n_out;
    uint32_t macs, sram_bytes, work_bytes, sram_used, n_ops;
} vn_blob;

static inline void vn_init(vn_blob *b, uint32_t macs) {
    uint8_t *c = b->consts ? b->consts : (uint8_t *)malloc(VN_MAX_CONST);
    memset(b, 0, sizeof *b);
    b->consts = c;
    memset(c, 0, VN_MAX_CONST);
    b->macs = macs;
    b->sram_bytes = 512u << 10;
}
static inline void vn_free(vn_blob *b) {
    free(b->consts);
    b->consts = NULL;
}
static inline void vn_cmd0(vn_blob *b, uint32_t op, uint32_t param) {
    if (b->n_cmd < VN_MAX_CMD) b->cmd[b->n_cmd++] = (op & 0xFFFFu) | (param & 0xFFFFu) << 16;
    if (op < EP_VNPU_FM_IFM && op != EP_VNPU_OP_STOP) b->n_ops++;
}
static inline void vn_cmd1(vn_blob *b, uint32_t op, uint32_t param, uint32_t payload) {
    if (b->n_cmd + 1 < VN_MAX_CMD) {
        b->cmd[b->n_cmd++] = (op & 0xFFFFu) | EP_VNPU_CMD1 | (param & 0xFFFFu) << 16;
        b->cmd[b->n_cmd++] = payload;
    }
}
/* appends n bytes to region 0 (16-aligned), returns their offset */
static inline uint32_t vn_const(vn_blob *b, const void *data, uint32_t n) {
    const uint32_t at = (b->n_const + 15u) & ~15u;
    if (at + n > VN_MAX_CONST) return 0;
    if (n) memcpy(b->consts + at, data, n);
    b->n_const = at + n;
    return at;
}
/* an int8 I/O tensor of the partition (rank 1..4) */
static inline void vn_io(vn_blob *b, int output, int rank, const int32_t *dims) {
    ep_vnpu_io *r = &b->io[output ? EP_DELEGATE_MAX_IO + b->n_out++ : b->n_in++];
    memset(r, 0, sizeof *r);
    r->dtype = EP_DTYPE_I8, r->rank = rank, r->nbytes = 1;
    for (int k = 0; k < rank; k++) r->dims[k] = dims[k], r->nbytes *= (uint64_t)dims[k];
}
static inline uint32_t vn_region_in(int k) { return EP_VNPU_REGION_IO + (uint32_t)k; }
static inline uint32_t vn_region_out(const vn_blob *b, int k) { return EP_VNPU_REGION_IO + b->n_in + (uint32_t)k; }

/* one feature map's registers: which is EP_VNPU_FM_IFM / _IFM2 / _OFM */
static inline void vn_fm(vn_blob *b, uint32_t which, uint32_t region, uint32_t base, uint32_t h, uint32_t w, uint32_t c,
                         uint32_t sx, uint32_t sy, uint32_t sc, int zp) {
    if (h < 1 || w < 1 || c < 1 || h > EP_VNPU_MAX_DIM || w > EP_VNPU_MAX_DIM || c > EP_VNPU_MAX_DIM) {
        fprintf(stderr, "vnpu_enc: feature map %ux%ux%u has an extent outside 1..65536\n", h, w, c);
        abort();
    }
    vn_cmd0(b, which + EP_VNPU_FM_REGION, region);
    vn_cmd0(b, which + EP_VNPU_FM_HEIGHT_M1, h - 1);
    vn_cmd0(b, which + EP_VNPU_FM_WIDTH_M1, w - 1);
    vn_cmd0(b, which + EP_VNPU_FM_DEPTH_M1, c - 1);
    vn_cmd0(b, which + EP_VNPU_FM_ZERO_POINT, (uint32_t)(uint16_t)(int16_t)zp);
    vn_cmd1(b, which + EP_VNPU_FM_BASE, 0, base);
    vn_cmd1(b, which + EP_VNPU_FM_STRIDE_X, 0, sx);
    vn_cmd1(b, which + EP_VNPU_FM_STRIDE_Y, 0, sy);
    vn_cmd1(b, which + EP_VNPU_FM_STRIDE_C, 0, sc);
}
/* a plane-major (NCHW) map: C planes of H x W bytes */
static inline void vn_fm_nchw(vn_blob *b, uint32_t which, uint32_t region, uint32_t base, uint32_t h, uint32_t w,
                              uint32_t c, int zp) {
    vn_fm(b, which, region, base, h, w, c, 1, w, h * w, zp);
}
static inline void vn_consts(vn_blob *b, uint32_t w_off, uint32_t w_len, uint32_t s_off, uint32_t s_len) {
    vn_cmd0(b, EP_VNPU_SET_WEIGHT_REGION, EP_VNPU_REGION_CONST);
    vn_cmd1(b, EP_VNPU_SET_WEIGHT_BASE, 0, w_off);
    vn_cmd1(b, EP_VNPU_SET_WEIGHT_LENGTH, 0, w_len);
    vn_cmd0(b, EP_VNPU_SET_SCALE_REGION, EP_VNPU_REGION_CONST);
    vn_cmd1(b, EP_VNPU_SET_SCALE_BASE, 0, s_off);
    vn_cmd1(b, EP_VNPU_SET_SCALE_LENGTH, 0, s_len);
}

static inline uint64_t vn_align64(uint64_t a) { return (a + 63u) & ~(uint64_t)63u; }
static inline uint32_t vn_rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t vn_wr32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
    return v;
}
/* Seals the CRC of a finished blob (the crc32c field read as 0). */
static inline void vn_seal(uint8_t *blob, uint32_t size) {
    vn_wr32(blob + offsetof(ep_vnpu_header, crc32c), 0);
    vn_wr32(blob + offsetof(ep_vnpu_header, crc32c), ep_crc32c(blob, size));
}
/* Lays out header | I/O table | stream | constants into a malloc'd buffer (padded to a multiple of 64, like a
 * plan constant); returns it and its header's size in *size. */
static inline uint8_t *vn_finish(const vn_blob *b, uint32_t *size) {
    const uint32_t n_io = b->n_in + b->n_out;
    const uint32_t io_off = EP_VNPU_HEADER_BYTES, cmd_off = io_off + n_io * EP_VNPU_IO_BYTES;
    const uint32_t const_off = (cmd_off + b->n_cmd * 4u + 15u) & ~15u, total = const_off + b->n_const;
    uint8_t *out = (uint8_t *)calloc(1, (total + 63u) & ~63u);
    ep_vnpu_header h;
    memset(&h, 0, sizeof h);
    h.magic = EP_VNPU_MAGIC, h.version = EP_VNPU_VERSION, h.blob_bytes = total;
    h.macs_per_cycle = b->macs, h.sram_bytes = b->sram_bytes, h.work_bytes = b->work_bytes, h.sram_used = b->sram_used;
    h.n_regions = EP_VNPU_REGION_IO + n_io, h.n_inputs = (uint16_t)b->n_in, h.n_outputs = (uint16_t)b->n_out;
    h.io_offset = io_off, h.cmd_offset = cmd_off, h.cmd_words = b->n_cmd;
    h.const_offset = const_off, h.const_bytes = b->n_const, h.n_ops = b->n_ops;
    memcpy(out, &h, sizeof h);
    for (uint32_t k = 0; k < b->n_in; k++) memcpy(out + io_off + k * EP_VNPU_IO_BYTES, &b->io[k], EP_VNPU_IO_BYTES);
    for (uint32_t k = 0; k < b->n_out; k++)
        memcpy(out + io_off + (b->n_in + k) * EP_VNPU_IO_BYTES, &b->io[EP_DELEGATE_MAX_IO + k], EP_VNPU_IO_BYTES);
    for (uint32_t k = 0; k < b->n_cmd; k++) vn_wr32(out + cmd_off + 4u * k, b->cmd[k]);
    memcpy(out + const_off, b->consts, b->n_const);
    vn_seal(out, total);
    *size = total;
    return out;
}

#endif
