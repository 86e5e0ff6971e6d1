/* Plan container parsing: header, CRC, section table and per-record checks.
 * Everything read from the plan is untrusted; every offset, size and count is
 * range-checked with overflow-safe arithmetic before it is used. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "ep_config.h"

int ep_fail(ep_err *e, int status, const char *fmt, ...) {
    if (e && e->buf && e->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->buf, e->len, fmt, ap);
        va_end(ap);
    }
    return status;
}

uint32_t ep_crc32c(const void *data, size_t len) { return ep_crc32c_update(0, data, len); }

uint32_t ep_plan_crc(const uint8_t *base, uint64_t size) {
    static const uint8_t zero[4] = {0, 0, 0, 0};
    const size_t off = offsetof(ep_plan_header, crc32c);
    uint32_t c = ep_crc32c_update(0, base, off);
    c = ep_crc32c_update(c, zero, 4);
    return ep_crc32c_update(c, base + off + 4, (size_t)(size - off - 4));
}

/* [off, off+len) inside [0, size)? */
static int in_range(uint64_t off, uint64_t len, uint64_t size) {
    return off <= size && len <= size - off;
}

const char *ep_view_name(const ep_plan_view *v, uint32_t off) {
    if (off == EP_NO_NAME || off >= v->names_size) return "";
    return v->names + off;
}

static int name_ok(const ep_plan_view *v, uint32_t off) {
    if (off == EP_NO_NAME) return 1;
    if (off >= v->names_size) return 0;
    return memchr(v->names + off, '\0', (size_t)(v->names_size - off)) != NULL;
}

typedef struct known_section {
    uint32_t kind;
    uint32_t record_size;   /* 0 for blobs */
    int required;
} known_section;

/* The sections this reader knows, by index into seen[] below. */
enum { S_TENSORS, S_OPS, S_OPIO, S_PARAMS, S_CONST, S_IO, S_NAMES, S_META, S_SYMS, N_KNOWN };
static const known_section KNOWN[N_KNOWN] = {
    [S_TENSORS] = {EP_SECTION_TENSORS, sizeof(ep_tensor_rec), 1},
    [S_OPS] = {EP_SECTION_OPS, sizeof(ep_op_rec), 1},
    [S_OPIO] = {EP_SECTION_OPIO, sizeof(uint32_t), 0},
    [S_PARAMS] = {EP_SECTION_PARAMS, 0, 0},
    [S_CONST] = {EP_SECTION_CONST, 0, 0},
    [S_IO] = {EP_SECTION_IO, sizeof(ep_io_rec), 1},
    [S_NAMES] = {EP_SECTION_NAMES, 0, 0},
    [S_META] = {EP_SECTION_META, 0, 0},
    [S_SYMS] = {EP_SECTION_SYMS, sizeof(ep_sym_rec), 0},
};

