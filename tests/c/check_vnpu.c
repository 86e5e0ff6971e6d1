/* The virtual NPU (delegates/vnpu) against the int8 reference kernels, its blob validator, and its cycle model's
 * accounting (docs/npu.md; NPU.md section 7.5-7.7).
 *
 *   check_vnpu [CASES [FUZZ [SEED]]]     defaults 1100 cases, 10000 mutations, seed 20261205
 *
 * 1. Functional: seeded single-op cases (QCONV2D with IC/OC 1..67, kernels 1..5, strides 1..3, dilations 1..3,
 *    asymmetric padding, groups; depthwise; QGEMM as FC; QADD; QLUT; zero multipliers, s up to 62, narrow and
 *    Relu clamps), each encoded by vnpu_enc.h, run through the delegate's init and execute on guarded buffers,
 *    and compared byte for byte with the reference kernel's output (exact: the vNPU's arithmetic is integer and
 *    must equal the reference bit for bit). Some cases route the OFM through working memory or the modelled SRAM
 *    and DMA it to the output. Every case also checks the cycle model's invariants: cycles >= compute + overhead,
 *    compute >= MACs / MACs-per-cycle, cycles - overhead >= each port's bytes / its bytes-per-cycle, the PMU byte
 *    counters equal the traffic the stream implies, the estimator's totals equal execute's, and a second execute
 *    gives identical counters.
 * 2. The malformed blobs of NPU.md 7.7 (and more), each refused by init with EP_ERR_DELEGATE_BLOB and a reason that
 *    names the defect.
 * 3. Mutation fuzz of valid blobs (most re-sealed with a fresh CRC so they reach the stream checks): init refuses
 *    with a reason or accepts; accepted blobs execute without writing outside the outputs and working memory
 *    (guard bytes) or changing the inputs; run under ASan/UBSan in the sanitizer build. */
#include "ep_check.h"
#include "vnpu_enc.h"

static ep_vnpu_device dev;
static vn_blob B;
static const uint64_t OVH = 300;

/* ---------------- a partition over guarded buffers ---------------- */
typedef struct vn_part {
    ep_delegate_partition p;
    ep_delegate_tensor io[2 * EP_DELEGATE_MAX_IO];
    _Alignas(16) uint8_t ctx[EP_DELEGATE_CTX_BYTES];
    char why[256];
} vn_part;

static void dt_of(ep_delegate_tensor *d, const ep_tensor *t) {
    memset(d, 0, sizeof *d);
    d->data = t->data, d->nbytes = t->nbytes, d->dtype = t->dtype, d->rank = t->rank;
    for (int k = 0; k < t->rank; k++) d->dims[k] = t->dims[k];
}
static void part_make(vn_part *v, const uint8_t *blob, uint32_t size, ep_tensor *const *in, int n_in,
                      ep_tensor *const *out, int n_out, void *work, uint64_t work_size) {
    memset(v, 0, sizeof *v);
    for (int k = 0; k < n_in; k++) dt_of(&v->io[k], in[k]);
    for (int k = 0; k < n_out; k++) dt_of(&v->io[n_in + k], out[k]);
    ep_delegate_partition *p = &v->p;
    p->struct_size = sizeof *p, p->kind = EP_DELEGATE_KIND_VNPU;
    p->blob = blob, p->blob_size = size, p->work = work, p->work_size = work_size, p->ctx = v->ctx;
    p->inputs = v->io, p->outputs = v->io + n_in, p->n_inputs = (uint32_t)n_in, p->n_outputs = (uint32_t)n_out;
}
static int32_t part_init(vn_part *v) {
    return dev.delegate.init(dev.delegate.user, &v->p, v->why, (uint32_t)sizeof v->why);
}

/* ---------------- random operands ---------------- */
static int8_t *rnd_i8(size_t n, int lo, int hi) {
    int8_t *d = (int8_t *)chk_alloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) d[i] = (int8_t)chk_int(lo, hi);
    return d;
}
/* one channel's (m, s): mostly below 0.5, some >= 0.5, m = 0, ties (powers of two), anything up to s = 62 */
static void rnd_mult(int32_t *m, int32_t *s) {
    const int r = chk_int(0, 99);
    if (r < 60) *m = (int32_t)((1u << 30) + (chk_rnd() & ((1u << 30) - 1))), *s = chk_int(32, 46);
    else if (r < 72) *m = (int32_t)((1u << 30) + (chk_rnd() & ((1u << 30) - 1))), *s = chk_int(1, 31);
    else if (r < 80) *m = 0, *s = chk_int(1, 62);
    else if (r < 90) *m = 1 << 30, *s = chk_int(31, 40);
    else *m = (int32_t)(chk_rnd() & 0x7FFFFFFFu), *s = chk_int(32, 62);
}
static void rnd_clamp(int32_t *zp, int32_t *lo, int32_t *hi) {
    *zp = chk_int(-128, 127);
    const int r = chk_int(0, 3);
    if (r == 0) *lo = -128, *hi = 127;
    else if (r == 1) *lo = *zp, *hi = 127;
    else if (r == 2) {   /* narrow: 1 to 4 codes */
        const int w = chk_int(0, 3);
        *lo = chk_int(-128, 127);
        *hi = *lo + w > 127 ? 127 : *lo + w;
    }
    else *lo = chk_int(-128, 0), *hi = chk_int(0, 127);
    if (*hi < *lo) *hi = *lo;
}
static int32_t rnd_bias(void) {
    const int k = chk_int(0, 3);
    return k == 0 ? 0 : k == 1 ? chk_int(-1000, 1000) : chk_int(-(1 << 28), 1 << 28);
}
/* the reference's bias [C] and Q [2, C] tensors, and the vNPU's records of channels c0 .. c0 + n */
static void requant_tables(int C, ep_tensor *bias, ep_tensor *q) {
    *bias = chk_mk(NULL, EP_DTYPE_I32, 1, CHK_DIMS(C));
    *q = chk_mk(NULL, EP_DTYPE_I32, 2, CHK_DIMS(2, C));
    bias->data = chk_alloc((size_t)C * 4), q->data = chk_alloc((size_t)C * 8);
    int32_t *b = (int32_t *)bias->data, *qq = (int32_t *)q->data;
    const int global = chk_int(0, 3) == 0;
    int32_t m0, s0;
    rnd_mult(&m0, &s0);
    for (int c = 0; c < C; c++) {
        b[c] = rnd_bias();
        if (global) qq[c] = m0, qq[C + c] = s0;
        else rnd_mult(&qq[c], &qq[C + c]);
    }
}
static uint32_t records(vn_blob *b, const ep_tensor *bias, const ep_tensor *q, int C, int c0, int n) {
    uint8_t *rec = (uint8_t *)malloc((size_t)n * EP_VNPU_SCALE_BYTES + 1);
    const int32_t *bb = (const int32_t *)bias->data, *qq = (const int32_t *)q->data;
    for (int k = 0; k < n; k++) {
        vn_wr32(rec + k * 12, (uint32_t)bb[c0 + k]);
        vn_wr32(rec + k * 12 + 4, (uint32_t)qq[c0 + k]);
        vn_wr32(rec + k * 12 + 8, (uint32_t)qq[C + c0 + k]);
    }
    const uint32_t at = vn_const(b, rec, (uint32_t)n * EP_VNPU_SCALE_BYTES);
    free(rec);
    return at;
}

