/* edgeplan virtual NPU ("EPN-1"): a delegate (delegate.h) that runs EPN1 blobs bit-exactly like the int8
 * reference kernels and models their cycles (docs/npu.md, "The EPN-1 blob" and "Cycle model").
 *
 * Use: fill an ep_vnpu_config (ep_vnpu_preset), let ep_vnpu_open fill a device the caller owns (static or on
 * the heap; nothing here allocates), register &dev->delegate in ep_options.delegates. The device holds the
 * counters of its executes and must outlive every session that uses it; one device may serve any number of
 * partitions and sessions, one call at a time (the delegate contract).
 *
 * The host compiler calls ep_vnpu_estimate (through cffi) so the cycle model has one source.
 *
 * The declarations between the EP_CDEF markers are read by the Python wrapper (cffi): plain C only. The
 * blob records and the command words are defined here once; pyapi/edgeplan/compiler/partition/vnpu_encode.py
 * reads them from this header. */
#ifndef EDGEPLAN_VNPU_H
#define EDGEPLAN_VNPU_H

#include <stddef.h>
#include <stdint.h>
#include "edgeplan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* EP_CDEF_BEGIN */
#define EP_VNPU_MAGIC 0x314E5045          /* "EPN1" = EP_DELEGATE_KIND_VNPU */
#define EP_VNPU_VERSION 1
#define EP_VNPU_HEADER_BYTES 64
#define EP_VNPU_IO_BYTES 48
#define EP_VNPU_SCALE_BYTES 12            /* per output channel: int32 bias, int32 m, int32 s */
#define EP_VNPU_LUT_BYTES 256
#define EP_VNPU_REGION_CONST 0            /* the blob's constant payload, read-only */
#define EP_VNPU_REGION_WORK 1             /* the partition's working memory */
#define EP_VNPU_REGION_SRAM 2             /* modelled on-chip SRAM, backed by work after region 1 */
#define EP_VNPU_REGION_IO 3               /* 3 + k: the k-th I/O tensor (inputs, then outputs) */
#define EP_VNPU_MAX_REGIONS 35            /* 3 + 2 * EP_DELEGATE_MAX_IO */
#define EP_VNPU_MAX_CMD_WORDS 1048576
#define EP_VNPU_MAX_DIM 65536             /* H, W, C of a feature map (set as value - 1 in 16 bits) */
#define EP_VNPU_MAX_KERNEL 8              /* KH, KW */
#define EP_VNPU_MAX_STRIDE 3
#define EP_VNPU_MAX_DILATION 8
#define EP_VNPU_MAX_PAD 63
#define EP_VNPU_MAX_REDUCTION 65536       /* IC * KH * KW of one output: keeps every accumulator in int32 */
#define EP_VNPU_MAX_TRACE 256             /* per-op records a device keeps of its last execute */
#define EP_VNPU_PORT_SRAM 0
#define EP_VNPU_PORT_EXT 1

/* Command words. cmd0: bits 0..15 the opcode (bit 14 clear), bits 16..31 a 16-bit parameter. cmd1: the opcode
 * with bit 14 set, bits 16..31 a parameter, and the next word a 32-bit payload. Kicks run an operation on the
 * register state; registers keep their values across kicks. */
