/* Version and status strings. */
#include "internal.h"

#ifndef EP_VERSION_STRING
#define EP_VERSION_STRING "0.2.0"
#endif

const char *ep_version(void) { return EP_VERSION_STRING; }

const char *ep_status_str(ep_status status) {
    switch (status) {
    case EP_OK: return "ok";
    case EP_ERR_INVALID_ARG: return "invalid argument";
    case EP_ERR_INDEX: return "input/output index out of range";
    case EP_ERR_SIZE: return "buffer size does not match the tensor";
    case EP_ERR_NOT_FOUND: return "no input/output of that name";
    case EP_ERR_FORKED: return "session used after fork(): open a new one";
    case EP_ERR_GROUP_BUSY: return "another session of its group is running";
    case EP_ERR_PLAN_TRUNCATED: return "plan is truncated";
    case EP_ERR_PLAN_MAGIC: return "not an edgeplan plan";
    case EP_ERR_PLAN_VERSION: return "unsupported plan format version";
    case EP_ERR_PLAN_CRC: return "plan checksum mismatch";
    case EP_ERR_PLAN_SECTION: return "invalid plan section table";
    case EP_ERR_PLAN_TENSOR: return "invalid tensor record in plan";
    case EP_ERR_PLAN_OP: return "invalid op record in plan";
    case EP_ERR_PLAN_PARAMS: return "invalid op parameters in plan";
    case EP_ERR_PLAN_SHAPE: return "op shapes in plan are inconsistent";
    case EP_ERR_PLAN_UNSUPPORTED: return "plan uses an op or kernel this build lacks";
    case EP_ERR_PLAN_FEATURES: return "plan needs CPU features this CPU lacks";
    case EP_ERR_PLAN_ALIGN: return "plan buffer is misaligned";
    case EP_ERR_PLAN_IO: return "invalid input/output records in plan";
    case EP_ERR_PLAN_UNSIGNED: return "plan is not signed";
    case EP_ERR_PLAN_SIGNATURE: return "bad plan signature";
    case EP_ERR_ARENA_TOO_SMALL: return "arena too small";
    case EP_ERR_ARENA_ALIGN: return "arena is misaligned";
    case EP_ERR_RUN_INDEX: return "index value out of range (or integer division by zero)";
    case EP_ERR_RUN_BOUND: return "size exceeds its planned bound";
    case EP_ERR_RUN_SHAPE: return "invalid run-time shape";
    case EP_ERR_DELEGATE: return "delegate failed";
    case EP_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
    }
}
