/* The contract between the executor and every kernel (ref, neon, x86).
 *
 * At open the executor binds each op once: tensor pointers, parameter struct,
 * scratch. Before binding, the op's shape function checks the op against the
 * plan (arity, dtypes, ranks, parameter ranges, output shapes, scratch size);
 * only then may its kernel run, and the kernel trusts everything it is given.
 *
 * How the kernel files are organised:
 *   - Reference kernels (kernels/ref/) are independent plain C, one thread, written to be read: they are the
 *     numerical spec (each file states its accumulation order), never an instance of an ISA template and
 *     never a call into an ISA driver. A variant's reference reads its layout directly (ref/packed_f32.c reads
 *     the packed weights in place), so its result can be stated against variant 0 (the PACKED variants equal
 *     variant 0 bit for bit on finite inputs).
 *   - ISA kernels (kernels/x86/, kernels/neon/) that share a driver instantiate a template kernels/<op>_tmpl.h:
 *     the including file defines the template's vector operations and EP_ISA (x86.h, neon.h), and the template
 *     names every function it exports EP_ISA_FN(name), i.e. ep_<isa>_<name> (ep_x86_conv2d_dw_f32).
 *   - What the reference and the templates must compute identically is plain C in shared headers that ref
 *     includes too (kernels/<op>_common.h and <op>_geo.h, ref/ref_util.h and ref_util_elem.h): geometry, operand
 *     binding, the pool windows of the border outputs, the Winograd transforms. Never the other way round: no
 *     reference file includes a template or an ISA header. */
#ifndef EP_KERNEL_H
#define EP_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "edgeplan/edgeplan.h"
#include "edgeplan/plan_format.h"
#include "float_bits.h"

typedef struct ep_tensor {
    void *data;
    int32_t dims[EP_MAX_RANK];
    uint8_t rank;
    uint8_t dtype;
    uint8_t storage;
    uint8_t flags;
    uint8_t layout;          /* EP_LAYOUT_* (plan_format.h) */
    uint8_t fill;            /* a STATE tensor's reset byte (ep_tensor_rec.fill) */
    uint32_t index;          /* index in the plan's tensor table */
    uint64_t nbytes;         /* capacity in bytes (upper-bound shape) */
} ep_tensor;

struct ep_pool;   /* src/pool.h: the session's worker threads */

/* What the session tells a kernel about the run (the RANDOM op's key and counter). */
typedef struct ep_run_info {
    uint64_t seed;           /* ep_options.seed (0 when the caller gives none) */
    uint64_t run;            /* runs since open or ep_reset: 0 during the first */
} ep_run_info;

/* One bound op. in[i] is NULL for an absent optional input. */
typedef struct ep_op {
    const void *params;
    ep_tensor *const *in;
    ep_tensor *const *out;
    void *scratch;
    uint64_t scratch_size;
    uint16_t n_in;
    uint16_t n_out;
    uint16_t opcode;
    uint8_t variant;
    uint8_t reserved;
    struct ep_pool *pool;    /* the session's threads for ep_parallel_for, or NULL: one thread */
    const ep_run_info *run;  /* the session's, or NULL (an op run outside a session: seed 0, run 0) */
} ep_op;

/* Result of a shape function for one output. */
typedef struct ep_shape {
    int32_t dims[EP_MAX_RANK];
    uint8_t rank;
    uint8_t dtype;
} ep_shape;

/* Kernel: runs the op. Returns EP_OK, or EP_ERR_RUN_* for bad runtime data. */
typedef int (*ep_kernel_fn)(const ep_op *op);

/* Shape function: validates the op from its inputs' shapes/dtypes and its params
 * (which are untrusted plan bytes), fills out[0..n_out-1] and the scratch bytes
 * the op's kernel variant (op->variant) needs at least. Returns EP_OK or EP_ERR_PLAN_* (never crashes,
 * never reads past n_in/n_out; inputs may be NULL where optional). Variants with pre-packed weights
 * read the declared output (op->out[0]) for the extent the packing pads (M or N). */
typedef int (*ep_shape_fn)(const ep_op *op, ep_shape *out, uint64_t *scratch_bytes);

/* Upper bound on any op's outputs (max_out in every ep_op_info). */
#define EP_MAX_OP_OUTPUTS 64
#define EP_VARIADIC 0xFFFF          /* max_in of an op that takes any number of inputs */
/* op table flags (runtime_c/ops.def) */
#define EP_OPF_INPLACE 1            /* an output may exactly alias an input (elementwise ops) */
#define EP_OPF_DATA_DEP 2           /* the kernel sets its outputs' variable dims */
#define EP_OPF_OUT_DECLARED 4       /* the shape function reads output extents from the declared output */
#define EP_OPF_CONTROL 8            /* run by the executor itself (IF / ELSE), never through its kernel */
#define EP_OPF_VIEW 16              /* output 0 is a view of input 0: it starts at input 0's bytes (its record
                                     * may be larger: the capacity of its bounds) and the kernel moves no data */
#define EP_OPF_LAYOUT 32            /* the shape function checks its operands' layouts (ep_tensor.layout); the
                                     * other ops take PLAIN tensors only */

/* Static description of an opcode. */
typedef struct ep_op_info {   /* 32 bytes on 64-bit targets: one per opcode in every build */
    const char *name;
    ep_shape_fn shape;
    uint32_t params_size;
    uint16_t min_in, max_in;   /* max_in EP_VARIADIC: any number */
    uint16_t min_out, max_out;
    uint8_t inplace : 1;       /* 1: an output may exactly alias an input (elementwise ops) */
    uint8_t data_dep : 1;      /* 1: the kernel sets its outputs' variable dims (RANGE, NONZERO); the
                                * shape function returns the capacity (the declared bound) */
    uint8_t control : 1;       /* 1: IF / ELSE, run by the executor (session.c) */
    uint8_t view : 1;          /* 1: output 0 is a view of input 0 (RESHAPE_DYN) */
    uint8_t layout : 1;        /* 1: the shape function checks layouts (EP_OPF_LAYOUT); 0: PLAIN operands only */
} ep_op_info;

