/* Session: carves itself out of the caller's arena, binds every op once
 * (validating it through its shape function), then runs a flat op list. */
#include <stdio.h>
#include <string.h>
#include "session_impl.h"

/* threads and profiling, set up at the end of ep_session_open (defined at the end of this file) */
static void session_start_extras(ep_session *s, const ep_options *opt);

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* The published per-item figures (edgeplan.h) bound the structs on every target; the tables are carved
 * with these strides, so their size does not depend on the build. Each is a multiple of 16, which keeps
 * every table 16-byte aligned. */
_Static_assert(sizeof(struct ep_session) <= EP_SESSION_BYTES && EP_SESSION_BYTES % 16 == 0, "EP_SESSION_BYTES");
_Static_assert(sizeof(ep_tensor) <= EP_SESSION_TENSOR_BYTES && EP_SESSION_TENSOR_BYTES % 16 == 0, "tensor");
_Static_assert(sizeof(ep_bound_op) <= EP_SESSION_OP_BYTES && EP_SESSION_OP_BYTES % 16 == 0, "op");
_Static_assert(sizeof(ep_tensor *) <= EP_SESSION_OPIO_BYTES, "opio");
_Static_assert(sizeof(uint32_t) <= EP_SESSION_IO_BYTES, "io");
_Static_assert(sizeof(int64_t) <= EP_SESSION_SYM_BYTES, "sym");
_Static_assert(sizeof(ep_partition) <= EP_SESSION_PARTITION_BYTES && EP_SESSION_PARTITION_BYTES % 64 == 0, "partition");

uint64_t ep_session_table_bytes(const ep_plan_view *v) {
    const uint64_t b = EP_SESSION_BYTES + (uint64_t)v->n_tensors * EP_SESSION_TENSOR_BYTES +
                       (uint64_t)v->n_ops * EP_SESSION_OP_BYTES + (uint64_t)v->n_opio * EP_SESSION_OPIO_BYTES +
                       (uint64_t)v->n_io * EP_SESSION_IO_BYTES + (uint64_t)v->n_syms * EP_SESSION_SYM_BYTES +
                       (uint64_t)v->n_partitions * EP_SESSION_PARTITION_BYTES;
    return align_up(b, EP_ARENA_ALIGN);
}

ep_status ep_plan_validate(const void *plan, size_t plan_len) {
    ep_plan_view v;
    return ep_plan_parse(&v, plan, plan_len, 1, NULL);
}

ep_status ep_plan_query(const void *plan, size_t plan_len, ep_plan_info *info) {
    ep_plan_view v;
    if (!info) return EP_ERR_INVALID_ARG;
    int rc = ep_plan_parse(&v, plan, plan_len, 0, NULL);   /* structure only: open checks the CRC */
    if (rc) return rc;
    memset(info, 0, sizeof(*info));
    info->version_major = v.hdr->version_major;
    info->version_minor = v.hdr->version_minor;
    info->session_bytes = ep_session_table_bytes(&v);
    info->planned_bytes = v.hdr->arena_size;
    info->arena_bytes = info->session_bytes + info->planned_bytes;
    info->const_bytes = v.const_size;
    info->required_features = v.hdr->required_features;
    info->n_tensors = v.n_tensors;
    info->n_ops = v.n_ops;
    info->n_inputs = v.n_inputs;
    info->n_outputs = v.n_outputs;
    return EP_OK;
}

static void bind_tensor(ep_tensor *t, const ep_tensor_rec *r, uint32_t index, const ep_plan_view *v, uint8_t *region) {
    memset(t, 0, sizeof(*t));
    t->rank = r->rank;
    t->dtype = r->dtype;
    t->storage = r->storage;
    t->flags = r->flags;
    t->layout = r->layout;
    t->fill = r->fill;
    t->index = index;
    t->nbytes = r->nbytes;
    for (int d = 0; d < r->rank; d++) t->dims[d] = r->dims[d];
    if (r->storage == EP_STORAGE_CONST)
        t->data = (void *)(uintptr_t)(v->consts + r->offset);   /* weights used in place, read-only */
    else
        t->data = region + r->offset;
}

