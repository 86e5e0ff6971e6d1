/* The EPN-1 blob: header and section checks (epn_parse) and the command-stream interpreter (epn_run) that
 * validates every word and kick, models it and, when executing, runs it (docs/npu.md "The EPN-1 blob").
 *
 * Blob bytes are hostile input: every offset, length and extent is computed in uint64_t from 32-bit fields
 * (so no sum can wrap) and compared with the size of the region it addresses before any byte is touched. */
#include <stdarg.h>
#include <stdio.h>
#include "vnpu_impl.h"
#include "internal.h"   /* ep_crc32c_update */

int epn_fail(epn_env *e, const char *fmt, ...) {
    if (e->why && e->why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->why, e->why_len, fmt, ap);
        va_end(ap);
    }
    return EP_ERR_DELEGATE_BLOB;
}

/* [off, off + len) inside [0, size) and off aligned */
static int section_ok(uint64_t off, uint64_t len, uint64_t size, uint64_t align) {
    return off >= EP_VNPU_HEADER_BYTES && off % align == 0 && off <= size && len <= size - off;
}

int epn_parse(epn_env *e, const void *blob, uint64_t blob_size) {
    const uint8_t *b = (const uint8_t *)blob;
    if (!b || blob_size < EP_VNPU_HEADER_BYTES) return epn_fail(e, "blob of %llu bytes: shorter than its header",
                                                           (unsigned long long)blob_size);
    ep_vnpu_header *h = &e->h;
    memcpy(h, b, sizeof *h);   /* little-endian fields on a little-endian host (plan_format.h, docs/npu.md) */
    if (h->magic != EP_VNPU_MAGIC) return epn_fail(e, "magic 0x%08x is not EPN1", (unsigned)h->magic);
    if (h->version != EP_VNPU_VERSION) return epn_fail(e, "blob version %u, this vNPU runs %d", h->version,
                                                       EP_VNPU_VERSION);
    if (h->flags) return epn_fail(e, "flags 0x%04x: none are defined", h->flags);
    if (h->blob_bytes < EP_VNPU_HEADER_BYTES || h->blob_bytes > blob_size)
        return epn_fail(e, "blob_bytes %u outside [64, %llu]", (unsigned)h->blob_bytes, (unsigned long long)blob_size);
    static const uint8_t zero[4] = {0, 0, 0, 0};
    const size_t crc_at = offsetof(ep_vnpu_header, crc32c);
    uint32_t crc = ep_crc32c_update(0, b, crc_at);
    crc = ep_crc32c_update(crc, zero, 4);
    crc = ep_crc32c_update(crc, b + crc_at + 4, h->blob_bytes - crc_at - 4);
    if (crc != h->crc32c) return epn_fail(e, "CRC-32C 0x%08x, header says 0x%08x", (unsigned)crc, (unsigned)h->crc32c);
    const ep_vnpu_config *c = e->cfg;
    if (h->macs_per_cycle != c->macs_per_cycle)
        return epn_fail(e, "compiled for %u MACs/cycle, the device has %u", (unsigned)h->macs_per_cycle,
                        (unsigned)c->macs_per_cycle);
    if (h->sram_bytes > c->sram_bytes || h->sram_used > h->sram_bytes)
        return epn_fail(e, "SRAM: uses %u of %u bytes compiled for, the device has %llu", (unsigned)h->sram_used,
                        (unsigned)h->sram_bytes, (unsigned long long)c->sram_bytes);
    const uint64_t size = h->blob_bytes, n_io = (uint64_t)h->n_inputs + h->n_outputs;
    if (h->n_inputs < 1 || h->n_outputs < 1 || h->n_inputs > EP_DELEGATE_MAX_IO || h->n_outputs > EP_DELEGATE_MAX_IO ||
        h->n_regions != EP_VNPU_REGION_IO + n_io)
        return epn_fail(e, "%u inputs, %u outputs, %u regions (1..%d each, regions 3 + inputs + outputs)",
                        h->n_inputs, h->n_outputs, (unsigned)h->n_regions, EP_DELEGATE_MAX_IO);
    if (!section_ok(h->io_offset, n_io * EP_VNPU_IO_BYTES, size, 8))
        return epn_fail(e, "I/O table at %u (%llu records) outside the blob or misaligned", (unsigned)h->io_offset,
                        (unsigned long long)n_io);
    if (h->cmd_words < 1 || h->cmd_words > EP_VNPU_MAX_CMD_WORDS ||
        !section_ok(h->cmd_offset, (uint64_t)h->cmd_words * 4u, size, 4))
        return epn_fail(e, "command stream at %u (%u words) outside the blob, misaligned or over %d words",
                        (unsigned)h->cmd_offset, (unsigned)h->cmd_words, EP_VNPU_MAX_CMD_WORDS);
    if (!section_ok(h->const_offset, h->const_bytes, size, 16))
        return epn_fail(e, "constants at %u (%u bytes) outside the blob or misaligned", (unsigned)h->const_offset,
                        (unsigned)h->const_bytes);
    e->cmd = b + h->cmd_offset;
    e->n_regions = h->n_regions;
    e->n_inputs = h->n_inputs;
    e->size[EP_VNPU_REGION_CONST] = h->const_bytes;
    e->rd[EP_VNPU_REGION_CONST] = b + h->const_offset;
    e->size[EP_VNPU_REGION_WORK] = h->work_bytes;
    e->size[EP_VNPU_REGION_SRAM] = h->sram_used;
    return EP_OK;
}

