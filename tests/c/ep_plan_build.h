/* A small plan built by hand from plan_format.h's records (no Python on the board): the C tests' plan.
 *
 *   y[1, T] = relu(x[1, T]) + c,   c a constant [1] = 0.5;   2 ops (UNARY RELU "relu", BINARY ADD "add")
 *
 * T is 8, or with EPB_DYNAMIC a variable dim (plan 1.1 symbol "T", an input symbol in [1, 8]; with EPB_STEP2 too,
 * plan 1.2: T in [2, 8] and even). Tensors: x (graph
 * input, arena offset 0), t (arena 64), c (CONST 0), y (graph output, arena 128); arena_size 192. Sections in the
 * order TENSORS, OPS, OPIO, PARAMS, CONST, IO, NAMES (, SYMS), each 64-aligned after a 64-byte header and the
 * section table; the CRC is ep_crc32c over the file with its crc32c field zero (epb_seal). */
#ifndef EP_PLAN_BUILD_H
#define EP_PLAN_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "edgeplan/edgeplan.h"

#define EPB_CAP 4096
#define EPB_DYNAMIC 1
#define EPB_STEP2 2        /* with EPB_DYNAMIC: T takes even values only (ep_sym_rec.step, plan 1.2) */
#define EPB_T 8            /* the length (the bound with EPB_DYNAMIC) */
#define EPB_ARENA 192      /* the plan's tensor region */
#define EPB_C 0.5f         /* the constant */

typedef struct epb_plan {
    _Alignas(64) uint8_t bytes[EPB_CAP];
    size_t len;
    uint32_t n_sections;
} epb_plan;

/* Recomputes the header's CRC-32C after a change. */
static inline void epb_seal(epb_plan *p) {
    ep_plan_header *h = (ep_plan_header *)(void *)p->bytes;
    h->crc32c = 0;
    h->crc32c = ep_crc32c(p->bytes, p->len);
}

/* Appends a section (64-aligned) and its table entry (the table holds up to 8, after the header). */
static inline void epb_section(epb_plan *p, uint32_t kind, uint32_t flags, const void *data, size_t size, uint32_t count,
                               uint32_t record_size) {
    p->len = (p->len + 63) / 64 * 64;
    ep_section s = {kind, flags, p->len, size, count, record_size};
    memcpy(p->bytes + sizeof(ep_plan_header) + p->n_sections++ * sizeof(ep_section), &s, sizeof s);
    memcpy(p->bytes + p->len, data, size);
    p->len += size;
}

static inline ep_tensor_rec epb_tensor(uint8_t storage, uint8_t flags, uint32_t name, uint64_t offset, int32_t d1, int sym) {
    ep_tensor_rec t;
    memset(&t, 0, sizeof t);
    t.dtype = EP_DTYPE_F32;
    t.storage = storage;
    t.rank = 2;
    t.flags = flags;
    t.name = name;
    t.offset = offset;
    t.nbytes = (uint64_t)d1 * 4;
    t.dims[0] = 1, t.dims[1] = d1;
    t.dim_sym[1] = (uint8_t)sym;
    t.quant = EP_NO_QUANT;
    return t;
}

/* Builds the plan into p (flags: 0, EPB_DYNAMIC, EPB_DYNAMIC | EPB_STEP2) with the given required_features, sealed.
 * Returns its size. */
static inline size_t epb_build(epb_plan *p, int flags, uint64_t required_features) {
    const int dyn = flags & EPB_DYNAMIC;
    memset(p, 0, sizeof *p);
    static const char names[] = "x\0y\0relu\0add\0t\0c\0T";   /* offsets 0, 2, 4, 9, 13, 15, 17 */
    p->len = sizeof(ep_plan_header) + 8 * sizeof(ep_section);
    const ep_tensor_rec tensors[4] = {
        epb_tensor(EP_STORAGE_ARENA, EP_TENSOR_FLAG_INPUT, 0, 0, EPB_T, dyn),
        epb_tensor(EP_STORAGE_ARENA, 0, 13, 64, EPB_T, dyn),
        epb_tensor(EP_STORAGE_CONST, 0, 15, 0, 1, 0),
        epb_tensor(EP_STORAGE_ARENA, EP_TENSOR_FLAG_OUTPUT, 2, 128, EPB_T, dyn),
    };
    ep_op_rec ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].opcode = EP_OP_UNARY, ops[0].n_in = 1, ops[0].n_out = 1, ops[0].io_first = 0, ops[0].params_offset = 0;
    ops[0].params_size = sizeof(ep_unary_params), ops[0].name = 4;
    ops[1].opcode = EP_OP_BINARY, ops[1].n_in = 2, ops[1].n_out = 1, ops[1].io_first = 2, ops[1].params_offset = 16;
    ops[1].params_size = sizeof(ep_binary_params), ops[1].name = 9;
    const uint32_t opio[5] = {0, 1, 1, 2, 3};
    uint8_t params[32];
    memset(params, 0, sizeof params);
    const ep_unary_params relu = {EP_ACT_RELU, 0, 0, 0};
    const ep_binary_params add = {EP_BIN_ADD, EP_ACT_NONE, 0, 0};
    memcpy(params, &relu, sizeof relu);
    memcpy(params + 16, &add, sizeof add);
    const float consts[16] = {EPB_C};
    const ep_io_rec io[2] = {{0, EP_IO_INPUT}, {3, EP_IO_OUTPUT}};
    ep_sym_rec sym;
    memset(&sym, 0, sizeof sym);
    sym.name = 17, sym.kind = EP_SYM_INPUT, sym.min = 1, sym.max = EPB_T;
    if (flags & EPB_STEP2) sym.min = 2, sym.step = 2;
    epb_section(p, EP_SECTION_TENSORS, EP_SECTION_FLAG_CRITICAL, tensors, sizeof tensors, 4, sizeof(ep_tensor_rec));
    epb_section(p, EP_SECTION_OPS, EP_SECTION_FLAG_CRITICAL, ops, sizeof ops, 2, sizeof(ep_op_rec));
    epb_section(p, EP_SECTION_OPIO, EP_SECTION_FLAG_CRITICAL, opio, sizeof opio, 5, sizeof(uint32_t));
    epb_section(p, EP_SECTION_PARAMS, EP_SECTION_FLAG_CRITICAL, params, sizeof params, 0, 0);
    epb_section(p, EP_SECTION_CONST, EP_SECTION_FLAG_CRITICAL, consts, sizeof consts, 0, 0);
    epb_section(p, EP_SECTION_IO, EP_SECTION_FLAG_CRITICAL, io, sizeof io, 2, sizeof(ep_io_rec));
    epb_section(p, EP_SECTION_NAMES, 0, names, sizeof names, 0, 0);
    if (dyn) epb_section(p, EP_SECTION_SYMS, EP_SECTION_FLAG_CRITICAL, &sym, sizeof sym, 1, sizeof(ep_sym_rec));
    ep_plan_header *h = (ep_plan_header *)(void *)p->bytes;
    h->magic = EP_PLAN_MAGIC;
    h->version_major = EP_PLAN_VERSION_MAJOR;
    h->version_minor = flags & EPB_STEP2 ? 2 : dyn ? 1 : 0;
    h->header_size = sizeof(ep_plan_header);
    h->file_size = p->len;
    h->section_table_offset = sizeof(ep_plan_header);
    h->section_count = p->n_sections;
    h->arena_size = EPB_ARENA;
    h->required_features = required_features;
    epb_seal(p);
    return p->len;
}

#endif