/* An op whose shape function does not check layouts (ops.def EP_OPF_LAYOUT) takes PLAIN tensors only. An NHWC
 * tensor is CONV2D's X only (its shape function: BLOCKED_CONV), never an output. */
static int check_layouts(const ep_bound_op *b, const ep_op_info *info, uint32_t i, ep_err *e) {
    const ep_op *op = &b->op;
    for (uint32_t k = 0; k < (uint32_t)op->n_in + op->n_out; k++) {
        const ep_tensor *t = k < op->n_in ? op->in[k] : op->out[k - op->n_in];
        if (t && ((t->layout && !info->layout) || (t->layout == EP_LAYOUT_NHWC && (op->opcode != EP_OP_CONV2D || k))))
            return ep_fail(e, EP_ERR_PLAN_TENSOR, "op %u (%s): tensor %u's layout is not one it takes", i, info->name,
                           k);
    }
    return EP_OK;
}

/* Runs the op's shape function and checks the result against the plan's declared outputs. */
static int check_shapes(const ep_bound_op *b, const ep_op_info *info, uint32_t i, const ep_plan_view *v, ep_err *e) {
    ep_shape out[EP_MAX_OP_OUTPUTS];
    uint64_t scratch = 0;
    const char *nm = ep_view_name(v, b->name);
    memset(out, 0, sizeof(ep_shape) * b->op.n_out);
    int rc = info->shape(&b->op, out, &scratch);
    if (rc) return ep_fail(e, rc, "op %u (%s '%s'): inconsistent with its inputs or params", i, info->name, nm);
    for (uint16_t k = 0; k < b->op.n_out; k++) {
        const ep_tensor *t = b->op.out[k];
        if (t->rank != out[k].rank || t->dtype != out[k].dtype ||
            memcmp(t->dims, out[k].dims, sizeof(int32_t) * t->rank) != 0)
            return ep_fail(e, EP_ERR_PLAN_SHAPE, "op %u (%s '%s'): output %u shape/dtype differs from the plan",
                           i, info->name, nm, k);
    }
    if (scratch > b->op.scratch_size)
        return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s '%s'): needs %llu scratch bytes, plan gives %llu", i,
                       info->name, nm, (unsigned long long)scratch, (unsigned long long)b->op.scratch_size);
    return EP_OK;
}

static int has_symbols(const ep_tensor *t, const ep_plan_view *v) {
    const ep_tensor_rec *r = ep_view_tensor(v, t->index);
    for (int d = 0; d < r->rank; d++)
        if (r->dim_sym[d]) return 1;
    return 0;
}

static int op_has_symbols(const ep_op *op, const ep_plan_view *v) {
    for (uint16_t k = 0; k < op->n_in; k++)
        if (op->in[k] && has_symbols(op->in[k], v)) return 1;
    for (uint16_t k = 0; k < op->n_out; k++)
        if (has_symbols(op->out[k], v)) return 1;
    return 0;
}

static void reset_state(ep_session *s) {
    for (uint32_t i = 0; i < s->n_tensors; i++)
        if (s->tensors[i].flags & EP_TENSOR_FLAG_STATE)
            memset(s->tensors[i].data, s->tensors[i].fill, s->tensors[i].nbytes);
}

static int overlap(const ep_tensor *a, const ep_tensor *b) {
    uintptr_t pa = (uintptr_t)a->data, pb = (uintptr_t)b->data;
    return a->nbytes && b->nbytes && pa < pb + b->nbytes && pb < pa + a->nbytes;
}

/* Kernels assume an output shares no bytes with the op's other operands or its scratch, except an
 * exact alias of an input where the op works in place. A plan that says otherwise is rejected. */