/* ---------------- running one case ---------------- */
static uint64_t n_cases, n_bytes;
/* Where the OFM goes: 0 the output tensor; 1 working memory, 2 the modelled SRAM, each then DMA'd to the output. */
typedef struct route {
    int mode;
    uint32_t region, bytes;
} route;
static route route_pick(vn_blob *b, uint32_t out_bytes) {
    route r = {chk_int(0, 5) < 4 ? 0 : chk_int(1, 2), 0, out_bytes};
    r.region = r.mode == 0 ? vn_region_out(b, 0) : r.mode == 1 ? EP_VNPU_REGION_WORK : EP_VNPU_REGION_SRAM;
    if (r.mode == 1) b->work_bytes = out_bytes;
    if (r.mode == 2) b->sram_used = out_bytes;
    return r;
}
static void route_finish(vn_blob *b, const route *r) {
    if (r->mode == 0) return;
    vn_cmd0(b, EP_VNPU_SET_DMA_SRC_REGION, r->region);
    vn_cmd1(b, EP_VNPU_SET_DMA_SRC, 0, 0);
    vn_cmd0(b, EP_VNPU_SET_DMA_DST_REGION, vn_region_out(b, 0));
    vn_cmd1(b, EP_VNPU_SET_DMA_DST, 0, 0);
    vn_cmd1(b, EP_VNPU_SET_DMA_LEN, 0, r->bytes);
    vn_cmd0(b, EP_VNPU_OP_DMA, 0);
}

/* The cycle model's invariants on the last execute (all ports SRAM in the u55-256-sram preset). */
static void model_checks(const char *what, uint64_t macs, uint64_t rd, uint64_t wr, const uint8_t *blob, uint32_t size) {
    const ep_vnpu_config *c = &dev.cfg;
    uint64_t sum = 0;
    for (uint32_t k = 0; k < dev.n_trace; k++) {
        const ep_vnpu_op_info *o = &dev.trace[k];
        const uint64_t bound = o->cycles - OVH;
        sum += o->cycles;
        CHECK(o->cycles >= o->compute_cycles + OVH && o->compute_cycles * c->macs_per_cycle >= o->mac_ops &&
                  bound * c->sram_mbps >= (o->sram_rd_bytes + o->sram_wr_bytes) * c->clock_mhz &&
                  bound * c->ext_mbps >= (o->ext_rd_bytes + o->ext_wr_bytes) * c->clock_mhz,
              "%s: op %u roofline: cycles %llu compute %llu macs %llu sram %llu", what, k,
              (unsigned long long)o->cycles, (unsigned long long)o->compute_cycles, (unsigned long long)o->mac_ops,
              (unsigned long long)(o->sram_rd_bytes + o->sram_wr_bytes));
    }
    const ep_vnpu_counters *l = &dev.last;
    CHECK(l->ops == dev.n_trace && l->active_cycles == sum && l->executes == 1, "%s: counters vs trace", what);
    CHECK(l->mac_ops == macs, "%s: MACs %llu, expected %llu", what, (unsigned long long)l->mac_ops,
          (unsigned long long)macs);
    CHECK(l->sram_rd_bytes == rd && l->sram_wr_bytes == wr && l->ext_rd_bytes == 0 && l->ext_wr_bytes == 0,
          "%s: traffic rd %llu wr %llu, the stream implies %llu %llu", what, (unsigned long long)l->sram_rd_bytes,
          (unsigned long long)l->sram_wr_bytes, (unsigned long long)rd, (unsigned long long)wr);
    ep_vnpu_counters est;
    uint32_t n_ops = 0;
    char why[200] = "";
    const ep_status rc = ep_vnpu_estimate(blob, size, c, NULL, 0, &n_ops, &est, why, sizeof why);
    CHECK(rc == EP_OK && n_ops == l->ops && est.active_cycles == l->active_cycles && est.mac_ops == l->mac_ops &&
              est.sram_rd_bytes == l->sram_rd_bytes,
          "%s: estimator %d (%s) vs execute", what, (int)rc, why);
}

/* The SRAM reads docs/npu.md's traffic rule gives one CONV / MATMUL kick on the 256-MAC preset (2x2 micro-block,
 * 16 x 256 accumulators): the IFM rows the kernel touches once per OC pass (64 channels when both strides are 1
 * and the OFM plane fills at most one 64-channel block, else 32), k x k weights once per 64-pixel OFM block,
 * 1 x 1 weights and the records once. */
static uint64_t conv_reads(int H, int W, int IC, int OH, int OW, int OC, int KH, int KW, int sy, int sx, int dy) {
    const uint64_t eh = (uint64_t)(KH - 1) * dy + 1, s = (uint64_t)sy;
    uint64_t rows = (uint64_t)OH * (eh < s ? eh : s) + (eh > s ? eh - s : 0);
    if (rows > (uint64_t)H) rows = (uint64_t)H;
    const uint64_t plane = (uint64_t)(OH + 1) / 2 * 2 * ((uint64_t)(OW + 1) / 2 * 2);
    const uint64_t depth = sy == 1 && sx == 1 && plane * 64 <= 16 * 256 ? 64 : 32;
    const uint64_t wreads = KH * KW > 1 ? ((uint64_t)OH * OW + 63) / 64 : 1;
    return rows * W * IC * ((OC + depth - 1) / depth) + (uint64_t)OC * IC * KH * KW * wreads +
           (uint64_t)OC * EP_VNPU_SCALE_BYTES;
}
/* A depthwise kick's: the IFM once when the OFM plane is one block (<= 256 pixels) or the kernel 1 x 1, else
 * ceil(1.4 IFM) (block borders re-read); weights and records once. */
static uint64_t dw_reads(int H, int W, int C, int OH, int OW, int KH, int KW) {
    const uint64_t ifm = (uint64_t)C * H * W;
    return ((uint64_t)OH * OW <= 256 || KH * KW == 1 ? ifm : (ifm * 7 + 4) / 5) + (uint64_t)C * KH * KW +
           (uint64_t)C * EP_VNPU_SCALE_BYTES;
}

/* Runs blob on inputs into got (outputs), compares with want, and checks the model. */
static void run_case(const char *what, vn_blob *b, ep_tensor *const *in, int n_in, ep_tensor *got, const ep_tensor *want,
                     uint64_t macs, uint64_t rd, uint64_t wr) {
    uint32_t size;
    uint8_t *blob = vn_finish(b, &size);
    const uint64_t work_size = vn_align64(b->work_bytes) + b->sram_used;
    uint8_t *work = (uint8_t *)chk_alloc(work_size ? work_size : 1);
    ep_tensor *outs[1] = {got};
    vn_part v;
    part_make(&v, blob, size, in, n_in, outs, 1, work, work_size);
    int32_t rc = part_init(&v);
    CHECK(rc == EP_OK, "%s: init refused: %s", what, v.why);
    if (rc == EP_OK) {
        rc = dev.delegate.execute(dev.delegate.user, &v.p);
        CHECK(rc == EP_OK, "%s: execute failed", what);
        size_t bad = SIZE_MAX;
        for (size_t i = 0; i < want->nbytes && bad == SIZE_MAX; i++)
            if (((const int8_t *)got->data)[i] != ((const int8_t *)want->data)[i]) bad = i;
        CHECK(bad == SIZE_MAX, "%s: byte %zu: vNPU %d, reference %d", what, bad,
              bad == SIZE_MAX ? 0 : ((const int8_t *)got->data)[bad], bad == SIZE_MAX ? 0 : ((const int8_t *)want->data)[bad]);
        CHECK(!chk_guard(got->data) && !chk_guard(work), "%s: a write outside the output or the working memory", what);
        const ep_vnpu_counters first = dev.last;
        model_checks(what, macs, rd, wr, blob, size);
        CHECK(dev.delegate.execute(dev.delegate.user, &v.p) == EP_OK && !memcmp(&first, &dev.last, sizeof first),
              "%s: a second execute differs", what);
        dev.delegate.destroy(dev.delegate.user, &v.p);
    }
    n_cases++, n_bytes += want->nbytes;
    chk_free(work);
    free(blob);
}

