/* Run-time shape resolution for plans with variable dims (plan 1.1; docs/dynamic-shapes.md): symbols
 * are bound per run from the input shapes, from the shape functions of the ops that compute them and
 * from data-dependent kernels; every tensor is checked against its planned bytes before a kernel runs.
 * A build without variable dims (EP_HAVE_DYNAMIC 0) never calls these, and --gc-sections drops them. */
#include <stdio.h>
#include <string.h>
#include "session_impl.h"

/* ---- variable shapes (plan 1.1): symbols are bound per run, shapes resolved op by op ---- */

static const char *sym_name(const ep_session *s, uint32_t k) {
    return ep_view_name(&s->view, ep_view_sym(&s->view, k)->name);
}

#define SYM_UNBOUND (-1)
#define SYM_OUT_OF_BOUNDS (-2)
/* Value of symbol k in this run: bound, or computed from its rule; SYM_UNBOUND when neither. */
static int64_t sym_get(ep_session *s, uint32_t k) {
    if (s->sym_val[k] >= 0) return s->sym_val[k];
    const ep_sym_rec *y = ep_view_sym(&s->view, k);
    if (!y->src) return SYM_UNBOUND;
    int64_t x = sym_get(s, y->src - 1u);   /* src, src2 < k (checked at parse): depth <= 254 */
    if (x < 0) return x;
    if (y->src2) {   /* both factors within their symbols' maxima, whose product is <= 2^32 */
        const int64_t x2 = sym_get(s, y->src2 - 1u);
        if (x2 < 0) return x2;
        x *= x2;
    }
    const int64_t a = (int64_t)y->mul * x + y->add;          /* |.| < 2^56 */
    const int64_t q = a / y->div - (a % y->div != 0 && a < 0);
    if (q < 0 || q > y->max) return SYM_OUT_OF_BOUNDS;
    return s->sym_val[k] = q;
}

/* Binds symbol k to v (from a shape function or a kernel), or checks v against its value. */
static int sym_bind(ep_session *s, uint32_t i, uint32_t k, int64_t v) {
    const ep_sym_rec *y = ep_view_sym(&s->view, k);
    const int64_t cur = sym_get(s, k);
    if (cur == SYM_OUT_OF_BOUNDS || v < 0 || v > y->max) {
        snprintf(s->last_error, sizeof(s->last_error), "op %u: '%s' = %lld exceeds its bound %d", i,
                 sym_name(s, k), (long long)(cur == SYM_OUT_OF_BOUNDS ? -1 : v), y->max);
        return EP_ERR_RUN_BOUND;
    }
    if (cur >= 0 && cur != v) {
        snprintf(s->last_error, sizeof(s->last_error), "op %u: '%s' is %lld here but %lld before (plan inconsistent)",
                 i, sym_name(s, k), (long long)v, (long long)cur);
        return EP_ERR_PLAN_SHAPE;
    }
    s->sym_val[k] = v;
    return EP_OK;
}

static int over_capacity(const ep_tensor *t) {
    return (uint64_t)ep_numel(t) * ep_dtype_size(t->dtype) > t->nbytes;
}

/* Gives t's variable dims their symbols' values (-1 where a symbol is not bound yet). */
static int resolve_tensor(ep_session *s, uint32_t i, ep_tensor *t) {
    const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
    int complete = 1;
    for (int d = 0; d < r->rank; d++) {
        if (!r->dim_sym[d]) continue;
        const int64_t v = sym_get(s, r->dim_sym[d] - 1u);
        if (v == SYM_OUT_OF_BOUNDS) return sym_bind(s, i, r->dim_sym[d] - 1u, -1);
        t->dims[d] = (int32_t)v;
        complete &= v >= 0;
    }
    if (complete && over_capacity(t)) {
        snprintf(s->last_error, sizeof(s->last_error), "op %u: tensor %u exceeds its planned bytes", i, t->index);
        return EP_ERR_RUN_BOUND;
    }
    return EP_OK;
}