static int check_aliasing(const ep_bound_op *b, const ep_op_info *info, uint32_t i, const ep_plan_view *v, ep_err *e) {
    const ep_op *op = &b->op;
    /* a view op (RESHAPE_DYN) moves no data: its output starts at its input's first byte (its shape
     * function required both; a constant input's bytes are never an arena output's) */
    if (info->view && op->in[0]->data != op->out[0]->data)
        return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): output 0 is not a view of input 0", i, info->name);
    for (uint16_t k = 0; k < op->n_out; k++) {
        const ep_tensor *o = op->out[k];
        for (uint16_t j = 0; j < op->n_in; j++) {
            const ep_tensor *x = op->in[j];
            if (!x || x->storage != EP_STORAGE_ARENA || !overlap(o, x)) continue;
            if (info->inplace && x->data == o->data && x->nbytes == o->nbytes) continue;
            if (info->view && k == 0 && j == 0) continue;   /* checked above */
            return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s '%s'): output %u overlaps input %u", i, info->name,
                           ep_view_name(v, b->name), k, j);
        }
        for (uint16_t j = 0; j < k; j++)
            if (overlap(o, op->out[j]))
                return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): outputs overlap", i, info->name);
        if (op->scratch_size) {
            uintptr_t ps = (uintptr_t)op->scratch, po = (uintptr_t)o->data;
            if (o->nbytes && ps < po + o->nbytes && po < ps + op->scratch_size)
                return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): scratch overlaps an output", i, info->name);
        }
    }
    if (op->scratch_size)
        for (uint16_t j = 0; j < op->n_in; j++) {
            const ep_tensor *x = op->in[j];
            uintptr_t ps = (uintptr_t)op->scratch, px = x ? (uintptr_t)x->data : 0;
            if (x && x->storage == EP_STORAGE_ARENA && x->nbytes && ps < px + x->nbytes && px < ps + op->scratch_size)
                return ep_fail(e, EP_ERR_PLAN_OP, "op %u (%s): scratch overlaps an input", i, info->name);
        }
    return EP_OK;
}