/* ---------------- QCONV2D (groups, depthwise) ---------------- */
static int window(int in, int k, int s, int d, int *p0, int *p1, int pmax) {
    const int dk = (k - 1) * d + 1;
    *p0 = chk_int(0, pmax < dk - 1 ? pmax : dk - 1), *p1 = chk_int(0, pmax < dk - 1 ? pmax : dk - 1);
    if (in + *p0 + *p1 < dk) *p1 = dk - in - *p0;
    return (in + *p0 + *p1 - dk) / s + 1;
}
/* kind 0 dense (groups 1), 1 grouped, 2 depthwise */
static void conv_case(int iter, int kind) {
    ep_qconv2d_params p;
    memset(&p, 0, sizeof p);
    static const int ks[] = {1, 1, 3, 3, 3, 2, 5, 4};
    const int KH = ks[chk_int(0, 7)], KW = chk_int(0, 3) ? KH : ks[chk_int(0, 7)];
    int G = 1, CG, MG;
    if (kind == 2) CG = 1, MG = 1, G = chk_int(1, 67);
    else if (kind == 1) G = chk_int(2, 4), CG = chk_int(1, 12), MG = chk_int(1, 12);
    else CG = iter % 5 == 0 ? chk_int(33, 67) : chk_int(1, 40), MG = iter % 7 == 0 ? chk_int(33, 67) : chk_int(1, 40);
    /* every third depthwise case on a plane past 256 OFM pixels at stride 1 (the model's border re-reads) */
    const int big = kind == 2 && iter % 3 == 0;
    const int C = G * CG, M = G * MG, N = kind == 2 ? 1 : chk_int(1, 2), H = big ? chk_int(17, 24) : chk_int(1, 11),
              W = big ? chk_int(17, 24) : chk_int(1, 11);
    p.kernel[0] = KH, p.kernel[1] = KW, p.stride[0] = chk_int(1, 3), p.stride[1] = chk_int(1, 3);
    if (big && chk_int(0, 1)) p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = chk_int(0, 3) ? 1 : chk_int(2, 3), p.dilation[1] = chk_int(0, 3) ? 1 : chk_int(2, 3);
    const int OH = window(H, KH, p.stride[0], p.dilation[0], &p.pads[0], &p.pads[2], 4);
    const int OW = window(W, KW, p.stride[1], p.dilation[1], &p.pads[1], &p.pads[3], 4);
    p.groups = G, p.x_zero = chk_int(-128, 127);
    rnd_clamp(&p.y_zero, &p.y_min, &p.y_max);
    ep_tensor x = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(N, C, H, W)), w = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(M, CG, KH, KW));
    ep_tensor y = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(N, M, OH, OW)), got = y, bias, q;
    x.data = rnd_i8(x.nbytes, -128, 127), w.data = rnd_i8(w.nbytes, -127, 127);
    y.data = chk_alloc(y.nbytes), got.data = chk_alloc(y.nbytes);
    requant_tables(M, &bias, &q);
    ep_tensor *ins[4] = {&x, &w, &bias, &q}, *outs[1] = {&y};
    ep_op op = chk_op(EP_OP_QCONV2D, &p, ins, 4, outs, 1);
    ep_ref_qconv2d_i8(&op);

    vn_init(&B, 256);
    vn_io(&B, 0, 4, x.dims), vn_io(&B, 1, 4, y.dims);
    const route r = route_pick(&B, (uint32_t)y.nbytes);
    const int8_t *wd = (const int8_t *)w.data;
    int8_t *wg = (int8_t *)malloc((size_t)MG * CG * KH * KW);
    uint64_t rd = 0, wr = 0, macs = 0;
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_HEIGHT_M1, (uint32_t)KH - 1);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_WIDTH_M1, (uint32_t)KW - 1);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_STRIDE, (uint32_t)p.stride[1] | (uint32_t)p.stride[0] << 8);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_DILATION, (uint32_t)p.dilation[1] | (uint32_t)p.dilation[0] << 8);
    for (int k = 0; k < 4; k++) vn_cmd0(&B, EP_VNPU_SET_PAD_TOP + (uint32_t)k, (uint32_t)p.pads[k]);   /* t, l, b, r */
    vn_cmd0(&B, EP_VNPU_SET_ACT_MIN, (uint32_t)(uint16_t)(int16_t)p.y_min);
    vn_cmd0(&B, EP_VNPU_SET_ACT_MAX, (uint32_t)(uint16_t)(int16_t)p.y_max);
    const int kicks_per_image = kind == 2 ? 1 : G;
    for (int g = 0; g < kicks_per_image; g++) {
        const int c0 = kind == 2 ? 0 : g * CG, m0 = kind == 2 ? 0 : g * MG, mg = kind == 2 ? M : MG;
        const int cg = kind == 2 ? C : CG;
        /* weights of the group as [OC][KH][KW][IC] (depthwise: [C][KH][KW]) */
        const size_t wlen = kind == 2 ? (size_t)C * KH * KW : (size_t)MG * CG * KH * KW;
        int8_t *wb = kind == 2 ? (int8_t *)malloc(wlen) : wg;
        for (int m = 0; m < mg; m++)
            for (int c = 0; c < (kind == 2 ? 1 : CG); c++)
                for (int kh = 0; kh < KH; kh++)
                    for (int kw = 0; kw < KW; kw++)
                        wb[(((size_t)m * KH + kh) * KW + kw) * (kind == 2 ? 1 : CG) + c] =
                            wd[(((size_t)(m0 + m) * CG + c) * KH + kh) * KW + kw];
        const uint32_t woff = vn_const(&B, wb, (uint32_t)wlen), soff = records(&B, &bias, &q, M, m0, mg);
        if (kind == 2) free(wb);
        vn_consts(&B, woff, (uint32_t)wlen, soff, (uint32_t)mg * EP_VNPU_SCALE_BYTES);
        for (int n = 0; n < N; n++) {
            vn_fm_nchw(&B, EP_VNPU_FM_IFM, vn_region_in(0), (uint32_t)(((size_t)n * C + c0) * H * W), (uint32_t)H,
                       (uint32_t)W, (uint32_t)cg, p.x_zero);
            vn_fm_nchw(&B, EP_VNPU_FM_OFM, r.region, (uint32_t)(((size_t)n * M + m0) * OH * OW), (uint32_t)OH,
                       (uint32_t)OW, (uint32_t)mg, p.y_zero);
            vn_cmd0(&B, kind == 2 ? EP_VNPU_OP_DWCONV : EP_VNPU_OP_CONV, 0);
            const uint64_t ofm = (uint64_t)mg * OH * OW;
            rd += kind == 2 ? dw_reads(H, W, C, OH, OW, KH, KW)
                            : conv_reads(H, W, cg, OH, OW, mg, KH, KW, p.stride[0], p.stride[1], p.dilation[0]);
            wr += ofm;
            macs += ofm * (uint64_t)(kind == 2 ? 1 : CG) * KH * KW;
        }
    }
    free(wg);
    route_finish(&B, &r);
    if (r.mode) rd += r.bytes, wr += r.bytes;
    vn_cmd0(&B, EP_VNPU_OP_STOP, 0);
    char what[220];
    snprintf(what, sizeof what, "%s N%d C%d H%d W%d M%d G%d k%dx%d s%d,%d d%d,%d pads %d,%d,%d,%d xzp%d yzp%d "
             "clamp[%d,%d] route%d (iter %d)", kind == 2 ? "dwconv" : "conv", N, C, H, W, M, G, KH, KW, p.stride[0],
             p.stride[1], p.dilation[0], p.dilation[1], p.pads[0], p.pads[1], p.pads[2], p.pads[3], p.x_zero,
             p.y_zero, p.y_min, p.y_max, r.mode, iter);
    ep_tensor *vin[1] = {&x};
    run_case(what, &B, vin, 1, &got, &y, macs, rd, wr);
    chk_free(x.data), chk_free(w.data), chk_free(y.data), chk_free(got.data), chk_free(bias.data), chk_free(q.data);
}