int ep_shapes_resolve_op(ep_session *s, uint32_t i, const ep_bound_op *b) {
    const ep_op *op = &b->op;
    const ep_op_info *info = ep_op_info_get(op->opcode);
    ep_shape out[EP_MAX_OP_OUTPUTS];
    uint64_t scratch = 0;
    int rc;
    for (uint16_t k = 0; k < op->n_in; k++) {
        const ep_tensor *x = op->in[k];
        if (!x) continue;
        if ((rc = resolve_tensor(s, i, op->in[k]))) return rc;
        for (int d = 0; d < x->rank; d++)
            if (x->dims[d] < 0) {   /* a symbol nothing has bound yet: the plan's order is wrong */
                snprintf(s->last_error, sizeof(s->last_error), "op %u: input %u has an unknown length", i, k);
                return EP_ERR_PLAN_SHAPE;
            }
    }
    for (uint16_t k = 0; k < op->n_out; k++) {
        ep_tensor *t = op->out[k];
        if (b->data_dep) {   /* known dims take their values; the kernel sees the rest at capacity */
            const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
            for (int d = 0; d < r->rank; d++) {
                const int64_t v = r->dim_sym[d] ? sym_get(s, r->dim_sym[d] - 1u) : -1;
                t->dims[d] = v >= 0 ? (int32_t)v : r->dims[d];
            }
        } else if ((rc = resolve_tensor(s, i, t))) {
            return rc;
        }
    }
    memset(out, 0, sizeof(ep_shape) * op->n_out);
    if ((rc = info->shape(op, out, &scratch))) {
        snprintf(s->last_error, sizeof(s->last_error), "op %u (%s '%s'): shapes inconsistent at these lengths", i,
                 info->name, ep_view_name(&s->view, b->name));
        return EP_ERR_PLAN_SHAPE;
    }
    if (scratch > op->scratch_size) {
        snprintf(s->last_error, sizeof(s->last_error), "op %u (%s): needs %llu scratch bytes, %llu planned", i,
                 info->name, (unsigned long long)scratch, (unsigned long long)op->scratch_size);
        return EP_ERR_RUN_BOUND;
    }
    if (b->data_dep) return EP_OK;
    for (uint16_t k = 0; k < op->n_out; k++) {
        ep_tensor *t = op->out[k];
        const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
        if (out[k].rank != r->rank || out[k].dtype != r->dtype) return EP_ERR_PLAN_SHAPE;
        for (int d = 0; d < r->rank; d++) {
            const int32_t c = out[k].dims[d];
            if (r->dim_sym[d]) {
                if ((rc = sym_bind(s, i, r->dim_sym[d] - 1u, c))) return rc;
            } else if (c != r->dims[d]) {
                snprintf(s->last_error, sizeof(s->last_error), "op %u (%s): output %u dim %d is %d, the plan fixes %d",
                         i, info->name, k, d, c, r->dims[d]);
                return EP_ERR_PLAN_SHAPE;
            }
            t->dims[d] = c;
        }
        if (over_capacity(t)) return EP_ERR_RUN_BOUND;
    }
    return EP_OK;
}

/* After a data-dependent kernel: bind the symbols of the extents it wrote. */
int ep_shapes_bind_data(ep_session *s, uint32_t i, const ep_bound_op *b) {
    for (uint16_t k = 0; k < b->op.n_out; k++) {
        const ep_tensor *t = b->op.out[k];
        const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
        for (int d = 0; d < r->rank; d++) {
            int rc;
            if (t->dims[d] < 0 || t->dims[d] > r->dims[d]) return EP_ERR_INTERNAL;
            if (r->dim_sym[d]) {
                const uint32_t k = r->dim_sym[d] - 1u;
                const int64_t cur = sym_get(s, k);
                if (cur >= 0 && cur != t->dims[d]) {   /* the data disagree with a length declared equal */
                    snprintf(s->last_error, sizeof(s->last_error), "op %u: run-time length %d, but '%s' is %lld",
                             i, t->dims[d], sym_name(s, k), (long long)cur);
                    return EP_ERR_RUN_BOUND;
                }
                if ((rc = sym_bind(s, i, k, t->dims[d]))) return rc;
            } else if (t->dims[d] != r->dims[d]) {
                snprintf(s->last_error, sizeof(s->last_error), "op %u: a data-dependent extent the plan fixes", i);
                return EP_ERR_PLAN_SHAPE;
            }
        }
    }
    return EP_OK;
}

