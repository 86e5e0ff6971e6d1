/* edgeplan delegates: the interface an accelerator driver (an NPU, the virtual NPU) implements to run
 * parts of a plan. docs/npu.md describes the design; this header is the contract.
 *
 * The compiler decides what runs where. A delegated part of the graph (a *partition*) is one DELEGATE op
 * in the plan: an opaque blob (a constant of the plan, used in place), the partition's input and output
 * tensors (in the arena, zero-copy) and its planned working memory (the op's scratch). The plan keeps the
 * partition's CPU ops right after the DELEGATE op. The runtime runs the delegate and skips them; when no
 * delegate of the blob's kind is registered, when it refuses the blob or fails in init, the CPU ops run
 * instead, with identical results for int8 partitions (the delegate's arithmetic is the reference
 * kernels'). An execute that fails runs the CPU ops for that run.
 *
 * Delegates are registered by the application at open (ep_options.delegates): there is no global
 * registry. Nothing here allocates: a delegate keeps what it needs from init to destroy in the
 * EP_DELEGATE_CTX_BYTES the session gives each partition (a real driver may keep a pointer to its own
 * handle there), and computes in the partition's working memory.
 *
 * Calls, for each DELEGATE op whose blob kind matches a registered delegate (the first one that matches):
 *   init     once, at ep_session_open, after the plan has been validated. It must check the whole blob
 *            (every region, offset, length and opcode) and the tensors against it, and return EP_OK or a
 *            negative status with a one-line reason in why. After an error the partition runs on the CPU
 *            and destroy is not called.
 *   execute  once per ep_run that reaches the partition, on the thread that calls ep_run. It reads the
 *            inputs and writes only the outputs and the working memory.
 *   destroy  once, at ep_session_close, for every partition whose init succeeded.
 * A session calls its delegates from one thread at a time (the caller serialises ep_run and close).
 *
 * The declarations between the EP_CDEF markers are read by the Python wrapper (cffi). */
#ifndef EDGEPLAN_DELEGATE_H
#define EDGEPLAN_DELEGATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* EP_CDEF_BEGIN */
#define EP_DELEGATE_ABI_VERSION 1     /* ep_delegate.abi_version: a runtime refuses another major ABI */
#define EP_DELEGATE_CTX_BYTES 192     /* per partition, 16-byte aligned, kept from init to destroy */
#define EP_DELEGATE_MAX_IO 16         /* inputs (outputs likewise) of one partition */
#define EP_DELEGATE_KIND_VNPU 0x314E5045   /* "EPN1": the virtual NPU's command stream (delegates/vnpu) */
#define EP_DELEGATE_KIND_EXTERNAL 0x31584545   /* "EEX1": a blob for a driver loaded at run time */

/* A tensor of the partition, in the session's arena (or a constant of the plan). */
typedef struct ep_delegate_tensor {
    void *data;
    uint64_t nbytes;
    int32_t dtype;              /* EP_DTYPE_* */
    int32_t rank;
    int32_t dims[8];
} ep_delegate_tensor;

/* One partition, as init / execute / destroy see it. The pointers stay valid from init to destroy;
 * work's contents are not kept between calls (other ops reuse those bytes). */
typedef struct ep_delegate_partition {
    uint32_t struct_size;       /* sizeof(ep_delegate_partition) of the runtime */
    uint32_t index;             /* the partition's number in the plan (0..) */
    uint32_t kind;              /* the blob's kind (ep_delegate.kind) */
    uint32_t op;                /* index of the DELEGATE op in the plan */
    const void *blob;           /* opaque, in the plan's constants: 64-byte aligned, read-only */
    uint64_t blob_size;
    void *work;                 /* planned working memory in the arena (the op's scratch), 64-byte aligned */
    uint64_t work_size;
    void *ctx;                  /* EP_DELEGATE_CTX_BYTES of the session's tables for this partition */
    const ep_delegate_tensor *inputs;
    const ep_delegate_tensor *outputs;
    uint32_t n_inputs;
    uint32_t n_outputs;
} ep_delegate_partition;

/* What a delegate reports of itself (ep_delegate.query; optional). */
typedef struct ep_delegate_caps {
    uint32_t struct_size;
    uint32_t version;           /* the delegate's own version */
    uint32_t blob_version_min;  /* blob format versions it runs */
    uint32_t blob_version_max;
    uint32_t macs_per_cycle;    /* 0 when not meaningful */
    uint32_t clock_mhz;
    uint64_t sram_bytes;        /* on-chip memory, 0 when none */
} ep_delegate_caps;

/* The vtable an application registers (ep_options.delegates). user is passed back to every call. */
typedef struct ep_delegate {
    uint32_t struct_size;       /* sizeof(ep_delegate) */
    uint32_t abi_version;       /* EP_DELEGATE_ABI_VERSION */
    uint32_t kind;              /* the blob kind it runs: EP_DELEGATE_KIND_* */
    uint32_t reserved;
    const char *name;           /* for reports: "vnpu-u55-128" */
    void *user;
    int32_t (*query)(void *user, ep_delegate_caps *caps);
    int32_t (*init)(void *user, const ep_delegate_partition *p, char *why, uint32_t why_len);
    int32_t (*execute)(void *user, const ep_delegate_partition *p);
    void (*destroy)(void *user, const ep_delegate_partition *p);
} ep_delegate;
/* EP_CDEF_END */

#ifdef __cplusplus
}
#endif
#endif