/* ---------------- QGEMM as MATMUL (FC) ---------------- */
static void fc_case(int iter) {
    ep_qgemm_params p;
    memset(&p, 0, sizeof p);
    const int M = chk_int(1, 5), K = iter % 4 == 0 ? chk_int(100, 300) : chk_int(1, 67), N = chk_int(1, 67);
    rnd_clamp(&p.y_zero, &p.y_min, &p.y_max);
    ep_tensor a = chk_mk(NULL, EP_DTYPE_I8, 2, CHK_DIMS(M, K)), b = chk_mk(NULL, EP_DTYPE_I8, 2, CHK_DIMS(K, N));
    ep_tensor y = chk_mk(NULL, EP_DTYPE_I8, 2, CHK_DIMS(M, N)), got = y, bias, q;
    a.data = rnd_i8(a.nbytes, -128, 127), b.data = rnd_i8(b.nbytes, -127, 127);
    y.data = chk_alloc(y.nbytes), got.data = chk_alloc(y.nbytes);
    requant_tables(N, &bias, &q);
    ep_tensor *ins[4] = {&a, &b, &bias, &q}, *outs[1] = {&y};
    ep_op op = chk_op(EP_OP_QGEMM, &p, ins, 4, outs, 1);
    ep_ref_qgemm_i8(&op);

    vn_init(&B, 256);
    vn_io(&B, 0, 2, a.dims), vn_io(&B, 1, 2, y.dims);
    const route r = route_pick(&B, (uint32_t)y.nbytes);
    int8_t *wt = (int8_t *)malloc((size_t)N * K);   /* [N][K] */
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) wt[(size_t)n * K + k] = ((const int8_t *)b.data)[(size_t)k * N + n];
    const uint32_t woff = vn_const(&B, wt, (uint32_t)(N * K)), soff = records(&B, &bias, &q, N, 0, N);
    free(wt);
    vn_consts(&B, woff, (uint32_t)(N * K), soff, (uint32_t)N * EP_VNPU_SCALE_BYTES);
    /* rows as pixels: IFM H = M, W = 1, C = K at stride 1; OFM likewise with C = N */
    vn_fm(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, (uint32_t)M, 1, (uint32_t)K, (uint32_t)K, (uint32_t)K, 1, 0);
    vn_fm(&B, EP_VNPU_FM_OFM, r.region, 0, (uint32_t)M, 1, (uint32_t)N, (uint32_t)N, (uint32_t)N, 1, p.y_zero);
    vn_cmd0(&B, EP_VNPU_SET_ACT_MIN, (uint32_t)(uint16_t)(int16_t)p.y_min);
    vn_cmd0(&B, EP_VNPU_SET_ACT_MAX, (uint32_t)(uint16_t)(int16_t)p.y_max);
    vn_cmd0(&B, EP_VNPU_OP_MATMUL, 0);
    route_finish(&B, &r);
    vn_cmd0(&B, EP_VNPU_OP_STOP, 0);
    uint64_t rd = conv_reads(M, 1, K, M, 1, N, 1, 1, 1, 1, 1), wr = (uint64_t)M * N;
    if (r.mode) rd += r.bytes, wr += r.bytes;
    char what[160];
    snprintf(what, sizeof what, "fc M%d K%d N%d yzp%d clamp[%d,%d] route%d (iter %d)", M, K, N, p.y_zero, p.y_min,
             p.y_max, r.mode, iter);
    ep_tensor *vin[1] = {&a};
    run_case(what, &B, vin, 1, &got, &y, (uint64_t)M * N * K, rd, wr);
    chk_free(a.data), chk_free(b.data), chk_free(y.data), chk_free(got.data), chk_free(bias.data), chk_free(q.data);
}

/* ---------------- QADD and QLUT ---------------- */
/* n = h w c with each factor <= 65536 (contiguous, channel-fastest): c the largest divisor <= 4096, then w the
 * largest divisor of the rest <= 4096 (every n the generator draws has one) */
static uint32_t divisor_below(uint32_t n, uint32_t cap) {
    for (uint32_t d = n < cap ? n : cap; d > 1; d--)
        if (n % d == 0) return d;
    return 1;
}
static void factor(uint32_t n, uint32_t *h, uint32_t *w, uint32_t *c) {
    *c = divisor_below(n, 4096);
    *w = divisor_below(n / *c, 4096);
    *h = n / *c / *w;
}
static void elem_case(int iter, int lut) {
    /* sometimes past 65536 elements: a product, so that the H x W x C factorisation exists */
    const uint32_t n = iter == 0 ? 65536u : iter % 9 == 0 ? (uint32_t)(chk_int(70, 280) * chk_int(250, 300))
                                                          : (uint32_t)chk_int(1, 3000);
    ep_qadd_params p;
    memset(&p, 0, sizeof p);
    p.a_zero = chk_int(-128, 127), p.b_zero = chk_int(-128, 127);
    rnd_clamp(&p.y_zero, &p.y_min, &p.y_max);
    p.a_shift = chk_int(31, 40), p.b_shift = chk_int(0, 4) ? chk_int(31, 40) : chk_int(31, 62);
    p.a_mult = chk_int(0, 9) ? (int32_t)(chk_rnd() & 0x7FFFFFFFu) : chk_int(0, 1) ? 0 : 0x7FFFFFFF;
    p.b_mult = chk_int(0, 9) ? (int32_t)(chk_rnd() & 0x7FFFFFFFu) : 1 << chk_int(0, 30);
    p.y_mult = chk_int(0, 19) ? (int32_t)((1u << 30) + (chk_rnd() & ((1u << 30) - 1))) : 0;
    p.y_shift = chk_int(0, 4) ? chk_int(32, 52) : chk_int(1, 62);
    ep_tensor a = chk_mk(NULL, EP_DTYPE_I8, 1, CHK_DIMS((int32_t)n)), b = a, t = chk_mk(NULL, EP_DTYPE_I8, 1, CHK_DIMS(256));
    ep_tensor y = a, got = a;
    a.data = rnd_i8(n, -128, 127), b.data = rnd_i8(n, -128, 127), t.data = rnd_i8(256, -128, 127);
    if (iter == 0)
        for (uint32_t i = 0; i < n; i++) ((int8_t *)a.data)[i] = (int8_t)(i / 256 - 128), ((int8_t *)b.data)[i] = (int8_t)(i % 256 - 128);
    y.data = chk_alloc(n), got.data = chk_alloc(n);
    ep_axis_params ap = {0, 0};
    ep_tensor *ins[2] = {&a, lut ? &t : &b}, *outs[1] = {&y};
    ep_op op = chk_op(lut ? EP_OP_QLUT : EP_OP_QADD, lut ? (const void *)&ap : (const void *)&p, ins, 2, outs, 1);
    if (lut) ep_ref_qlut_i8(&op);
    else ep_ref_qadd_i8(&op);

    vn_init(&B, 256);
    vn_io(&B, 0, 1, a.dims);
    if (!lut) vn_io(&B, 0, 1, b.dims);
    vn_io(&B, 1, 1, y.dims);
    const route r = route_pick(&B, n);
    uint32_t h, w, c;
    factor(n, &h, &w, &c);
    vn_fm(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, h, w, c, c, w * c, 1, p.a_zero);
    vn_fm(&B, EP_VNPU_FM_OFM, r.region, 0, h, w, c, c, w * c, 1, p.y_zero);
    vn_cmd0(&B, EP_VNPU_SET_ACT_MIN, (uint32_t)(uint16_t)(int16_t)p.y_min);
    vn_cmd0(&B, EP_VNPU_SET_ACT_MAX, (uint32_t)(uint16_t)(int16_t)p.y_max);
    if (lut) {
        vn_cmd0(&B, EP_VNPU_SET_LUT_REGION, 0);
        vn_cmd1(&B, EP_VNPU_SET_LUT_BASE, 0, vn_const(&B, t.data, 256));
        vn_cmd0(&B, EP_VNPU_OP_LUT, 0);
    } else {
        vn_fm(&B, EP_VNPU_FM_IFM2, vn_region_in(1), 0, h, w, c, c, w * c, 1, p.b_zero);
        vn_cmd1(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_SCALE, (uint32_t)p.a_shift, (uint32_t)p.a_mult);
        vn_cmd1(&B, EP_VNPU_FM_IFM2 + EP_VNPU_FM_SCALE, (uint32_t)p.b_shift, (uint32_t)p.b_mult);
        vn_cmd1(&B, EP_VNPU_FM_OFM + EP_VNPU_FM_SCALE, (uint32_t)p.y_shift, (uint32_t)p.y_mult);
        vn_cmd0(&B, EP_VNPU_OP_ELTWISE, EP_VNPU_ELTWISE_ADD);
    }
    route_finish(&B, &r);
    vn_cmd0(&B, EP_VNPU_OP_STOP, 0);
    uint64_t rd = lut ? (uint64_t)n + 256 : 2ull * n, wr = n;
    if (r.mode) rd += r.bytes, wr += r.bytes;
    char what[200];
    snprintf(what, sizeof what, "%s n%u (%ux%ux%u) a(zp%d m%d s%d) b(zp%d m%d s%d) y(zp%d m%d s%d [%d,%d]) route%d "
             "(iter %d)", lut ? "lut" : "add", n, h, w, c, p.a_zero, p.a_mult, p.a_shift, p.b_zero, p.b_mult, p.b_shift,
             p.y_zero, p.y_mult, p.y_shift, p.y_min, p.y_max, r.mode, iter);
    ep_tensor *vin[2] = {&a, &b};
    run_case(what, &B, vin, lut ? 1 : 2, &got, &y, 0, rd, wr);
    chk_free(a.data), chk_free(b.data), chk_free(t.data), chk_free(y.data), chk_free(got.data);
}

