/* The virtual NPU as a delegate (include/edgeplan/vnpu.h): the presets, the device the application owns, the
 * init / execute / destroy vtable, its counters, and the host-side estimator the compiler calls.
 *
 * Nothing allocates. A partition's state is its ctx (EP_DELEGATE_CTX_BYTES): the checked header. init runs the
 * whole stream once without arithmetic (every word, region, extent and record checked); execute runs the same
 * interpreter with the memory bound (work, SRAM after it, the I/O tensors zero-copy) and the arithmetic on. */
#include <stdio.h>
#include "vnpu_impl.h"

/* Ethos-U55 High-End Embedded (500 MHz, SRAM 4 GB/s, flash 0.5 GB/s) in Vela's Sram_Only and Shared_Sram modes,
 * U65 Mid-End (500 MHz, DRAM 3.75 GB/s) in Dedicated_Sram, and an RK3588-core-like A-class NPU. The U65's and
 * the RK3588-like SRAM bandwidths (128-bit and 256-bit ports at the core clock) are assumptions. */
static const ep_vnpu_config presets[] = {
    {sizeof(ep_vnpu_config), 128, 500, 4000, 500, 0, 0, 300, 512u << 10, "u55-128-sram"},
    {sizeof(ep_vnpu_config), 128, 500, 4000, 500, 1, 0, 300, 512u << 10, "u55-128-shared"},
    {sizeof(ep_vnpu_config), 256, 500, 4000, 500, 0, 0, 300, 512u << 10, "u55-256-sram"},
    {sizeof(ep_vnpu_config), 256, 500, 4000, 500, 1, 0, 300, 512u << 10, "u55-256-shared"},
    {sizeof(ep_vnpu_config), 256, 500, 8000, 3750, 1, 1, 300, 512u << 10, "u65-256-dedicated"},
    {sizeof(ep_vnpu_config), 1024, 1000, 32000, 12000, 1, 1, 300, 2u << 20, "rk3588-core-like"},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

uint32_t ep_vnpu_preset_count(void) { return (uint32_t)N_PRESETS; }
const char *ep_vnpu_preset_name(uint32_t i) { return i < N_PRESETS ? presets[i].name : NULL; }

ep_status ep_vnpu_preset(const char *name, ep_vnpu_config *cfg) {
    if (!name || !cfg) return EP_ERR_INVALID_ARG;
    for (size_t i = 0; i < N_PRESETS; i++)
        if (!strcmp(name, presets[i].name)) {
            *cfg = presets[i];
            return EP_OK;
        }
    return EP_ERR_NOT_FOUND;
}

/* ---------------- the delegate ---------------- */
#define CTX_MAGIC 0x7043504Eu
typedef struct vnpu_ctx {
    uint32_t magic;
    uint32_t reserved;
    ep_vnpu_header h;
} vnpu_ctx;
_Static_assert(sizeof(vnpu_ctx) <= EP_DELEGATE_CTX_BYTES, "vNPU state fits the partition's ctx");
_Static_assert(EP_VNPU_MAX_TRACE == sizeof(((ep_vnpu_device *)0)->trace) / sizeof(ep_vnpu_op_info), "trace");
_Static_assert(sizeof(ep_vnpu_header) == EP_VNPU_HEADER_BYTES && sizeof(ep_vnpu_io) == EP_VNPU_IO_BYTES, "records");
_Static_assert(EP_VNPU_MAX_REGIONS == EP_VNPU_REGION_IO + 2 * EP_DELEGATE_MAX_IO, "regions");

static int32_t vnpu_query(void *user, ep_delegate_caps *caps) {
    const ep_vnpu_device *d = (const ep_vnpu_device *)user;
    if (!d || !caps || caps->struct_size < sizeof(*caps)) return EP_ERR_INVALID_ARG;
    caps->version = 1;
    caps->blob_version_min = caps->blob_version_max = EP_VNPU_VERSION;
    caps->macs_per_cycle = d->cfg.macs_per_cycle;
    caps->clock_mhz = d->cfg.clock_mhz;
    caps->sram_bytes = d->cfg.sram_bytes;
    return EP_OK;
}

static int io_matches(const ep_vnpu_io *r, const ep_delegate_tensor *t) {
    if (r->nbytes != t->nbytes || r->dtype != t->dtype || r->rank != t->rank || r->rank < 0 || r->rank > 8) return 0;
    for (int k = 0; k < r->rank; k++)
        if (r->dims[k] != t->dims[k]) return 0;
    return 1;
}

/* "dtype D [d0, d1, ...] (N bytes)" of a record or a tensor */
static const char *describe(char *buf, size_t len, const ep_vnpu_io *r, const ep_delegate_tensor *t) {
    const int rank = r ? r->rank : t->rank;
    const int32_t *dims = r ? r->dims : t->dims;
    int n = snprintf(buf, len, "dtype %d [", (int)(r ? r->dtype : t->dtype));
    for (int k = 0; k < rank && k < 8 && n > 0 && (size_t)n < len; k++)
        n += snprintf(buf + n, len - (size_t)n, k ? ", %d" : "%d", (int)dims[k]);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "] (%llu bytes)", (unsigned long long)(r ? r->nbytes : t->nbytes));
    return buf;
}