/* ---------------- register writes ---------------- */
static int region_ok(epn_env *e, uint32_t region, uint32_t word, const char *what) {
    return region < e->n_regions ? EP_OK : epn_fail(e, "word %u: %s region %u out of range (%u regions)", word, what,
                                                    (unsigned)region, (unsigned)e->n_regions);
}
static int zp_ok(epn_env *e, int32_t v, uint32_t word, const char *what) {
    return v >= -128 && v <= 127 ? EP_OK : epn_fail(e, "word %u: %s %d outside -128..127", word, what, (int)v);
}
static int pair_ok(epn_env *e, uint32_t param, uint32_t max, uint32_t word, const char *what) {
    const uint32_t x = param & 0xFFu, y = param >> 8;
    return x >= 1 && x <= max && y >= 1 && y <= max ? EP_OK
                                                    : epn_fail(e, "word %u: %s %u,%u outside 1..%u", word, what, x, y, max);
}

static int set0(epn_env *e, epn_regs *r, uint32_t op, uint32_t param, uint32_t word) {
    const int32_t sparam = (int32_t)(int16_t)(uint16_t)param;
    if (op >= EP_VNPU_FM_IFM && op <= EP_VNPU_FM_OFM + 0xF && (op & 0xFu) <= EP_VNPU_FM_ZERO_POINT) {
        epn_fm *f = &r->fm[(op - EP_VNPU_FM_IFM) >> 4];
        switch (op & 0xFu) {
        case EP_VNPU_FM_REGION:
            f->region = param, f->set |= EPN_FM_REGION;
            return region_ok(e, param, word, "feature map");
        case EP_VNPU_FM_HEIGHT_M1: f->h = param + 1u, f->set |= EPN_FM_H; return EP_OK;
        case EP_VNPU_FM_WIDTH_M1: f->w = param + 1u, f->set |= EPN_FM_W; return EP_OK;
        case EP_VNPU_FM_DEPTH_M1: f->c = param + 1u, f->set |= EPN_FM_C; return EP_OK;
        default: f->zp = sparam; return zp_ok(e, sparam, word, "zero point");
        }
    }
    switch (op) {
    case EP_VNPU_SET_KERNEL_HEIGHT_M1:
    case EP_VNPU_SET_KERNEL_WIDTH_M1:
        if (param + 1u > EP_VNPU_MAX_KERNEL)
            return epn_fail(e, "word %u: kernel extent %u over %d", word, (unsigned)param + 1u, EP_VNPU_MAX_KERNEL);
        *(op == EP_VNPU_SET_KERNEL_HEIGHT_M1 ? &r->kh : &r->kw) = param + 1u;
        return EP_OK;
    case EP_VNPU_SET_KERNEL_STRIDE:
        r->ksx = param & 0xFFu, r->ksy = param >> 8;
        return pair_ok(e, param, EP_VNPU_MAX_STRIDE, word, "kernel stride");
    case EP_VNPU_SET_KERNEL_DILATION:
        r->kdx = param & 0xFFu, r->kdy = param >> 8;
        return pair_ok(e, param, EP_VNPU_MAX_DILATION, word, "kernel dilation");
    case EP_VNPU_SET_PAD_TOP:
    case EP_VNPU_SET_PAD_LEFT:
    case EP_VNPU_SET_PAD_BOTTOM:
    case EP_VNPU_SET_PAD_RIGHT:
        if (param > EP_VNPU_MAX_PAD) return epn_fail(e, "word %u: padding %u over %d", word, (unsigned)param,
                                                     EP_VNPU_MAX_PAD);
        r->pad[op - EP_VNPU_SET_PAD_TOP] = param;
        return EP_OK;
    case EP_VNPU_SET_WEIGHT_REGION: r->w_region = param, r->set |= EPN_W_REGION; return region_ok(e, param, word, "weight");
    case EP_VNPU_SET_SCALE_REGION: r->s_region = param, r->set |= EPN_S_REGION; return region_ok(e, param, word, "scale");
    case EP_VNPU_SET_LUT_REGION: r->lut_region = param, r->set |= EPN_LUT_REGION; return region_ok(e, param, word, "LUT");
    case EP_VNPU_SET_DMA_SRC_REGION: r->dma_sreg = param, r->set |= EPN_DMA_SREG; return region_ok(e, param, word, "DMA source");
    case EP_VNPU_SET_DMA_DST_REGION: r->dma_dreg = param, r->set |= EPN_DMA_DREG; return region_ok(e, param, word, "DMA destination");
    case EP_VNPU_SET_ACT_MIN: r->act_min = sparam; return zp_ok(e, sparam, word, "activation min");
    case EP_VNPU_SET_ACT_MAX: r->act_max = sparam; return zp_ok(e, sparam, word, "activation max");
    default: return epn_fail(e, "word %u: unknown opcode 0x%04x", word, (unsigned)op);
    }
}