/* ---------------- POOL (max) against the CPU's CAST -> MAXPOOL (f32) -> CAST ---------------- */
static uint64_t n_pool, n_pool_refused;
static void pool_case(int iter) {
    ep_pool_params p;
    memset(&p, 0, sizeof p);
    const int KH = chk_int(1, 8), KW = chk_int(0, 2) ? KH : chk_int(1, 8), big = iter % 5 == 0;
    const int C = big ? chk_int(60, 70) : chk_int(1, 40), H = big ? chk_int(16, 40) : chk_int(1, 14),
              W = big ? chk_int(16, 40) : chk_int(1, 14);
    p.kernel[0] = KH, p.kernel[1] = KW, p.stride[0] = chk_int(1, 3), p.stride[1] = chk_int(1, 3);
    p.dilation[0] = chk_int(0, 5) ? 1 : chk_int(2, 3), p.dilation[1] = chk_int(0, 5) ? 1 : chk_int(2, 3);
    const int dkh = (KH - 1) * p.dilation[0] + 1, dkw = (KW - 1) * p.dilation[1] + 1;
    if (H + 2 * (dkh - 1) < dkh || W + 2 * (dkw - 1) < dkw) return;
    const int OH = window(H, KH, p.stride[0], p.dilation[0], &p.pads[0], &p.pads[2], dkh - 1 < 8 ? dkh - 1 : 8);
    const int OW = window(W, KW, p.stride[1], p.dilation[1], &p.pads[1], &p.pads[3], dkw - 1 < 8 ? dkw - 1 : 8);
    ep_tensor xf = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(1, C, H, W)), yf = chk_mk(NULL, EP_DTYPE_F32, 4, CHK_DIMS(1, C, OH, OW));
    ep_tensor x = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(1, C, H, W)), y = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(1, C, OH, OW));
    ep_tensor got = y;
    x.data = rnd_i8(x.nbytes, -128, 127), xf.data = chk_alloc(xf.nbytes), yf.data = chk_alloc(yf.nbytes);
    y.data = chk_alloc(y.nbytes), got.data = chk_alloc(y.nbytes);
    for (size_t i = 0; i < x.nbytes; i++) ((float *)xf.data)[i] = (float)((const int8_t *)x.data)[i];
    ep_tensor *ins[1] = {&xf}, *outs[1] = {&yf};
    ep_op op = chk_op(EP_OP_MAXPOOL, &p, ins, 1, outs, 1);
    ep_ref_maxpool_f32(&op);
    int empty = 0;   /* a window without a tap inside the input: the f32 kernel's -FLT_MAX, which the vNPU refuses */
    for (size_t i = 0; i < y.nbytes; i++) {
        const float v = ((const float *)yf.data)[i];
        empty |= v < -128.0f;
        ((int8_t *)y.data)[i] = (int8_t)(v < -128.0f ? -128.0f : v);
    }

    vn_init(&B, 256);
    vn_io(&B, 0, 4, x.dims), vn_io(&B, 1, 4, y.dims);
    const route r = route_pick(&B, (uint32_t)y.nbytes);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_HEIGHT_M1, (uint32_t)KH - 1);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_WIDTH_M1, (uint32_t)KW - 1);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_STRIDE, (uint32_t)p.stride[1] | (uint32_t)p.stride[0] << 8);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_DILATION, (uint32_t)p.dilation[1] | (uint32_t)p.dilation[0] << 8);
    for (int k = 0; k < 4; k++) vn_cmd0(&B, EP_VNPU_SET_PAD_TOP + (uint32_t)k, (uint32_t)p.pads[k]);
    vn_fm_nchw(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, (uint32_t)H, (uint32_t)W, (uint32_t)C, chk_int(-128, 127));
    vn_fm_nchw(&B, EP_VNPU_FM_OFM, r.region, 0, (uint32_t)OH, (uint32_t)OW, (uint32_t)C, 0);
    vn_cmd0(&B, EP_VNPU_OP_POOL, EP_VNPU_POOL_MAX);
    route_finish(&B, &r);
    vn_cmd0(&B, EP_VNPU_OP_STOP, 0);
    char what[200];
    snprintf(what, sizeof what, "maxpool C%d H%d W%d k%dx%d s%d,%d d%d,%d pads %d,%d,%d,%d route%d (iter %d)", C, H, W,
             KH, KW, p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.pads[0], p.pads[1], p.pads[2], p.pads[3],
             r.mode, iter);
    ep_tensor *vin[1] = {&x};
    if (empty) {   /* init must refuse, naming the window */
        uint32_t size;
        uint8_t *blob = vn_finish(&B, &size);
        const uint64_t work_size = vn_align64(B.work_bytes) + B.sram_used;
        uint8_t *work = (uint8_t *)chk_alloc(work_size ? work_size : 1);
        ep_tensor *vout[1] = {&got};
        vn_part v;
        part_make(&v, blob, size, vin, 1, vout, 1, work, work_size);
        const int32_t rc = part_init(&v);
        CHECK(rc == EP_ERR_DELEGATE_BLOB && strstr(v.why, "no tap inside"), "%s: init %d (%s), expected a refusal",
              what, (int)rc, v.why);
        if (rc == EP_OK) dev.delegate.destroy(dev.delegate.user, &v.p);
        chk_free(work);
        free(blob);
        n_pool_refused++;
    } else {
        uint64_t rd = x.nbytes, wr = y.nbytes;
        if (r.mode) rd += r.bytes, wr += r.bytes;
        run_case(what, &B, vin, 1, &got, &y, 0, rd, wr);
        n_pool++;
    }
    chk_free(x.data), chk_free(xf.data), chk_free(yf.data), chk_free(y.data), chk_free(got.data);
}