#define EP_VNPU_CMD1 0x4000
#define EP_VNPU_OP_STOP 0x0000
#define EP_VNPU_OP_CONV 0x0001
#define EP_VNPU_OP_DWCONV 0x0002
#define EP_VNPU_OP_MATMUL 0x0003
#define EP_VNPU_OP_ELTWISE 0x0004         /* param: EP_VNPU_ELTWISE_* */
#define EP_VNPU_OP_LUT 0x0005
#define EP_VNPU_OP_DMA 0x0006             /* copies DMA_LEN bytes, synchronously */
#define EP_VNPU_OP_POOL 0x0007            /* param: EP_VNPU_POOL_*; window registers as CONV, no weights */
#define EP_VNPU_ELTWISE_ADD 0
#define EP_VNPU_POOL_MAX 0                /* the largest IFM code among the window's taps inside the IFM */
/* feature maps: base 0x0100 (IFM), 0x0110 (IFM2), 0x0120 (OFM), plus a field: */
#define EP_VNPU_FM_IFM 0x0100
#define EP_VNPU_FM_IFM2 0x0110
#define EP_VNPU_FM_OFM 0x0120
#define EP_VNPU_FM_REGION 0               /* cmd0: region index */
#define EP_VNPU_FM_HEIGHT_M1 1            /* cmd0: H - 1 */
#define EP_VNPU_FM_WIDTH_M1 2             /* cmd0: W - 1 */
#define EP_VNPU_FM_DEPTH_M1 3             /* cmd0: C - 1 */
#define EP_VNPU_FM_ZERO_POINT 4           /* cmd0: signed 16-bit, -128..127 */
#define EP_VNPU_FM_BASE 0x4000            /* cmd1: byte offset in the region */
#define EP_VNPU_FM_STRIDE_X 0x4001        /* cmd1: bytes between horizontally adjacent elements */
#define EP_VNPU_FM_STRIDE_Y 0x4002        /* cmd1: bytes between rows */
#define EP_VNPU_FM_STRIDE_C 0x4003        /* cmd1: bytes between channels */
#define EP_VNPU_FM_SCALE 0x4004           /* cmd1: param the shift, payload the multiplier (ELTWISE) */
#define EP_VNPU_SET_KERNEL_HEIGHT_M1 0x0130
#define EP_VNPU_SET_KERNEL_WIDTH_M1 0x0131
#define EP_VNPU_SET_KERNEL_STRIDE 0x0132  /* bits 0..7 x, 8..15 y */
#define EP_VNPU_SET_KERNEL_DILATION 0x0133 /* bits 0..7 x, 8..15 y */
#define EP_VNPU_SET_PAD_TOP 0x0134
#define EP_VNPU_SET_PAD_LEFT 0x0135
#define EP_VNPU_SET_PAD_BOTTOM 0x0136
#define EP_VNPU_SET_PAD_RIGHT 0x0137
#define EP_VNPU_SET_WEIGHT_REGION 0x0140
#define EP_VNPU_SET_SCALE_REGION 0x0141
#define EP_VNPU_SET_LUT_REGION 0x0142
#define EP_VNPU_SET_ACT_MIN 0x0143        /* signed: the clamp of the OFM codes */
#define EP_VNPU_SET_ACT_MAX 0x0144
#define EP_VNPU_SET_DMA_SRC_REGION 0x0150
#define EP_VNPU_SET_DMA_DST_REGION 0x0151
#define EP_VNPU_SET_WEIGHT_BASE 0x4140
#define EP_VNPU_SET_WEIGHT_LENGTH 0x4141
#define EP_VNPU_SET_SCALE_BASE 0x4142
#define EP_VNPU_SET_SCALE_LENGTH 0x4143
#define EP_VNPU_SET_LUT_BASE 0x4144
#define EP_VNPU_SET_DMA_SRC 0x4150
#define EP_VNPU_SET_DMA_DST 0x4151
#define EP_VNPU_SET_DMA_LEN 0x4152

/* The blob header: 64 bytes at offset 0, little-endian. */
typedef struct ep_vnpu_header {
    uint32_t magic;             /* EP_VNPU_MAGIC */
    uint16_t version;           /* EP_VNPU_VERSION */
    uint16_t flags;             /* 0 */
    uint32_t blob_bytes;        /* the blob's size (<= the plan constant's) */
    uint32_t crc32c;            /* CRC-32C of blob_bytes bytes with this field read as 0 */
    uint32_t macs_per_cycle;    /* the MAC array it was compiled for: must equal the device's */
    uint32_t sram_bytes;        /* on-chip SRAM it was compiled for: the device must have at least this */
    uint32_t work_bytes;        /* region 1's size */
    uint32_t sram_used;         /* region 2's size (<= sram_bytes), at work + align64(work_bytes) */
    uint32_t n_regions;         /* 3 + n_inputs + n_outputs */
    uint16_t n_inputs;
    uint16_t n_outputs;
    uint32_t io_offset;         /* (n_inputs + n_outputs) ep_vnpu_io records, 8-aligned */
    uint32_t cmd_offset;        /* 4-aligned */
    uint32_t cmd_words;
    uint32_t const_offset;      /* region 0, 16-aligned */
    uint32_t const_bytes;
    uint32_t n_ops;             /* kicks in the stream (STOP excluded) */
} ep_vnpu_header;