static int set1(epn_env *e, epn_regs *r, uint32_t op, uint32_t param, uint32_t v, uint32_t word) {
    const uint32_t fmop = op & ~(uint32_t)EP_VNPU_CMD1;
    if (fmop >= EP_VNPU_FM_IFM && fmop <= EP_VNPU_FM_OFM + 0xF && (fmop & 0xFu) <= (EP_VNPU_FM_SCALE & 0xFu)) {
        epn_fm *f = &r->fm[(fmop - EP_VNPU_FM_IFM) >> 4];
        const uint32_t field = fmop & 0xFu;
        if (field == (EP_VNPU_FM_SCALE & 0xFu)) {   /* param the shift, payload the multiplier: checked at the kick */
            f->shift = (int32_t)param, f->mult = (int32_t)(v & 0x7FFFFFFFu), f->set |= EPN_FM_SCALE;
            return v >> 31 ? epn_fail(e, "word %u: scale multiplier 0x%08x over 2^31 - 1", word, (unsigned)v) : EP_OK;
        }
        if (param) return epn_fail(e, "word %u: opcode 0x%04x with parameter %u (reserved, 0)", word, (unsigned)op,
                                   (unsigned)param);
        switch (field) {
        case 0: f->base = v, f->set |= EPN_FM_BASE; break;
        case 1: f->sx = v, f->set |= EPN_FM_SX; break;
        case 2: f->sy = v, f->set |= EPN_FM_SY; break;
        default: f->sc = v, f->set |= EPN_FM_SC; break;
        }
        return EP_OK;
    }
    if (param) {
        if (op >= EP_VNPU_SET_WEIGHT_BASE && op <= EP_VNPU_SET_DMA_LEN)
            return epn_fail(e, "word %u: opcode 0x%04x with parameter %u (reserved, 0)", word, (unsigned)op,
                            (unsigned)param);
    }
    switch (op) {
    case EP_VNPU_SET_WEIGHT_BASE: r->w_base = v, r->set |= EPN_W_BASE; return EP_OK;
    case EP_VNPU_SET_WEIGHT_LENGTH: r->w_len = v, r->set |= EPN_W_LEN; return EP_OK;
    case EP_VNPU_SET_SCALE_BASE: r->s_base = v, r->set |= EPN_S_BASE; return EP_OK;
    case EP_VNPU_SET_SCALE_LENGTH: r->s_len = v, r->set |= EPN_S_LEN; return EP_OK;
    case EP_VNPU_SET_LUT_BASE: r->lut_base = v, r->set |= EPN_LUT_BASE; return EP_OK;
    case EP_VNPU_SET_DMA_SRC: r->dma_src = v, r->set |= EPN_DMA_SRC; return EP_OK;
    case EP_VNPU_SET_DMA_DST: r->dma_dst = v, r->set |= EPN_DMA_DST; return EP_OK;
    case EP_VNPU_SET_DMA_LEN: r->dma_len = v, r->set |= EPN_DMA_LEN; return EP_OK;
    default: return epn_fail(e, "word %u: unknown opcode 0x%04x", word, (unsigned)op);
    }
}

