/* The structure of a plan's control ops, checked at open (a build with IF or DELEGATE ops; its own size group).
 * IF / ELSE must describe properly nested branches: an IF's ELSE lies inside the branch that holds the
 * IF, the else branch ends inside it too, and an ELSE is only ever the end of an IF's then branch. The
 * executor then only ever moves forward, to an op of the plan. A stack of open regions (then or else
 * branches), each with the index one past its last op. A DELEGATE op's CPU ops (its fallback) lie inside
 * the branch that holds it, with no control op among them. */
#include "session_impl.h"

int ep_check_branches(const ep_session *s, ep_err *e) {
    uint32_t end[EP_MAX_BRANCH_DEPTH];
    uint8_t is_then[EP_MAX_BRANCH_DEPTH];
    int depth = 0;
    for (uint32_t i = 0; i < s->n_ops; i++) {
        while (depth && !is_then[depth - 1] && end[depth - 1] == i) depth--;   /* else branches ending here */
        const ep_bound_op *b = &s->ops[i];
        const uint64_t limit = depth ? end[depth - 1] : s->n_ops;
        if (depth && is_then[depth - 1] && end[depth - 1] == i) {   /* this IF's ELSE (checked at the IF) */
            const uint64_t fin = (uint64_t)i + 1 + b->skip;
            const uint64_t outer = depth > 1 ? end[depth - 2] : s->n_ops;
            if (fin > outer) return ep_fail(e, EP_ERR_PLAN_OP, "op %u (else): its branch runs past its own branch", i);
            is_then[depth - 1] = 0;
            end[depth - 1] = (uint32_t)fin;
        } else if (b->ctl == EP_CTL_ELSE) {
            return ep_fail(e, EP_ERR_PLAN_OP, "op %u (else): not the end of an IF's then branch", i);
        } else if (b->ctl == EP_CTL_DELEGATE) {   /* its CPU ops: inside this branch, no control op among them */
            if (b->skip < 1 || (uint64_t)i + b->skip >= limit)
                return ep_fail(e, EP_ERR_PLAN_OP, "op %u (delegate): its %u CPU ops run past its branch", i, b->skip);
            for (uint32_t j = i + 1; j <= i + b->skip; j++)
                if (s->ops[j].ctl) return ep_fail(e, EP_ERR_PLAN_OP, "op %u (delegate): op %u among its CPU ops "
                                                  "is a control op", i, j);
        } else if (b->ctl == EP_CTL_IF) {
            const uint64_t els = (uint64_t)i + b->skip;
            if (els >= limit || s->ops[els].ctl != EP_CTL_ELSE)
                return ep_fail(e, EP_ERR_PLAN_OP, "op %u (if): no ELSE %u ops on inside its branch", i, b->skip);
            if (depth == EP_MAX_BRANCH_DEPTH) return ep_fail(e, EP_ERR_PLAN_OP, "op %u (if): branches nest too deep", i);
            is_then[depth] = 1;
            end[depth++] = (uint32_t)els;
        }
    }
    return EP_OK;
}