/* Run start: symbols unbound, then the input symbols from the inputs' shapes. */
int ep_shapes_bind_inputs(ep_session *s) {
    for (uint32_t k = 0; k < s->n_syms; k++) s->sym_val[k] = SYM_UNBOUND;
    for (uint32_t i = 0; i < s->n_inputs; i++) {
        const ep_tensor *t = &s->tensors[s->io_index[i]];
        const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
        for (int d = 0; d < r->rank; d++) {
            if (!r->dim_sym[d]) continue;
            const uint32_t k = r->dim_sym[d] - 1u;
            if (s->sym_val[k] >= 0 && s->sym_val[k] != t->dims[d]) {
                snprintf(s->last_error, sizeof(s->last_error), "inputs disagree on '%s' (%lld vs %d)", sym_name(s, k),
                         (long long)s->sym_val[k], t->dims[d]);
                return EP_ERR_INVALID_ARG;
            }
            s->sym_val[k] = t->dims[d];
        }
    }
    return EP_OK;
}

ep_status ep_session_set_input_shape(ep_session *s, uint32_t i, const int32_t *dims, uint32_t rank) {
    const ep_tensor *c = ep_session_io(s, i, 0);
    if (!c) return ep_session_live(s) ? EP_ERR_INDEX : EP_ERR_INVALID_ARG;
    ep_tensor *t = &s->tensors[c->index];
    const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
    if (!dims && rank) return EP_ERR_INVALID_ARG;
    if (rank != r->rank) return EP_ERR_SIZE;
    for (uint32_t d = 0; d < rank; d++) {
        if (EP_HAVE_DYNAMIC && r->dim_sym[d]) {
            const ep_sym_rec *y = ep_view_sym(&s->view, r->dim_sym[d] - 1u);
            if (dims[d] < y->min || dims[d] > y->max) return EP_ERR_RUN_BOUND;
            if (y->step > 1 && dims[d] % y->step) return EP_ERR_INVALID_ARG;   /* off the symbol's step */
        } else if (dims[d] != r->dims[d]) {
            return EP_ERR_SIZE;
        }
    }
    for (uint32_t d = 0; d < rank; d++) t->dims[d] = dims[d];
    return EP_OK;
}

int ep_shapes_resolve_outputs(ep_session *s) {
    for (uint32_t i = 0; i < s->n_outputs; i++) {
        ep_tensor *t = &s->tensors[s->io_index[s->n_inputs + i]];
        const int rc = resolve_tensor(s, s->n_ops, t);
        if (rc) return rc;
        for (int d = 0; d < t->rank; d++)
            if (t->dims[d] < 0) {   /* open proves this cannot happen (ep_shapes_check_bound) */
                snprintf(s->last_error, sizeof(s->last_error), "output %u: a length no op computed", i);
                return EP_ERR_INTERNAL;
            }
    }
    return EP_OK;
}

void ep_shapes_clear_outputs(ep_session *s) {
    for (uint32_t i = 0; i < s->n_outputs; i++) {
        ep_tensor *t = &s->tensors[s->io_index[s->n_inputs + i]];
        const ep_tensor_rec *r = ep_view_tensor(&s->view, t->index);
        for (int d = 0; d < r->rank; d++)
            if (r->dim_sym[d]) t->dims[d] = 0;
    }
}

/* Open: follows the op list as ep_run will and proves that every variable dim an op reads, and every
 * variable dim of a graph output, has a value by then. A symbol gets its value from an input's shape,
 * from an earlier op's output (its shape function or a data-dependent kernel), or from its rule once
 * the rule's source has one. After an If, a symbol has a value only when both branches give it one. A
 * plan that fails this would run into a length nothing computed. The symbols known are a bitset. */
#define KNOWN_WORDS ((EP_MAX_SYMS + 31) / 32)
typedef struct { uint32_t w[KNOWN_WORDS]; } known_set;

static int is_known(const known_set *k, uint32_t sym) { return (int)(k->w[sym >> 5] >> (sym & 31)) & 1; }
static void set_known(known_set *k, uint32_t sym) { k->w[sym >> 5] |= 1u << (sym & 31); }