/* ---------------- kick checks ---------------- */
static const char *op_name(uint32_t op) {
    static const char *const names[] = {"STOP", "CONV", "DWCONV", "MATMUL", "ELTWISE", "LUT", "DMA", "POOL"};
    return op < sizeof names / sizeof names[0] ? names[op] : "?";
}
static int writable(const epn_env *e, uint32_t region) {
    return region == EP_VNPU_REGION_WORK || region == EP_VNPU_REGION_SRAM ||
           (region >= EP_VNPU_REGION_IO + e->n_inputs && region < e->n_regions);
}
/* [base, base + len) inside the region (its index already checked at the register write) */
static int span_ok(epn_env *e, uint32_t region, uint64_t base, uint64_t len, uint32_t word, const char *op,
                   const char *what) {
    const uint64_t size = e->size[region];
    if (base > size || len > size - base)
        return epn_fail(e, "word %u (%s): %s [%llu, +%llu) past region %u's %llu bytes", word, op, what,
                        (unsigned long long)base, (unsigned long long)len, (unsigned)region, (unsigned long long)size);
    return EP_OK;
}
static int fm_ok(epn_env *e, const epn_fm *f, int which, int write, uint32_t word, const char *op) {
    static const char *const names[] = {"IFM", "IFM2", "OFM"};
    if ((f->set & EPN_FM_NEEDED) != EPN_FM_NEEDED)
        return epn_fail(e, "word %u (%s): %s registers not set (0x%02x of 0xff)", word, op, names[which],
                        (unsigned)(f->set & EPN_FM_NEEDED));
    if (write && !writable(e, f->region))
        return epn_fail(e, "word %u (%s): OFM in region %u, which is read-only", word, op, (unsigned)f->region);
    /* each term < 2^16 * 2^32: the extent cannot wrap */
    const uint64_t extent = (uint64_t)(f->h - 1u) * f->sy + (uint64_t)(f->w - 1u) * f->sx + (uint64_t)(f->c - 1u) * f->sc + 1u;
    const uint64_t elems = (uint64_t)f->h * f->w * f->c;
    if (elems > e->size[f->region])   /* bounds the work of a kick by the memory it addresses */
        return epn_fail(e, "word %u (%s): %s of %llu elements in region %u of %llu bytes", word, op, names[which],
                        (unsigned long long)elems, (unsigned)f->region, (unsigned long long)e->size[f->region]);
    return span_ok(e, f->region, f->base, extent, word, op, names[which]);
}
static int act_ok(epn_env *e, const epn_regs *r, uint32_t word, const char *op) {
    return r->act_min <= r->act_max ? EP_OK : epn_fail(e, "word %u (%s): activation min %d > max %d", word, op,
                                                        (int)r->act_min, (int)r->act_max);
}
/* the output extent of a window: (in + pads - dilated kernel) / stride + 1 */
static int window_ok(epn_env *e, uint32_t in, uint32_t out, uint32_t k, uint32_t s, uint32_t d, uint32_t p0, uint32_t p1,
                     uint32_t word, const char *op, const char *axis) {
    const uint64_t span = (uint64_t)in + p0 + p1, dk = (uint64_t)(k - 1u) * d + 1u;
    if (span < dk || (span - dk) / s + 1u != out)
        return epn_fail(e, "word %u (%s): %s: input %u, padding %u+%u, kernel %u dilation %u stride %u do not give %u",
                        word, op, axis, (unsigned)in, (unsigned)p0, (unsigned)p1, (unsigned)k, (unsigned)d, (unsigned)s,
                        (unsigned)out);
    return EP_OK;
}
/* Weights of n bytes, and OC requantisation records whose every accumulator (bias + K products of int8 codes,
 * each |x w| <= 2^14) stays in int32: |bias| <= 2^31 - 1 - K 2^14, m in [0, 2^31), s in [1, 62]. The records are
 * read where their memory is known: region 0 always, the others when executing. */
