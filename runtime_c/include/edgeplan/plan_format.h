/* edgeplan plan format v1 (1.2): on-disk records, opcodes and op parameter structs.
 *
 * This header is the single source of truth for the binary layout. The Python
 * writer (pyapi/edgeplan/compiler/writer.py) builds every record through cffi
 * from the declarations between the EP_CDEF markers below, so the two cannot
 * drift; tests/py/test_layout.py checks cffi's layout against the C compiler's.
 * Rules for the cdef region: fixed-width types only, no implicit padding,
 * `#define NAME <integer>` constants only, no function-like macros.
 * See docs/plan-format.md for the meaning of every field. */
#ifndef EDGEPLAN_PLAN_FORMAT_H
#define EDGEPLAN_PLAN_FORMAT_H

#include <stdint.h>

/* EP_CDEF_BEGIN */
#define EP_PLAN_MAGIC 0x4E4C5045
#define EP_PLAN_VERSION_MAJOR 1
#define EP_PLAN_VERSION_MINOR 16
#define EP_MAX_RANK 8
#define EP_SECTION_ALIGN 64
#define EP_ARENA_ALIGN 64
#define EP_NO_TENSOR 0xFFFFFFFF
#define EP_NO_NAME 0xFFFFFFFF
#define EP_NO_QUANT 0xFFFFFFFF

/* ---- file header: 64 bytes at offset 0 ---- */
typedef struct ep_plan_header {
    uint32_t magic;                /* EP_PLAN_MAGIC ("EPLN" little-endian) */
    uint16_t version_major;        /* incompatible changes */
    uint16_t version_minor;        /* compatible additions */
    uint32_t header_size;          /* >= 64; fields may be appended */
    uint32_t crc32c;               /* CRC-32C of the whole file with this field read as 0 */
    uint64_t file_size;            /* exact size of the plan in bytes */
    uint64_t section_table_offset; /* 64-aligned */
    uint32_t section_count;
    uint32_t flags;                /* reserved, 0 */
    uint64_t arena_size;           /* bytes of the planned tensor region (scratch included) */
    uint64_t required_features;    /* EP_CPU_* bits a CPU must have to run this plan */
    uint64_t reserved;
} ep_plan_header;

/* ---- section table entry: 32 bytes ---- */
#define EP_SECTION_TENSORS 1   /* ep_tensor_rec[count] */
#define EP_SECTION_OPS 2       /* ep_op_rec[count], in execution order */
#define EP_SECTION_OPIO 3      /* uint32_t[count]: tensor indices referenced by ops */
#define EP_SECTION_PARAMS 4    /* blob of op parameter structs, each 8-aligned */
#define EP_SECTION_CONST 5     /* blob of constant tensor data, each 64-aligned */
#define EP_SECTION_IO 6        /* ep_io_rec[count]: graph inputs then outputs */
#define EP_SECTION_NAMES 7     /* blob of NUL-terminated UTF-8 strings */
#define EP_SECTION_QUANT 8     /* reserved for quantisation parameters */
#define EP_SECTION_DELEGATE 9  /* reserved (delegate blobs are constants of their DELEGATE op, 1.8) */
#define EP_SECTION_META 10     /* ancillary: key=value text, strippable */
#define EP_SECTION_SYMS 11     /* ep_sym_rec[count]: symbolic (variable) dims, 1.1; written critical */
#define EP_SECTION_SIGNATURE 12 /* ep_signature_rec[1]: the plan's Ed25519 signature, 1.9; written ancillary */
#define EP_SECTION_GROUP 13    /* ep_group_rec[1]: the plan is a member of a shared-arena group, 1.9; written critical */
#define EP_SECTION_FLAG_CRITICAL 1 /* a reader that does not know the kind must reject the plan */

typedef struct ep_section {
    uint32_t kind;
    uint32_t flags;
    uint64_t offset;       /* from the start of the file, 64-aligned */
    uint64_t size;         /* bytes */
    uint32_t count;        /* number of records (0 for blobs) */
    uint32_t record_size;  /* bytes per record; >= the size this reader knows */
} ep_section;

/* ---- element types: values follow ONNX TensorProto.DataType ---- */
#define EP_DTYPE_F32 1
#define EP_DTYPE_U8 2
#define EP_DTYPE_I8 3
#define EP_DTYPE_U16 4        /* 1.2 */
#define EP_DTYPE_I16 5
#define EP_DTYPE_I32 6
#define EP_DTYPE_I64 7
#define EP_DTYPE_BOOL 9
#define EP_DTYPE_F16 10
#define EP_DTYPE_F64 11       /* 1.2; F64, F16, BF16: CAST and the dtype-agnostic ops read them, no arithmetic */
#define EP_DTYPE_BF16 16      /* 1.2 */
#define EP_DTYPE_U32 12       /* 1.2; U16, U32, U64: the integer ops, CAST and the dtype-agnostic ops */
#define EP_DTYPE_U64 13       /* 1.2 */

/* CPU features a plan may require (ep_plan_header.required_features) */
#define EP_CPU_NEON 1
#define EP_CPU_DOTPROD 2
#define EP_CPU_FP16 4
#define EP_CPU_I8MM 8
#define EP_CPU_AVX2 16
#define EP_CPU_FMA 32
#define EP_CPU_CRC32 64      /* CRC-32C instructions (x86 SSE4.2, ARMv8 CRC) */

#define EP_STORAGE_ARENA 0    /* offset into the planned arena region */
#define EP_STORAGE_CONST 1    /* offset into the CONST section, used in place */

#define EP_TENSOR_FLAG_INPUT 1
#define EP_TENSOR_FLAG_OUTPUT 2
#define EP_TENSOR_FLAG_STATE 4   /* 1.1: streaming state, kept across runs, reset at open and ep_reset (to .fill) */

/* ---- tensor record: 72 bytes ---- */
typedef struct ep_tensor_rec {
    uint8_t dtype;          /* EP_DTYPE_* */
    uint8_t storage;        /* EP_STORAGE_* */
    uint8_t rank;           /* 0..EP_MAX_RANK */
    uint8_t flags;          /* EP_TENSOR_FLAG_* */
    uint32_t name;          /* offset into NAMES or EP_NO_NAME */
    uint64_t offset;        /* arena or CONST offset, element-aligned */
    uint64_t nbytes;        /* bytes at the upper-bound shape */
    int32_t dims[8];        /* upper bound of each dimension (>= 0) */
    uint8_t dim_sym[8];     /* 0: static; k: the dim is symbol k-1 of SYMS (1.1), dims[d] its upper bound */
    uint32_t quant;         /* index into QUANT or EP_NO_QUANT */
    uint8_t layout;         /* EP_LAYOUT_* (1.12; 0 before) */
    uint8_t fill;           /* 1.14: the byte a STATE tensor holds after open and ep_reset (an int8 state's zero
                             * point: its real 0); 0 on every other tensor, and before 1.14 */
    uint8_t reserved[2];    /* 0 */
} ep_tensor_rec;

/* Tensor layouts (ep_tensor_rec.layout). Every tensor is PLAIN (row-major in its dims' order) unless its record
 * says otherwise. C8 (1.12): a rank-4 f32 activation [N,C,H,W] of static dims, C a multiple of 8, stored as
 * [N][C/8][H][W][8]: element (n, c, h, w) at (((n*(C/8) + c/8)*H + h)*W + w)*8 + c%8, the same bytes as PLAIN.
 * Only arena tensors that are neither plan inputs, outputs nor state are C8. An op reads and writes C8
 * tensors only where its shape function says so (CONV2D variants BLOCKED_DW, BLOCKED_PW and BLOCKED_CONV,
 * REORDER, CONCAT / SPLIT along axis 1 with every operand C8, the C8 variants of MAXPOOL, AVGPOOL and
 * GLOBAL_AVGPOOL, RESIZE's variant C8 (1.13), PAD (1.14: X and Y C8, channel pads of whole blocks)), or, for the
 * element-wise ops (UNARY, BINARY), when all its operands
 * have one shape and one layout; BINARY (1.13) also broadcasts over a C8 Y's pixels an operand of one value per
 * (n, c), per n or a scalar (aligned right to [n, c, h, w]: h = w = 1, c 1 or C, n 1 or N; PLAIN, or C8 at
 * rank 4). */
#define EP_LAYOUT_PLAIN 0
#define EP_LAYOUT_C8 1
#define EP_LAYOUT_BLOCK 8     /* channels per C8 block */
/* NHWC (1.14): a rank-4 f32 arena tensor [N,C,H,W] of static dims, 1 <= C <= 8, stored as [N][H][W][C]: element
 * (n, c, h, w) at ((n*H + h)*W + w)*C + c, the bytes of a plain channels-last image (a view of a plan input, as
 * a TFLite model's image arrives). Neither a plan input, output nor state; read only as X of CONV2D's
 * BLOCKED_CONV (its stem), and written by no op. */
#define EP_LAYOUT_NHWC 2

/* ---- op record: 40 bytes ---- */
typedef struct ep_op_rec {
    uint16_t opcode;        /* EP_OP_* */
    uint8_t variant;        /* kernel variant chosen by the compiler, EP_VARIANT_* */
    uint8_t flags;
    uint16_t n_in;          /* inputs, EP_NO_TENSOR for an absent optional input */
    uint16_t n_out;
    uint32_t io_first;      /* first index into OPIO: n_in inputs then n_out outputs */
    uint32_t params_offset; /* into PARAMS, 8-aligned */
    uint32_t params_size;   /* must equal the opcode's parameter struct size */
    uint32_t name;          /* source node name in NAMES or EP_NO_NAME */
    uint64_t scratch_offset;/* into the arena region */
    uint64_t scratch_size;  /* bytes, >= what the kernel variant needs */
} ep_op_rec;

/* ---- symbolic dim record (SYMS section, 1.1): 32 bytes ----
 * A variable dim is the value of a symbol. Every tensor dim tagged with symbol k holds that symbol's
 * value at run time; its record dim is the symbol's max (the bound the arena is planned for).
 * INPUT symbols take their value from the graph inputs' shapes (ep_session_set_input_shape).
 * DERIVED symbols are bound by the first op whose shape function computes them, or, when src != 0,
 * computed as floor((mul * value(src-1) + add) / div) the first time they are needed; with src2 != 0
 * (1.2) the product value(src-1) * value(src2-1) takes value(src-1)'s place (a flattened H x W), and
 * the two sources' maxima multiply to at most 2^32.
 * DATA symbols are bound by a data-dependent op's kernel (RANGE, NONZERO).
 * A value outside [min, max] fails the run with EP_ERR_RUN_BOUND. An INPUT symbol with step > 1 (1.2)
 * takes only multiples of step (min and max are multiples): a detector's input side, say, where every
 * stride-32 stage must divide evenly; ep_session_set_input_shape refuses others (EP_ERR_INVALID_ARG). */
#define EP_SYM_INPUT 1
#define EP_SYM_DERIVED 2
#define EP_SYM_DATA 3
#define EP_MAX_SYMS 254
/* A signed plan (1.9; docs/signing.md) carries one SIGNATURE section of one record. The signed bytes are the
 * header's file_size bytes of the file with two fields read as zeros: the header's crc32c and this record's
 * signature. A key given at open (ep_options.public_key) is checked against them before anything else in the
 * plan is read: a plan without the section is refused (EP_ERR_PLAN_UNSIGNED), one whose signature does not
 * verify under the key, or is made by another key, too (EP_ERR_PLAN_SIGNATURE); the CRC is then checked
 * whatever the flags say, so a change to any byte of the file is refused. */
