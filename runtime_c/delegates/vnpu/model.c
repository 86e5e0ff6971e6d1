/* The vNPU's cycle model v0 (NPU.md section 6.4; docs/npu.md "Cycle model"): an analytical per-kick roofline,
 *   cycles = max(compute, SRAM bytes / SRAM bytes-per-cycle, external bytes / external bytes-per-cycle) + overhead
 * in integers only, so every host and board computes the same counts.
 *
 * Compute, with the MAC array as ub_h x ub_w OFM pixels x 8 OC x an 8-wide IC dot (64 MACs per pixel of the
 * micro-block) and P = ceil(OH / ub_h) ceil(OW / ub_w):
 *   CONV    max(mac, wdec, out): mac = P ceil(OC/8) min(ceil(IC/32) 4 KH KW, ceil(KH KW / 4) ceil(IC/8) 4)
 *           (depth-first 32-channel granules, or 4 taps x 8 channels), wdec = ceil(OH OW / 64) OC IC KH KW / 8
 *           (8 weights per cycle, re-sent per 64-pixel block), out = OH OW OC / (MACs / 64) (output stage)
 *   MATMUL  CONV with a 1 x 1 kernel over the rows (FC: one row, so weight-decoder bound: OC IC / 8)
 *   DWCONV  max(P ceil(C/8) ceil(KH KW / 4) 4, OH OW C / (MACs / 64))
 *   POOL    max(4 P ceil(C/8) KH KW, OH OW C / (MACs / 64)): one tap of one pixel's 8 channels per cycle at
 *           256 MACs (Vela's max and average pools: 3x3/s2 112x112x64 228,066 cycles at U55-256, 453,053 at -128;
 *           NPU.md 6.4's P ceil(C/8) KH KW is a quarter of that)
 *   ELTWISE, LUT  N 0.75 (256 / MACs) cycles
 *   DMA     0 (its bytes only)
 * Traffic (calibrated on Vela 5.2.0's per-layer SRAM traffic for MobileNetV2 and ResNet-50; docs/npu.md "Timing
 * model against Vela 5.2.0"):
 *   CONV, MATMUL  the IFM rows the kernel touches, rows = min(IH, OH min(EH, sy) + max(EH - sy, 0)) with EH the
 *           dilated kernel height (a 1x1/s2 kernel never reads the odd rows), once per OC pass of D channels:
 *           D = 64 when both strides are 1 and the whole OFM plane, rounded up to the micro-block, is one OFM block
 *           of 64 channels in the 16 MACs accumulators (ceil(OH/ub_h) ub_h ceil(OW/ub_w) ub_w 64 <= 16 MACs), else
 *           D = 32. The weights of a k x k kernel (KH KW > 1) are read once per 64-pixel OFM block,
 *           ceil(OH OW / 64) times (the blocks the weight decoder re-sends them to); 1 x 1 weights and the
 *           requantisation records once.
 *   DWCONV  the IFM once when the OFM plane is one block (OH OW <= MACs pixels) or the kernel is 1 x 1, else
 *           ceil(7/5 IFM): neighbouring blocks re-read their borders.
 *   POOL, ELTWISE, LUT, DMA  every operand once.
 *   The OFM is written once. Constants (weights, records, LUT) are read from their region's memory; constants in
 *   external memory are staged through the SRAM: read there once, written to the SRAM once, and read from it as
 *   often as the kick reads them. Region 2 is SRAM; region 0 lives where const_in_ext says, regions 1 and 3..
 *   where fmap_in_ext says.
 */
#include "vnpu_impl.h"