static int consts_ok(epn_env *e, const epn_regs *r, uint64_t n_w, uint64_t oc, uint64_t k, uint32_t word,
                     const char *op) {
    const uint32_t need = EPN_W_REGION | EPN_W_BASE | EPN_W_LEN | EPN_S_REGION | EPN_S_BASE | EPN_S_LEN;
    if ((r->set & need) != need)
        return epn_fail(e, "word %u (%s): weight or scale registers not set", word, op);
    if (k > EP_VNPU_MAX_REDUCTION)
        return epn_fail(e, "word %u (%s): %llu products per output, over %d", word, op, (unsigned long long)k,
                        EP_VNPU_MAX_REDUCTION);
    if (r->w_len != n_w) return epn_fail(e, "word %u (%s): weight length %u, the shapes need %llu", word, op,
                                         (unsigned)r->w_len, (unsigned long long)n_w);
    if (r->s_len != oc * EP_VNPU_SCALE_BYTES)
        return epn_fail(e, "word %u (%s): scale length %u, %llu channels need %llu", word, op, (unsigned)r->s_len,
                        (unsigned long long)oc, (unsigned long long)(oc * EP_VNPU_SCALE_BYTES));
    int rc = span_ok(e, r->w_region, r->w_base, r->w_len, word, op, "weights");
    if (rc || (rc = span_ok(e, r->s_region, r->s_base, r->s_len, word, op, "scales"))) return rc;
    const uint8_t *s = e->rd[r->s_region];
    if (!s) return EP_OK;
    s += r->s_base;
    const int64_t bmax = (int64_t)0x7FFFFFFF - (int64_t)k * (1 << 14);
    for (uint64_t c = 0; c < oc; c++, s += EP_VNPU_SCALE_BYTES) {
        const int64_t bias = epn_rds32(s);
        const int32_t m = epn_rds32(s + 4), sh = epn_rds32(s + 8);
        if (bias > bmax || bias < -bmax || m < 0 || sh < 1 || sh > 62)
            return epn_fail(e, "word %u (%s): channel %llu: bias %lld, m %d, s %d (|bias| <= %lld, m >= 0, s in 1..62)",
                            word, op, (unsigned long long)c, (long long)bias, (int)m, (int)sh, (long long)bmax);
    }
    return EP_OK;
}