#define EP_SIGNATURE_ED25519 1
typedef struct ep_signature_rec {
    uint32_t algorithm;      /* EP_SIGNATURE_ED25519: pure Ed25519 (RFC 8032) */
    uint32_t reserved;       /* 0 */
    uint8_t key_id[8];       /* the first 8 bytes of SHA-512 of the signer's 32-byte public key */
    uint8_t signature[64];   /* R || S */
} ep_signature_rec;

/* A group member (1.9; docs/groups.md) carries one GROUP section of one record. The members of a group share one
 * arena and run one at a time. In the group arena, member i's arena (its session tables, then its planned region)
 * starts at arena_offset; every member's arena ends at the group arena's end. Each member's planned region holds
 * [0, state_size): its own bytes, which no other member reaches (its streaming state), and
 * [shared_offset, busy_offset): the bytes every member's runs reuse (activations, inputs, outputs, scratch);
 * the members' session tables and state regions lie between the two, in member order. The last 64 bytes, at
 * busy_offset, hold the group's busy word: ep_run refuses (EP_ERR_GROUP_BUSY) while another member runs.
 * The runtime checks that every arena tensor and scratch lies in one of the two ranges, and ep_group_open that
 * the members' records describe one layout (the same group_id, n_members and group_arena_size; member i
 * directly after member i-1's state). */
typedef struct ep_group_rec {
    uint64_t group_id;         /* the same in every member of the group */
    uint64_t arena_offset;     /* this member's arena, from the start of the group arena */
    uint64_t group_arena_size; /* bytes of the group arena (each member's arena ends where it ends) */
    uint64_t state_size;       /* [0, state_size) of the planned region: this member's own bytes; 64-aligned */
    uint64_t shared_offset;    /* the shared range of the planned region, up to busy_offset; 64-aligned */
    uint64_t busy_offset;      /* the group's busy word: the last 64 bytes of the group arena */
    uint32_t member;           /* this plan's index in the group */
    uint32_t n_members;
    uint64_t reserved;         /* 0 */
} ep_group_rec;

typedef struct ep_sym_rec {
    uint32_t name;          /* NAMES offset (e.g. "T") or EP_NO_NAME */
    uint8_t kind;           /* EP_SYM_* */
    uint8_t src;            /* 0, or 1 + index of an earlier symbol (DERIVED only) */
    uint8_t src2;           /* 1.2: 0, or 1 + index of a second earlier symbol multiplying src's value */
    uint8_t reserved;
    int32_t min;            /* 0 <= min <= max */
    int32_t max;
    int32_t mul;            /* |mul|, |add| <= 2^24, 1 <= div <= 2^24 */
    int32_t add;
    int32_t div;
    int32_t step;           /* 1.2, INPUT only: 0 or 1 any value; 2..2^24 multiples of step (1.1: 0) */
} ep_sym_rec;

/* ---- graph I/O record: 8 bytes ---- */
#define EP_IO_INPUT 0
#define EP_IO_OUTPUT 1
typedef struct ep_io_rec {
    uint32_t tensor;
    uint32_t kind;          /* EP_IO_* */
} ep_io_rec;

/* ---- opcodes and kernel variants: one row per op in runtime_c/ops.def ---- */
/* EP_OPS_BEGIN: generated from runtime_c/ops.def by runtime_c/gen_ops.py; do not edit */
/* opcodes (ep_op_rec.opcode) */
#define EP_OP_CONV2D 1
#define EP_OP_CONV_TRANSPOSE2D 2
#define EP_OP_GEMM 3
#define EP_OP_MATMUL 4
#define EP_OP_UNARY 5
#define EP_OP_BINARY 6
#define EP_OP_MAXPOOL 7
#define EP_OP_AVGPOOL 8
#define EP_OP_GLOBAL_AVGPOOL 9
#define EP_OP_CONCAT 10
#define EP_OP_SPLIT 11
#define EP_OP_SLICE 12
#define EP_OP_TRANSPOSE 13
#define EP_OP_PAD 14
#define EP_OP_RESIZE 15
#define EP_OP_SOFTMAX 16
#define EP_OP_REDUCE 17
#define EP_OP_GATHER 18
#define EP_OP_COPY 19
#define EP_OP_LAYERNORM 20
#define EP_OP_WHERE 21
#define EP_OP_COMPARE 22
#define EP_OP_EXPAND 23
#define EP_OP_CAST 24
#define EP_OP_ARGMAX 25
#define EP_OP_TOPK 26
#define EP_OP_CUMSUM 27
#define EP_OP_TRILU 28
#define EP_OP_LSTM 29
#define EP_OP_GRU 30
#define EP_OP_SCATTERND 31
#define EP_OP_GATHERND 32
#define EP_OP_RANGE 33
#define EP_OP_NONZERO 34
#define EP_OP_SLICE_DYN 35
#define EP_OP_SHAPE 36
#define EP_OP_LRN 37
#define EP_OP_GATHER_ELEMENTS 38
#define EP_OP_SCATTER_ELEMENTS 39
#define EP_OP_REVERSE_SEQUENCE 40
#define EP_OP_NON_MAX_SUPPRESSION 41
#define EP_OP_COMPRESS 42
#define EP_OP_IF 43
#define EP_OP_ELSE 44
#define EP_OP_RANDOM 45
#define EP_OP_GRIDSAMPLE 46
#define EP_OP_ROIALIGN 47
#define EP_OP_DEFORMCONV 48
#define EP_OP_UNIQUE 49
#define EP_OP_RESIZE_EXT 50
#define EP_OP_INVRES 51
#define EP_OP_QUANTIZE 52
#define EP_OP_DEQUANTIZE 53
#define EP_OP_QCONV2D 54
#define EP_OP_QGEMM 55
#define EP_OP_QADD 56
#define EP_OP_QLUT 57
#define EP_OP_RESHAPE_DYN 58
#define EP_OP_RESIZE_DYN 59
#define EP_OP_DELEGATE 60
#define EP_OP_QUANTIZE_ROWS 61
#define EP_OP_DQGEMM 62
#define EP_OP_ATTENTION 63
#define EP_OP_REORDER 64
#define EP_OP_COUNT 65         /* one past the last opcode */
/* kernel variants (ep_op_rec.variant): DEFAULT (0) is every op's plain layout; the others'
 * layouts are described below */
#define EP_VARIANT_DEFAULT 0
#define EP_MAX_VARIANTS 11
#define EP_CONV2D_VARIANT_DEFAULT 0
#define EP_CONV2D_VARIANT_PACKED 1
#define EP_CONV2D_VARIANT_DEPTHWISE 2
#define EP_CONV2D_VARIANT_WINOGRAD 3
#define EP_CONV2D_VARIANT_DW_C8 4
#define EP_CONV2D_VARIANT_DIRECT 5
#define EP_CONV2D_VARIANT_POINTWISE 6
#define EP_CONV2D_VARIANT_BLOCKED_DW 7
#define EP_CONV2D_VARIANT_BLOCKED_PW 8
#define EP_CONV2D_VARIANT_BLOCKED_CONV 9
#define EP_CONV2D_VARIANT_WINOGRAD_1D 10
#define EP_CONV_TRANSPOSE2D_VARIANT_DEFAULT 0
#define EP_CONV_TRANSPOSE2D_VARIANT_PACKED 1
#define EP_GEMM_VARIANT_DEFAULT 0
#define EP_GEMM_VARIANT_PACKED 1
#define EP_GEMM_VARIANT_ROWS 2
#define EP_MATMUL_VARIANT_DEFAULT 0
#define EP_UNARY_VARIANT_DEFAULT 0
#define EP_BINARY_VARIANT_DEFAULT 0
#define EP_MAXPOOL_VARIANT_DEFAULT 0
#define EP_MAXPOOL_VARIANT_INDICES 1
#define EP_MAXPOOL_VARIANT_C8 2
#define EP_AVGPOOL_VARIANT_DEFAULT 0
#define EP_AVGPOOL_VARIANT_C8 1
#define EP_GLOBAL_AVGPOOL_VARIANT_DEFAULT 0
#define EP_GLOBAL_AVGPOOL_VARIANT_C8 1
#define EP_CONCAT_VARIANT_DEFAULT 0
#define EP_SPLIT_VARIANT_DEFAULT 0
#define EP_SLICE_VARIANT_DEFAULT 0
#define EP_TRANSPOSE_VARIANT_DEFAULT 0
#define EP_PAD_VARIANT_DEFAULT 0
#define EP_RESIZE_VARIANT_DEFAULT 0
#define EP_RESIZE_VARIANT_TABLE 1
#define EP_RESIZE_VARIANT_C8 2
#define EP_SOFTMAX_VARIANT_DEFAULT 0
#define EP_REDUCE_VARIANT_DEFAULT 0
#define EP_GATHER_VARIANT_DEFAULT 0
#define EP_COPY_VARIANT_DEFAULT 0
#define EP_LAYERNORM_VARIANT_DEFAULT 0
#define EP_WHERE_VARIANT_DEFAULT 0
#define EP_COMPARE_VARIANT_DEFAULT 0
#define EP_EXPAND_VARIANT_DEFAULT 0
#define EP_CAST_VARIANT_DEFAULT 0
#define EP_ARGMAX_VARIANT_DEFAULT 0
#define EP_TOPK_VARIANT_DEFAULT 0
#define EP_CUMSUM_VARIANT_DEFAULT 0
#define EP_TRILU_VARIANT_DEFAULT 0
#define EP_LSTM_VARIANT_DEFAULT 0
#define EP_GRU_VARIANT_DEFAULT 0
#define EP_SCATTERND_VARIANT_DEFAULT 0
#define EP_GATHERND_VARIANT_DEFAULT 0
#define EP_RANGE_VARIANT_DEFAULT 0
#define EP_NONZERO_VARIANT_DEFAULT 0
#define EP_SLICE_DYN_VARIANT_DEFAULT 0
#define EP_SHAPE_VARIANT_DEFAULT 0
#define EP_LRN_VARIANT_DEFAULT 0
#define EP_GATHER_ELEMENTS_VARIANT_DEFAULT 0
#define EP_SCATTER_ELEMENTS_VARIANT_DEFAULT 0
#define EP_REVERSE_SEQUENCE_VARIANT_DEFAULT 0
#define EP_NON_MAX_SUPPRESSION_VARIANT_DEFAULT 0
#define EP_COMPRESS_VARIANT_DEFAULT 0
#define EP_IF_VARIANT_DEFAULT 0
#define EP_ELSE_VARIANT_DEFAULT 0
#define EP_RANDOM_VARIANT_DEFAULT 0
#define EP_GRIDSAMPLE_VARIANT_DEFAULT 0
#define EP_ROIALIGN_VARIANT_DEFAULT 0
#define EP_DEFORMCONV_VARIANT_DEFAULT 0
#define EP_UNIQUE_VARIANT_DEFAULT 0
#define EP_RESIZE_EXT_VARIANT_DEFAULT 0
#define EP_INVRES_VARIANT_DEFAULT 0
#define EP_QUANTIZE_VARIANT_DEFAULT 0
#define EP_DEQUANTIZE_VARIANT_DEFAULT 0
#define EP_QCONV2D_VARIANT_DEFAULT 0
#define EP_QCONV2D_VARIANT_PACKED 1
#define EP_QCONV2D_VARIANT_DEPTHWISE 2
#define EP_QGEMM_VARIANT_DEFAULT 0
#define EP_QGEMM_VARIANT_PACKED 1
#define EP_QADD_VARIANT_DEFAULT 0
#define EP_QLUT_VARIANT_DEFAULT 0
#define EP_RESHAPE_DYN_VARIANT_DEFAULT 0
#define EP_RESIZE_DYN_VARIANT_DEFAULT 0
#define EP_DELEGATE_VARIANT_DEFAULT 0
#define EP_QUANTIZE_ROWS_VARIANT_DEFAULT 0
#define EP_DQGEMM_VARIANT_DEFAULT 0
#define EP_DQGEMM_VARIANT_PACKED 1
#define EP_ATTENTION_VARIANT_DEFAULT 0
#define EP_REORDER_VARIANT_DEFAULT 0
/* EP_OPS_END */


