/* Per-op profiling (EP_OPT_PROFILE; docs/performance.md "Profiler").
 *
 * At open, each bound op's kernel pointer is swapped for a trampoline that times the real kernel with
 * CLOCK_MONOTONIC and adds to the op's counters; an unprofiled session keeps the kernels themselves, so
 * ep_run costs nothing extra without the flag. flops come from the compiler (plan META op_cost). */
#include <string.h>
#include "session_impl.h"

static ep_bound_op *bound_of(const ep_op *op) {   /* op is &b->op of a bound op in the session's arena */
    return (ep_bound_op *)(void *)((char *)(uintptr_t)op - offsetof(ep_bound_op, op));
}

static int prof_trampoline(const ep_op *op) {
    ep_bound_op *b = bound_of(op);
    const uint64_t t0 = ep_now_ns();
    const int rc = b->prof_fn(op);
    const uint64_t dt = ep_now_ns() - t0;
    b->prof_calls++;
    b->prof_ns += dt;
    b->prof_last_start = t0;
    b->prof_last_ns = dt;
    return rc;
}

void ep_profile_bind(ep_bound_op *b) {
    b->prof_fn = b->fn;
    b->fn = prof_trampoline;
}

ep_status ep_session_profile(const ep_session *s, uint32_t i, ep_op_profile *out) {
    if (!ep_session_live(s) || !out) return EP_ERR_INVALID_ARG;
    if (i >= s->n_ops) return EP_ERR_INDEX;
    const ep_bound_op *b = &s->ops[i];
    const ep_op_info *info = ep_op_info_get(b->op.opcode);
    memset(out, 0, sizeof(*out));
    out->name = ep_view_name(&s->view, b->name);
    out->kind = info ? info->name : "?";
    out->calls = b->prof_calls;
    out->total_ns = b->prof_ns;
    out->last_start_ns = b->prof_last_start;
    out->last_ns = b->prof_last_ns;
    out->flops = 0;   /* no cost model on the board: the compiler's figure is in the plan's META (op_cost) */
    for (uint32_t k = 0; k < (uint32_t)b->op.n_in + b->op.n_out; k++) {
        const ep_tensor *t = k < b->op.n_in ? b->op.in[k] : b->op.out[k - b->op.n_in];
        if (t) out->bytes += (uint64_t)ep_numel(t) * ep_dtype_size(t->dtype);
    }
    out->profiled = b->fn == prof_trampoline;
    return EP_OK;
}

ep_status ep_session_profile_reset(ep_session *s) {
    if (!ep_session_live(s)) return EP_ERR_INVALID_ARG;
    for (uint32_t i = 0; i < s->n_ops; i++) {
        ep_bound_op *b = &s->ops[i];
        b->prof_calls = b->prof_ns = b->prof_last_start = b->prof_last_ns = 0;
    }
    return EP_OK;
}