static int parse_sections(ep_plan_view *v, ep_err *e) {
    const ep_plan_header *h = v->hdr;
    const ep_section *seen[N_KNOWN] = {0};
    uint64_t tbl = h->section_table_offset;
    if (tbl % 8 || !in_range(tbl, (uint64_t)h->section_count * sizeof(ep_section), v->size))
        return ep_fail(e, EP_ERR_PLAN_SECTION, "section table out of range");
    const ep_section *secs = (const ep_section *)(const void *)(v->base + tbl);
    for (uint32_t i = 0; i < h->section_count; i++) {
        const ep_section *s = &secs[i];
        if (s->offset % EP_SECTION_ALIGN || !in_range(s->offset, s->size, v->size))
            return ep_fail(e, EP_ERR_PLAN_SECTION, "section %u (kind %u) out of range or misaligned", i, s->kind);
        size_t k = 0;
        while (k < N_KNOWN && KNOWN[k].kind != s->kind) k++;
        if (k == N_KNOWN) {
            if ((s->flags & EP_SECTION_FLAG_CRITICAL) && !(EP_HAVE_GROUPS && s->kind == EP_SECTION_GROUP))
                return ep_fail(e, EP_ERR_PLAN_SECTION, "unknown critical section kind %u", s->kind);
            continue;   /* ancillary: skipped */
        }
        if (seen[k]) return ep_fail(e, EP_ERR_PLAN_SECTION, "duplicate section kind %u", s->kind);
        if (KNOWN[k].record_size) {
            if (s->record_size < KNOWN[k].record_size || s->record_size % 4 ||
                (KNOWN[k].record_size % 8 == 0 && s->record_size % 8) ||
                (uint64_t)s->count * s->record_size > s->size)
                return ep_fail(e, EP_ERR_PLAN_SECTION, "section kind %u: bad record size/count", s->kind);
        }
        seen[k] = s;
    }
    for (size_t k = 0; k < N_KNOWN; k++)
        if (KNOWN[k].required && !seen[k])
            return ep_fail(e, EP_ERR_PLAN_SECTION, "required section kind %u missing", KNOWN[k].kind);
    const ep_section *t = seen[S_TENSORS], *o = seen[S_OPS], *io = seen[S_IO], *x;
    v->tensors = v->base + t->offset; v->n_tensors = t->count; v->tensor_stride = t->record_size;
    v->ops = v->base + o->offset; v->n_ops = o->count; v->op_stride = o->record_size;
    v->io = v->base + io->offset; v->n_io = io->count; v->io_stride = io->record_size;
    if ((x = seen[S_OPIO])) {
        if (x->record_size != sizeof(uint32_t)) return ep_fail(e, EP_ERR_PLAN_SECTION, "OPIO records must be 4 bytes");
        v->opio = (const uint32_t *)(const void *)(v->base + x->offset); v->n_opio = x->count;
    }
    if ((x = seen[S_PARAMS])) { v->params = v->base + x->offset; v->params_size = x->size; }
    if ((x = seen[S_CONST])) { v->consts = v->base + x->offset; v->const_size = x->size; }
    if ((x = seen[S_NAMES])) { v->names = (const char *)(v->base + x->offset); v->names_size = x->size; }
    if ((x = seen[S_SYMS])) { v->syms = v->base + x->offset; v->n_syms = x->count; v->sym_stride = x->record_size; }
    if (v->n_syms > EP_MAX_SYMS) return ep_fail(e, EP_ERR_PLAN_SECTION, "%u symbols > %d", v->n_syms, EP_MAX_SYMS);
    if (v->n_syms && !EP_HAVE_DYNAMIC)
        return ep_fail(e, EP_ERR_PLAN_UNSUPPORTED, "the plan has variable dims; this runtime was built without "
                       "them (a selective build for a fixed-shape plan)");
    return EP_OK;
}

static int check_tensor(const ep_plan_view *v, uint32_t i, ep_err *e) {
    const ep_tensor_rec *t = ep_view_tensor(v, i);
    uint32_t esz = ep_dtype_size(t->dtype);
    if (!esz) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: unknown dtype %u", i, t->dtype);
    if (t->rank > EP_MAX_RANK) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: rank %u > %d", i, t->rank, EP_MAX_RANK);
    if (!name_ok(v, t->name)) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: bad name offset", i);
    if (t->quant != EP_NO_QUANT) return ep_fail(e, EP_ERR_PLAN_UNSUPPORTED, "tensor %u: quantisation not in plan 1.0", i);
    uint64_t n = 1;
    for (int d = t->rank; d < EP_MAX_RANK; d++)
        if (t->dim_sym[d]) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: symbol past its rank", i);
    if (t->layout > EP_LAYOUT_NHWC || (t->reserved[0] | t->reserved[1]))
        return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: unknown layout", i);
    if (t->fill && !(t->flags & EP_TENSOR_FLAG_STATE))
        return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: a reset byte on a tensor that is not state", i);
    /* C8: C a multiple of 8; NHWC: 1 <= C <= 8; both a static f32 [N,C,H,W] in the arena, not I/O */
    if (t->layout &&
        (t->rank != 4 || t->dtype != EP_DTYPE_F32 || t->storage || t->flags ||
         (t->dim_sym[0] | t->dim_sym[1] | t->dim_sym[2] | t->dim_sym[3]) ||
         (t->layout == EP_LAYOUT_C8 ? (t->dims[1] & (EP_LAYOUT_BLOCK - 1)) != 0
                                    : t->dims[1] < 1 || t->dims[1] > EP_LAYOUT_BLOCK)))
        return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: a C8 / NHWC layout needs a static f32 NCHW arena tensor", i);
    if ((t->flags & EP_TENSOR_FLAG_STATE) && t->storage != EP_STORAGE_ARENA)
        return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: state must live in the arena", i);
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: negative dim", i);
        if (t->dim_sym[d]) {
            if (t->dim_sym[d] > v->n_syms)
                return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: bad symbol on dim %d", i, d);
            if (t->dims[d] != ep_view_sym(v, t->dim_sym[d] - 1u)->max)
                return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: dim %d is not its symbol's bound", i, d);
        }
        uint64_t dim = (uint64_t)t->dims[d];
        if (dim && n > ((uint64_t)1 << 40) / dim) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: too many elements", i);
        n *= dim;
    }
    if (t->nbytes != n * esz) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: nbytes does not match shape", i);
    if (t->offset % esz) return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: misaligned offset", i);
    if (t->storage == EP_STORAGE_ARENA) {
        if (!in_range(t->offset, t->nbytes, v->hdr->arena_size))
            return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: outside the arena", i);
    } else if (t->storage == EP_STORAGE_CONST) {
        if (!in_range(t->offset, t->nbytes, v->const_size))
            return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: outside the constants", i);
    } else {
        return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: unknown storage %u", i, t->storage);
    }
    return EP_OK;
}

