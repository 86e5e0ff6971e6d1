/* The virtual NPU's internals: the register state the command stream sets, the environment one pass over the
 * stream runs in (validate at init, estimate on the host, execute), and the three parts that share them:
 * stream.c decodes and checks every word and kick, exec.c does a kick's arithmetic, model.c its cycles.
 *
 * One interpreter serves init, execute and the estimator, so what execute runs is exactly what init accepted:
 * every kick's operands are re-checked on every pass (a few comparisons per kick), and execute additionally
 * checks the requantisation tables that live in memory init could not read (working memory, I/O). */
#ifndef EP_VNPU_IMPL_H
#define EP_VNPU_IMPL_H

#include <stdint.h>
#include <string.h>
#include "edgeplan/vnpu.h"

/* feature-map register bits (epn_fm.set) */
enum {
    EPN_FM_REGION = 1u << 0, EPN_FM_H = 1u << 1, EPN_FM_W = 1u << 2, EPN_FM_C = 1u << 3, EPN_FM_BASE = 1u << 4,
    EPN_FM_SX = 1u << 5, EPN_FM_SY = 1u << 6, EPN_FM_SC = 1u << 7, EPN_FM_SCALE = 1u << 8,
    EPN_FM_NEEDED = 0xFFu   /* everything but the zero point (default 0) and the scale (ELTWISE only) */
};
/* other register bits (epn_regs.set) */
enum {
    EPN_W_REGION = 1u << 0, EPN_W_BASE = 1u << 1, EPN_W_LEN = 1u << 2,
    EPN_S_REGION = 1u << 3, EPN_S_BASE = 1u << 4, EPN_S_LEN = 1u << 5,
    EPN_LUT_REGION = 1u << 6, EPN_LUT_BASE = 1u << 7,
    EPN_DMA_SREG = 1u << 8, EPN_DMA_DREG = 1u << 9, EPN_DMA_SRC = 1u << 10, EPN_DMA_DST = 1u << 11,
    EPN_DMA_LEN = 1u << 12
};
enum { EPN_IFM = 0, EPN_IFM2 = 1, EPN_OFM = 2 };

typedef struct epn_fm {
    uint32_t set;
    uint32_t region;
    uint32_t h, w, c;          /* 1 .. EP_VNPU_MAX_DIM */
    uint32_t sx, sy, sc;       /* byte strides */
    uint64_t base;
    int32_t zp;
    int32_t mult, shift;       /* ELTWISE rescale */
} epn_fm;

typedef struct epn_regs {
    epn_fm fm[3];
    uint32_t set;
    uint32_t kh, kw, ksx, ksy, kdx, kdy;   /* kernel, stride, dilation (defaults 1) */
    uint32_t pad[4];                       /* top, left, bottom, right */
    uint32_t w_region, w_base, w_len;
    uint32_t s_region, s_base, s_len;
    uint32_t lut_region, lut_base;
    int32_t act_min, act_max;              /* defaults -128, 127 */
    uint32_t dma_sreg, dma_dreg, dma_src, dma_dst, dma_len;
} epn_regs;

typedef struct epn_env {
    const ep_vnpu_config *cfg;
    ep_vnpu_header h;
    const uint8_t *cmd;                    /* h.cmd_words little-endian words */
    uint32_t n_regions, n_inputs;
    uint64_t size[EP_VNPU_MAX_REGIONS];
    const uint8_t *rd[EP_VNPU_MAX_REGIONS];   /* readable memory; only region 0 unless executing */
    uint8_t *wr[EP_VNPU_MAX_REGIONS];         /* writable memory when executing: 1, 2 and the outputs */
    int exec;                              /* 1: run the arithmetic */
    ep_vnpu_op_info *trace;                /* per-op records (may be NULL) */
    uint32_t trace_cap;
    uint32_t n_ops;
    ep_vnpu_counters cnt;
    char *why;
    uint32_t why_len;
} epn_env;

/* A refusal with its one-line reason: returns EP_ERR_DELEGATE_BLOB. */
int epn_fail(epn_env *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Checks the header, the CRC, the section table and the blob's fit to cfg; fills e->h, e->cmd, region 0 and
 * the region count. */
int epn_parse(epn_env *e, const void *blob, uint64_t blob_size);
/* One pass over the stream: every word decoded and checked, every kick checked, modelled and (exec) run. */
int epn_run(epn_env *e);
/* The arithmetic of one checked kick (exec.c). */
void epn_exec(const epn_env *e, const epn_regs *r, uint32_t opcode);
/* The cycle model of one checked kick (model.c). */
void epn_model(const ep_vnpu_config *cfg, const epn_regs *r, uint32_t opcode, ep_vnpu_op_info *o);
/* Whether cfg is one the model runs (MAC count, clock, bandwidths); the reason when not. */
const char *epn_config_error(const ep_vnpu_config *cfg);

static inline uint32_t epn_rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline int32_t epn_rds32(const uint8_t *p) {
    const uint32_t u = epn_rd32(p);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}
static inline uint64_t epn_ceil(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
static inline uint64_t epn_align64(uint64_t a) { return (a + 63u) & ~(uint64_t)63u; }

#endif