/* activations fused into epilogues and standalone unary kinds */
#define EP_ACT_NONE 0
#define EP_ACT_RELU 1
#define EP_ACT_CLIP 2         /* min(max(x, alpha), beta) */
#define EP_ACT_LEAKY_RELU 3   /* x < 0 ? alpha * x : x */
#define EP_ACT_SIGMOID 4
#define EP_ACT_HARD_SIGMOID 5 /* clip(alpha * x + beta, 0, 1) */
#define EP_ACT_HARD_SWISH 6   /* x * clip(x / 6 + 0.5, 0, 1) */
#define EP_ACT_TANH 7
#define EP_ACT_SILU 8         /* x * sigmoid(x) */
#define EP_ACT_ERF 9
#define EP_ACT_SQRT 10
#define EP_ACT_GELU 11        /* 0.5 x (1 + erf(x / sqrt 2)) */
#define EP_ACT_EXP 12
#define EP_ACT_LOG 13
#define EP_ACT_NEG 14
#define EP_ACT_ABS 15
#define EP_ACT_RECIPROCAL 16
#define EP_ACT_ELU 17         /* x < 0 ? alpha (exp(x) - 1) : x */
#define EP_ACT_GELU_TANH 18   /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
#define EP_ACT_ROUND 19       /* nearest integer, halves to even (ONNX Round, numpy.round); -0.3 -> -0 */
#define EP_ACT_FLOOR 20
#define EP_ACT_CEIL 21
/* 1.2: math kinds, for the unary op only (an epilogue refuses them): libm's f32 functions */
#define EP_ACT_MATH_FIRST 22
#define EP_ACT_SIN 22
#define EP_ACT_COS 23
#define EP_ACT_TAN 24
#define EP_ACT_ASIN 25
#define EP_ACT_ACOS 26
#define EP_ACT_ATAN 27
#define EP_ACT_SINH 28
#define EP_ACT_COSH 29
#define EP_ACT_ASINH 30
#define EP_ACT_ACOSH 31
#define EP_ACT_ATANH 32
#define EP_ACT_SIGN 33        /* -1, 0 or 1 (0 keeps its sign; NaN stays NaN) */
#define EP_ACT_COUNT 34

#define EP_BIN_ADD 0
#define EP_BIN_SUB 1
#define EP_BIN_MUL 2
#define EP_BIN_DIV 3
#define EP_BIN_POW 4
#define EP_BIN_PRELU 5        /* a < 0 ? b * a : a */
#define EP_BIN_MAX 6
#define EP_BIN_MIN 7
#define EP_BIN_MOD 8          /* remainder with the sign of b (ONNX Mod fmod=0, numpy.mod) */
#define EP_BIN_FMOD 9         /* remainder with the sign of a (ONNX Mod fmod=1, C fmod / %) */
#define EP_BIN_BITAND 10      /* 1.2; integers only, as are the four below */
#define EP_BIN_BITOR 11
#define EP_BIN_BITXOR 12
#define EP_BIN_SHL 13         /* a << b in Y's width (ONNX BitShift); b < 0 or >= the width: 0 */
#define EP_BIN_SHR 14         /* a >> b, arithmetic on signed types; b < 0 or >= the width: a < 0 ? -1 : 0 */
#define EP_BIN_COUNT 15

/* ---- op parameter structs (PARAMS section) ---- */

/* REORDER (1.12): in X, out Y, f32 [N,C,H,W] of the same dims, one of them in layout PLAIN and the other in
 * C8: Y holds X's values in its own layout (ep_tensor_rec.layout). */
typedef struct ep_reorder_params {
    int32_t reserved[2];    /* 0 */
} ep_reorder_params;

/* CONV2D: in X[N,C,H,W] f32, W[M,C/groups,KH,KW], B[M] (optional),
 * R[N,M,OH,OW] residual (optional); out Y[N,M,OH,OW].
 * Y = act(conv(X, W) + B + R).
 * Variants DW_C8 (groups == C == M) and DIRECT (groups 1) take W as variant 0 does (1.10):
 *   DW_C8 runs 8 channels at a time on an interleaved copy of their padded input; its scratch slot is
 *     ((Hp * Wp) + KH * KW) * 8 floats, Hp = (OH-1)*sh + (KH-1)*dh + 1, Wp = (OW-1)*sw + (KW-1)*dw + 1;
 *   DIRECT (KW <= 32) runs bands of EP_CONV_DIRECT_ROWS output rows from C padded, stride-phase-split input
 *     rows; its slot is C * Hb * sw * PW floats, Hb = (min(OH, EP_CONV_DIRECT_ROWS)-1)*sh + (KH-1)*dh + 1,
 *     PW = ceil(OW/16)*16 + (KW-1)*dw/sw.
 *   Scratch holds at least one slot; the kernels run as many threads as it holds slots.
 * Variant POINTWISE (groups 1; 1.10 for 1x1, stride 1, no pads; 1.11 for any kernel, stride, dilation and pads)
 *   computes Y^T = X^T W^T with the pixels as the GEMM's rows: W is W^T as GEMM-B strips [ceil(M/16)][K][16],
 *   K = C*KH*KW in (c, kh, kw) order (element (k, m) at (m/16)*K*16 + k*16 + m%16, zero past M; f32, or 16-bit
 *   weights as PACKED's). Scratch: a chunk of Pc pixels (a multiple of EP_PACK_MR, at least one panel): their
 *   im2col rows as A panels [Pc/MR][K][MR], then their C^T rows [Pc][M]; (K + M) * MR * 4 bytes at least.
 * Variants BLOCKED_DW and BLOCKED_PW (1.12) read X and R and write Y in layout C8 (every other variant: PLAIN);
 *   W and B are PLAIN, f32, and no scratch is needed:
 *   BLOCKED_DW, depthwise (groups == C == M), any kernel, stride, dilation and pads: W as [C/8][KH*KW][8]
 *     (tap (kh, kw) of channel c at (c/8)*KH*KW*8 + (kh*KW + kw)*8 + c%8);
 *   BLOCKED_PW, 1x1, stride 1, no pads, groups 1: W^T as GEMM-B strips [ceil(M/16)][C][16] (POINTWISE's, K = C).
 * Variant BLOCKED_CONV (1.12), groups 1, any kernel, stride, dilation and pads: Y and R in C8; X in C8, or PLAIN
 *   (any C: a stem reading the image), or (1.14) NHWC (C <= 8); W^T as GEMM-B strips [ceil(M/16)][K][16],
 *   K = C*KH*KW, in (c/8, kh, kw, c%8) order for a C8 X (row ((c/8*KH + kh)*KW + kw)*8 + c%8), in (c, kh, kw)
 *   order for a PLAIN X (row (c*KH + kh)*KW + kw) and in (kh, kw, c) order for an NHWC X (row (kh*KW + kw)*C + c);
 *   f32; no scratch.
 * 16-bit weights on C8 (1.14): BLOCKED_PW's and BLOCKED_CONV's W^T may be F16 or BF16 (as PACKED's, "16-bit
 *   weights" below), BLOCKED_CONV's only when one input unit's rows, KH*KW*8 for a C8 X or KH*KW for a PLAIN one,
 *   are at most EP_BLOCKED_W16_ROWS (the kernels convert a k-block of whole units at a time).
 * Variant WINOGRAD_1D (1.15): Winograd F(m, r) along W (Toom-Cook on the points 0, +-1, +-2, +-1/2, inf;
 *   kernels/winograd_common.h states B^T and A^T), for groups 1, KH 1, 3 <= KW = r <= 7, stride 1, dilation
 *   1 along H (any along W), no pads along H; m = 9 - r outputs per tile. W is U = G g per point, f32, as
 *   [8][ceil(M/MR)][C][MR] panels (WINOGRAD's layout over 8 points). Row h's outputs are tiles of m outputs
 *   dw apart: tile u of a row covers o = (u / dw) * m * dw + u % dw + i * dw (i < m, o < OW), TW =
 *   ceil(OW / (m * dw)) * dw tiles a row, and reads z_j = X[h][o_0 - pl + j * dw] (j < 8, 0 outside X).
 *   Scratch: a block of Tb tiles (a multiple of NR, at least one strip): V [8][Tb/NR][C][NR] then Mo
 *   [8][Mp][Tb] floats, Mp = ceil(M/MR)*MR: 8 * NR * (C + Mp) * 4 bytes at least. */
#define EP_BLOCKED_W16_ROWS 256
#define EP_CONV_DIRECT_ROWS 4
/* CONV2D's per-channel PReLU epilogue (1.14; act, outside the EP_ACT_* kinds): y < 0 ? S[m] * y : y after the
 * bias and the residual, S the op's input 4, f32 [M] PLAIN; variants BLOCKED_PW and BLOCKED_CONV only. */
#define EP_CONV_ACT_PRELU 64
typedef struct ep_conv2d_params {
    int32_t kernel[2];      /* kh, kw */
    int32_t stride[2];
    int32_t dilation[2];
    int32_t pads[4];        /* top, left, bottom, right */
    int32_t groups;
    int32_t act;            /* EP_ACT_*, or EP_CONV_ACT_PRELU */
    float act_alpha;
    float act_beta;
} ep_conv2d_params;

/* CONV_TRANSPOSE2D: in X[N,C,H,W], W[C,M/groups,KH,KW], B[M] (optional);
 * out Y[N,M,OH,OW] with OH = (H-1)*sh - pad_t - pad_b + dh*(KH-1) + 1 + out_pad_h. */
typedef struct ep_conv_transpose2d_params {
    int32_t kernel[2];
    int32_t stride[2];
    int32_t dilation[2];
    int32_t pads[4];        /* top, left, bottom, right */
    int32_t output_padding[2];
    int32_t groups;
    int32_t act;
    float act_alpha;
    float act_beta;
} ep_conv_transpose2d_params;

/* INVRES (1.5): a fused inverted-residual block, three convolutions in one op,
 *   E = act[0](conv1x1(X, WE) + BE)              expand: E[N,CE,H,W]     (absent WE: E = X, CE = C)
 *   D = act[1](depthwise(E, WD) + BD)            D[N,CE,OH,OW]: kernel, stride, dilation, pads below
 *   Y = act[2](conv1x1(D, WP) + BP + R)          project: Y[N,M,OH,OW]
 * each value exactly as the CONV2D ops would compute it (the same kernels: variant PACKED for the 1x1s,
 * DEPTHWISE for the middle), so the block equals the three ops bit for bit on each ISA. E and D never leave
 * the op's scratch: it runs `band` output rows at a time, and each task keeps the rows of E that a band needs
 * in a ring (docs/kernels.md "Fused inverted-residual blocks").
 * in  X[N,C,H,W]; WE the expand weights packed as CONV2D PACKED's [ceil(CE/MR)][C][MR], or absent; BE[CE]
 *     (optional; absent when WE is); WD[CE,1,KH,KW]; BD[CE] (optional); WP packed [ceil(M/MR)][CE][MR];
 *     BP[M] (optional); R[N,M,OH,OW] (optional). All f32. M is the declared output's.
 * Scratch: slots of (CE*RR*W + C*NR [both with WE only] + RP*sw*PW + CE*PP) floats, RP = (band-1)*sh +
 * (KH-1)*dh + 1 padded rows per band, RR = min(RP, H) ring rows, PW = ceil(OW/16)*16 + (KW-1)*dw/sw,
 * PP = ceil(band*OW/NR)*NR: at least one; the kernels run one task per slot at most. */
