/* edgeplan-run's accelerator seam: --vnpu PRESET registers the virtual NPU (run_vnpu.c) in a build that has it
 * (-Dvnpu), and is refused with a reason in one that does not (run_novnpu.c). */
#ifndef EP_RUN_NPU_H
#define EP_RUN_NPU_H

#include <stddef.h>
#include "edgeplan/edgeplan.h"

/* Registers the device of preset in opt (its storage is static: one per process). 0, or 1 with err set. */
int run_npu_attach(const char *preset, ep_options *opt, char *err, size_t err_len);
/* Prints where each partition ran and the device's counters of the last run. */
void run_npu_report(const ep_session *s, int repeat);

#endif
