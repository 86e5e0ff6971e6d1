/* A build without plan signatures (-Dsign=false): a key given at open cannot be checked, so the plan is refused. */
#include "edgeplan/edgeplan.h"

ep_status ep_plan_verify(const void *plan, size_t plan_len, const uint8_t *key) {
    (void)plan, (void)plan_len, (void)key;
    return EP_ERR_PLAN_UNSUPPORTED;
}
