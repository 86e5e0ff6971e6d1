/* IF / ELSE / DELEGATE: the executor runs them (session.c, moving along the op list); the table entry exists so that
 * a build has the ops, and this is never called. */
#include "ep_ops.h"

int ep_ref_control_any(const ep_op *op) {
    (void)op;
    return EP_OK;
}