static int check_conv(epn_env *e, const epn_regs *r, uint32_t opcode, uint32_t word) {
    const char *op = op_name(opcode);
    const epn_fm *x = &r->fm[EPN_IFM], *y = &r->fm[EPN_OFM];
    int rc;
    if ((rc = fm_ok(e, x, EPN_IFM, 0, word, op)) || (rc = fm_ok(e, y, EPN_OFM, 1, word, op)) ||
        (rc = act_ok(e, r, word, op)))
        return rc;
    if (opcode == EP_VNPU_OP_MATMUL) {
        if (x->h != y->h || x->w != y->w)
            return epn_fail(e, "word %u (%s): IFM %ux%u and OFM %ux%u pixels differ", word, op, (unsigned)x->h,
                            (unsigned)x->w, (unsigned)y->h, (unsigned)y->w);
        return consts_ok(e, r, (uint64_t)y->c * x->c, y->c, x->c, word, op);
    }
    if ((rc = window_ok(e, x->h, y->h, r->kh, r->ksy, r->kdy, r->pad[0], r->pad[2], word, op, "height")) ||
        (rc = window_ok(e, x->w, y->w, r->kw, r->ksx, r->kdx, r->pad[1], r->pad[3], word, op, "width")))
        return rc;
    const uint64_t taps = (uint64_t)r->kh * r->kw;
    if (opcode == EP_VNPU_OP_DWCONV) {
        if (x->c != y->c)
            return epn_fail(e, "word %u (%s): IFM %u and OFM %u channels differ", word, op, (unsigned)x->c,
                            (unsigned)y->c);
        return consts_ok(e, r, taps * y->c, y->c, taps, word, op);
    }
    return consts_ok(e, r, taps * x->c * y->c, y->c, taps * x->c, word, op);
}

/* Every window of an axis holds a tap inside the IFM: window o's taps are o s - p0 + k d for k < K, so only the
 * windows that start in the leading padding (o s < p0, at most 64 of them) can miss, and windows that start past
 * the IFM's end (the last one is enough to check). */
static int taps_ok(epn_env *e, uint32_t in, uint32_t out, uint32_t k, uint32_t s, uint32_t d, uint32_t p0,
                   uint32_t word, const char *axis) {
    for (uint64_t o = 0; o < out; o = o * s < p0 ? o + 1 : out - 1) {
        const int64_t start = (int64_t)(o * s) - (int64_t)p0;
        int hit = 0;
        for (uint64_t t = 0; t < k && !hit; t++) hit = start + (int64_t)(t * d) >= 0 && start + (int64_t)(t * d) < (int64_t)in;
        if (!hit)
            return epn_fail(e, "word %u (POOL): %s: window %llu has no tap inside the IFM", word, axis,
                            (unsigned long long)o);
        if (o == out - 1) break;
    }
    return EP_OK;
}

/* POOL (max): IFM and OFM of one depth, the window geometry of CONV, every window with a tap inside the IFM. */
static int check_pool(epn_env *e, const epn_regs *r, uint32_t param, uint32_t word) {
    const epn_fm *x = &r->fm[EPN_IFM], *y = &r->fm[EPN_OFM];
    int rc;
    if (param != EP_VNPU_POOL_MAX) return epn_fail(e, "word %u (POOL): function %u unknown (0: max)", word, (unsigned)param);
    if ((rc = fm_ok(e, x, EPN_IFM, 0, word, "POOL")) || (rc = fm_ok(e, y, EPN_OFM, 1, word, "POOL")) ||
        (rc = act_ok(e, r, word, "POOL")))
        return rc;
    if (x->c != y->c)
        return epn_fail(e, "word %u (POOL): IFM %u and OFM %u channels differ", word, (unsigned)x->c, (unsigned)y->c);
    if ((rc = window_ok(e, x->h, y->h, r->kh, r->ksy, r->kdy, r->pad[0], r->pad[2], word, "POOL", "height")) ||
        (rc = window_ok(e, x->w, y->w, r->kw, r->ksx, r->kdx, r->pad[1], r->pad[3], word, "POOL", "width")))
        return rc;
    if ((rc = taps_ok(e, x->h, y->h, r->kh, r->ksy, r->kdy, r->pad[0], word, "height")))
        return rc;
    return taps_ok(e, x->w, y->w, r->kw, r->ksx, r->kdx, r->pad[1], word, "width");
}