static void close_rules(const ep_plan_view *v, known_set *known) {
    for (uint32_t k = 0; k < v->n_syms; k++) {   /* a rule's source precedes it (checked at parse) */
        const ep_sym_rec *y = ep_view_sym(v, k);
        if (!is_known(known, k) && y->src && is_known(known, y->src - 1u) && (!y->src2 || is_known(known, y->src2 - 1u)))
            set_known(known, k);
    }
}

static int first_unknown(const ep_plan_view *v, const ep_tensor *t, const known_set *known, int *dim) {
    const ep_tensor_rec *r = ep_view_tensor(v, t->index);
    for (int d = 0; d < r->rank; d++)
        if (r->dim_sym[d] && !is_known(known, r->dim_sym[d] - 1u)) {
            *dim = d;
            return (int)r->dim_sym[d] - 1;
        }
    return -1;
}

static void learn(const ep_plan_view *v, const ep_tensor *t, known_set *known) {
    const ep_tensor_rec *r = ep_view_tensor(v, t->index);
    for (int d = 0; d < r->rank; d++)
        if (r->dim_sym[d]) set_known(known, r->dim_sym[d] - 1u);
}

/* The branches of each open If (open checked their nesting): the symbols known at the IF, those the then
 * branch ended with, and where the branch being followed ends. */
typedef struct {
    known_set at_if, then_end;
    uint32_t end;
    uint8_t in_then;
} branch_frame;

int ep_shapes_check_bound(const ep_session *s, ep_err *e) {
    const ep_plan_view *v = &s->view;
    known_set known;
    branch_frame stack[EP_MAX_BRANCH_DEPTH];
    int d = 0, k, depth = 0;
    memset(&known, 0, sizeof(known));
    for (uint32_t i = 0; i < s->n_inputs; i++) learn(v, &s->tensors[s->io_index[i]], &known);
    close_rules(v, &known);
    for (uint32_t i = 0; i <= s->n_ops; i++) {
        while (EP_HAVE_CONTROL && depth && !stack[depth - 1].in_then && stack[depth - 1].end == i) {   /* an If ends: both branches */
            depth--;
            for (int w = 0; w < KNOWN_WORDS; w++) known.w[w] &= stack[depth].then_end.w[w];
        }
        if (i == s->n_ops) break;
        const ep_bound_op *b = &s->ops[i];
        if (EP_HAVE_CONTROL && depth && stack[depth - 1].in_then && stack[depth - 1].end == i) {   /* its ELSE: the else branch */
            branch_frame *f = &stack[depth - 1];
            f->then_end = known;
            known = f->at_if;
            f->in_then = 0;
            f->end = i + 1 + b->skip;
            continue;
        }
        for (uint16_t j = 0; j < b->op.n_in; j++)
            if (b->op.in[j] && (k = first_unknown(v, b->op.in[j], &known, &d)) >= 0)
                return ep_fail(e, EP_ERR_PLAN_SHAPE, "op %u (%s '%s'): input %u dim %d ('%s') has no value "
                               "when the op runs", i, ep_op_info_get(b->op.opcode)->name,
                               ep_view_name(v, b->name), j, d, sym_name(s, (uint32_t)k));
        if (EP_HAVE_CONTROL && b->ctl == EP_CTL_IF) {   /* check_branches bounded the depth */
            stack[depth].at_if = known;
            stack[depth].in_then = 1;
            stack[depth++].end = i + b->skip;
            continue;
        }
        for (uint16_t j = 0; j < b->op.n_out; j++) learn(v, b->op.out[j], &known);
        close_rules(v, &known);
    }
    for (uint32_t i = 0; i < s->n_outputs; i++) {
        const ep_tensor *t = &s->tensors[s->io_index[s->n_inputs + i]];
        if ((k = first_unknown(v, t, &known, &d)) >= 0)
            return ep_fail(e, EP_ERR_PLAN_SHAPE, "output %u '%s': dim %d ('%s') is computed by no op and no input",
                           i, ep_view_name(v, ep_view_tensor(v, t->index)->name), d, sym_name(s, (uint32_t)k));
    }
    return EP_OK;
}