static uint64_t sat_mul(uint64_t a, uint64_t b) { return a && b > UINT64_MAX / a ? UINT64_MAX : a * b; }
static uint64_t max2(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* ceil(a * b / c) without overflow for b, c < 2^32 (saturated past 2^64) */
static uint64_t muldiv_ceil(uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t q = a / c, r = a % c;
    const uint64_t hi = sat_mul(q, b), lo = epn_ceil(r * b, c);
    return hi > UINT64_MAX - lo ? UINT64_MAX : hi + lo;
}

/* The micro-block of a MAC count: 64 MACs per pixel (8 OC x 8 IC). */
static void ublock(uint32_t macs, uint32_t *ub_h, uint32_t *ub_w) {
    switch (macs) {
    case 64: *ub_h = 1, *ub_w = 1; break;
    case 128: *ub_h = 1, *ub_w = 2; break;
    case 256: *ub_h = 2, *ub_w = 2; break;
    case 512: *ub_h = 2, *ub_w = 4; break;
    case 1024: *ub_h = 4, *ub_w = 4; break;
    default: *ub_h = 4, *ub_w = 8; break;   /* 2048 */
    }
}

const char *epn_config_error(const ep_vnpu_config *c) {
    if (!c || c->struct_size < sizeof(ep_vnpu_config)) return "config struct_size too small";
    const uint32_t m = c->macs_per_cycle;
    if (m != 64 && m != 128 && m != 256 && m != 512 && m != 1024 && m != 2048)
        return "macs_per_cycle must be 64, 128, 256, 512, 1024 or 2048";
    if (!c->clock_mhz || !c->sram_mbps || !c->ext_mbps) return "clock and bandwidths must be > 0";
    if (c->const_in_ext > 1 || c->fmap_in_ext > 1) return "const_in_ext and fmap_in_ext are 0 or 1";
    if (c->sram_bytes > UINT32_MAX) return "sram_bytes over 4 GiB";
    return NULL;
}

static int port_of(const ep_vnpu_config *c, uint32_t region) {
    if (region == EP_VNPU_REGION_CONST) return c->const_in_ext ? EP_VNPU_PORT_EXT : EP_VNPU_PORT_SRAM;
    if (region == EP_VNPU_REGION_SRAM) return EP_VNPU_PORT_SRAM;
    return c->fmap_in_ext ? EP_VNPU_PORT_EXT : EP_VNPU_PORT_SRAM;
}

typedef struct traffic {
    uint64_t rd[2], wr[2];
} traffic;

static void add_rd(traffic *t, int port, uint64_t n) { t->rd[port] = t->rd[port] > UINT64_MAX - n ? UINT64_MAX : t->rd[port] + n; }
static void add_wr(traffic *t, int port, uint64_t n) { t->wr[port] = t->wr[port] > UINT64_MAX - n ? UINT64_MAX : t->wr[port] + n; }

/* n bytes of constants (weights, records or a LUT) read `reads` times from their region; when that region is
 * external memory they are read there once and staged through the SRAM (written once, read `reads` times). */
static void consts(const ep_vnpu_config *c, traffic *t, uint32_t region, uint64_t n, uint64_t reads) {
    const int port = port_of(c, region);
    if (port == EP_VNPU_PORT_EXT && region == EP_VNPU_REGION_CONST) {
        add_rd(t, port, n);
        add_wr(t, EP_VNPU_PORT_SRAM, n);
        add_rd(t, EP_VNPU_PORT_SRAM, sat_mul(n, reads));
    } else {
        add_rd(t, port, sat_mul(n, reads));
    }
}

static uint64_t fm_bytes(const epn_fm *f) { return (uint64_t)f->h * f->w * f->c; }

static uint64_t conv_compute(uint32_t macs, uint64_t OH, uint64_t OW, uint64_t IC, uint64_t OC, uint64_t KH, uint64_t KW) {
    uint32_t ub_h, ub_w;
    ublock(macs, &ub_h, &ub_w);
    const uint64_t P = epn_ceil(OH, ub_h) * epn_ceil(OW, ub_w), taps = KH * KW;
    const uint64_t depth_first = epn_ceil(IC, 32) * 4 * taps, part_kernel = epn_ceil(taps, 4) * epn_ceil(IC, 8) * 4;
    const uint64_t mac = sat_mul(sat_mul(P, epn_ceil(OC, 8)), depth_first < part_kernel ? depth_first : part_kernel);
    const uint64_t wdec = epn_ceil(sat_mul(epn_ceil(OH * OW, 64), sat_mul(OC, IC * taps)), 8);
    const uint64_t out = epn_ceil(sat_mul(OH * OW, OC * 64), macs);
    return max2(mac, max2(wdec, out));
}

void epn_model(const ep_vnpu_config *c, const epn_regs *r, uint32_t opcode, ep_vnpu_op_info *o) {
    const epn_fm *x = &r->fm[EPN_IFM], *x2 = &r->fm[EPN_IFM2], *y = &r->fm[EPN_OFM];
    const uint32_t macs = c->macs_per_cycle;
    traffic t;
    memset(&t, 0, sizeof t);
    memset(o, 0, sizeof *o);
    o->opcode = opcode;
    uint64_t compute = 0;
    switch (opcode) {
    case EP_VNPU_OP_CONV:
    case EP_VNPU_OP_MATMUL: {
        const uint64_t kh = opcode == EP_VNPU_OP_CONV ? r->kh : 1, kw = opcode == EP_VNPU_OP_CONV ? r->kw : 1;
        compute = conv_compute(macs, y->h, y->w, x->c, y->c, kh, kw);
        o->mac_ops = sat_mul(fm_bytes(y), x->c * kh * kw);
        const uint64_t sy = opcode == EP_VNPU_OP_CONV ? r->ksy : 1, sx = opcode == EP_VNPU_OP_CONV ? r->ksx : 1;
        const uint64_t eh = (kh - 1) * (opcode == EP_VNPU_OP_CONV ? r->kdy : 1) + 1;
        const uint64_t touched = y->h * (eh < sy ? eh : sy) + (eh > sy ? eh - sy : 0);
        const uint64_t rows = touched < x->h ? touched : x->h;
        uint32_t ub_h, ub_w;
        ublock(macs, &ub_h, &ub_w);
        const uint64_t plane = epn_ceil(y->h, ub_h) * ub_h * epn_ceil(y->w, ub_w) * ub_w;
        const uint64_t depth = sy == 1 && sx == 1 && plane * 64 <= 16u * (uint64_t)macs ? 64 : 32;
        add_rd(&t, port_of(c, x->region), sat_mul(rows * x->w * x->c, epn_ceil(y->c, depth)));
        consts(c, &t, r->w_region, r->w_len, kh * kw > 1 ? epn_ceil((uint64_t)y->h * y->w, 64) : 1);
        consts(c, &t, r->s_region, r->s_len, 1);
        add_wr(&t, port_of(c, y->region), fm_bytes(y));
        break;
    }
    case EP_VNPU_OP_DWCONV: {
        uint32_t ub_h, ub_w;
        ublock(macs, &ub_h, &ub_w);
        const uint64_t P = epn_ceil(y->h, ub_h) * epn_ceil(y->w, ub_w), taps = (uint64_t)r->kh * r->kw;
        const uint64_t mac = sat_mul(P, epn_ceil(y->c, 8) * epn_ceil(taps, 4) * 4);
        compute = max2(mac, epn_ceil(sat_mul(fm_bytes(y), 64), macs));
        o->mac_ops = sat_mul(fm_bytes(y), taps);
        const int one_block = (uint64_t)y->h * y->w <= macs || taps == 1;
        add_rd(&t, port_of(c, x->region), one_block ? fm_bytes(x) : epn_ceil(fm_bytes(x) * 7, 5));
        consts(c, &t, r->w_region, r->w_len, 1);
        consts(c, &t, r->s_region, r->s_len, 1);
        add_wr(&t, port_of(c, y->region), fm_bytes(y));
        break;
    }
    case EP_VNPU_OP_POOL: {
        uint32_t ub_h, ub_w;
        ublock(macs, &ub_h, &ub_w);
        const uint64_t P = epn_ceil(y->h, ub_h) * epn_ceil(y->w, ub_w), taps = (uint64_t)r->kh * r->kw;
        compute = max2(sat_mul(P * 4, epn_ceil(y->c, 8) * taps), epn_ceil(sat_mul(fm_bytes(y), 64), macs));
        add_rd(&t, port_of(c, x->region), fm_bytes(x));
        add_wr(&t, port_of(c, y->region), fm_bytes(y));
        break;
    }
    case EP_VNPU_OP_ELTWISE:
    case EP_VNPU_OP_LUT:
        compute = epn_ceil(sat_mul(fm_bytes(y), 192), macs);   /* 0.75 cycles per element at 256 MACs */
        add_rd(&t, port_of(c, x->region), fm_bytes(x));
        if (opcode == EP_VNPU_OP_ELTWISE) add_rd(&t, port_of(c, x2->region), fm_bytes(x2));
        else consts(c, &t, r->lut_region, EP_VNPU_LUT_BYTES, 1);
        add_wr(&t, port_of(c, y->region), fm_bytes(y));
        break;
    case EP_VNPU_OP_DMA:
        add_rd(&t, port_of(c, r->dma_sreg), r->dma_len);
        add_wr(&t, port_of(c, r->dma_dreg), r->dma_len);
        break;
    default: break;
    }
    traffic sum;
    memset(&sum, 0, sizeof sum);
    add_rd(&sum, 0, t.rd[EP_VNPU_PORT_SRAM]), add_rd(&sum, 0, t.wr[EP_VNPU_PORT_SRAM]);
    add_rd(&sum, 1, t.rd[EP_VNPU_PORT_EXT]), add_rd(&sum, 1, t.wr[EP_VNPU_PORT_EXT]);
    const uint64_t sram = sum.rd[0], ext = sum.rd[1];
    const uint64_t sram_c = muldiv_ceil(sram, c->clock_mhz, c->sram_mbps), ext_c = muldiv_ceil(ext, c->clock_mhz, c->ext_mbps);
    const uint64_t bound = max2(compute, max2(sram_c, ext_c));
    o->limiter = bound == compute ? 0 : bound == sram_c ? 1 : 2;
    o->compute_cycles = compute;
    o->cycles = bound > UINT64_MAX - c->op_overhead ? UINT64_MAX : bound + c->op_overhead;
    o->sram_rd_bytes = t.rd[EP_VNPU_PORT_SRAM], o->sram_wr_bytes = t.wr[EP_VNPU_PORT_SRAM];
    o->ext_rd_bytes = t.rd[EP_VNPU_PORT_EXT], o->ext_wr_bytes = t.wr[EP_VNPU_PORT_EXT];
}