/* Binds the partition's sizes (and, executing, its memory) to the regions of a parsed blob. */
static int bind(epn_env *e, const ep_delegate_partition *p, int exec) {
    const ep_vnpu_header *h = &e->h;
    if (p->n_inputs != h->n_inputs || p->n_outputs != h->n_outputs)
        return epn_fail(e, "blob for %u inputs and %u outputs, the partition has %u and %u", h->n_inputs, h->n_outputs,
                        (unsigned)p->n_inputs, (unsigned)p->n_outputs);
    const uint64_t need = epn_align64(h->work_bytes) + h->sram_used;
    if (p->work_size < need)
        return epn_fail(e, "needs %llu bytes of working memory (work %u + SRAM %u), the partition has %llu",
                        (unsigned long long)need, (unsigned)h->work_bytes, (unsigned)h->sram_used,
                        (unsigned long long)p->work_size);
    const uint8_t *io = (const uint8_t *)p->blob + h->io_offset;
    for (uint32_t k = 0; k < h->n_inputs + h->n_outputs; k++) {
        ep_vnpu_io rec;
        memcpy(&rec, io + (size_t)k * EP_VNPU_IO_BYTES, sizeof rec);
        const ep_delegate_tensor *t = k < h->n_inputs ? &p->inputs[k] : &p->outputs[k - h->n_inputs];
        if (!io_matches(&rec, t)) {
            char a[80], b[80];
            return epn_fail(e, "%s %u: the blob's %s is not the tensor's %s", k < h->n_inputs ? "input" : "output",
                            (unsigned)(k < h->n_inputs ? k : k - h->n_inputs), describe(a, sizeof a, &rec, NULL),
                            describe(b, sizeof b, NULL, t));
        }
        e->size[EP_VNPU_REGION_IO + k] = t->nbytes;
        if (exec) {
            e->rd[EP_VNPU_REGION_IO + k] = (const uint8_t *)t->data;
            if (k >= h->n_inputs) e->wr[EP_VNPU_REGION_IO + k] = (uint8_t *)t->data;
        }
    }
    if (exec) {
        uint8_t *w = (uint8_t *)p->work;
        e->rd[EP_VNPU_REGION_WORK] = e->wr[EP_VNPU_REGION_WORK] = w;
        e->rd[EP_VNPU_REGION_SRAM] = e->wr[EP_VNPU_REGION_SRAM] = w + epn_align64(h->work_bytes);
    }
    return EP_OK;
}

static int32_t vnpu_init(void *user, const ep_delegate_partition *p, char *why, uint32_t why_len) {
    ep_vnpu_device *d = (ep_vnpu_device *)user;
    epn_env e;
    memset(&e, 0, sizeof e);
    e.why = why, e.why_len = why_len;
    if (!d || !p || !p->ctx || p->struct_size < sizeof(*p)) return epn_fail(&e, "no device or partition");
    e.cfg = &d->cfg;
    int rc = epn_parse(&e, p->blob, p->blob_size);
    if (rc || (rc = bind(&e, p, 0)) || (rc = epn_run(&e))) return rc;
    vnpu_ctx *c = (vnpu_ctx *)p->ctx;
    memset(c, 0, sizeof *c);
    c->h = e.h;
    c->magic = CTX_MAGIC;
    return EP_OK;
}