/* ---------------- malformed blobs ---------------- */
enum {
    D_NONE, D_REGION, D_IFM_SPAN, D_W_SPAN, D_DMA_OVERFLOW, D_DMA_NOLEN, D_NO_STOP, D_TRUNC, D_UNKNOWN, D_UNKNOWN_KICK,
    D_MACS, D_SRAM, D_CRC, D_MAGIC, D_VERSION, D_WORK, D_IO, D_OFM_INPUT, D_OFM_CONST, D_SCALE_S, D_BIAS, D_KERNEL,
    D_STRIDE, D_GEOM, D_WLEN, D_AFTER_STOP, D_NOPS, D_ELT_SHIFT, D_UNSET, D_ACT, D_ZP, D_CMD_RANGE, D_CONST_RANGE,
    D_ELEMS, D_DMA_RO, D_FLAGS, D_BLOB_BYTES, D_COUNT
};
static const struct {
    const char *name, *reason;   /* the defect, and a part of the reason init must give */
} defects[D_COUNT] = {
    [D_NONE] = {"valid", ""},
    [D_REGION] = {"out-of-range region index", "out of range"},
    [D_IFM_SPAN] = {"IFM offset + extent past its region", "past region"},
    [D_W_SPAN] = {"weights offset + length past region 0", "past region"},
    [D_DMA_OVERFLOW] = {"DMA length overflow", "past region"},
    [D_DMA_NOLEN] = {"uninitialised DMA length", "length not set"},
    [D_NO_STOP] = {"missing STOP", "missing STOP"},
    [D_TRUNC] = {"truncated cmd1 payload", "truncated"},
    [D_UNKNOWN] = {"unknown register opcode", "unknown opcode"},
    [D_UNKNOWN_KICK] = {"unknown kick opcode", "unknown opcode"},
    [D_MACS] = {"MAC config mismatch", "MACs/cycle"},
    [D_SRAM] = {"SRAM config mismatch", "SRAM"},
    [D_CRC] = {"corrupt byte (CRC)", "CRC-32C"},
    [D_MAGIC] = {"bad magic", "magic"},
    [D_VERSION] = {"other version", "version"},
    [D_WORK] = {"working memory larger than the partition's", "working memory"},
    [D_IO] = {"I/O record not the tensor", "input 0"},
    [D_OFM_INPUT] = {"OFM in an input region", "read-only"},
    [D_OFM_CONST] = {"OFM in region 0", "read-only"},
    [D_SCALE_S] = {"requant shift 63", "s in 1..62"},
    [D_BIAS] = {"bias past the int32 headroom", "|bias|"},
    [D_KERNEL] = {"kernel 9", "kernel extent"},
    [D_STRIDE] = {"stride 4", "stride"},
    [D_GEOM] = {"OFM height inconsistent with the window", "do not give"},
    [D_WLEN] = {"weight length not the shapes'", "weight length"},
    [D_AFTER_STOP] = {"words after STOP", "before the stream's end"},
    [D_NOPS] = {"kick count not the header's", "kicks"},
    [D_ELT_SHIFT] = {"ELTWISE input shift 30", "scale"},
    [D_UNSET] = {"IFM strides never set", "registers not set"},
    [D_ACT] = {"activation min > max", "activation min"},
    [D_ZP] = {"zero point 200", "zero point"},
    [D_CMD_RANGE] = {"command stream past the blob", "command stream"},
    [D_CONST_RANGE] = {"constants past the blob", "constants"},
    [D_ELEMS] = {"IFM with more elements than its region's bytes", "elements"},
    [D_DMA_RO] = {"DMA into an input", "read-only"},
    [D_FLAGS] = {"unknown flags", "flags"},
    [D_BLOB_BYTES] = {"blob_bytes past the constant", "blob_bytes"},
};

/* conv 3x5x5 -> 2x5x5 (3x3, pad 1) from input 0 into output 0, plus (DMA defects) a copy; then the defect */
static uint8_t *defect_blob(int d, uint32_t *size) {
    vn_init(&B, d == D_MACS ? 128 : 256);
    if (d == D_SRAM) B.sram_bytes = 1u << 20;
    B.work_bytes = 64;
    vn_io(&B, 0, 4, CHK_DIMS(1, 3, 5, 5));
    vn_io(&B, 1, 4, CHK_DIMS(1, 2, 5, 5));
    int8_t w[2 * 3 * 9];
    for (int i = 0; i < (int)sizeof w; i++) w[i] = (int8_t)(i % 7 - 3);
    uint8_t rec[24];
    for (int c = 0; c < 2; c++) {
        vn_wr32(rec + 12 * c, d == D_BIAS ? 0x7FFFFFF0u : 5u);
        vn_wr32(rec + 12 * c + 4, 1u << 30);
        vn_wr32(rec + 12 * c + 8, d == D_SCALE_S ? 63u : 36u);
    }
    const uint32_t woff = vn_const(&B, w, sizeof w), soff = vn_const(&B, rec, sizeof rec);
    if (d == D_UNKNOWN) vn_cmd0(&B, 0x0777, 0);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_HEIGHT_M1, d == D_KERNEL ? 8 : 2);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_WIDTH_M1, 2);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_STRIDE, d == D_STRIDE ? 0x0104 : 0x0101);
    for (uint32_t k = 0; k < 4; k++) vn_cmd0(&B, EP_VNPU_SET_PAD_TOP + k, 1);
    vn_consts(&B, d == D_W_SPAN ? B.n_const - 3 : woff, d == D_WLEN ? 53 : 54, soff, 24);
    if (d == D_UNSET) {
        vn_cmd0(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_REGION, vn_region_in(0));
        vn_cmd0(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_HEIGHT_M1, 4);
        vn_cmd0(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_WIDTH_M1, 4);
        vn_cmd0(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_DEPTH_M1, 2);
        vn_cmd1(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_BASE, 0, 0);
    } else if (d == D_ELEMS) {
        vn_fm(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, 300, 300, 3, 0, 0, 25, 0);
    } else {
        vn_fm_nchw(&B, EP_VNPU_FM_IFM, d == D_REGION ? 9 : vn_region_in(0), d == D_IFM_SPAN ? 2 : 0, 5, 5, 3,
                   d == D_ZP ? 200 : 1);
    }
    const uint32_t ofm_region = d == D_OFM_INPUT ? vn_region_in(0) : d == D_OFM_CONST ? 0 : vn_region_out(&B, 0);
    vn_fm_nchw(&B, EP_VNPU_FM_OFM, ofm_region, 0, d == D_GEOM ? 4 : 5, 5, 2, -3);
    if (d == D_ACT) vn_cmd0(&B, EP_VNPU_SET_ACT_MIN, 5), vn_cmd0(&B, EP_VNPU_SET_ACT_MAX, 4);
    vn_cmd0(&B, d == D_UNKNOWN_KICK ? 0x0042 : EP_VNPU_OP_CONV, 0);
    if (d == D_DMA_OVERFLOW || d == D_DMA_NOLEN || d == D_DMA_RO) {
        vn_cmd0(&B, EP_VNPU_SET_DMA_SRC_REGION, EP_VNPU_REGION_WORK);
        vn_cmd1(&B, EP_VNPU_SET_DMA_SRC, 0, 16);
        vn_cmd0(&B, EP_VNPU_SET_DMA_DST_REGION, d == D_DMA_RO ? vn_region_in(0) : vn_region_out(&B, 0));
        vn_cmd1(&B, EP_VNPU_SET_DMA_DST, 0, 0);
        if (d != D_DMA_NOLEN) vn_cmd1(&B, EP_VNPU_SET_DMA_LEN, 0, d == D_DMA_OVERFLOW ? 0xFFFFFFF0u : 16u);
        vn_cmd0(&B, EP_VNPU_OP_DMA, 0);
    }
    if (d == D_ELT_SHIFT) {
        vn_fm_nchw(&B, EP_VNPU_FM_IFM2, vn_region_in(0), 0, 5, 5, 2, 0);
        vn_fm_nchw(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, 5, 5, 2, 0);
        vn_cmd1(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_SCALE, 30, 1u << 30);
        vn_cmd1(&B, EP_VNPU_FM_IFM2 + EP_VNPU_FM_SCALE, 31, 1u << 30);
        vn_cmd1(&B, EP_VNPU_FM_OFM + EP_VNPU_FM_SCALE, 40, 1u << 30);
        vn_cmd0(&B, EP_VNPU_OP_ELTWISE, EP_VNPU_ELTWISE_ADD);
    }
    if (d == D_TRUNC) vn_cmd1(&B, EP_VNPU_SET_DMA_LEN, 0, 0), B.n_cmd--;
    else if (d != D_NO_STOP) vn_cmd0(&B, EP_VNPU_OP_STOP, 0);
    if (d == D_AFTER_STOP) vn_cmd0(&B, EP_VNPU_SET_ACT_MIN, 0);
    if (d == D_NOPS) B.n_ops++;
    uint8_t *blob = vn_finish(&B, size);
    ep_vnpu_header h;
    memcpy(&h, blob, sizeof h);
    if (d == D_MAGIC) h.magic ^= 1;
    if (d == D_VERSION) h.version = 2;
    if (d == D_WORK) h.work_bytes = 4096;
    if (d == D_CMD_RANGE) h.cmd_words = (*size - h.cmd_offset) / 4 + 1;
    if (d == D_CONST_RANGE) h.const_bytes += 16;
    if (d == D_FLAGS) h.flags = 1;
    if (d == D_BLOB_BYTES) h.blob_bytes = (*size + 63u) & ~63u, h.blob_bytes += 64;
    memcpy(blob, &h, sizeof h);
    if (d == D_IO) vn_wr32(blob + h.io_offset + offsetof(ep_vnpu_io, dims) + 8, 6);
    vn_seal(blob, h.blob_bytes <= *size ? h.blob_bytes : *size);
    if (d == D_CRC) blob[h.const_offset + 3] ^= 0x40;
    return blob;
}