typedef struct ep_invres_params {
    int32_t kernel[2];      /* of the depthwise stage: kh, kw */
    int32_t stride[2];
    int32_t dilation[2];
    int32_t pads[4];        /* top, left, bottom, right */
    int32_t band;           /* output rows per band, >= 1 */
    int32_t act[3];         /* EP_ACT_* of the expand, depthwise and project stages */
    float act_alpha[3];
    float act_beta[3];
} ep_invres_params;

/* GEMM: in A[M,K], B[K,N] (constant, row-major K x N), C[N] or C[M,N] bias (optional),
 * R[M,N] residual (optional); out Y[M,N] = act(A B + C + R).
 * Variant ROWS (1.5): B given as its transpose [N, K] (B's columns as rows: a logits projection that shares
 * the token embedding table of a GATHER), Y[m,n] = act(sum_k A[m,k] Bt[n,k] + C + R); Bt may be F16 or BF16
 * (1.16), each element converted exactly to f32 where it is read. */
typedef struct ep_gemm_params {
    int32_t act;
    float act_alpha;
    float act_beta;
    int32_t reserved;
} ep_gemm_params;

/* MATMUL: numpy matmul of A[..., M, K] and B[..., K, N], both rank >= 2, batch dims broadcast. */
typedef struct ep_matmul_params {
    int32_t reserved;
    int32_t reserved2;
} ep_matmul_params;

/* ATTENTION (1.11): in Q[..., M, D], KT[..., D, N], V[..., N, E], all f32 of rank >= 2, and optionally
 * MASK (f32, rank <= Y's, each dim 1 or S's); out Y[..., M, E]:
 *   S = Q KT (MATMUL's semantics: batch dims broadcast);  S = divide ? S / scale : S * scale;
 *   S = S + MASK (broadcast);  P = softmax(S) over its last axis (SOFTMAX's semantics);  Y = P V.
 * Y's batch dims are S's: V's must broadcast into them without extending them. Every element is what
 * MATMUL, BINARY MUL / DIV, BINARY ADD, SOFTMAX and MATMUL compute one after the other (the reference
 * equals that chain bit for bit), but S never leaves the op's scratch: a band of b = min(rows, M) rows of
 * S at a time, b * N floats a slot (rows is fixed for every length of a run-time-shaped plan). Scratch holds at least one slot; the kernels run as many threads as it holds
 * slots. rows >= 1; reserved 0. */
typedef struct ep_attention_params {
    float scale;
    int32_t divide;     /* 0: S * scale, 1: S / scale */
    int32_t rows;       /* rows of S per scratch slot */
    int32_t reserved;
} ep_attention_params;

/* UNARY: Y = f(X), same shape, f32. */
typedef struct ep_unary_params {
    int32_t kind;           /* EP_ACT_* except NONE */
    float alpha;
    float beta;
    int32_t reserved;
} ep_unary_params;

/* BINARY: Y = A op B with numpy broadcasting (ranks aligned right), then act.
 * A, B and Y have one dtype: F32, or an integer type (I8, U8, I16, U16, I32, U32, I64, U64) for ADD,
 * SUB, MUL, DIV, MAX, MIN, MOD, FMOD, BITAND, BITOR, BITXOR, SHL, SHR and (1.3) POW with act NONE (F32
 * refuses the bitwise kinds; integer POW is repeated multiplication, a negative exponent giving the
 * truncated real power: 1 for 1, +-1 for -1, else 0). Integers wrap (two's complement; INT_MIN / -1 is
 * INT_MIN); unsigned types compute exactly as unsigned (U64 in uint64); DIV truncates toward zero; a
 * zero divisor fails the run with EP_ERR_RUN_INDEX (as onnxruntime). */
typedef struct ep_binary_params {
    int32_t kind;           /* EP_BIN_* */
    int32_t act;            /* EP_ACT_* fused after the op */
    float act_alpha;
    float act_beta;
} ep_binary_params;

/* MAXPOOL / AVGPOOL: in X[N,C,H,W]; out Y[N,C,OH,OW]. Output extents come from the
 * output tensor (the compiler resolves ceil_mode); windows are clipped to the input.
 * AVGPOOL divides by the window size counting padding when count_include_pad
 * (clipped to the padded extent), otherwise by the number of valid input cells.
 * MAXPOOL variant EP_MAXPOOL_VARIANT_INDICES (format 1.3) has a second output, Indices
 * I64[N,C,OH,OW]: the flat index ((n*C + c)*H + h)*W + w of the first tap (in window order)
 * that gives the maximum (ONNX MaxPool's Indices with storage_order 0); variant DEFAULT has
 * one output. */
typedef struct ep_pool_params {
    int32_t kernel[2];
    int32_t stride[2];
    int32_t dilation[2];
    int32_t pads[4];        /* top, left, bottom, right */
    int32_t count_include_pad;
    int32_t ceil_mode;
} ep_pool_params;

/* Variants C8 (1.12) of MAXPOOL (one output) and AVGPOOL: X and Y in layout C8, the same params and values as
 * variant 0; no scratch. */
/* GLOBAL_AVGPOOL: in X[N,C,H,W]; out Y[N,C,1,1]. Variant C8 (1.12): X [N,C,H,W] in layout C8, Y PLAIN (whose
 * bytes at H = W = 1 are the same in either layout); each (n, c) summed in (h, w) order; no scratch. */
typedef struct ep_global_pool_params {
    int32_t reserved;
    int32_t reserved2;
} ep_global_pool_params;

/* CONCAT: in X0..Xn-1 (same rank and dtype, equal but for axis); out Y. Any dtype. */
typedef struct ep_axis_params {
    int32_t axis;           /* 0..rank-1 */
    int32_t reserved;
} ep_axis_params;
/* SPLIT uses ep_axis_params: one input, outputs split along axis by their own extents. */
/* SOFTMAX uses ep_softmax_params. */

/* SLICE: Y[i] = X[start + i * step] per dim; output extents from the output tensor. Any dtype. */
typedef struct ep_slice_params {
    int32_t starts[8];
    int32_t steps[8];       /* nonzero; negative walks backwards */
} ep_slice_params;

/* TRANSPOSE: Y dim i = X dim perm[i]. Any dtype. */
typedef struct ep_transpose_params {
    int32_t perm[8];
} ep_transpose_params;

/* PAD: in X; out Y with Y.dims[i] = X.dims[i] + pads[i] + pads[rank + i]. Pads may be negative (crop).
 * f32, or an integer / bool dtype (value converted to it: truncated, a NaN value refused). */
#define EP_PAD_CONSTANT 0
#define EP_PAD_REFLECT 1
#define EP_PAD_EDGE 2
#define EP_PAD_WRAP 3         /* 1.2: numpy.pad's wrap, index modulo the extent */
/* 1.8: a pad that follows a variable length. Bits of mode above the EP_PAD_* value (bits 0-7): bit 8 + i
 * (EP_PAD_BEGIN_TO_MULTIPLE << i) or bit 16 + i (EP_PAD_END_TO_MULTIPLE << i) marks the begin or the end
 * of dim i as padding that dim to a multiple: that pads slot holds the multiple m (1..2^24), the other
 * side of the dim is a fixed pad o >= 0, and the pad is (m - (X.dims[i] + o) % m) % m (ONNX exports of
 * `(chunk - T % chunk) % chunk`). At most one side of a dim; bits 24-31 are 0. */
#define EP_PAD_MODE_MASK 0xFF
#define EP_PAD_BEGIN_TO_MULTIPLE 0x100
#define EP_PAD_END_TO_MULTIPLE 0x10000
#define EP_PAD_MAX_MULTIPLE 16777216
typedef struct ep_pad_params {
    int32_t mode;           /* EP_PAD_*, and 1.8: the TO_MULTIPLE bits */
    float value;
    int32_t pads[16];       /* begins[rank] then ends[rank] */
} ep_pad_params;

/* RESIZE: in X; out Y of the same rank. f32. */
#define EP_RESIZE_NEAREST 0
#define EP_RESIZE_LINEAR 1
#define EP_RESIZE_CUBIC 2
#define EP_COORD_HALF_PIXEL 0
#define EP_COORD_ASYMMETRIC 1
#define EP_COORD_ALIGN_CORNERS 2
#define EP_COORD_PYTORCH_HALF_PIXEL 3
#define EP_COORD_TF_HALF_PIXEL_FOR_NEAREST 4
#define EP_COORD_HALF_PIXEL_SYMMETRIC 5
#define EP_NEAREST_ROUND_PREFER_FLOOR 0
#define EP_NEAREST_ROUND_PREFER_CEIL 1
#define EP_NEAREST_FLOOR 2
#define EP_NEAREST_CEIL 3
typedef struct ep_resize_params {
    int32_t mode;           /* EP_RESIZE_* */
    int32_t coord_mode;     /* EP_COORD_* */
    int32_t nearest_mode;   /* EP_NEAREST_* */
    int32_t exclude_outside;
    float cubic_coeff_a;
    float extrapolation_value;
    float scales[8];        /* per dim, output/input as ONNX defines it (> 0) */
} ep_resize_params;

/* RESIZE_EXT (1.3): RESIZE with the sampling fields of ONNX Resize-19 that RESIZE's record lacks; same
 * operands. The first 56 bytes are RESIZE's fields with the same meaning, and coord_mode may also be
 * EP_COORD_TF_CROP_AND_RESIZE: output y of dim d samples
 *   x = roi_start[d]*(in-1) + y*(roi_end[d]-roi_start[d])*(in-1)/(len-1)   ((roi_end-roi_start)*(in-1)/2
 * when len is 1; len is the spec's length_resized, as for align_corners), and an output element whose x
 * falls outside [0, in-1] on any dim is extrapolation_value (any float). roi_start / roi_end are finite
 * (0 and 1 on a dim the crop leaves whole; ignored by the other modes). antialias 1 (linear and cubic
 * only): on a dim with scale < 1 the filter's support widens by 1/scale and its weights are normalised
 * to sum 1 (then exclude_outside applies); it needs scale * in >= 1/8 on every dim, and scratch of
 * 16 bytes per input extent summed over the dims. reserved is 0. */
#define EP_COORD_TF_CROP_AND_RESIZE 6
typedef struct ep_resize_ext_params {
    int32_t mode;           /* EP_RESIZE_* */
    int32_t coord_mode;     /* EP_COORD_* */
    int32_t nearest_mode;   /* EP_NEAREST_* */
    int32_t exclude_outside;
    float cubic_coeff_a;
    float extrapolation_value;
    float scales[8];
    float roi_start[8];     /* per dim, EP_COORD_TF_CROP_AND_RESIZE: normalised crop start */
    float roi_end[8];       /* per dim, normalised crop end */
    int32_t antialias;      /* 0 or 1 */
    int32_t reserved;
} ep_resize_ext_params;