ep_status ep_session_open(ep_session **out, const void *plan, size_t plan_len, void *arena, size_t arena_len,
                          const ep_options *opt) {
    ep_err err = {0, 0};
    uint64_t mask = ~(uint64_t)0;
    int check_crc = 1;
    if (opt) {
        if (opt->struct_size < offsetof(ep_options, error_buf_len) + sizeof(uint32_t)) return EP_ERR_INVALID_ARG;
        err.buf = opt->error_buf;
        err.len = opt->error_buf_len;
        if (err.buf && err.len) err.buf[0] = '\0';
        if (opt->cpu_features_mask) mask = opt->cpu_features_mask;
        if (opt->flags & EP_OPT_SKIP_CRC) check_crc = 0;
    }
    if (!out) return ep_fail(&err, EP_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (opt && opt->struct_size >= offsetof(ep_options, public_key) + sizeof(opt->public_key) && opt->public_key) {
        const ep_status vs = ep_plan_verify(plan, plan_len, opt->public_key);
        if (vs) return ep_fail(&err, vs, "%s", ep_status_str(vs));
        check_crc = 1;   /* the signature leaves out the CRC field: the CRC covers it */
    }
    ep_plan_view v;
    int rc = ep_plan_parse(&v, plan, plan_len, check_crc, &err);
    if (rc) return rc;
    uint64_t cpu = ep_cpu_features() & mask;
    if (v.hdr->required_features & ~cpu)
        return ep_fail(&err, EP_ERR_PLAN_FEATURES, "plan needs CPU features 0x%llx, this CPU has 0x%llx",
                       (unsigned long long)v.hdr->required_features, (unsigned long long)cpu);
    if (!arena) return ep_fail(&err, EP_ERR_INVALID_ARG, "arena is NULL");
    if ((uintptr_t)arena % EP_ARENA_ALIGN)
        return ep_fail(&err, EP_ERR_ARENA_ALIGN, "arena must be %d-byte aligned", EP_ARENA_ALIGN);
    uint64_t tables = ep_session_table_bytes(&v);
    uint64_t need = tables + v.hdr->arena_size;
    if (arena_len < need)
        return ep_fail(&err, EP_ERR_ARENA_TOO_SMALL, "arena too small: %llu bytes given, %llu needed",
                       (unsigned long long)arena_len, (unsigned long long)need);

    /* carve the session tables: the larger tables first, so that each starts aligned for its type */
    uint8_t *p = (uint8_t *)arena;
    ep_session *s = (ep_session *)(void *)p;
    memset(s, 0, sizeof(*s));
    p += EP_SESSION_BYTES;
    s->tensors = (ep_tensor *)(void *)p;
    p += (uint64_t)v.n_tensors * EP_SESSION_TENSOR_BYTES;
    s->ops = (ep_bound_op *)(void *)p;
    p += (uint64_t)v.n_ops * EP_SESSION_OP_BYTES;
    s->parts = (ep_partition *)(void *)p;   /* 64-aligned: the tables before it are multiples of 64 */
    p += (uint64_t)v.n_partitions * EP_SESSION_PARTITION_BYTES;
    s->n_parts = v.n_partitions;
    s->sym_val = (int64_t *)(void *)p;
    p += (uint64_t)v.n_syms * EP_SESSION_SYM_BYTES;
    s->io_ptrs = (ep_tensor **)(void *)p;
    p += (uint64_t)v.n_opio * EP_SESSION_OPIO_BYTES;
    s->io_index = (uint32_t *)(void *)p;
    s->n_syms = v.n_syms;
    s->dynamic = EP_HAVE_DYNAMIC && v.n_syms > 0;   /* plan.c refuses symbols when the build has no support */
    s->region = (uint8_t *)arena + tables;
    s->view = v;
    s->n_tensors = v.n_tensors;
    s->n_ops = v.n_ops;
    s->n_inputs = v.n_inputs;
    s->n_outputs = v.n_outputs;

    for (uint32_t i = 0; i < v.n_tensors; i++) bind_tensor(&s->tensors[i], ep_view_tensor(&v, i), i, &v, s->region);
    for (uint32_t i = 0; i < v.n_opio; i++)
        s->io_ptrs[i] = v.opio[i] == EP_NO_TENSOR || v.opio[i] >= v.n_tensors ? NULL : &s->tensors[v.opio[i]];
    for (uint32_t i = 0; i < v.n_io; i++) s->io_index[i] = ep_view_io(&v, i)->tensor;

    ep_kernel_table table;
    ep_kernels_init(&table, cpu);
    for (uint32_t i = 0; i < v.n_ops; i++) {
        const ep_op_rec *r = ep_view_op(&v, i);
        const ep_op_info *info = ep_op_info_get(r->opcode);   /* non-NULL: checked by ep_plan_parse */
        ep_bound_op *b = &s->ops[i];
        memset(b, 0, sizeof *b);   /* the arena is the caller's uninitialised memory */
        b->fn = table.fn[r->opcode][r->variant];
        if (!b->fn)
            return ep_fail(&err, EP_ERR_PLAN_UNSUPPORTED, "op %u (%s '%s'): kernel variant %u not in this build",
                           i, info->name, ep_view_name(&v, r->name), r->variant);
        b->name = r->name;
        b->op.params = v.params + r->params_offset;
        b->op.in = s->io_ptrs + r->io_first;
        b->op.out = s->io_ptrs + r->io_first + r->n_in;
        b->op.n_in = r->n_in;
        b->op.n_out = r->n_out;
        b->op.opcode = r->opcode;
        b->op.variant = r->variant;
        b->op.scratch = r->scratch_size ? s->region + r->scratch_offset : NULL;
        b->op.scratch_size = r->scratch_size;
        if ((rc = check_layouts(b, info, i, &err))) return rc;
        if ((rc = check_shapes(b, info, i, &v, &err))) return rc;
        if ((rc = check_aliasing(b, info, i, &v, &err))) return rc;
        if (info->data_dep && !EP_HAVE_DYNAMIC)
            return ep_fail(&err, EP_ERR_PLAN_UNSUPPORTED, "op %u (%s): data-dependent sizes need a build with "
                           "variable dims", i, info->name);
        b->data_dep = info->data_dep;
        b->exact_fp = b->op.opcode == EP_OP_CAST;
        if (EP_HAVE_PARTITIONS && r->opcode == EP_OP_DELEGATE) {
            b->ctl = EP_CTL_DELEGATE;
            b->skip = ((const ep_delegate_params *)b->op.params)->skip;
        } else if (EP_HAVE_CONTROL && info->control) {
            b->ctl = r->opcode == EP_OP_IF ? EP_CTL_IF : EP_CTL_ELSE;
            b->skip = ((const ep_branch_params *)b->op.params)->skip;
        }
        b->dyn = EP_HAVE_DYNAMIC && (info->data_dep || op_has_symbols(&b->op, &v));
        s->dynamic |= info->data_dep;
    }
    if ((EP_HAVE_CONTROL || EP_HAVE_PARTITIONS) && (rc = ep_check_branches(s, &err))) return rc;
    for (uint32_t i = 0; i < v.n_syms; i++) s->sym_val[i] = -1;
    if (EP_HAVE_DYNAMIC && s->dynamic && (rc = ep_shapes_check_bound(s, &err))) return rc;
    if (EP_HAVE_GROUPS && (rc = ep_group_bind(s, &err))) return rc;
    reset_state(s);
    session_start_extras(s, opt);
    if (EP_HAVE_PARTITIONS && s->n_parts && (rc = ep_partitions_open(s, opt, &err))) {
        ep_pool_stop(&s->pool);
        return rc;
    }
    s->magic = EP_SESSION_MAGIC;
    *out = s;
    return EP_OK;
}

void ep_session_close(ep_session *s) {
    if (s && s->magic == EP_SESSION_MAGIC) {
        if (EP_HAVE_PARTITIONS) ep_partitions_close(s);
        ep_pool_stop(&s->pool);
        s->magic = 0;
    }
}


ep_status ep_session_query(const ep_session *s, ep_session_info *info) {
    if (!ep_session_live(s) || !info || info->struct_size < offsetof(ep_session_info, n_threads) + 4)
        return EP_ERR_INVALID_ARG;
    const uint32_t size = info->struct_size;
    ep_session_info v = {sizeof(v), s->n_inputs, s->n_outputs, s->n_ops, s->pool.n_threads, s->n_parts, s->last_error};
    memcpy(info, &v, size < sizeof(v) ? size : sizeof(v));
    info->struct_size = size;
    return EP_OK;
}


/* Bytes of t at its current shape; 0 with EP_ERR_INTERNAL in *rc when the shape is not a valid one
 * within the tensor's capacity (open and ep_run prove it is; this keeps a copy in bounds regardless). */
static uint64_t current_bytes(const ep_tensor *t, int *rc) {
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] < 0) return *rc = EP_ERR_INTERNAL, 0;
    const uint64_t n = (uint64_t)ep_numel(t) * ep_dtype_size(t->dtype);
    if (n > t->nbytes) return *rc = EP_ERR_INTERNAL, 0;
    return *rc = EP_OK, n;
}