static int32_t vnpu_execute(void *user, const ep_delegate_partition *p) {
    ep_vnpu_device *d = (ep_vnpu_device *)user;
    const vnpu_ctx *c = (const vnpu_ctx *)p->ctx;
    if (!d || c->magic != CTX_MAGIC) return EP_ERR_DELEGATE;
    epn_env e;
    memset(&e, 0, sizeof e);
    e.cfg = &d->cfg;
    e.h = c->h;
    const uint8_t *b = (const uint8_t *)p->blob;
    e.cmd = b + c->h.cmd_offset;
    e.n_regions = c->h.n_regions, e.n_inputs = c->h.n_inputs;
    e.size[EP_VNPU_REGION_CONST] = c->h.const_bytes, e.rd[EP_VNPU_REGION_CONST] = b + c->h.const_offset;
    e.size[EP_VNPU_REGION_WORK] = c->h.work_bytes, e.size[EP_VNPU_REGION_SRAM] = c->h.sram_used;
    e.exec = 1;
    e.trace = d->trace, e.trace_cap = EP_VNPU_MAX_TRACE;
    if (bind(&e, p, 1) || epn_run(&e)) {
        d->failures++;
        return EP_ERR_DELEGATE;
    }
    e.cnt.executes = 1;
    d->last = e.cnt;
    d->n_trace = e.n_ops < EP_VNPU_MAX_TRACE ? e.n_ops : EP_VNPU_MAX_TRACE;
    uint64_t *tot = &d->total.active_cycles;
    const uint64_t *add = &e.cnt.active_cycles;
    for (size_t k = 0; k < sizeof(ep_vnpu_counters) / sizeof(uint64_t); k++)
        tot[k] = tot[k] > UINT64_MAX - add[k] ? UINT64_MAX : tot[k] + add[k];
    return EP_OK;
}

static void vnpu_destroy(void *user, const ep_delegate_partition *p) {
    (void)user;
    if (p && p->ctx) ((vnpu_ctx *)p->ctx)->magic = 0;
}

ep_status ep_vnpu_open(ep_vnpu_device *dev, const ep_vnpu_config *cfg) {
    if (!dev || epn_config_error(cfg)) return EP_ERR_INVALID_ARG;
    memset(dev, 0, sizeof *dev);
    dev->cfg = *cfg;
    dev->cfg.struct_size = sizeof(ep_vnpu_config);
    dev->cfg.name[sizeof dev->cfg.name - 1] = '\0';
    snprintf(dev->name, sizeof dev->name, "vnpu-%s", dev->cfg.name[0] ? dev->cfg.name : "custom");
    ep_delegate *v = &dev->delegate;
    v->struct_size = sizeof(*v);
    v->abi_version = EP_DELEGATE_ABI_VERSION;
    v->kind = EP_DELEGATE_KIND_VNPU;
    v->name = dev->name;
    v->user = dev;
    v->query = vnpu_query;
    v->init = vnpu_init;
    v->execute = vnpu_execute;
    v->destroy = vnpu_destroy;
    return EP_OK;
}

ep_status ep_vnpu_counters_get(const ep_vnpu_device *dev, ep_vnpu_counters *last, ep_vnpu_counters *total) {
    if (!dev) return EP_ERR_INVALID_ARG;
    if (last) *last = dev->last;
    if (total) *total = dev->total;
    return EP_OK;
}

void ep_vnpu_counters_reset(ep_vnpu_device *dev) {
    if (!dev) return;
    memset(&dev->last, 0, sizeof dev->last);
    memset(&dev->total, 0, sizeof dev->total);
    dev->n_trace = 0;
    dev->failures = 0;
}

ep_status ep_vnpu_estimate(const void *blob, size_t blob_size, const ep_vnpu_config *cfg, ep_vnpu_op_info *ops,
                           uint32_t ops_cap, uint32_t *n_ops, ep_vnpu_counters *total, char *why, uint32_t why_len) {
    epn_env e;
    memset(&e, 0, sizeof e);
    e.why = why, e.why_len = why_len;
    const char *bad = epn_config_error(cfg);
    if (bad) {
        epn_fail(&e, "%s", bad);
        return EP_ERR_INVALID_ARG;
    }
    e.cfg = cfg;
    int rc = epn_parse(&e, blob, blob_size);
    if (rc) return (ep_status)rc;
    const uint8_t *io = (const uint8_t *)blob + e.h.io_offset;
    for (uint32_t k = 0; k < e.h.n_inputs + e.h.n_outputs; k++) {   /* the I/O sizes the blob declares */
        ep_vnpu_io rec;
        memcpy(&rec, io + (size_t)k * EP_VNPU_IO_BYTES, sizeof rec);
        e.size[EP_VNPU_REGION_IO + k] = rec.nbytes;
    }
    e.trace = ops, e.trace_cap = ops ? ops_cap : 0;
    if ((rc = epn_run(&e))) return (ep_status)rc;
    if (n_ops) *n_ops = e.n_ops;
    if (total) *total = e.cnt;
    return EP_OK;
}