/* SOFTMAX: along one axis of any rank. f32. */
typedef struct ep_softmax_params {
    int32_t axis;
    int32_t log;            /* 1: LogSoftmax */
} ep_softmax_params;

/* REDUCE: over the dims set in axes_mask; Y keeps rank (reduced dims are 1) or drops them. F32, or
 * I32 / I64 (Y the same dtype) for SUM, MAX, MIN and PROD: integers wrap; an empty MAX / MIN gives the
 * type's minimum / maximum. */
#define EP_REDUCE_MEAN 0
#define EP_REDUCE_SUM 1
#define EP_REDUCE_MAX 2
#define EP_REDUCE_MIN 3
#define EP_REDUCE_PROD 4
#define EP_REDUCE_SUM_SQUARE 5
#define EP_REDUCE_L2 6
typedef struct ep_reduce_params {
    int32_t kind;           /* EP_REDUCE_* */
    uint32_t axes_mask;     /* bit i: reduce dim i of X */
    int32_t keepdims;
    int32_t reserved;
} ep_reduce_params;

/* GATHER: in X (any dtype), I (I32 or I64, runtime values, negative counts from the end);
 * out Y = X.shape[:axis] + I.shape + X.shape[axis+1:]. An index out of range fails the run.
 * Uses ep_axis_params. */

/* COPY: Y = X (same dtype and element count). Uses ep_axis_params (ignored). */

/* ---- kernel variants (ep_op_rec.variant), per opcode; variant 0 is always the plain layout ----
 * Every variant has a portable reference kernel, so a plan using one needs no CPU feature;
 * ISA kernels (x86 AVX2+FMA, NEON) override the table entry at open. Layouts below are what the
 * compiler pre-packs (pyapi/edgeplan/compiler/passes/select.py) and what the shape functions check. */
#define EP_PACK_MR 6          /* rows of a packed-weight panel (micro-kernel tile: MR x NR) */
#define EP_PACK_NR 16         /* columns of a packed strip: 2 AVX2 ymm = 4 NEON q registers */
/* CONV2D variant 1, G = groups (C and M multiples of G, Cg = C/G, Mg = M/G): W is [G*ceil(Mg/MR), Cg*KH*KW, MR]
 * (M from the output; group g's panels come g-th, its panel p row i is output channel g*Mg + p*MR+i, zero past
 * Mg; K index (c*KH + kh)*KW + kw over the group's Cg input channels). Scratch: im2col strips [s][K][NR],
 * s >= 1 (the kernel packs as many NR-pixel strips per pass as the scratch holds). */
/* 16-bit weights (1.7): the packed W of CONV2D variant 1, the packed B of GEMM variant 1 and INVRES's WE
 * and WP may be F16 or BF16 instead of F32, in the same layout. The kernels convert each element exactly to f32 before use, so
 * the result is the f32 variant's on the converted weights, bit for bit; no extra scratch. */
/* CONV2D variant 2, depthwise (groups == C == M): W as variant 0. Scratch: s >= 1 slots of one
 * zero-padded input plane split into stride phases, Hp*SW*PW floats each, Hp = (OH-1)*SH + (KH-1)*DH + 1,
 * PW = ceil(OW/16)*16 + ((KW-1)*DW)/SW (with threads, min(threads, s) planes are padded at once). */
/* CONV2D variant 3, Winograd F(4x4, 3x3), 3x3 stride 1 dilation 1 groups 1: W is the transformed
 * filter G g G^T as [36][ceil(M/MR)][C][MR]. Scratch: T tiles of 4x4 outputs per pass, T a multiple
 * of NR, 36*(C + ceil(M/MR)*MR)*T floats. */
/* RESIZE variant 1, TABLE: nearest or linear, exclude_outside 0, rank >= 2, every dim but the last two kept
 * (scale 1, same extent); params as variant 0. Scratch: the taps of each output row, then of each output
 * column (int32 i0, i1; float w0, w1: 16 bytes each), then for linear s >= 1 slots of 2*OW floats (two
 * width-interpolated source rows; min(threads, s) planes are resampled at once). */
/* RESIZE variant 2, C8 (1.13): TABLE's conditions and values at rank 4, X and Y in layout C8 (N and C kept);
 * a plane is a channel block of 8, and the linear slots hold 2*OW*8 floats. */
/* GEMM variant 1: B is [ceil(N/NR), K, NR] (N from the output; strip j column i is column
 * j*NR+i of B, zero past N). No scratch. */
/* CONV_TRANSPOSE2D variant 1, polyphase packed, groups 1 (docs/kernels.md). Per axis (stride s, dilation d,
 * kernel k): T = d >= s ? k : (k-1)*d/s + 1 shifts D(j) = d >= s ? j*d/s : j. W is GEMM-B strips
 * [ceil(R/NR), K, NR] of the phase matrix Wp[K, R]: R = M*SH*SW columns r = (m*SH + fh)*SW + fw
 * (M from the output), K = C*TH*TW rows k = (c*TH + jh)*TW + jw; Wp[k, r] = W[c, m, kh, kw] where
 * kh*DH == fh + DH(jh)*SH and kw*DW == fw + DW(jw)*SW, 0 where no such tap exists and past R.
 * Y[m, qh*SH + fh - pad_t, qw*SW + fw - pad_l] = act(B[m] + sum_k X[c, qh - DH(jh), qw - DW(jw)] Wp[k, r]).
 * Scratch: input panels [s][K][MR], s >= 1: MR pixels of the phase grid each (the kernel packs as many
 * panels per pass as the scratch holds), minimum K*MR*4 bytes whatever the extents. */
/* ---- sequence / audio ops: static shapes ---- */

/* LAYERNORM: in X f32 [.., rank >= 1], Scale and Bias (optional) f32 with numel = inner =
 * prod(X.dims[axis:]) (the compiler broadcasts constants to that shape); out Y (X's shape), then
 * optionally Mean and InvStdDev, shape X.dims[:axis] + 1 per normalised dim (both or just Mean).
 * Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias over the last rank-axis dims. */
typedef struct ep_layernorm_params {
    int32_t axis;           /* 0..rank-1 */
    float epsilon;          /* >= 0 */
} ep_layernorm_params;

/* WHERE: in C (BOOL), X, Y (same dtype, any); numpy broadcasting of all three; out Z = C ? X : Y. */
typedef struct ep_where_params {
    int32_t reserved;
    int32_t reserved2;
} ep_where_params;

/* COMPARE: in A, B (same dtype: F32, an integer type or BOOL; BOOL only for AND/OR/XOR; unsigned
 * types order as unsigned);
 * numpy broadcasting; out BOOL (0/1 bytes). Not(x) is lowered as XOR(x, true). */
#define EP_CMP_EQUAL 0
#define EP_CMP_LESS 1
#define EP_CMP_GREATER 2
#define EP_CMP_LESS_EQUAL 3
#define EP_CMP_GREATER_EQUAL 4
#define EP_CMP_AND 5
#define EP_CMP_OR 6
#define EP_CMP_XOR 7
#define EP_CMP_COUNT 8
typedef struct ep_compare_params {
    int32_t kind;           /* EP_CMP_* */
    int32_t reserved;
} ep_compare_params;

/* EXPAND: Y = X broadcast (numpy rules, ranks aligned right) to the output tensor's shape; any dtype.
 * Uses ep_where_params (reserved). */

/* CAST: Y = X converted to dtype `to`; X and Y are F32, F16, BF16, F64, I8, U8, I16, I32, I64 or BOOL.
 * Float -> int truncates toward zero and saturates (NaN -> 0); int -> narrower int wraps (two's
 * complement, as numpy); anything -> BOOL is x != 0. To F16 / BF16: through float32, rounded to
 * nearest even (kernels/float_bits.h); to F32 from F64 rounds to nearest even; int -> F16 / BF16 goes
 * through float32. U16, U32 and U64 (1.2) convert as unsigned values; float -> unsigned saturates to
 * [0, max]. */
typedef struct ep_cast_params {
    int32_t to;             /* EP_DTYPE_* of Y */
    int32_t reserved;
} ep_cast_params;

/* ARGMAX: in X (F32, I32 or I64); out I64 with dim `axis` reduced to 1 (keepdims) or dropped.
 * Ties: the first index, or the last with select_last_index. ArgMin when min == 1. */
typedef struct ep_argmax_params {
    int32_t axis;
    int32_t keepdims;       /* 0 / 1 */
    int32_t select_last_index; /* 0 / 1 */
    int32_t min;            /* 0: ArgMax, 1: ArgMin */
} ep_argmax_params;

/* TOPK: in X (F32, I32 or I64); out Values (X's dtype) and Indices (I64), both X's shape with
 * dim `axis` = k (0 <= k <= X.dims[axis]). Output is always sorted (largest or smallest
 * first); equal values keep ascending index order. Scratch: 2 * X.dims[axis] int32 indices. */
typedef struct ep_topk_params {
    int32_t axis;
    int32_t k;
    int32_t largest;        /* 0 / 1 */
    int32_t sorted;         /* 0 / 1 (both produce sorted output) */
} ep_topk_params;

/* CUMSUM: Y = running sum (prod 0) or product (prod 1, ONNX CumProd; 1.2) of X along axis (F32, I32,
 * I64, U32 or U64 (1.2); integers wrap; F32 accumulates in double). exclusive: element j takes the
 * elements before j (the first is 0, or 1 for a product); reverse: runs from the end. */
typedef struct ep_cumsum_params {
    int32_t axis;
    int32_t exclusive;      /* 0 / 1 */
    int32_t reverse;        /* 0 / 1 */
    int32_t prod;           /* 0 sum / 1 product; 0 before 1.2 (a reserved field) */
} ep_cumsum_params;

/* TRILU: any dtype, rank >= 2; over the last two dims [M, N] keeps element (i, j) where j - i >= k
 * (upper) or j - i <= k (lower), zeroes the rest. */
typedef struct ep_trilu_params {
    int32_t upper;          /* 0 / 1 */
    int32_t reserved;
    int64_t k;
} ep_trilu_params;

/* LSTM / GRU, f32, default activations (sigmoid gates, tanh cell / hidden), ONNX equations.
 * D = 2 for bidirectional else 1, H = hidden_size, G = 4 (LSTM, gate order i, o, f, c) or
 * 3 (GRU, gate order z, r, h).
 * in:  X        layout 0: [T, B, I]; layout 1: [B, T, I]
 *      W        [D, G*H, I]  ONNX layout, used as is (row g*H+j is gate g, unit j)
 *      R        [D, G*H, H]
 *      B        [D, 2*G*H]   Wb then Rb (required: the compiler writes zeros for an absent bias)
 *      seq_lens [B] I32 or I64 (optional): runtime values in [0, T], else the run fails with
 *               EP_ERR_RUN_INDEX. Steps t >= seq_lens[b] write zeros to Y, and Y_h / Y_c hold
 *               the state after the last valid step (zeros when seq_lens[b] == 0, as onnxruntime).
 *      initial_h [D, B, H] (layout 0) or [B, D, H] (layout 1), optional (zeros)
 *      initial_c LSTM only, as initial_h, optional
 *      P        LSTM only, [D, 3*H] peepholes i, o, f (optional)
 * out: Y [T, D, B, H] (layout 0) or [B, T, D, H] (layout 1); Y_h, then (LSTM) Y_c, shaped as
 *      initial_h. All outputs are always written (the compiler gives unused ones a buffer).
 * Scratch: (2*H + G*H) floats. */