static void malformed(void) {
    int8_t *x = rnd_i8(75, -128, 127);
    ep_tensor xt = chk_mk(x, EP_DTYPE_I8, 4, CHK_DIMS(1, 3, 5, 5)), yt = chk_mk(NULL, EP_DTYPE_I8, 4, CHK_DIMS(1, 2, 5, 5));
    yt.data = chk_alloc(50);
    uint8_t *work = (uint8_t *)chk_alloc(64);
    ep_tensor *in[1] = {&xt}, *out[1] = {&yt};
    for (int d = 0; d < D_COUNT; d++) {
        uint32_t size;
        uint8_t *blob = defect_blob(d, &size);
        vn_part v;
        part_make(&v, blob, size, in, 1, out, 1, work, 64);
        const int32_t rc = part_init(&v);
        if (d == D_NONE) {
            CHECK(rc == EP_OK && dev.delegate.execute(dev.delegate.user, &v.p) == EP_OK, "the valid base blob: %s", v.why);
        } else {
            CHECK(rc == EP_ERR_DELEGATE_BLOB && strstr(v.why, defects[d].reason),
                  "%s: init gave %d '%s' (wants a reason with '%s')", defects[d].name, (int)rc, v.why, defects[d].reason);
            if (getenv("VNPU_VERBOSE")) printf("  refused %-48s %s\n", defects[d].name, v.why);
        }
        if (rc == EP_OK) dev.delegate.destroy(dev.delegate.user, &v.p);
        free(blob);
    }
    CHECK(!chk_guard(yt.data) && !chk_guard(work), "malformed: a write outside the buffers");
    chk_free(x), chk_free(yt.data), chk_free(work);
}

/* ---------------- mutation fuzz ---------------- */
/* Valid seed blobs over one partition shape: input [1, 8, 6, 6], output [1, 8, 6, 6], 1 KiB of work + 512 B SRAM.
 * 0: conv 3x3 into SRAM, LUT into work, DMA to the output; 1: depthwise + ELTWISE add of the input; 2: MATMUL rows. */
static uint8_t *seed_blob(int k, uint32_t *size) {
    vn_init(&B, 256);
    B.work_bytes = 1024, B.sram_used = 512;
    vn_io(&B, 0, 4, CHK_DIMS(1, 8, 6, 6));
    vn_io(&B, 1, 4, CHK_DIMS(1, 8, 6, 6));
    int8_t w[8 * 8 * 9], lut[256];
    uint8_t rec[8 * 12];
    for (int i = 0; i < (int)sizeof w; i++) w[i] = (int8_t)chk_int(-127, 127);
    for (int i = 0; i < 256; i++) lut[i] = (int8_t)(255 - i);
    for (int c = 0; c < 8; c++)
        vn_wr32(rec + 12 * c, (uint32_t)chk_int(-999, 999)), vn_wr32(rec + 12 * c + 4, 1u << 30), vn_wr32(rec + 12 * c + 8, 40);
    const uint32_t soff = vn_const(&B, rec, sizeof rec), loff = vn_const(&B, lut, 256);
    const uint32_t out = vn_region_out(&B, 0);
    vn_cmd0(&B, EP_VNPU_SET_KERNEL_HEIGHT_M1, 2), vn_cmd0(&B, EP_VNPU_SET_KERNEL_WIDTH_M1, 2);
    for (uint32_t p = 0; p < 4; p++) vn_cmd0(&B, EP_VNPU_SET_PAD_TOP + p, 1);
    if (k == 0) {
        vn_consts(&B, vn_const(&B, w, 8 * 8 * 9), 8 * 8 * 9, soff, 96);
        vn_fm_nchw(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, 6, 6, 8, 3);
        vn_fm_nchw(&B, EP_VNPU_FM_OFM, EP_VNPU_REGION_SRAM, 0, 6, 6, 8, -2);
        vn_cmd0(&B, EP_VNPU_OP_CONV, 0);
        vn_fm_nchw(&B, EP_VNPU_FM_IFM, EP_VNPU_REGION_SRAM, 0, 6, 6, 8, 0);
        vn_fm_nchw(&B, EP_VNPU_FM_OFM, EP_VNPU_REGION_WORK, 64, 6, 6, 8, 0);
        vn_cmd0(&B, EP_VNPU_SET_LUT_REGION, 0), vn_cmd1(&B, EP_VNPU_SET_LUT_BASE, 0, loff);
        vn_cmd0(&B, EP_VNPU_OP_LUT, 0);
        vn_cmd0(&B, EP_VNPU_SET_DMA_SRC_REGION, EP_VNPU_REGION_WORK), vn_cmd1(&B, EP_VNPU_SET_DMA_SRC, 0, 64);
        vn_cmd0(&B, EP_VNPU_SET_DMA_DST_REGION, out), vn_cmd1(&B, EP_VNPU_SET_DMA_DST, 0, 0);
        vn_cmd1(&B, EP_VNPU_SET_DMA_LEN, 0, 288), vn_cmd0(&B, EP_VNPU_OP_DMA, 0);
    } else if (k == 1) {
        vn_consts(&B, vn_const(&B, w, 8 * 9), 8 * 9, soff, 96);
        vn_fm_nchw(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, 6, 6, 8, 3);
        vn_fm_nchw(&B, EP_VNPU_FM_OFM, EP_VNPU_REGION_WORK, 0, 6, 6, 8, -2);
        vn_cmd0(&B, EP_VNPU_OP_DWCONV, 0);
        vn_fm_nchw(&B, EP_VNPU_FM_IFM, EP_VNPU_REGION_WORK, 0, 6, 6, 8, -2);
        vn_fm_nchw(&B, EP_VNPU_FM_IFM2, vn_region_in(0), 0, 6, 6, 8, 3);
        vn_fm_nchw(&B, EP_VNPU_FM_OFM, out, 0, 6, 6, 8, 1);
        vn_cmd1(&B, EP_VNPU_FM_IFM + EP_VNPU_FM_SCALE, 33, 1u << 30);
        vn_cmd1(&B, EP_VNPU_FM_IFM2 + EP_VNPU_FM_SCALE, 33, 1u << 29);
        vn_cmd1(&B, EP_VNPU_FM_OFM + EP_VNPU_FM_SCALE, 40, 1u << 30);
        vn_cmd0(&B, EP_VNPU_OP_ELTWISE, EP_VNPU_ELTWISE_ADD);
    } else {   /* 36 rows of 8 channels (channel stride 36) -> 36 rows of 8 */
        vn_consts(&B, vn_const(&B, w, 64), 64, soff, 96);
        vn_fm(&B, EP_VNPU_FM_IFM, vn_region_in(0), 0, 6, 6, 8, 1, 6, 36, 3);
        vn_fm(&B, EP_VNPU_FM_OFM, out, 0, 6, 6, 8, 1, 6, 36, 0);
        vn_cmd0(&B, EP_VNPU_OP_MATMUL, 0);
    }
    vn_cmd0(&B, EP_VNPU_OP_STOP, 0);
    return vn_finish(&B, size);
}

