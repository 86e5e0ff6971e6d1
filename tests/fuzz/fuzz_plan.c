/* Fuzz target: a plan from untrusted bytes. The last input byte is control (threads 1-4, profiling, which
 * length each variable dim takes: its minimum, its maximum, or one in between); the rest is the plan, its CRC
 * re-sealed so that a mutation reaches the checks past it. Each input must be refused with a status or open
 * and run: a crash, a sanitizer report or a hang is a finding. Built by meson -Dfuzz=true (tests/fuzz). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edgeplan/edgeplan.h"

#define ARENA_CAP (64u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < sizeof(ep_plan_header) + 1) return 0;
    const uint8_t ctl = data[size - 1];
    const size_t len = size - 1;
    uint8_t *plan = aligned_alloc(64, (len + 63) / 64 * 64);
    if (!plan) return 0;
    memcpy(plan, data, len);
    ep_plan_header *h = (ep_plan_header *)(void *)plan;
    h->crc32c = 0;
    h->crc32c = ep_crc32c(plan, len);
    ep_plan_info info;
    if (ep_plan_query(plan, len, &info) == EP_OK && info.arena_bytes <= ARENA_CAP) {
        const size_t alen = info.arena_bytes ? (size_t)info.arena_bytes : 64;
        void *arena = aligned_alloc(64, (alen + 63) / 64 * 64);
        ep_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.n_threads = 1 + (ctl & 3);
        o.flags = ctl & 4 ? EP_OPT_PROFILE : 0;
        ep_session *s = NULL;
        if (arena && ep_session_open(&s, plan, len, arena, (size_t)info.arena_bytes, &o) == EP_OK) {
            ep_session_info si = {.struct_size = sizeof si};
            if (ep_session_query(s, &si) == EP_OK) {
                for (uint32_t i = 0; i < si.n_inputs; i++) {
                    ep_io_desc d;
                    if (ep_session_io_desc(s, EP_IO_INPUT, i, &d) != EP_OK) continue;
                    int32_t dims[8];
                    for (int k = 0; k < d.rank && k < 8; k++) {
                        const int pick = (ctl >> 3) % 3;   /* min, max, or between */
                        int32_t v = pick == 0 ? d.min_dims[k] : pick == 1 ? d.max_dims[k]
                                  : d.min_dims[k] + (d.max_dims[k] - d.min_dims[k]) / 2;
                        if (d.dim_steps[k] > 1) v -= v % d.dim_steps[k];
                        dims[k] = v;
                    }
                    if (ep_session_set_input_shape(s, i, dims, (uint32_t)d.rank) != EP_OK) continue;
                }
            }
            if (ep_run(s) == EP_OK) {
                ep_status again = ep_run(s);   /* a second run: state and profile counters carry over */
                (void)again;
            }
            ep_session_close(s);
        }
        free(arena);
    }
    free(plan);
    return 0;
}