#define EP_RNN_FORWARD 0
#define EP_RNN_REVERSE 1
#define EP_RNN_BIDIRECTIONAL 2
typedef struct ep_rnn_params {
    int32_t hidden_size;
    int32_t direction;      /* EP_RNN_* */
    int32_t layout;         /* 0 / 1 */
    int32_t linear_before_reset; /* GRU: 0 / 1; LSTM: 0 */
    float clip;             /* > 0: gate pre-activations clipped to [-clip, clip]; 0: none */
    int32_t reserved;
} ep_rnn_params;

/* SCATTERND: in Data (any dtype; F32/I32/I64 for a reduction), Indices (I32/I64) [..., q] with
 * q <= rank(Data), Updates = Indices.shape[:-1] + Data.shape[q:]; out Y = Data with the slices
 * replaced (or combined by the reduction) in index order. Indices out of [-dim, dim) fail the run. */
#define EP_SCATTER_NONE 0
#define EP_SCATTER_ADD 1
#define EP_SCATTER_MUL 2
#define EP_SCATTER_MAX 3
#define EP_SCATTER_MIN 4
typedef struct ep_scatternd_params {
    int32_t reduction;      /* EP_SCATTER_* */
    int32_t reserved;
} ep_scatternd_params;

/* GATHERND: in Data (any dtype), Indices (I32/I64) [..., q]; the first batch_dims dims of both are
 * equal; out Y = Data.shape[:b] + Indices.shape[b:-1] + Data.shape[b+q:]. Out-of-range indices
 * fail the run. */
typedef struct ep_gathernd_params {
    int32_t batch_dims;
    int32_t reserved;
} ep_gathernd_params;

/* ---- control flow (1.2) ----
 * IF: in Cond (BOOL, one element); no outputs. The op list then holds the then branch, an ELSE op and
 * the else branch: IF.skip is the number of ops from the IF to its ELSE (the then branch plus one), and
 * ELSE.skip the number of ops in the else branch. The executor reads Cond: true runs the then branch and,
 * reaching the ELSE, skips the else branch; false skips to the op after the ELSE. Branches nest, each
 * inside its parent's branch; they write their results to the same tensors (copies at each branch's
 * end), so the ops after the else branch read them whichever ran.
 * IF with fail = 1 (1.3) is a run-time bound check: its then branch is empty (skip 1, the ELSE right
 * after it, whose else branch is empty too); true fails the run with EP_ERR_RUN_BOUND, as a value past
 * a bound the compiler planned for (a Loop's iteration bound, --max-trips). ELSE.fail is 0. */
typedef struct ep_branch_params {
    uint32_t skip;          /* IF: 1.. (the then branch + its ELSE); ELSE: 0.. */
    uint32_t fail;          /* IF: 0, or 1 (1.3): true fails the run; ELSE: 0 */
} ep_branch_params;

/* ---- normalisation (1.2) ---- */
/* LRN: in X f32 [N, C, d1, ...] (rank 3..8); out Y of X's shape. Across channels, with the window
 * [c - (size-1)/2, c + size/2] clipped to [0, C):
 * Y[n,c,...] = X[n,c,...] / (bias + alpha / size * sum over the window of X[n,c',...]^2) ^ beta
 * (ONNX LRN). */
typedef struct ep_lrn_params {
    int32_t size;           /* 1..EP_PARAM_LIMIT */
    float alpha;            /* finite */
    float beta;             /* finite */
    float bias;             /* finite */
} ep_lrn_params;

/* ---- data-dependent sizes (1.1): the kernel sets the output's variable dim, which must be tagged
 * with a DATA symbol; the record dim is its capacity. More than the capacity fails the run with
 * EP_ERR_RUN_BOUND. ---- */
/* RANGE: in Start, Limit, Delta: one element each, same dtype (F32, I32 or I64), runtime values;
 * out Y[n] of that dtype, Y[i] = start + i * delta, n = max(ceil((limit - start) / delta), 0).
 * delta == 0 fails the run with EP_ERR_RUN_INDEX. Uses ep_where_params (reserved). */
/* NONZERO: in X (F32, I8, U8, I16, I32, I64 or BOOL), rank >= 1; out Y I64 [rank, n]: the indices
 * of X's nonzero elements in row-major order. Uses ep_where_params (reserved). */
/* SLICE_DYN: ONNX Slice with run-time starts and ends. in X (any dtype), Starts and Ends (I32 or I64,
 * [n], n <= rank(X), same dtype); out Y of X's rank. For k < n, axis axes[k] is sliced with steps[k]:
 * starts/ends are clamped as ONNX does (negative counts from the end); the extent is the number of
 * steps that stay inside. Other dims are X's. The sliced extents are data-dependent (Y's record dims
 * on those axes are their capacity, X's bound). */
typedef struct ep_slice_dyn_params {
    int32_t axes[8];        /* axes[0..n-1]: distinct, 0..rank-1; -1 past n */
    int32_t steps[8];       /* steps[0..n-1]: nonzero; 0 past n */
} ep_slice_dyn_params;

/* SHAPE (1.1): in X (any dtype, its current shape); out Y I32 or I64 [n], n <= 8: Y[k] = X.dims[dims[k]]
 * when dims[k] >= 0, else values[k]. The compiler emits it where a model computes with a variable length
 * (ONNX Shape feeding arithmetic); a Shape of fixed dims is folded. */
typedef struct ep_shape_params {
    int32_t dims[8];        /* dims[k] in -1..rank-1 for k < n; -1 past n */
    int32_t values[8];      /* used where dims[k] == -1; 0 past n */
} ep_shape_params;

/* ---- run-time operands (1.8) ---- */
/* RESHAPE_DYN: ONNX Reshape to a shape computed at run time. In X (any dtype, arena), S (I64 [n], n is Y's
 * rank, 1..8); out Y of X's dtype, a view of X: Y starts at X's first byte (its record may be larger than
 * X's, the capacity of its dims' bounds) and the kernel moves no data (EP_OPF_VIEW). Entry k of S is the
 * extent of Y's dim k, except 0 (allowzero 0: X's dim k, which must exist; allowzero 1: an extent of 0)
 * and -1 (at most one: the extent that makes the element counts equal). Data-dependent: the kernel
 * writes Y's extents. An extent past Y's record dim (its bound, or the static extent) fails the run with
 * EP_ERR_RUN_BOUND; an entry below -1, a second -1, a 0 past X's rank or a product other than X's element
 * count fails it with EP_ERR_RUN_SHAPE. */
typedef struct ep_reshape_dyn_params {
    int32_t allowzero;      /* 0 or 1 */
    int32_t reserved;       /* 0 */
} ep_reshape_dyn_params;

/* RESIZE_DYN: ONNX Resize whose scales or sizes are computed at run time. In X (f32), S: F32 [n] scales
 * (from EP_RESIZE_FROM_SCALES) or I64 [n] sizes (EP_RESIZE_FROM_SIZES) of the dims axes[0..n-1]; the
 * other dims keep their extent. Out Y of X's rank. The first 24 bytes are RESIZE's fields with the same
 * meaning. Data-dependent: the kernel computes Y's extents as ONNX does (a scale s: floor(s * in) in
 * double; sizes as given, or with policy NOT_LARGER / NOT_SMALLER one ratio r = min / max of
 * float32(size) / float32(in) over the axes and floor(r * in + 0.5) on each), then resamples as RESIZE
 * with the scale s, or float32(out) / float32(in) from sizes (r with a policy). A scale that is not
 * finite and > 0, a size below 1 or an axis of extent 0 fails the run with EP_ERR_RUN_SHAPE; an extent
 * past Y's record dim (its bound) with EP_ERR_RUN_BOUND, before anything is written. No scratch. */
#define EP_RESIZE_FROM_SCALES 0
#define EP_RESIZE_FROM_SIZES 1
#define EP_RESIZE_STRETCH 0
#define EP_RESIZE_NOT_LARGER 1
#define EP_RESIZE_NOT_SMALLER 2
typedef struct ep_resize_dyn_params {
    int32_t mode;           /* EP_RESIZE_* */
    int32_t coord_mode;     /* EP_COORD_* up to EP_COORD_HALF_PIXEL_SYMMETRIC */
    int32_t nearest_mode;   /* EP_NEAREST_* */
    int32_t exclude_outside;
    float cubic_coeff_a;
    float extrapolation_value;
    int32_t axes[8];        /* axes[0..n-1]: distinct, 0..rank-1; -1 past n */
    int32_t from;           /* EP_RESIZE_FROM_* */
    int32_t policy;         /* sizes: EP_RESIZE_STRETCH, _NOT_LARGER or _NOT_SMALLER; scales: 0 */
} ep_resize_dyn_params;

/* ---- index and detection ops (1.2) ----
 * Index tensors are run-time data: every index is checked before anything is written from it; one out of
 * range fails the run with EP_ERR_RUN_INDEX (nothing is ever read or written outside a tensor). */
/* GATHER_ELEMENTS: in Data (any dtype) rank r in 1..8, Indices (I32/I64) of rank r with
 * Indices.dims[d] <= Data.dims[d] for d != axis; out Y (Data's dtype, Indices' shape):
 * Y[i_0, .., i_{r-1}] = Data[i_0, .., Indices[i_0, .., i_{r-1}], .., i_{r-1}] (the index replaces
 * coordinate `axis`; negative counts from the end). An index outside [-Data.dims[axis], Data.dims[axis])
 * fails the run. Uses ep_axis_params (reserved 0). */

/* SCATTER_ELEMENTS (ONNX ScatterElements, and Scatter of opsets 9-10): in Data (any dtype; F32/I32/I64 for
 * a reduction), Indices (I32/I64) of Data's rank with Indices.dims[d] <= Data.dims[d] for d != axis,
 * Updates (Data's dtype, Indices' shape); out Y = Data, then for every element e of Indices in row-major
 * order, Y[e's coordinates with Indices[e] at axis] = Updates[e], or combined with it by the reduction
 * (EP_SCATTER_*; integers wrap). Duplicate indices apply in that order (the last one wins without a
 * reduction). Indices out of [-dim, dim) fail the run before anything is written. */
typedef struct ep_scatter_elements_params {
    int32_t axis;           /* 0..rank-1 */
    int32_t reduction;      /* EP_SCATTER_* */
} ep_scatter_elements_params;

/* REVERSE_SEQUENCE: in X (any dtype) rank 2..8, Lens (I32/I64) [X.dims[batch_axis]]; out Y (X's shape):
 * for batch b and time t, Y[.., t, ..] = X[.., Lens[b] - 1 - t, ..] for t < Lens[b], else X[.., t, ..]
 * (the trailing dims move whole). A length outside [0, X.dims[time_axis]] fails the run with
 * EP_ERR_RUN_INDEX before anything is written. */
typedef struct ep_reverse_sequence_params {
    int32_t batch_axis;     /* 0 / 1 */
    int32_t time_axis;      /* 1 - batch_axis */
} ep_reverse_sequence_params;

