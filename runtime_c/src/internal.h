/* Runtime internals shared by plan.c, session.c and the status/cpu files. Not installed. */
#ifndef EP_INTERNAL_H
#define EP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "edgeplan/edgeplan.h"
#include "edgeplan/plan_format.h"
#include "ep_kernel.h"
#include "pool.h"

/* Checked, typed view of a plan's bytes (no copies). Record arrays are read
 * through their stride so that newer minor versions may append fields. */
typedef struct ep_plan_view {
    const uint8_t *base;
    uint64_t size;
    const ep_plan_header *hdr;
    const uint8_t *tensors; uint32_t n_tensors; uint32_t tensor_stride;
    const uint8_t *ops;     uint32_t n_ops;     uint32_t op_stride;
    const uint8_t *io;      uint32_t n_io;      uint32_t io_stride;
    const uint32_t *opio;   uint32_t n_opio;
    const uint8_t *params;  uint64_t params_size;
    const uint8_t *consts;  uint64_t const_size;
    const char *names;      uint64_t names_size;
    const uint8_t *syms;    uint32_t n_syms;    uint32_t sym_stride;
    uint32_t n_inputs, n_outputs;
    uint32_t n_partitions;  /* DELEGATE ops */
} ep_plan_view;

static inline const ep_tensor_rec *ep_view_tensor(const ep_plan_view *v, uint32_t i) {
    return (const ep_tensor_rec *)(const void *)(v->tensors + (size_t)i * v->tensor_stride);
}
static inline const ep_op_rec *ep_view_op(const ep_plan_view *v, uint32_t i) {
    return (const ep_op_rec *)(const void *)(v->ops + (size_t)i * v->op_stride);
}
static inline const ep_sym_rec *ep_view_sym(const ep_plan_view *v, uint32_t i) {
    return (const ep_sym_rec *)(const void *)(v->syms + (size_t)i * v->sym_stride);
}
static inline const ep_io_rec *ep_view_io(const ep_plan_view *v, uint32_t i) {
    return (const ep_io_rec *)(const void *)(v->io + (size_t)i * v->io_stride);
}

/* A one-line reason written next to a failing status (may be NULL/0). */
typedef struct ep_err {
    char *buf;
    uint32_t len;
} ep_err;
int ep_fail(ep_err *e, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

uint32_t ep_crc32c_update(uint32_t crc, const void *data, size_t len);
uint32_t ep_crc32c_sw(uint32_t crc, const void *data, size_t len);
/* Floating point while the runtime runs: subnormal results flushed to zero (x86 MXCSR FTZ; AArch64
 * FPCR.FZ and ARMv7 FPSCR.FZ, which flush subnormal inputs too), where a subnormal operand costs a
 * micro-code assist of ~100 cycles per instruction on many cores (a softmax's tiny probabilities made
 * one attention matmul 170x slower). CAST runs in the caller's state, so conversions stay exact.
 * ep_run flushes (ep_fp_flushing) and restores the caller's state after; the pool's
 * workers take the state of the thread that posts each job, so results never depend on the thread
 * count. Nothing where the CPU gives no control (cpu_generic.c). */
uint64_t ep_fp_get(void);
void ep_fp_set(uint64_t state);
uint64_t ep_fp_flushing(uint64_t state);   /* state with flush-to-zero on */

/* With the CPU's CRC instructions; only called when ep_cpu_features() has EP_CPU_CRC32. */
uint32_t ep_crc32c_hw(uint32_t crc, const void *data, size_t len);
/* CRC of a plan: the whole file with the header's crc32c field read as zero. */
uint32_t ep_plan_crc(const uint8_t *base, uint64_t size);

/* Parses and checks the container, sections and every record (not op shapes). */
int ep_plan_parse(ep_plan_view *v, const void *plan, size_t plan_len, int check_crc, ep_err *e);
/* Name at a NAMES offset ("" for EP_NO_NAME; only valid after ep_plan_parse). */
const char *ep_view_name(const ep_plan_view *v, uint32_t off);
/* Bytes the session tables take in the arena for this plan. */
uint64_t ep_session_table_bytes(const ep_plan_view *v);

/* The kernel table for this CPU: ref filled first, then ISA overrides. */
void ep_kernels_init(ep_kernel_table *t, uint64_t cpu_features);

#endif