static int describe(const ep_session *s, const ep_tensor *t, ep_io_desc *d) {
    if (!t || !d) return t ? EP_ERR_INVALID_ARG : EP_ERR_INDEX;
    int rc;
    const uint64_t nbytes = current_bytes(t, &rc);
    if (rc) return rc;
    memset(d, 0, sizeof(*d));
    d->name = ep_view_name(&s->view, ep_view_tensor(&s->view, t->index)->name);
    d->dtype = t->dtype;
    d->rank = t->rank;
    const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
    for (int i = 0; i < t->rank; i++) {
        d->dims[i] = t->dims[i];
        d->max_dims[i] = d->min_dims[i] = r->dims[i];
        d->dim_steps[i] = 1;
        if (EP_HAVE_DYNAMIC && r->dim_sym[i]) {
            const ep_sym_rec *y = ep_view_sym(&s->view, r->dim_sym[i] - 1u);
            d->min_dims[i] = y->min;
            d->dim_names[i] = ep_view_name(&s->view, y->name);
            if (y->step > 1) d->dim_steps[i] = y->step;
        }
    }
    d->nbytes = nbytes;
    d->max_nbytes = r->nbytes;
    return EP_OK;
}

ep_status ep_session_io_desc(const ep_session *s, uint32_t kind, uint32_t i, ep_io_desc *d) {
    if (kind > EP_IO_OUTPUT) return EP_ERR_INVALID_ARG;
    return describe(s, ep_session_io(s, i, (int)kind), d);
}

