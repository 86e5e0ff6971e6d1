/* edgeplan-run in a build without the virtual NPU (-Dvnpu=disabled): --vnpu is refused with the reason. */
#include <stdio.h>
#include "run_npu.h"

int run_npu_attach(const char *preset, ep_options *opt, char *err, size_t err_len) {
    (void)opt;
    snprintf(err, err_len, "--vnpu %s: this edgeplan-run was built without the virtual NPU (-Dvnpu)", preset);
    return 1;
}

void run_npu_report(const ep_session *s, int repeat) { (void)s, (void)repeat; }