/* NON_MAX_SUPPRESSION (a data-dependent size, as RANGE above): in Boxes F32 [N, B, 4], Scores F32
 * [N, C, B], then optional run-time scalars (one element each): MaxOut (I32/I64), Iou (F32) and
 * ScoreThreshold (F32); an absent one takes its value from the params. out Y I64 [n, 3]: rows (batch,
 * class, box), batch then class order, each class's boxes in selection order. Per (batch, class): the
 * candidates are the boxes whose score is > the score threshold (every box when there is none), visited
 * by score, highest first, equal scores in ascending box order; a candidate is selected unless its IoU
 * with a box already selected for the class is > the IoU threshold, until max(MaxOut, 0) are selected.
 * Boxes are [y1, x1, y2, x2] (any diagonal corners; center_point_box 0) or [x_center, y_center, width,
 * height] (1); the IoU is computed in f32 as onnxruntime does (0 for boxes that do not overlap or have
 * no area). An IoU threshold outside [0, 1] fails the run with EP_ERR_RUN_INDEX; more rows than Y's
 * capacity, with EP_ERR_RUN_BOUND (nothing written past it). Scratch: 3 * B int32. */
typedef struct ep_non_max_suppression_params {
    int32_t center_point_box;      /* 0 / 1 */
    int32_t has_score_threshold;   /* 0 / 1: without input 4, whether score_threshold applies */
    int64_t max_output_boxes_per_class; /* >= 0, used without input 2 */
    float iou_threshold;           /* in [0, 1], used without input 3 */
    float score_threshold;         /* used without input 4 when has_score_threshold */
} ep_non_max_suppression_params;

/* COMPRESS (a data-dependent size, as RANGE above): in X (any dtype) rank 1..8, Condition BOOL [L];
 * out Y: X's shape with dim axis = n, the number of true values among Condition[0 .. min(L, X.dims[axis])):
 * the slices of X along axis where Condition holds, in order. Uses ep_axis_params (reserved 0). */

/* ---- random numbers (1.2; docs/plan-format.md "Random numbers") ---- */
/* RANDOM: out Y F32 (rank 0..8, at most 2^34 elements), with no input (Y's shape is the declared one) or
 * one: NORMAL / UNIFORM read only input 0's shape (any dtype; Y has it), BERNOULLI reads its values, the
 * probabilities P (F32, Y's shape). Element e of Y comes from word e % 4 of the Philox4x32-10 block
 *   philox(key = (lo32(k), hi32(k)), counter = (e / 4, lo32(run), hi32(run), stream))
 * where k is seed when has_seed, else the session's seed (ep_options.seed), and run counts the session's
 * runs since open or ep_reset. With u(w) = (w >> 8) * 2^-24 (in [0, 1)):
 *   UNIFORM    Y = a + (b - a) * u(w)                       (a = low, b = high)
 *   BERNOULLI  Y = u(w) < P ? 1 : 0
 *   NORMAL     Box-Muller on the block's word pair (v0, v1) = (w0, w1) for elements 4i, 4i+1 and
 *              (w2, w3) for 4i+2, 4i+3: Y = a + b * (r * cos t) for the even element, a + b * (r * sin t)
 *              for the odd one, r = sqrt(-2 ln(((v0 >> 8) + 1) * 2^-24)), t = 2 pi u(v1), with ln, cos
 *              and sin evaluated in float exactly as docs/plan-format.md states (a = mean, b = scale).
 * Fails nothing at run time. */
#define EP_RANDOM_NORMAL 0
#define EP_RANDOM_UNIFORM 1
#define EP_RANDOM_BERNOULLI 2
typedef struct ep_random_params {
    uint64_t seed;          /* the key when has_seed */
    uint32_t kind;          /* EP_RANDOM_* */
    uint32_t dtype;         /* Y's dtype: EP_DTYPE_F32 */
    float a;                /* NORMAL: mean, UNIFORM: low (finite); BERNOULLI: 0 */
    float b;                /* NORMAL: scale, UNIFORM: high (finite); BERNOULLI: 0 */
    uint32_t stream;        /* the op's stream: the compiler gives every RANDOM op of a plan its own */
    uint32_t has_seed;      /* 1: seed is the key; 0: the session's seed is */
} ep_random_params;

/* ---- bilinear sampling (1.3) ----
 * Sampling positions are run-time data: a position outside the input reads the padding (never memory
 * outside a tensor), and a NaN or huge coordinate is treated as one far outside. */
/* GRIDSAMPLE (ONNX GridSample): in X F32 [N, C, D1, .., Dk] (k = 2 or 3: rank 4 or 5, every Di >= 1), Grid F32
 * [N, O1, .., Ok, k]; out Y F32 [N, C, O1, .., Ok]. Grid[n, o, :] holds normalised coordinates in [-1, 1],
 * the last spatial dim's first (x, y[, z]). Per dim of extent L, a coordinate v becomes
 *   align_corners 1: ((v + 1) / 2) * (L - 1)       align_corners 0: ((v + 1) * L - 1) / 2
 * (f32), rounded half to even for NEAREST; then, when outside [lo, hi] ([0, L-1] aligned, [-0.5, L-0.5]
 * otherwise), BORDER clamps it to [0, L-1] and REFLECTION reflects it about lo and hi until inside (in
 * double). NEAREST reads the pixel at the truncated coordinate, LINEAR weighs the 2 neighbours per dim by
 * 1 - t and t, CUBIC (k = 2 only) the 4 neighbours i-1 .. i+2 by Keys' cubic with a = -0.75 (t the
 * distance from the floor i); interpolation runs over the last dim first. A neighbour outside [0, L) reads
 * 0 (ZEROS), the nearest edge pixel (BORDER) or its reflection about lo and hi (REFLECTION). Exactly the
 * ONNX reference (onnx/reference/ops/op_grid_sample.py). Fails nothing at run time. */
#define EP_GRIDSAMPLE_LINEAR 0
#define EP_GRIDSAMPLE_NEAREST 1
#define EP_GRIDSAMPLE_CUBIC 2
#define EP_GRIDSAMPLE_ZEROS 0
#define EP_GRIDSAMPLE_BORDER 1
#define EP_GRIDSAMPLE_REFLECTION 2
typedef struct ep_gridsample_params {
    int32_t mode;           /* EP_GRIDSAMPLE_LINEAR / NEAREST / CUBIC (CUBIC: rank 4 only) */
    int32_t padding_mode;   /* EP_GRIDSAMPLE_ZEROS / BORDER / REFLECTION */
    int32_t align_corners;  /* 0 / 1 */
    int32_t reserved;       /* 0 */
} ep_gridsample_params;

/* ROIALIGN (ONNX RoiAlign): in X F32 [N, C, H, W] (H, W >= 1), Rois F32 [R, 4] (x1, y1, x2, y2 in input
 * coordinates before spatial_scale), BatchIndices I64 (or I32) [R]; out Y F32 [R, C, output_height,
 * output_width]. Roi r is scaled by spatial_scale and shifted by -0.5 when half_pixel (else forced to at
 * least 1 x 1) and split into output_height x output_width bins; each bin is sampled on a g_h x g_w grid
 * (sampling_ratio, or ceil(bin extent) when it is 0) of bilinear samples, a sample off the map by more than
 * one pixel reading 0. AVG is the mean of the samples; MAX the maximum over the samples of the largest of
 * a sample's four weighted corner values (w_i * x_i, as the ONNX reference and onnxruntime compute it).
 * f32 arithmetic in the ONNX reference's order (onnx/reference/ops/op_roi_align.py). A batch index outside
 * [0, N) fails the run with EP_ERR_RUN_INDEX, an adaptive sampling grid finer than EP_ROIALIGN_MAX_GRID
 * per side (or NaN) with EP_ERR_RUN_BOUND, before anything is written. */
#define EP_ROIALIGN_AVG 0
#define EP_ROIALIGN_MAX 1
#define EP_ROIALIGN_MAX_GRID 4096
typedef struct ep_roialign_params {
    int32_t mode;           /* EP_ROIALIGN_AVG / MAX */
    int32_t half_pixel;     /* 1: coordinate_transformation_mode half_pixel, 0: output_half_pixel */
    int32_t output_height;  /* 1..EP_PARAM_LIMIT */
    int32_t output_width;   /* 1..EP_PARAM_LIMIT */
    int32_t sampling_ratio; /* 0 (adaptive) .. EP_ROIALIGN_MAX_GRID */
    float spatial_scale;    /* finite */
} ep_roialign_params;

/* DEFORMCONV (ONNX DeformConv, 2-D): in X F32 [N, C, H, W], W F32 [M, C/groups, KH, KW], Offset F32
 * [N, offset_groups*KH*KW*2, OH, OW], then optional B F32 [M] and Mask F32 [N, offset_groups*KH*KW, OH, OW];
 * out Y F32 [N, M, OH, OW], OH = floor((H + pad_t + pad_b - ((KH-1)*dh + 1)) / sh) + 1 (likewise OW).
 * Channel c belongs to offset group c / (C / offset_groups); tap (i, j) of output (oh, ow) samples
 *   X[n, c] at (oh*sh - pad_t + i*dh + Offset[n, (g*KH*KW + i*KW + j)*2, oh, ow],
 *               ow*sw - pad_l + j*dw + Offset[n, (g*KH*KW + i*KW + j)*2 + 1, oh, ow])
 * bilinearly, the corners outside the map reading 0, times Mask[n, g*KH*KW + i*KW + j, oh, ow] (1 without a
 * mask); Y = B + the grouped convolution of W with those samples. The kernel writes the samples of a
 * group to scratch as columns [C/groups*KH*KW, OH*OW] and multiplies W's rows with them (taps in ascending
 * order per output). Scratch: C/groups*KH*KW*OH*OW floats. Fails nothing at run time. */
typedef struct ep_deformconv_params {
    int32_t kernel[2];      /* kh, kw: W's extents */
    int32_t stride[2];      /* 1..EP_PARAM_LIMIT, as kernel and dilation */
    int32_t dilation[2];
    int32_t pads[4];        /* top, left, bottom, right: 0..EP_PARAM_LIMIT */
    int32_t groups;         /* >= 1, divides C and M */
    int32_t offset_groups;  /* >= 1, divides C */
} ep_deformconv_params;
/* UNIQUE (ONNX Unique, plan 1.3): in X (F32, an integer type or BOOL) of rank 1..8; out Y (X's dtype),
 * Indices, InverseIndices, Counts (I64). The slices of X along axis (the compiler views a flattened X as
 * rank 1, axis 0) are grouped by equality (F32: -0 == +0, every NaN equal and after every number); Y holds
 * one slice per group on axis, ascending (sorted 1, slices compared lexicographically in row-major order)
 * or in the order of first occurrence (sorted 0); Indices[u] is group u's first slice, Counts[u] its size,
 * InverseIndices[i] (X.dims[axis] entries) the group of slice i. The group count is data-dependent
 * (EP_OPF_DATA_DEP): Y's extent on axis and Indices' and Counts' length are declared at the capacity, and a
 * run with more groups fails with EP_ERR_RUN_BOUND before writing. Scratch: 2 * X.dims[axis] int64. */
typedef struct ep_unique_params {
    int32_t axis;           /* 0..rank-1 */
    int32_t sorted;         /* 0 / 1 */
} ep_unique_params;
/* ---- int8 (1.6): docs/quantization.md "Integer kernels" ----
 * Integer tensors hold int8 values x that stand for the real numbers scale * (x - zero_point). The
 * integer ops compute int32 accumulators exactly and requantise each one with the constants the compiler
 * wrote into the plan, one (multiplier m, shift s) pair per output channel:
 *   v = ((int64)acc * m + 2^(s-1)) >> s        (arithmetic shift: ties go up)
 *   Y = min(max(v, y_min - y_zero), y_max - y_zero) + y_zero
 * m in [0, 2^31), s in [1, 62]; the compiler derives them from the real multiplier scale_in * scale_w[c] /
 * scale_out. Requantisation tables are I32 [2, C]: row 0 the multipliers, row 1 the shifts. They and the
 * int32 biases are constants of the plan (EP_STORAGE_CONST); the shape function checks every entry, so
 * |bias| <= min(2^30, 2^31 - 1 - K * 2^14) and K <= 2^16 keep each accumulator inside int32. */