/* Kernel table: one entry per opcode x variant; NULL means unsupported. */
typedef struct ep_kernel_table {
    ep_kernel_fn fn[EP_OP_COUNT][EP_MAX_VARIANTS];
} ep_kernel_table;

/* The name of a kernel a template exports for the ISA of the including file (EP_ISA: x86, neon, ...):
 * EP_ISA_FN(layernorm_f32) is ep_x86_layernorm_f32 where EP_ISA is x86. Two levels, so that EP_ISA expands. */
#define EP_ISA_FN(name) EP_ISA_FN_(EP_ISA, name)
#define EP_ISA_FN_(isa, name) EP_ISA_FN__(isa, name)
#define EP_ISA_FN__(isa, name) ep_##isa##_##name

/* ---- helpers shared by kernels and shape functions ---- */
/* Input i of op, NULL when absent (past n_in or an absent optional input). */
static inline const ep_tensor *ep_op_in(const ep_op *op, int i) { return i < op->n_in ? op->in[i] : NULL; }
static inline int64_t ep_numel(const ep_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}
static inline int64_t ep_shape_numel(const ep_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->dims[i];
    return n;
}
/* Element size in bytes, 0 for an unknown dtype. */
static inline uint32_t ep_dtype_size(uint32_t dtype) {
    switch (dtype) {
    case EP_DTYPE_F32: case EP_DTYPE_I32: return 4;
    case EP_DTYPE_U16: return 2;
    case EP_DTYPE_U32: return 4;
    case EP_DTYPE_U64: return 8;
    case EP_DTYPE_I64: case EP_DTYPE_F64: return 8;
    case EP_DTYPE_F16: case EP_DTYPE_BF16: case EP_DTYPE_I16: return 2;
    case EP_DTYPE_U8: case EP_DTYPE_I8: case EP_DTYPE_BOOL: return 1;
    default: return 0;
    }
}
/* Element i of weights w of dtype dt: F16 or BF16 (16-bit weights, plan_format.h) converted exactly, any other
 * dtype (F32, or 0 from the kernels that pass 0 for float32) read as float32. */
static inline float ep_weight_f32(const void *w, int dt, int64_t i) {
    if (dt == EP_DTYPE_F16) return ep_f16_to_f32(((const uint16_t *)w)[i]);
    if (dt == EP_DTYPE_BF16) return ep_bf16_to_f32(((const uint16_t *)w)[i]);
    return ((const float *)w)[i];
}
static inline void ep_shape_from_tensor(ep_shape *s, const ep_tensor *t) {
    for (int i = 0; i < EP_MAX_RANK; i++) s->dims[i] = i < t->rank ? t->dims[i] : 0;
    s->rank = t->rank;
    s->dtype = t->dtype;
}

/* ---- threads (src/pool.c; docs/performance.md "Threads") ----
 * A kernel splits its work into tasks that write disjoint outputs (and disjoint slices of its scratch),
 * partitioned so that every output element is computed by the same code with the same operands
 * whatever the thread count: results are bit-identical for 1 and N threads. */
typedef void (*ep_task_fn)(void *ctx, uint32_t task);
/* Runs fn(ctx, t) for every t in [0, n_tasks), on the pool's threads and the caller, and returns when
 * all are done. pool NULL (or one thread): inline, in task order. */
void ep_parallel_for(struct ep_pool *pool, uint32_t n_tasks, ep_task_fn fn, void *ctx);
/* Threads worth using for `work` units (~multiply-adds): 1 when pool is NULL or the work is small. */
uint32_t ep_pool_threads_for(const struct ep_pool *pool, uint64_t work);
/* [*lo, *hi): part i of n items split into `parts` contiguous near-equal ranges. */
static inline void ep_split_range(int64_t n, int64_t parts, int64_t i, int64_t *lo, int64_t *hi) {
    const int64_t q = n / parts, r = n % parts;
    *lo = i * q + (i < r ? i : r);
    *hi = *lo + q + (i < r);
}
/* Task t's range of n items split into `parts`: [lo, hi). */
typedef struct ep_range {
    int64_t lo, hi;
} ep_range;
static inline ep_range ep_task_range(int64_t n, int64_t parts, uint32_t t) {
    ep_range r;
    ep_split_range(n, parts, t, &r.lo, &r.hi);
    return r;
}

/* Scalar activation used by fused epilogues and the unary op (ref semantics). */
float ep_act_f32(int kind, float x, float alpha, float beta);
/* Applies an activation to n contiguous floats in place. */
void ep_act_apply_f32(int kind, float *x, int64_t n, float alpha, float beta);
/* The pass the shared kernel templates finish a row or tile with when their registers did not apply the
 * activation: an ISA header may name its own (neon.h: vector forms of the transcendental kinds). */
#ifndef EP_ISA_ACT_APPLY
#define EP_ISA_ACT_APPLY ep_act_apply_f32
#endif

/* Per-opcode descriptions (shape functions); defined in src/ops_info.c. */
const ep_op_info *ep_op_info_get(uint32_t opcode);
/* Reference kernels; defined in kernels/ref/. */
void ep_kernels_init_ref(ep_kernel_table *t);

#endif
