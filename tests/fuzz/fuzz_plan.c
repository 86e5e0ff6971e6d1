/* Fuzz target: a plan from untrusted bytes. The last input byte is control (threads 1-4, profiling, which
 * length each variable dim takes: its minimum, its maximum, or one in between); the rest is the plan, its CRC
 * re-sealed so that a mutation reaches the checks past it. Each input must be refused with a status or open
 * and run: a crash, a sanitizer report or a hang is a finding. Built by meson -Dfuzz=true (tests/fuzz).
 *
 * LLVMFuzzerCustomMutator below makes libFuzzer's mutations field-aware: three in four are tests/fuzz/
 * plan_mutate.h's (header fields, section table entries, tensor / op / symbol / io records, operand indices, op
 * parameters, names, truncation), the rest libFuzzer's own byte-level ones (LLVMFuzzerMutate) on the plan or on
 * the control byte; the plan's CRC is re-sealed after each. The mutation driver (driver.c) calls it too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edgeplan/edgeplan.h"
#include "plan_mutate.h"

#define ARENA_CAP (64u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* data: the plan then its control byte. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    pm_state = seed;
    if (size < 2 || pm_below(4) == 0) {
        if (size >= 2 && pm_below(8) == 0) {   /* the control byte alone */
            uint8_t c = data[size - 1];
            LLVMFuzzerMutate(&c, 1, 1);
            data[size - 1] = c;
            return size;
        }
        return LLVMFuzzerMutate(data, size, max_size);   /* libFuzzer's own, on all the bytes */
    }
    const uint8_t ctl = data[size - 1];
    size_t len = size - 1;
    int sealed = 1;
    for (int k = 0, n = 1 + (int)pm_below(3); k < n && len; k++) len = pm_mutate(data, len, &sealed);
    if (len >= sizeof(ep_plan_header)) {   /* re-sealed: the stored input is the plan the target opens */
        const uint32_t zero = 0;
        memcpy(data + offsetof(ep_plan_header, crc32c), &zero, 4);
        const uint32_t crc = ep_crc32c(data, len);
        memcpy(data + offsetof(ep_plan_header, crc32c), &crc, 4);
    }
    data[len] = ctl;
    return len + 1;
}

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