static int same_shape(epn_env *e, const epn_fm *a, const epn_fm *b, uint32_t word, const char *op) {
    if (a->h != b->h || a->w != b->w || a->c != b->c)
        return epn_fail(e, "word %u (%s): shapes %ux%ux%u and %ux%ux%u differ", word, op, (unsigned)a->h,
                        (unsigned)a->w, (unsigned)a->c, (unsigned)b->h, (unsigned)b->w, (unsigned)b->c);
    return EP_OK;
}

static int check_kick(epn_env *e, const epn_regs *r, uint32_t opcode, uint32_t param, uint32_t word) {
    const char *op = op_name(opcode);
    int rc;
    switch (opcode) {
    case EP_VNPU_OP_CONV:
    case EP_VNPU_OP_DWCONV:
    case EP_VNPU_OP_MATMUL:
        return param ? epn_fail(e, "word %u (%s): parameter %u (reserved, 0)", word, op, (unsigned)param)
                     : check_conv(e, r, opcode, word);
    case EP_VNPU_OP_ELTWISE: {
        if (param != EP_VNPU_ELTWISE_ADD) return epn_fail(e, "word %u (ELTWISE): function %u unknown", word, (unsigned)param);
        for (int k = 0; k < 3; k++)
            if ((rc = fm_ok(e, &r->fm[k], k, k == EPN_OFM, word, op))) return rc;
        if ((rc = same_shape(e, &r->fm[0], &r->fm[1], word, op)) || (rc = same_shape(e, &r->fm[0], &r->fm[2], word, op)) ||
            (rc = act_ok(e, r, word, op)))
            return rc;
        for (int k = 0; k < 3; k++) {
            const epn_fm *f = &r->fm[k];
            const int lo = k == EPN_OFM ? 1 : 31;   /* inputs: multipliers below 1 with 20 bits of headroom */
            if (!(f->set & EPN_FM_SCALE) || f->shift < lo || f->shift > 62)
                return epn_fail(e, "word %u (ELTWISE): feature map %d scale %s (shift %d, %d..62)", word, k,
                                f->set & EPN_FM_SCALE ? "out of range" : "not set", (int)f->shift, lo);
        }
        return EP_OK;
    }
    case EP_VNPU_OP_LUT:
        if (param) return epn_fail(e, "word %u (LUT): parameter %u (reserved, 0)", word, (unsigned)param);
        if ((rc = fm_ok(e, &r->fm[EPN_IFM], EPN_IFM, 0, word, op)) || (rc = fm_ok(e, &r->fm[EPN_OFM], EPN_OFM, 1, word, op)) ||
            (rc = same_shape(e, &r->fm[EPN_IFM], &r->fm[EPN_OFM], word, op)))
            return rc;
        if ((r->set & (EPN_LUT_REGION | EPN_LUT_BASE)) != (EPN_LUT_REGION | EPN_LUT_BASE))
            return epn_fail(e, "word %u (LUT): table registers not set", word);
        return span_ok(e, r->lut_region, r->lut_base, EP_VNPU_LUT_BYTES, word, op, "table");
    case EP_VNPU_OP_POOL: return check_pool(e, r, param, word);
    case EP_VNPU_OP_DMA: {
        const uint32_t need = EPN_DMA_SREG | EPN_DMA_DREG | EPN_DMA_SRC | EPN_DMA_DST | EPN_DMA_LEN;
        if (param) return epn_fail(e, "word %u (DMA): parameter %u (reserved, 0)", word, (unsigned)param);
        if ((r->set & need) != need)
            return epn_fail(e, "word %u (DMA): %s not set", word, r->set & EPN_DMA_LEN ? "source or destination" : "length");
        if (!writable(e, r->dma_dreg))
            return epn_fail(e, "word %u (DMA): destination region %u is read-only", word, (unsigned)r->dma_dreg);
        if ((rc = span_ok(e, r->dma_sreg, r->dma_src, r->dma_len, word, op, "source")))
            return rc;
        return span_ok(e, r->dma_dreg, r->dma_dst, r->dma_len, word, op, "destination");
    }
    default: return epn_fail(e, "word %u: unknown opcode 0x%04x", word, (unsigned)opcode);
    }
}