/* QUANTIZE: in X (F32); out Y (I8 or U8) of X's shape:
 *   Y = saturate(round_half_even(X / scale) + zero_point), the division in float32; NaN gives zero_point.
 * DEQUANTIZE: in X (I8 or U8); out Y (F32) of X's shape: Y = (float)(X - zero_point) * scale.
 * scale finite and > 0, zero_point in the integer dtype's range. */
typedef struct ep_quant_params {
    float scale;
    int32_t zero_point;
    int32_t dtype;          /* QUANTIZE: Y's, EP_DTYPE_I8 or EP_DTYPE_U8; DEQUANTIZE: 0 (X's dtype decides) */
    int32_t reserved;       /* 0 */
} ep_quant_params;

/* QCONV2D: in X (I8) [N,C,H,W], W (I8) the weights, B (I32) [M] the bias with the input zero point folded in
 * (B[m] = bias[m] - x_zero * sum of W[m]), Q (I32) [2, M] the requantisation table; out Y (I8) [N,M,OH,OW],
 * extents as CONV2D's:
 *   acc[n,m,oh,ow] = B[m] + sum_{c,kh,kw} W[m,c,kh,kw] * Xp[n, g*CG + c, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw]
 * where Xp is X with x_zero outside it (padding holds the zero point), then Y requantised with Q's column m.
 * Variant 0 and DEPTHWISE (groups == C == M): W [M, C/groups, KH, KW]. PACKED: W as
 * [groups * ceil((M/groups)/8), ceil(K/4), 8, 4] with K = (C/groups) KH KW: panel p holds 8 output channels
 * of one group, element [p, k4, r, j] their weight at reduction index 4 k4 + j in (c, kh, kw) order, zero
 * past M/groups or K. Scratch (PACKED): the input patches packed the same way, 8 output columns at a time. */
typedef struct ep_qconv2d_params {
    int32_t kernel[2];      /* kh, kw */
    int32_t stride[2];
    int32_t dilation[2];
    int32_t pads[4];        /* top, left, bottom, right */
    int32_t groups;
    int32_t x_zero;         /* X's zero point, -128..127 */
    int32_t y_zero;         /* Y's zero point, -128..127 */
    int32_t y_min;          /* clamp of Y: -128 <= y_min <= y_max <= 127 (a fused Relu / Clip) */
    int32_t y_max;
    int32_t reserved;       /* 0 */
} ep_qconv2d_params;

/* QGEMM: in A (I8) [M,K], B (I8) the weights, C (I32) [N] the bias with A's zero point folded in
 * (C[n] = bias[n] - a_zero * sum_k B[k,n]), Q (I32) [2, N]; out Y (I8) [M,N]:
 *   acc[m,n] = C[n] + sum_k A[m,k] * B[k,n], requantised with Q's column n.
 * Variant 0: B [K, N]. PACKED: B as [ceil(N/8), ceil(K/4), 8, 4], element [p, k4, r, j] = B[4 k4 + j, 8 p + r]
 * (zero past N or K). Scratch (PACKED): A's rows packed the same way, 8 rows at a time. */
typedef struct ep_qgemm_params {
    int32_t y_zero;
    int32_t y_min;
    int32_t y_max;
    int32_t reserved;       /* 0 */
} ep_qgemm_params;

/* Dynamic int8 (1.9): activations quantised per row at run time, weights int8 per output column.
 * QUANTIZE_ROWS (ep_axis_params, axis 1): in X (F32) [M,K]; out Q (I8) [M,K], S (F32) [M]. Per row m, with
 * a = the largest |X[m,k]| (NaN ignored; 0 for a row of zeros):
 *   S[m] = a / 127,  Q[m,k] = clamp(round(X[m,k] * (127 / a)), -127, 127)   (0 where a is 0 or X is NaN)
 * each a float32 operation as written, rounded half to even; the codes are symmetric (no zero point).
 * DQGEMM (ep_gemm_params): in A (I8) [M,K] codes, SA (F32) [M] their row scales, B (I8) the weights, SB (F32)
 * [N] the weights' column scales, C (F32) bias [N] or [M,N] (optional), R (F32) residual [M,N] (optional);
 * out Y (F32) [M,N]:
 *   acc[m,n] = sum_k A[m,k] B[k,n] (exact int32: K <= 65536, |codes| <= 127),
 *   Y[m,n] = act((float)acc[m,n] * (SA[m] * SB[n]) + C + R)
 * each float32 operation as written, in that order (no fused multiply-add), act as GEMM's. Variant 0: B [K,N].
 * PACKED: B as QGEMM PACKED's [ceil(N/8), ceil(K/4), 8, 4]. Scratch (PACKED): A's rows packed as QGEMM's. */
/* QADD: in A, B (I8) of one shape; out Y (I8) of that shape. Each input is rescaled to a common scale with 20
 * bits of headroom, then the sum requantised (TFLite's int8 Add, single rounding):
 *   a = ((int64)((A - a_zero) * 2^20) * a_mult + 2^(a_shift-1)) >> a_shift      (b likewise)
 *   Y = min(max(((a + b) * y_mult + 2^(y_shift-1)) >> y_shift, y_min - y_zero), y_max - y_zero) + y_zero
 * Multipliers in [0, 2^31); a_shift and b_shift in [31, 62] (the input multipliers below 1, so |a + b| < 2^29),
 * y_shift in [1, 62]. */
typedef struct ep_qadd_params {
    int32_t a_zero;
    int32_t b_zero;
    int32_t y_zero;
    int32_t y_min;
    int32_t y_max;
    int32_t a_mult;
    int32_t a_shift;
    int32_t b_mult;
    int32_t b_shift;
    int32_t y_mult;
    int32_t y_shift;
    int32_t reserved;       /* 0 */
} ep_qadd_params;
/* QLUT: in X (I8), T (I8) [256], a constant table; out Y (I8) of X's shape: Y = T[X + 128]. The compiler builds
 * T by evaluating an element-wise chain (an activation between quantised tensors) on all 256 codes. Uses
 * ep_axis_params, both fields 0. */
/* ---- delegates (1.8): docs/npu.md, include/edgeplan/delegate.h ----
 * DELEGATE: one partition of the graph that an accelerator runs. in[0] the blob (U8 [n], a constant: the
 * delegate's validated command stream), in[1..] the partition's inputs; out: its outputs (declared extents,
 * static). The skip ops after it are the partition's CPU ops, which compute the same outputs: the executor
 * runs the delegate and skips them, or runs them when no delegate runs the blob (none registered for its
 * kind, or it refused the blob at open, or its execute failed this run). Those ops hold no IF, ELSE or
 * DELEGATE and end inside the branch that holds the DELEGATE op. Scratch: the delegate's working memory
 * (the blob states how much it needs; the delegate checks it at init). */
typedef struct ep_delegate_params {
    uint32_t skip;          /* the partition's CPU ops that follow: 1.. */
    uint32_t kind;          /* EP_DELEGATE_KIND_* of the blob */
    uint32_t partition;     /* 0.. in op order, each once */
    uint32_t reserved;      /* 0 */
} ep_delegate_params;
#define EP_QPACK_R 8          /* rows of an int8 panel (output channels, or patch / A rows) */
#define EP_QPACK_K 4          /* reduction indices per panel group: one SDOT, two VPMADDWD pairs */
/* EP_CDEF_END */

/* Record sizes are part of the format: a change here is a format change (docs/plan-format.md). */
#if defined(__cplusplus)
#  define EP_RECORD_SIZE(type, bytes) static_assert(sizeof(type) == (bytes), #type " is " #bytes " bytes")
#else
#  define EP_RECORD_SIZE(type, bytes) _Static_assert(sizeof(type) == (bytes), #type " is " #bytes " bytes")
#endif
EP_RECORD_SIZE(ep_plan_header, 64);
EP_RECORD_SIZE(ep_section, 32);
EP_RECORD_SIZE(ep_tensor_rec, 72);
EP_RECORD_SIZE(ep_op_rec, 40);
EP_RECORD_SIZE(ep_sym_rec, 32);
EP_RECORD_SIZE(ep_io_rec, 8);
EP_RECORD_SIZE(ep_conv2d_params, 56);
EP_RECORD_SIZE(ep_reorder_params, 8);
EP_RECORD_SIZE(ep_conv_transpose2d_params, 64);
EP_RECORD_SIZE(ep_invres_params, 80);
EP_RECORD_SIZE(ep_gemm_params, 16);
EP_RECORD_SIZE(ep_quant_params, 16);
EP_RECORD_SIZE(ep_qconv2d_params, 64);
EP_RECORD_SIZE(ep_qgemm_params, 16);
EP_RECORD_SIZE(ep_qadd_params, 48);
EP_RECORD_SIZE(ep_matmul_params, 8);
EP_RECORD_SIZE(ep_attention_params, 16);
EP_RECORD_SIZE(ep_unary_params, 16);
EP_RECORD_SIZE(ep_binary_params, 16);
EP_RECORD_SIZE(ep_pool_params, 48);
EP_RECORD_SIZE(ep_global_pool_params, 8);
EP_RECORD_SIZE(ep_axis_params, 8);
EP_RECORD_SIZE(ep_slice_params, 64);
EP_RECORD_SIZE(ep_transpose_params, 32);
EP_RECORD_SIZE(ep_pad_params, 72);
EP_RECORD_SIZE(ep_resize_params, 56);
EP_RECORD_SIZE(ep_resize_ext_params, 128);
EP_RECORD_SIZE(ep_softmax_params, 8);
EP_RECORD_SIZE(ep_reduce_params, 16);
EP_RECORD_SIZE(ep_layernorm_params, 8);
EP_RECORD_SIZE(ep_where_params, 8);
EP_RECORD_SIZE(ep_compare_params, 8);
EP_RECORD_SIZE(ep_cast_params, 8);
EP_RECORD_SIZE(ep_argmax_params, 16);
EP_RECORD_SIZE(ep_topk_params, 16);
EP_RECORD_SIZE(ep_cumsum_params, 16);
EP_RECORD_SIZE(ep_trilu_params, 16);
EP_RECORD_SIZE(ep_rnn_params, 24);
EP_RECORD_SIZE(ep_scatternd_params, 8);
EP_RECORD_SIZE(ep_gathernd_params, 8);
EP_RECORD_SIZE(ep_slice_dyn_params, 64);
EP_RECORD_SIZE(ep_shape_params, 64);
EP_RECORD_SIZE(ep_reshape_dyn_params, 8);
EP_RECORD_SIZE(ep_resize_dyn_params, 64);
EP_RECORD_SIZE(ep_lrn_params, 16);
EP_RECORD_SIZE(ep_branch_params, 8);
EP_RECORD_SIZE(ep_scatter_elements_params, 8);
EP_RECORD_SIZE(ep_reverse_sequence_params, 8);
EP_RECORD_SIZE(ep_non_max_suppression_params, 24);
EP_RECORD_SIZE(ep_random_params, 32);
EP_RECORD_SIZE(ep_gridsample_params, 16);
EP_RECORD_SIZE(ep_roialign_params, 24);
EP_RECORD_SIZE(ep_deformconv_params, 48);
EP_RECORD_SIZE(ep_unique_params, 8);
EP_RECORD_SIZE(ep_delegate_params, 16);

#endif