#define EP_SYM_COEF_LIMIT (1 << 24)
static int check_sym(const ep_plan_view *v, uint32_t i, ep_err *e) {
    const ep_sym_rec *y = ep_view_sym(v, i);
    if (y->kind < EP_SYM_INPUT || y->kind > EP_SYM_DATA || y->reserved)
        return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: unknown kind %u", i, y->kind);
    if (y->step < 0 || y->step > EP_SYM_COEF_LIMIT || (y->step > 1 && (y->kind != EP_SYM_INPUT ||
                                                                       y->min % y->step || y->max % y->step)))
        return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: bad step %d", i, y->step);
    if (!name_ok(v, y->name)) return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: bad name offset", i);
    if (y->min < 0 || y->min > y->max) return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: bad bounds", i);
    if (y->src) {
        if (y->kind != EP_SYM_DERIVED || y->src > i || y->div < 1 || y->div > EP_SYM_COEF_LIMIT ||
            y->mul < -EP_SYM_COEF_LIMIT || y->mul > EP_SYM_COEF_LIMIT || y->add < -EP_SYM_COEF_LIMIT ||
            y->add > EP_SYM_COEF_LIMIT || y->src2 > i)
            return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: bad rule", i);
        /* a product of two symbols: |mul * a * b + add| stays below 2^57 */
        if (y->src2 && (int64_t)ep_view_sym(v, y->src - 1u)->max * ep_view_sym(v, y->src2 - 1u)->max > ((int64_t)1 << 32))
            return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: product rule too large", i);
    } else if (y->mul || y->add || y->div || y->src2) {
        return ep_fail(e, EP_ERR_PLAN_SECTION, "symbol %u: rule without a source", i);
    }
    return EP_OK;
}

static int check_op(const ep_plan_view *v, uint32_t i, ep_err *e) {
    const ep_op_rec *o = ep_view_op(v, i);
    const ep_op_info *info = ep_op_info_get(o->opcode);
    if (!info) return ep_fail(e, EP_ERR_PLAN_UNSUPPORTED, "op %u: unknown opcode %u", i, o->opcode);
    if (o->variant >= EP_MAX_VARIANTS) return ep_fail(e, EP_ERR_PLAN_UNSUPPORTED, "op %u: unknown variant %u", i, o->variant);
    if (o->n_in < info->min_in || o->n_in > info->max_in || o->n_out < info->min_out || o->n_out > info->max_out)
        return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): wrong number of inputs/outputs", i, info->name);
    if (!in_range(o->io_first, (uint64_t)o->n_in + o->n_out, v->n_opio))
        return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): io indices out of range", i, info->name);
    for (uint32_t k = 0; k < (uint32_t)o->n_in + o->n_out; k++) {
        uint32_t t = v->opio[o->io_first + k];
        int is_out = k >= o->n_in;
        if (t == EP_NO_TENSOR && !is_out && k >= info->min_in) continue;   /* absent optional input */
        if (t >= v->n_tensors) return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): tensor index out of range", i, info->name);
        if (is_out && ep_view_tensor(v, t)->storage != EP_STORAGE_ARENA)
            return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): writes a constant", i, info->name);
    }
    if (o->params_offset % 8 || o->params_size != info->params_size ||
        !in_range(o->params_offset, o->params_size, v->params_size))
        return ep_fail(e, EP_ERR_PLAN_PARAMS, "op %u (%s): bad params record", i, info->name);
    if (o->scratch_size && (o->scratch_offset % 8 || !in_range(o->scratch_offset, o->scratch_size, v->hdr->arena_size)))
        return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): scratch outside the arena", i, info->name);
    if (!name_ok(v, o->name)) return ep_fail(e, EP_ERR_PLAN_OP, "op %u: bad name offset", i);
    return EP_OK;
}