static void regs_reset(epn_regs *r) {
    memset(r, 0, sizeof *r);
    r->kh = r->kw = r->ksx = r->ksy = r->kdx = r->kdy = 1;
    r->act_min = -128, r->act_max = 127;
}

static void count(ep_vnpu_counters *c, const ep_vnpu_op_info *o);

int epn_run(epn_env *e) {
    epn_regs r;
    regs_reset(&r);
    const uint32_t words = e->h.cmd_words;
    e->n_ops = 0;
    memset(&e->cnt, 0, sizeof e->cnt);
    for (uint32_t i = 0; i < words;) {
        const uint32_t at = i, w = epn_rd32(e->cmd + 4u * i++), op = w & 0xFFFFu, param = w >> 16;
        int rc;
        if (op & EP_VNPU_CMD1) {
            if (i >= words) return epn_fail(e, "word %u: cmd1 0x%04x truncated (no payload word)", at, (unsigned)op);
            rc = set1(e, &r, op, param, epn_rd32(e->cmd + 4u * i++), at);
        } else if (op == EP_VNPU_OP_STOP) {
            if (param || i != words)
                return epn_fail(e, "word %u: STOP with parameter %u or before the stream's end (%u words)", at,
                                (unsigned)param, (unsigned)words);
            if (e->n_ops != e->h.n_ops)
                return epn_fail(e, "%u kicks, header says %u", (unsigned)e->n_ops, (unsigned)e->h.n_ops);
            return EP_OK;
        } else if (op < EP_VNPU_FM_IFM) {
            if ((rc = check_kick(e, &r, op, param, at))) return rc;
            ep_vnpu_op_info o;
            epn_model(e->cfg, &r, op, &o);
            count(&e->cnt, &o);
            if (e->trace && e->n_ops < e->trace_cap) e->trace[e->n_ops] = o;
            if (e->exec) epn_exec(e, &r, op);
            e->n_ops++;
        } else {
            rc = set0(e, &r, op, param, at);
        }
        if (rc) return rc;
    }
    return epn_fail(e, "missing STOP at the end of the %u-word stream", (unsigned)words);
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static void count(ep_vnpu_counters *c, const ep_vnpu_op_info *o) {
    c->active_cycles = sat_add(c->active_cycles, o->cycles);
    c->compute_cycles = sat_add(c->compute_cycles, o->compute_cycles);
    c->mac_ops = sat_add(c->mac_ops, o->mac_ops);
    c->sram_rd_bytes = sat_add(c->sram_rd_bytes, o->sram_rd_bytes);
    c->sram_wr_bytes = sat_add(c->sram_wr_bytes, o->sram_wr_bytes);
    c->ext_rd_bytes = sat_add(c->ext_rd_bytes, o->ext_rd_bytes);
    c->ext_wr_bytes = sat_add(c->ext_wr_bytes, o->ext_wr_bytes);
    c->ops++;
}