ep_status ep_session_find(const ep_session *s, uint32_t kind, const char *name, uint32_t *index) {
    if (!ep_session_live(s) || !name || !index || kind > EP_IO_OUTPUT) return EP_ERR_INVALID_ARG;
    uint32_t n = kind == EP_IO_OUTPUT ? s->n_outputs : s->n_inputs;
    for (uint32_t i = 0; i < n; i++) {
        const ep_tensor *t = ep_session_io(s, i, (int)kind);
        if (strcmp(ep_view_name(&s->view, ep_view_tensor(&s->view, t->index)->name), name) == 0) {
            *index = i;
            return EP_OK;
        }
    }
    return EP_ERR_NOT_FOUND;
}

void *ep_session_io_buffer(ep_session *s, uint32_t kind, uint32_t i) {
    const ep_tensor *t = kind <= EP_IO_OUTPUT ? ep_session_io(s, i, (int)kind) : NULL;
    return t ? t->data : NULL;
}

ep_status ep_session_set_input(ep_session *s, uint32_t i, const void *data, size_t nbytes) {
    const ep_tensor *t = ep_session_io(s, i, 0);
    if (!t) return ep_session_live(s) ? EP_ERR_INDEX : EP_ERR_INVALID_ARG;
    int rc;
    const uint64_t n = current_bytes(t, &rc);
    if (rc) return rc;
    if (nbytes != n) return EP_ERR_SIZE;
    if (n && !data) return EP_ERR_INVALID_ARG;
    if (n) memcpy(t->data, data, nbytes);
    return EP_OK;
}

ep_status ep_session_get_output(const ep_session *s, uint32_t i, void *data, size_t nbytes) {
    const ep_tensor *t = ep_session_io(s, i, 1);
    if (!t) return ep_session_live(s) ? EP_ERR_INDEX : EP_ERR_INVALID_ARG;
    int rc;
    const uint64_t n = current_bytes(t, &rc);
    if (rc) return rc;
    if (nbytes != n) return EP_ERR_SIZE;
    if (n && !data) return EP_ERR_INVALID_ARG;
    if (n) memcpy(data, t->data, nbytes);
    return EP_OK;
}