static int check_io(ep_plan_view *v, ep_err *e) {
    int seen_output = 0;
    for (uint32_t i = 0; i < v->n_io; i++) {
        const ep_io_rec *r = ep_view_io(v, i);
        if (r->tensor >= v->n_tensors) return ep_fail(e, EP_ERR_PLAN_IO, "io %u: tensor index out of range", i);
        const ep_tensor_rec *t = ep_view_tensor(v, r->tensor);
        if (t->storage != EP_STORAGE_ARENA) return ep_fail(e, EP_ERR_PLAN_IO, "io %u: not an arena tensor", i);
        if (r->kind == EP_IO_INPUT) {
            if (seen_output) return ep_fail(e, EP_ERR_PLAN_IO, "io %u: inputs must precede outputs", i);
            v->n_inputs++;
        } else if (r->kind == EP_IO_OUTPUT) {
            seen_output = 1;
            v->n_outputs++;
        } else {
            return ep_fail(e, EP_ERR_PLAN_IO, "io %u: unknown kind %u", i, r->kind);
        }
    }
    return EP_OK;
}

int ep_plan_parse(ep_plan_view *v, const void *plan, size_t plan_len, int check_crc, ep_err *e) {
    memset(v, 0, sizeof(*v));
    if (!plan) return ep_fail(e, EP_ERR_INVALID_ARG, "plan is NULL");
    if ((uintptr_t)plan % 8) return ep_fail(e, EP_ERR_PLAN_ALIGN, "plan buffer must be 8-byte aligned");
    if (plan_len < sizeof(ep_plan_header)) return ep_fail(e, EP_ERR_PLAN_TRUNCATED, "plan shorter than its header");
    const ep_plan_header *h = (const ep_plan_header *)plan;
    if (h->magic != EP_PLAN_MAGIC) return ep_fail(e, EP_ERR_PLAN_MAGIC, "not an edgeplan plan (bad magic)");
    if (h->version_major != EP_PLAN_VERSION_MAJOR)
        return ep_fail(e, EP_ERR_PLAN_VERSION, "plan format %u.%u; this runtime reads %d.x",
                       h->version_major, h->version_minor, EP_PLAN_VERSION_MAJOR);
    if (h->header_size < sizeof(ep_plan_header) || h->header_size % 8)
        return ep_fail(e, EP_ERR_PLAN_VERSION, "bad header size %u", h->header_size);
    if (h->file_size > plan_len)
        return ep_fail(e, EP_ERR_PLAN_TRUNCATED, "plan truncated: %llu of %llu bytes",
                       (unsigned long long)plan_len, (unsigned long long)h->file_size);
    if (h->file_size < h->header_size) return ep_fail(e, EP_ERR_PLAN_TRUNCATED, "file size smaller than header");
    v->base = (const uint8_t *)plan;
    v->size = h->file_size;
    v->hdr = h;
    if (check_crc && ep_plan_crc(v->base, v->size) != h->crc32c)
        return ep_fail(e, EP_ERR_PLAN_CRC, "plan checksum mismatch (corrupt file)");
    if (h->arena_size > ((uint64_t)1 << 40)) return ep_fail(e, EP_ERR_PLAN_SECTION, "arena size implausible");
    int rc = parse_sections(v, e);
    if (rc) return rc;
    for (uint32_t i = 0; EP_HAVE_DYNAMIC && i < v->n_syms; i++)   /* without: no symbols (refused above) */
        if ((rc = check_sym(v, i, e))) return rc;
    for (uint32_t i = 0; i < v->n_tensors; i++)
        if ((rc = check_tensor(v, i, e))) return rc;
    for (uint32_t i = 0; i < v->n_ops; i++) {
        if ((rc = check_op(v, i, e))) return rc;
        v->n_partitions += ep_view_op(v, i)->opcode == EP_OP_DELEGATE;
    }
    return check_io(v, e);
}
