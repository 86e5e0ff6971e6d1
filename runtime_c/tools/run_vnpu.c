/* edgeplan-run --vnpu PRESET: the plan's partitions on the virtual NPU (include/edgeplan/vnpu.h), with its
 * modelled cycles and traffic printed after the runs. */
#include <stdio.h>
#include "edgeplan/vnpu.h"
#include "run_npu.h"

static ep_vnpu_device dev;   /* ~20 KiB of counters and per-op trace: static, as a board application would */
static const ep_delegate *list[1];

int run_npu_attach(const char *preset, ep_options *opt, char *err, size_t err_len) {
    ep_vnpu_config cfg;
    if (ep_vnpu_preset(preset, &cfg) != EP_OK) {
        int n = snprintf(err, err_len, "unknown vNPU preset '%s' (", preset);
        for (uint32_t i = 0; i < ep_vnpu_preset_count() && n > 0 && (size_t)n < err_len; i++)
            n += snprintf(err + n, err_len - (size_t)n, i ? ", %s" : "%s", ep_vnpu_preset_name(i));
        if (n > 0 && (size_t)n < err_len) snprintf(err + n, err_len - (size_t)n, ")");
        return 1;
    }
    if (ep_vnpu_open(&dev, &cfg) != EP_OK) {
        snprintf(err, err_len, "vNPU preset '%s' does not open", preset);
        return 1;
    }
    list[0] = &dev.delegate;
    opt->delegates = list;
    opt->n_delegates = 1;
    return 0;
}

void run_npu_report(const ep_session *s, int repeat) {
    ep_session_info si = {.struct_size = sizeof(si)};
    if (ep_session_query(s, &si) != EP_OK) return;
    for (uint32_t k = 0; k < si.n_partitions; k++) {
        ep_partition_info p = {.struct_size = sizeof(p)};
        if (ep_session_partition(s, k, &p) != EP_OK) continue;
        printf("partition %u (op %u, %u CPU ops): %s%s%s\n", k, p.op, p.n_cpu_ops, p.status ? "CPU: " : "",
               p.status ? p.reason : p.delegate, p.last_execute_status ? " (an execute failed: CPU ran)" : "");
    }
    const ep_vnpu_counters *c = &dev.last;
    const double us = (double)c->active_cycles / dev.cfg.clock_mhz;
    printf("%s: last run %llu cycles (%.1f us at %u MHz), %llu ops, %llu MACs (%.1f%% of the array), SRAM rd %llu wr %llu "
           "B, external rd %llu wr %llu B; %d runs\n", dev.name, (unsigned long long)c->active_cycles, us,
           dev.cfg.clock_mhz, (unsigned long long)c->ops, (unsigned long long)c->mac_ops,
           c->active_cycles ? 100.0 * (double)c->mac_ops / dev.cfg.macs_per_cycle / (double)c->active_cycles : 0.0,
           (unsigned long long)c->sram_rd_bytes, (unsigned long long)c->sram_wr_bytes,
           (unsigned long long)c->ext_rd_bytes, (unsigned long long)c->ext_wr_bytes, repeat);
}
