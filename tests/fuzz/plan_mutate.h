/* Field-aware mutations of a plan (runtime_c/include/edgeplan/plan_format.h), shared by the seeded harness
 * tests/c/fuzz_plans.c and the libFuzzer custom mutator of tests/fuzz/fuzz_plan.c: truncation, bit flips, header
 * fields, section table entries, tensor / op / symbol / io records, operand indices, op parameters and names,
 * each written with an interesting value, a nearby one or a random one.
 *
 * The buffer need not be aligned: every field is read and written with memcpy. The random state is pm_state
 * (splitmix64); pm_mutate reports through *sealed whether the mutation stands for a plan whose CRC was
 * recomputed afterwards (1) or one whose CRC is left stale (0). Header-only: each includer gets its own copy. */
#ifndef EP_PLAN_MUTATE_H
#define EP_PLAN_MUTATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "edgeplan/plan_format.h"

static uint64_t pm_state;
static uint64_t pm_rnd(void) {   /* splitmix64 */
    uint64_t z = (pm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t pm_below(uint64_t n) { return n ? pm_rnd() % n : 0; }

static const int64_t PM_INTERESTING[] = {0, 1, -1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 255, 256, 4096, 65535, 65536,
                                         0x7fffffff, -0x7fffffff - 1, 0x80000000ll, 0xffffffffll, 1ll << 32,
                                         1ll << 40, 0x7fffffffffffffffll};
#define PM_N_INTERESTING (sizeof(PM_INTERESTING) / sizeof(PM_INTERESTING[0]))

/* Writes an interesting or nearby value into a field of width w (1, 2, 4, 8) at p. */
static void pm_poke(uint8_t *p, int w) {
    int64_t v;
    uint64_t old = 0;
    memcpy(&old, p, (size_t)w);
    switch (pm_below(3)) {
    case 0: v = PM_INTERESTING[pm_below(PM_N_INTERESTING)]; break;
    case 1: v = (int64_t)(old + pm_below(9) - 4u); break;   /* wraps in unsigned arithmetic */
    default: v = (int64_t)pm_rnd(); break;
    }
    memcpy(p, &v, (size_t)w);
}

/* pm_poke() at buf[off .. off + w) if that lies inside the buffer */
static void pm_poke_at(uint8_t *buf, size_t len, uint64_t off, int w) {
    if (off <= len && (uint64_t)w <= len - off) pm_poke(buf + off, w);
}

static int pm_header(const uint8_t *p, size_t len, ep_plan_header *h) {
    if (len < sizeof(*h)) return 0;
    memcpy(h, p, sizeof(*h));
    return 1;
}

typedef struct pm_sec { uint64_t offset, size; uint32_t count, rsize; } pm_sec;

/* The first section of kind whose bytes lie inside the buffer. */
static int pm_find_section(const uint8_t *p, size_t len, uint32_t kind, pm_sec *out) {
    ep_plan_header h;
    if (!pm_header(p, len, &h)) return 0;
    for (uint64_t i = 0; i < h.section_count; i++) {
        const uint64_t at = h.section_table_offset + i * sizeof(ep_section);
        if (h.section_table_offset > len || at > len - sizeof(ep_section)) return 0;
        ep_section s;
        memcpy(&s, p + at, sizeof(s));
        if (s.kind == kind && s.offset <= len && s.size <= len - s.offset && s.record_size <= 4096) {
            out->offset = s.offset, out->size = s.size, out->count = s.count, out->rsize = s.record_size;
            return 1;
        }
    }
    return 0;
}

/* One field of a random record of a section: F lists {offset, width} of the record's fields. */
typedef struct pm_field { int off, w; } pm_field;
static uint64_t pm_record(const uint8_t *buf, size_t len, uint32_t kind, uint64_t *at) {
    pm_sec s;
    if (!pm_find_section(buf, len, kind, &s) || !s.count) return 0;
    *at = s.offset + pm_below(s.count) * s.rsize;
    return s.rsize;
}
static void pm_poke_field(uint8_t *buf, size_t len, uint32_t kind, const pm_field *F, size_t n) {
    uint64_t at;
    if (!pm_record(buf, len, kind, &at)) return;
    const pm_field f = F[pm_below(n)];
    pm_poke_at(buf, len, at + (uint64_t)f.off, f.w);
}

static const pm_field PM_TENSOR_FIELDS[] = {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 4}, {8, 8}, {16, 8}, {24, 4}, {28, 4},
                                            {32, 4}, {36, 4}, {40, 4}, {44, 4}, {56, 1}, {57, 1}, {64, 4}};
static const pm_field PM_OP_FIELDS[] = {{0, 2}, {2, 1}, {3, 1}, {4, 2}, {6, 2}, {8, 4}, {12, 4}, {16, 4}, {20, 4},
                                        {24, 8}, {32, 8}};
static const pm_field PM_SYM_FIELDS[] = {{0, 4}, {4, 1}, {5, 1}, {6, 1}, {8, 4}, {12, 4}, {16, 4}, {20, 4}, {24, 4},
                                         {28, 4}};
#define PM_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* One mutation of a plan (buf holds len bytes). Returns the new length (never more than len). */
static size_t pm_mutate(uint8_t *buf, size_t len, int *sealed) {
    pm_sec s;
    ep_plan_header h;
    if (!len) return 0;
    switch (pm_below(13)) {
    case 0: /* plain truncation */
        return (size_t)pm_below(len);
    case 1: { /* truncation with a consistent header */
        const size_t n = (size_t)pm_below(len);
        if (n >= sizeof(ep_plan_header)) {
            const uint64_t fs = n;
            memcpy(buf + offsetof(ep_plan_header, file_size), &fs, 8);
            *sealed = 1;
        }
        return n;
    }
    case 2: /* random bit flips, CRC left stale half the time */
        for (int k = 0, n = 1 + (int)pm_below(8); k < n; k++) buf[pm_below(len)] ^= (uint8_t)(1u << pm_below(8));
        *sealed = (int)pm_below(2);
        return len;
    case 3: /* header fields */
        pm_poke_at(buf, len, 4 * pm_below(sizeof(ep_plan_header) / 4), pm_below(2) ? 4 : 8);
        *sealed = pm_below(4) != 0;
        return len;
    case 4: { /* section table */
        if (!pm_header(buf, len, &h)) return len;
        uint64_t at = h.section_table_offset + pm_below(h.section_count) * sizeof(ep_section);
        at += 4 * pm_below(sizeof(ep_section) / 4);
        if (len >= 8 && at <= len - 8) pm_poke(buf + at, pm_below(2) ? 4 : 8);
        *sealed = 1;
        return len;
    }
    case 5: case 6: { /* tensor records: dims, offsets, dtype, rank, storage, symbols */
        uint64_t ro;
        if (pm_record(buf, len, EP_SECTION_TENSORS, &ro) && ro <= len && len - ro >= sizeof(ep_tensor_rec)) {
            uint8_t *r = buf + ro;
            const pm_field f = PM_TENSOR_FIELDS[pm_below(PM_COUNT(PM_TENSOR_FIELDS))];
            pm_poke(r + f.off, f.w);
            if (pm_below(2)) {   /* keep nbytes consistent with the (possibly new) dims, to get past that check */
                ep_tensor_rec t;
                memcpy(&t, r, sizeof(t));
                uint64_t n = 1;
                const int esz = t.dtype == 1 || t.dtype == 6 || t.dtype == 12 ? 4
                              : t.dtype == 7 || t.dtype == 11 || t.dtype == 13 ? 8
                              : t.dtype == 10 || t.dtype == 5 || t.dtype == 4 || t.dtype == 16 ? 2 : 1;
                for (int d = 0; d < t.rank && d < 8; d++) n *= (uint64_t)(uint32_t)t.dims[d];
                t.nbytes = n * (uint64_t)esz;
                memcpy(r, &t, sizeof(t));
            }
        }
        *sealed = 1;
        return len;
    }
    case 7: /* op records */
        pm_poke_field(buf, len, EP_SECTION_OPS, PM_OP_FIELDS, PM_COUNT(PM_OP_FIELDS));
        *sealed = 1;
        return len;
    case 8: /* op parameters: hostile values reach the shape functions */
        if (pm_find_section(buf, len, EP_SECTION_PARAMS, &s) && s.size >= 4)
            for (int k = 0, n = 1 + (int)pm_below(3); k < n; k++)
                pm_poke_at(buf, len, s.offset + 4 * pm_below(s.size / 4), pm_below(4) ? 4 : 8);
        *sealed = 1;
        return len;
    case 9: /* operand indices and io records */
        if (pm_below(2) && pm_find_section(buf, len, EP_SECTION_OPIO, &s) && s.count)
            pm_poke_at(buf, len, s.offset + 4 * pm_below(s.count), 4);
        else if (pm_find_section(buf, len, EP_SECTION_IO, &s) && s.count)
            pm_poke_at(buf, len, s.offset + 4 * pm_below(2 * s.count), 4);
        *sealed = 1;
        return len;
    case 10: /* symbol records: kinds, sources, bounds, rules, steps */
        pm_poke_field(buf, len, EP_SECTION_SYMS, PM_SYM_FIELDS, PM_COUNT(PM_SYM_FIELDS));
        *sealed = 1;
        return len;
    case 11: { /* names: a terminator removed or added, a byte changed, a record's name moved */
        if (pm_find_section(buf, len, EP_SECTION_NAMES, &s) && s.size) {
            uint8_t *n = buf + s.offset;
            switch (pm_below(4)) {
            case 0: n[s.size - 1] = (uint8_t)('a' + pm_below(26)); break;   /* the last string unterminated */
            case 1: n[pm_below(s.size)] = 0; break;
            case 2: n[pm_below(s.size)] = (uint8_t)pm_rnd(); break;
            default: {
                uint64_t at;
                const uint32_t kind = pm_below(2) ? EP_SECTION_TENSORS : EP_SECTION_OPS;
                const uint32_t v = pm_below(4) ? (uint32_t)pm_below(s.size + 2) : EP_NO_NAME - (uint32_t)pm_below(2);
                if (pm_record(buf, len, kind, &at)) {
                    const uint64_t f = at + (kind == EP_SECTION_TENSORS ? 4 : 20);
                    if (f <= len && len - f >= 4) memcpy(buf + f, &v, 4);
                }
            }
            }
        }
        *sealed = 1;
        return len;
    }
    default: { /* a range of one section copied over another place of the same section */
        static const uint32_t kinds[] = {EP_SECTION_TENSORS, EP_SECTION_OPS, EP_SECTION_OPIO, EP_SECTION_PARAMS,
                                         EP_SECTION_SYMS, EP_SECTION_IO};
        if (pm_find_section(buf, len, kinds[pm_below(PM_COUNT(kinds))], &s) && s.size >= 2) {
            const uint64_t n = 1 + pm_below(s.size / 2), from = pm_below(s.size - n + 1), to = pm_below(s.size - n + 1);
            memmove(buf + s.offset + to, buf + s.offset + from, (size_t)n);
        }
        *sealed = 1;
        return len;
    }
    }
}

#endif