/* One I/O tensor of the partition, as the blob was compiled for it (checked at init against the tensor). */
typedef struct ep_vnpu_io {
    uint64_t nbytes;
    int32_t dtype;              /* EP_DTYPE_I8 */
    int32_t rank;
    int32_t dims[8];
} ep_vnpu_io;

/* What the vNPU models (a preset, or set by hand). Bandwidths in MB/s (10^6 bytes), so bytes per cycle =
 * mbps / clock_mhz. */
typedef struct ep_vnpu_config {
    uint32_t struct_size;       /* sizeof(ep_vnpu_config) */
    uint32_t macs_per_cycle;    /* 64, 128, 256, 512, 1024 or 2048 */
    uint32_t clock_mhz;
    uint32_t sram_mbps;         /* on-chip SRAM (AXI0) */
    uint32_t ext_mbps;          /* external memory: flash or DRAM (AXI1) */
    uint32_t const_in_ext;      /* 1: region 0 lives in external memory (read there, staged through SRAM) */
    uint32_t fmap_in_ext;       /* 1: regions 1 and 3.. live in external memory (DRAM); region 2 is SRAM */
    uint32_t op_overhead;       /* fixed cycles per kick (300) */
    uint64_t sram_bytes;        /* region 2's capacity */
    char name[32];
} ep_vnpu_config;

/* PMU-style counters: of one execute (last) or summed over the device's life (total). */
typedef struct ep_vnpu_counters {
    uint64_t active_cycles;     /* sum of the ops' cycles */
    uint64_t compute_cycles;    /* sum of the ops' compute terms (no memory bound, no overhead) */
    uint64_t mac_ops;           /* useful multiply-accumulates */
    uint64_t sram_rd_bytes, sram_wr_bytes;
    uint64_t ext_rd_bytes, ext_wr_bytes;
    uint64_t ops;               /* kicks executed */
    uint64_t executes;
} ep_vnpu_counters;

/* One kick as the cycle model sees it. */
typedef struct ep_vnpu_op_info {
    uint32_t opcode;            /* EP_VNPU_OP_* */
    uint32_t limiter;           /* 0 compute, 1 SRAM bandwidth, 2 external bandwidth */
    uint64_t cycles;            /* max(compute, sram, ext) + op_overhead */
    uint64_t compute_cycles;
    uint64_t mac_ops;
    uint64_t sram_rd_bytes, sram_wr_bytes;   /* the traffic on each port */
    uint64_t ext_rd_bytes, ext_wr_bytes;
} ep_vnpu_op_info;

/* The device: the caller allocates it, ep_vnpu_open fills it. */
typedef struct ep_vnpu_device {
    ep_delegate delegate;       /* register &dev->delegate */
    ep_vnpu_config cfg;
    char name[48];              /* "vnpu-<preset>" */
    ep_vnpu_counters last;
    ep_vnpu_counters total;
    uint32_t n_trace;           /* records of the last execute in trace (<= EP_VNPU_MAX_TRACE) */
    uint32_t failures;          /* executes that failed (the CPU ops ran) */
    ep_vnpu_op_info trace[256]; /* EP_VNPU_MAX_TRACE */
} ep_vnpu_device;

EP_API uint32_t ep_vnpu_preset_count(void);
EP_API const char *ep_vnpu_preset_name(uint32_t i);
EP_NODISCARD EP_API ep_status ep_vnpu_preset(const char *name, ep_vnpu_config *cfg);
EP_NODISCARD EP_API ep_status ep_vnpu_open(ep_vnpu_device *dev, const ep_vnpu_config *cfg);
EP_NODISCARD EP_API ep_status ep_vnpu_counters_get(const ep_vnpu_device *dev, ep_vnpu_counters *last,
                                                   ep_vnpu_counters *total);
EP_API void ep_vnpu_counters_reset(ep_vnpu_device *dev);
/* Runs the cycle model on a blob (validated as init does, against the I/O and sizes the blob declares): per-op
 * records into ops[0 .. min(n, ops_cap)), *n_ops = the blob's kicks, totals into *total (executes 0). */
EP_NODISCARD EP_API ep_status ep_vnpu_estimate(const void *blob, size_t blob_size, const ep_vnpu_config *cfg,
                                               ep_vnpu_op_info *ops, uint32_t ops_cap, uint32_t *n_ops,
                                               ep_vnpu_counters *total, char *why, uint32_t why_len);
/* EP_CDEF_END */

#ifdef __cplusplus
}
#endif
#endif
