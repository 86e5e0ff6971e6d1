/* Partitions: the plan's DELEGATE ops, bound at open to the delegates the application registers
 * (include/edgeplan/delegate.h), run by the executor, destroyed at close.
 *
 * A partition falls back to its CPU ops (the skip ops after the DELEGATE op) when no registered delegate
 * runs its blob's kind, when the delegate's vtable is of another ABI, or when its init refuses the blob;
 * the reason is kept in the partition's record (ep_session_partition). Open fails only for a malformed
 * plan: a partition number out of range or repeated, too many operands, or variable dims. */
#include <stdio.h>
#include <string.h>
#include "session_impl.h"

static const ep_delegate_params *params_of(const ep_bound_op *b) { return (const ep_delegate_params *)b->op.params; }

static void describe_tensor(ep_delegate_tensor *d, const ep_tensor *t) {
    memset(d, 0, sizeof(*d));
    d->data = t->data;
    d->nbytes = t->nbytes;
    d->dtype = t->dtype;
    d->rank = t->rank;
    for (int k = 0; k < t->rank; k++) d->dims[k] = t->dims[k];
}

/* The vtable fields this runtime calls, present and of this ABI. */
static int vtable_ok(const ep_delegate *d) {
    return d && d->struct_size >= offsetof(ep_delegate, destroy) + sizeof(d->destroy) &&
           d->abi_version == EP_DELEGATE_ABI_VERSION && d->init && d->execute && d->destroy;
}

static void bind_delegate(ep_partition *p, const ep_options *opt) {
    const uint32_t n = opt && opt->struct_size >= offsetof(ep_options, n_delegates) + sizeof(uint32_t) &&
                       opt->delegates ? opt->n_delegates : 0;
    const ep_delegate *match = NULL;
    for (uint32_t k = 0; k < n && !match; k++)
        if (opt->delegates[k] && opt->delegates[k]->kind == p->desc.kind) match = opt->delegates[k];
    if (!match) {
        p->status = EP_ERR_NOT_FOUND;
        snprintf(p->reason, sizeof p->reason, "no delegate for blob kind 0x%08x registered", (unsigned)p->desc.kind);
        return;
    }
    if (!vtable_ok(match)) {
        p->status = EP_ERR_DELEGATE_ABI;
        snprintf(p->reason, sizeof p->reason, "delegate ABI %u, runtime %d", (unsigned)match->abi_version,
                 EP_DELEGATE_ABI_VERSION);
        return;
    }
    char why[sizeof p->reason];
    why[0] = '\0';
    const int32_t rc = match->init(match->user, &p->desc, why, (uint32_t)sizeof why);
    if (rc != EP_OK) {
        why[sizeof why - 1] = '\0';
        p->status = rc < 0 ? rc : EP_ERR_DELEGATE;
        snprintf(p->reason, sizeof p->reason, "%s", why[0] ? why : ep_status_str((ep_status)p->status));
        return;
    }
    p->d = match;
    p->status = EP_OK;
}

int ep_partitions_open(ep_session *s, const ep_options *opt, ep_err *e) {
    for (uint32_t k = 0; k < s->n_parts; k++) memset(&s->parts[k], 0, sizeof(ep_partition));
    for (uint32_t i = 0; i < s->n_ops; i++) {
        const ep_bound_op *b = &s->ops[i];
        if (b->ctl != EP_CTL_DELEGATE) continue;
        const ep_delegate_params *pp = params_of(b);
        if (pp->partition >= s->n_parts || s->parts[pp->partition].bound)
            return ep_fail(e, EP_ERR_PLAN_PARAMS, "op %u (delegate): partition %u out of range or repeated", i,
                           pp->partition);
        if (b->op.n_in - 1u > EP_DELEGATE_MAX_IO || b->op.n_out > EP_DELEGATE_MAX_IO)
            return ep_fail(e, EP_ERR_PLAN_OP, "op %u (delegate): more than %d inputs or outputs", i,
                           EP_DELEGATE_MAX_IO);
        if (EP_HAVE_DYNAMIC && b->dyn)
            return ep_fail(e, EP_ERR_PLAN_SHAPE, "op %u (delegate): a partition's operands must be static", i);
        ep_partition *p = &s->parts[pp->partition];
        p->bound = 1;
        p->n_cpu_ops = b->skip;
        ep_delegate_partition *d = &p->desc;
        d->struct_size = sizeof(*d);
        d->index = pp->partition;
        d->kind = pp->kind;
        d->op = i;
        d->blob = b->op.in[0]->data;
        d->blob_size = b->op.in[0]->nbytes;
        d->work = b->op.scratch;
        d->work_size = b->op.scratch_size;
        d->ctx = p->ctx;
        d->n_inputs = b->op.n_in - 1u;
        d->n_outputs = b->op.n_out;
        for (uint32_t k = 0; k < d->n_inputs; k++) describe_tensor(&p->io[k], b->op.in[k + 1]);
        for (uint32_t k = 0; k < d->n_outputs; k++) describe_tensor(&p->io[d->n_inputs + k], b->op.out[k]);
        d->inputs = p->io;
        d->outputs = p->io + d->n_inputs;
    }
    /* every partition was seen once (n_parts counts the DELEGATE ops, each number was used at most once) */
    for (uint32_t k = 0; k < s->n_parts; k++) bind_delegate(&s->parts[k], opt);
    return EP_OK;
}

int ep_partition_run(ep_session *s, ep_bound_op *b) {
    ep_partition *p = &s->parts[params_of(b)->partition];
    if (!p->d) {
        p->cpu_runs++;
        return 0;
    }
    const uint64_t t0 = s->profiling ? ep_now_ns() : 0;
    const int32_t rc = p->d->execute(p->d->user, &p->desc);
    if (s->profiling) {
        const uint64_t dt = ep_now_ns() - t0;
        b->prof_calls++;
        b->prof_ns += dt;
        b->prof_last_start = t0;
        b->prof_last_ns = dt;
    }
    if (rc != EP_OK) {   /* this run computes the partition on the CPU; its inputs are untouched */
        p->last_exec = rc < 0 ? rc : EP_ERR_DELEGATE;
        p->cpu_runs++;
        return 0;
    }
    p->delegate_runs++;
    return 1;
}

void ep_partitions_close(ep_session *s) {
    for (uint32_t k = 0; k < s->n_parts; k++) {
        ep_partition *p = &s->parts[k];
        if (p->d) p->d->destroy(p->d->user, &p->desc);
        p->d = NULL;
    }
}

ep_status ep_session_partition(const ep_session *s, uint32_t k, ep_partition_info *info) {
    if (!ep_session_live(s) || !info || info->struct_size < offsetof(ep_partition_info, delegate_runs))
        return EP_ERR_INVALID_ARG;
    if (!EP_HAVE_PARTITIONS || k >= s->n_parts) return EP_ERR_INDEX;
    const ep_partition *p = &s->parts[k];
    const uint32_t size = info->struct_size;
    ep_partition_info v;
    memset(&v, 0, sizeof v);
    v.struct_size = size;
    v.index = k;
    v.op = p->desc.op;
    v.n_cpu_ops = p->n_cpu_ops;
    v.kind = p->desc.kind;
    v.status = p->status;
    v.delegate_runs = p->delegate_runs;
    v.cpu_runs = p->cpu_runs;
    v.last_execute_status = p->last_exec;
    v.delegate = p->d && p->d->name ? p->d->name : "";
    v.reason = p->reason;
    memcpy(info, &v, size < sizeof(v) ? size : sizeof(v));
    return EP_OK;
}