static int run_ops(ep_session *s, uint64_t fp_caller, uint64_t fp_run) {
    if (EP_HAVE_DYNAMIC && s->dynamic && ep_shapes_bind_inputs(s)) return EP_ERR_INVALID_ARG;
    for (uint32_t i = 0; i < s->n_ops; i++) {
        ep_bound_op *b = &s->ops[i];
        if (EP_HAVE_PARTITIONS && b->ctl == EP_CTL_DELEGATE) {   /* the delegate ran: skip its CPU ops */
            if (ep_partition_run(s, b)) i += b->skip;
            continue;
        }
        if (EP_HAVE_CONTROL && b->ctl) {   /* IF: false skips to its ELSE; ELSE: the then branch ran, skip the else */
            const int taken = b->ctl == EP_CTL_IF && *(const uint8_t *)b->op.in[0]->data;
            if (taken && ((const ep_branch_params *)b->op.params)->fail) {   /* a bound check (1.3) */
                snprintf(s->last_error, sizeof(s->last_error), "op %u (if '%s'): %s", i,
                         ep_view_name(&s->view, b->name), ep_status_str(EP_ERR_RUN_BOUND));
                return EP_ERR_RUN_BOUND;
            }
            if (!taken) i += b->skip;
            continue;
        }
        if (EP_HAVE_DYNAMIC && b->dyn) {
            const int src = ep_shapes_resolve_op(s, i, b);
            if (src) return src;
        }
        if (b->exact_fp) ep_fp_set(fp_caller);
        int rc = b->fn(&b->op);
        if (b->exact_fp) ep_fp_set(fp_run);
        if (rc) {
            const ep_op_info *info = ep_op_info_get(b->op.opcode);
            snprintf(s->last_error, sizeof(s->last_error), "op %u (%s '%s'): %s", i, info ? info->name : "?",
                     ep_view_name(&s->view, b->name), ep_status_str(rc));
            return rc;
        }
        if (EP_HAVE_DYNAMIC && b->data_dep && (rc = ep_shapes_bind_data(s, i, b))) return rc;
    }
    /* outputs that are views of an op's output (a reshape at the end) take their dims from the symbols */
    if (EP_HAVE_DYNAMIC && s->dynamic) return ep_shapes_resolve_outputs(s);
    return EP_OK;
}

int ep_session_run(ep_session *s) {
    s->last_error[0] = '\0';
    if (ep_pool_forked(&s->pool)) return EP_ERR_FORKED;   /* its workers are in the parent */
    const uint64_t fp = ep_fp_get(), fp_run = ep_fp_flushing(fp);
    ep_fp_set(fp_run);
    const int rc = run_ops(s, fp, fp_run);
    ep_fp_set(fp);
    s->run_info.run++;   /* every run draws new random numbers, a failed one too */
    /* a failed run leaves no partial lengths behind: variable output dims read 0 until a run succeeds */
    if (rc && EP_HAVE_DYNAMIC && s->dynamic) ep_shapes_clear_outputs(s);
    return rc;
}

ep_status ep_run(ep_session *s) {
    if (!ep_session_live(s)) return EP_ERR_INVALID_ARG;
    if (EP_HAVE_GROUPS && s->group_busy) return ep_group_run(s);   /* a group member: one member at a time */
    return ep_session_run(s);
}

ep_status ep_reset(ep_session *s) {
    if (!ep_session_live(s)) return EP_ERR_INVALID_ARG;
    reset_state(s);
    s->run_info.run = 0;   /* and the random ops start their sequences again */
    return EP_OK;
}


/* ---- threads and profiling (profile.c) ---- */

static void session_start_extras(ep_session *s, const ep_options *opt) {
    uint32_t want = 1;
    if (opt && opt->struct_size >= offsetof(ep_options, n_threads) + sizeof(uint32_t)) want = opt->n_threads;
    ep_pool_start(&s->pool, want);
    s->run_info.seed = opt && opt->struct_size >= offsetof(ep_options, seed) + sizeof(uint64_t) ? opt->seed : 0;
    s->run_info.run = 0;
    s->profiling = opt && (opt->flags & EP_OPT_PROFILE);
    for (uint32_t i = 0; i < s->n_ops; i++) {
        ep_bound_op *b = &s->ops[i];
        b->op.pool = s->pool.n_threads > 1 ? &s->pool : NULL;
        b->op.run = &s->run_info;
        b->prof_calls = b->prof_ns = b->prof_last_start = b->prof_last_ns = 0;
        b->prof_fn = NULL;
        if (opt && (opt->flags & EP_OPT_PROFILE)) ep_profile_bind(b);
    }
}