static void fuzz(uint64_t iters) {
    enum { N_SEEDS = 3 };
    uint8_t *seeds[N_SEEDS];
    uint32_t sizes[N_SEEDS];
    for (int k = 0; k < N_SEEDS; k++) seeds[k] = seed_blob(k, &sizes[k]);
    int8_t *x = rnd_i8(288, -128, 127), *x0 = (int8_t *)malloc(288);
    memcpy(x0, x, 288);
    ep_tensor xt = chk_mk(x, EP_DTYPE_I8, 4, CHK_DIMS(1, 8, 6, 6)), yt = xt;
    yt.data = chk_alloc(288);
    uint8_t *work = (uint8_t *)chk_alloc(1024 + 512), *blob = (uint8_t *)malloc(4096);
    ep_tensor *in[1] = {&xt}, *out[1] = {&yt};
    uint64_t accepted = 0, executed = 0, refused_blank = 0;
    static const uint32_t vals[] = {0, 1, 2, 3, 7, 8, 9, 35, 36, 63, 64, 255, 256, 287, 288, 511, 512, 1023, 1024,
                                    0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFF0u, 0xFFFFFFFFu};
    for (uint64_t it = 0; it < iters; it++) {
        const int k = chk_int(0, N_SEEDS - 1);
        uint32_t size = sizes[k];
        memcpy(blob, seeds[k], size);
        ep_vnpu_header h;
        memcpy(&h, blob, sizeof h);
        const int n_mut = chk_int(1, 4);
        for (int m = 0; m < n_mut; m++) {
            const int kind = chk_int(0, 9);
            if (kind <= 3) {   /* a stream word: an opcode's parameter, or a payload */
                const uint32_t wi = (uint32_t)chk_int(0, (int)h.cmd_words - 1), at = h.cmd_offset + 4 * wi;
                const uint32_t old = vn_rd32(blob + at);
                const uint32_t v = vals[chk_int(0, CHK_COUNT(vals) - 1)];
                vn_wr32(blob + at, kind == 0 ? (old & 0xFFFFu) | (v & 0xFFFFu) << 16 : kind == 1 ? v
                                   : kind == 2 ? (old & 0xFFFF0000u) | (chk_rnd() & 0x41FFu) : old ^ (1u << chk_int(0, 31)));
            } else if (kind <= 5) {   /* a header or I/O field */
                const uint32_t at = 4u * (uint32_t)chk_int(0, (int)(h.cmd_offset / 4) - 1);
                vn_wr32(blob + at, vals[chk_int(0, CHK_COUNT(vals) - 1)]);
            } else if (kind <= 7) {   /* a constant byte (weights, records, LUT) */
                if (h.const_bytes) blob[h.const_offset + (uint32_t)chk_int(0, (int)h.const_bytes - 1)] = (uint8_t)chk_rnd();
            } else if (kind == 8) {   /* truncation */
                size = (uint32_t)chk_int(0, (int)size);
            } else if (size) {   /* any byte */
                blob[chk_int(0, (int)size - 1)] ^= (uint8_t)(1u << chk_int(0, 7));
            }
        }
        if (chk_int(0, 9) && size >= EP_VNPU_HEADER_BYTES) {   /* re-seal: reach the checks behind the CRC */
            ep_vnpu_header hh;
            memcpy(&hh, blob, sizeof hh);
            if (hh.blob_bytes >= EP_VNPU_HEADER_BYTES && hh.blob_bytes <= size) vn_seal(blob, hh.blob_bytes);
        }
        vn_part v;
        part_make(&v, blob, size, in, 1, out, 1, work, 1024 + 512);
        const int32_t rc = part_init(&v);
        if (rc != EP_OK) {
            refused_blank += rc != EP_ERR_DELEGATE_BLOB || !v.why[0];
            continue;
        }
        accepted++;
        uint32_t n_ops = 0;
        ep_vnpu_counters est;
        const ep_status er = ep_vnpu_estimate(blob, size, &dev.cfg, NULL, 0, &n_ops, &est, NULL, 0);
        CHECK(er == EP_OK, "fuzz %llu: init accepted, the estimator refused", (unsigned long long)it);
        if (dev.delegate.execute(dev.delegate.user, &v.p) == EP_OK) {
            executed++;
            CHECK(dev.last.active_cycles == est.active_cycles, "fuzz %llu: estimate %llu, execute %llu cycles",
                  (unsigned long long)it, (unsigned long long)est.active_cycles, (unsigned long long)dev.last.active_cycles);
        }
        dev.delegate.destroy(dev.delegate.user, &v.p);
        if (chk_guard(yt.data) || chk_guard(work) || memcmp(x, x0, 288)) {
            CHECK(0, "fuzz %llu (seed blob %d): a write outside the outputs and work, or into the input",
                  (unsigned long long)it, k);
            memcpy(x, x0, 288);
        }
    }
    CHECK(refused_blank == 0, "fuzz: %llu refusals without EP_ERR_DELEGATE_BLOB and a reason", (unsigned long long)refused_blank);
    /* the mutations must reach execute, or the fuzz tests only the CRC and the header */
    CHECK(accepted * 20 >= iters, "fuzz: only %llu of %llu mutated blobs accepted", (unsigned long long)accepted,
          (unsigned long long)iters);
    printf("fuzz: %llu mutations, %llu accepted by init, %llu executed\n", (unsigned long long)iters,
           (unsigned long long)accepted, (unsigned long long)executed);
    for (int k = 0; k < N_SEEDS; k++) free(seeds[k]);
    free(blob), free(x0), chk_free(x), chk_free(yt.data), chk_free(work);
}

int main(int argc, char **argv) {
    const long cases = argc > 1 ? atol(argv[1]) : 1100, iters = argc > 2 ? atol(argv[2]) : 10000;
    chk_seed(argc > 3 ? strtoull(argv[3], NULL, 10) : 20261205ull);
    ep_vnpu_config cfg;
    if (ep_vnpu_preset("u55-256-sram", &cfg) != EP_OK || ep_vnpu_open(&dev, &cfg) != EP_OK) {
        printf("FAIL: the u55-256-sram preset\n");
        return 1;
    }
    CHECK(ep_vnpu_preset("no-such-npu", &cfg) == EP_ERR_NOT_FOUND, "an unknown preset name");
    uint64_t per_kind[6] = {0};
    for (long i = 0; i < cases; i++) {
        const int kind = (int)(i % 11);   /* 4 conv, 1 grouped, 2 depthwise, 2 FC, 1 add, 1 LUT per 11 */
        const uint64_t before = chk_n_fail;
        if (kind < 4) conv_case((int)i, 0), per_kind[0]++;
        else if (kind == 4) conv_case((int)i, 1), per_kind[1]++;
        else if (kind < 7) conv_case((int)i, 2), per_kind[2]++;
        else if (kind < 9) fc_case((int)i), per_kind[3]++;
        else if (kind == 9) elem_case((int)i / 11, 0), per_kind[4]++;
        else elem_case((int)i / 11, 1), per_kind[5]++;
        if ((uint64_t)chk_n_fail > before + 20) break;
    }
    for (long i = 0; i < cases / 8 && !chk_n_fail; i++) pool_case((int)i);
    CHECK(n_pool + n_pool_refused >= (uint64_t)cases / 10, "%llu pool cases", (unsigned long long)n_pool);
    printf("pool: %llu max-pool cases byte-equal with CAST -> MAXPOOL -> CAST, %llu refused (a window without an IFM "
           "tap)\n", (unsigned long long)n_pool, (unsigned long long)n_pool_refused);
    printf("functional: %llu cases (conv %llu, grouped %llu, depthwise %llu, fc %llu, add %llu, lut %llu), %llu output "
           "bytes compared\n", (unsigned long long)n_cases, (unsigned long long)per_kind[0],
           (unsigned long long)per_kind[1], (unsigned long long)per_kind[2], (unsigned long long)per_kind[3],
           (unsigned long long)per_kind[4], (unsigned long long)per_kind[5], (unsigned long long)n_bytes);
    malformed();
    printf("malformed: %d defects refused\n", D_COUNT - 1);
    fuzz((uint64_t)iters);
    vn_free(&B);
    printf("check_vnpu: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail ? 1 : 0;
}
