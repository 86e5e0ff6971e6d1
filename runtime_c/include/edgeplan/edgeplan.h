/* edgeplan runtime: the public C API.
 *
 * A plan (.eplan, see docs/plan-format.md) is opened into one caller-provided
 * arena. The runtime never allocates: the session, its tables and every tensor
 * live in that arena. "Validate at open, trust at run": ep_session_open checks
 * every byte of the plan; ep_run only calls kernels.
 *
 * Threads: a session is used by one thread at a time (the caller serialises ep_run, ep_reset, the
 * setters/getters and close on it); different sessions are independent, also over the same plan bytes.
 * After fork(), a session with worker threads fails with EP_ERR_FORKED in the child: open one there.
 * The plan bytes and the arena must stay alive and unchanged until ep_session_close (docs/runtime.md).
 *
 * The declarations between the EP_CDEF markers are also read by the Python
 * wrapper (cffi), so they use plain C only. API versioning: docs/runtime.md. */
#ifndef EDGEPLAN_H
#define EDGEPLAN_H

#include <stddef.h>
#include <stdint.h>
#include "plan_format.h"   /* EP_IO_INPUT / EP_IO_OUTPUT, EP_DTYPE_*, EP_CPU_* */
#include "delegate.h"      /* ep_delegate: accelerators registered at open */

#if defined(_WIN32)
#  define EP_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define EP_API __attribute__((visibility("default")))
#else
#  define EP_API
#endif

/* A status a caller should not drop. */
#if defined(__GNUC__)
#  define EP_NODISCARD __attribute__((warn_unused_result))
#else
#  define EP_NODISCARD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* EP_CDEF_BEGIN */
/* Status codes: 0 is success; errors are negative, grouped by who must act. */
typedef enum ep_status {
    EP_OK = 0,
    /* the caller passed something wrong: -1 .. -99 */
    EP_ERR_INVALID_ARG = -1,
    EP_ERR_INDEX = -2,            /* input/output index out of range */
    EP_ERR_SIZE = -3,             /* buffer size does not match the tensor */
    EP_ERR_NOT_FOUND = -4,        /* no input/output of that name */
    EP_ERR_FORKED = -5,           /* a session with worker threads used in a child of fork(): open one there */
    EP_ERR_GROUP_BUSY = -6,       /* another member of the session's arena group is running */
    /* the plan is corrupt, hostile or for another runtime: -100 .. -199 */
    EP_ERR_PLAN_TRUNCATED = -100,
    EP_ERR_PLAN_MAGIC = -101,
    EP_ERR_PLAN_VERSION = -102,
    EP_ERR_PLAN_CRC = -103,
    EP_ERR_PLAN_SECTION = -104,
    EP_ERR_PLAN_TENSOR = -105,
    EP_ERR_PLAN_OP = -106,
    EP_ERR_PLAN_PARAMS = -107,
    EP_ERR_PLAN_SHAPE = -108,
    EP_ERR_PLAN_UNSUPPORTED = -109, /* opcode or kernel variant not in this build */
    EP_ERR_PLAN_FEATURES = -110,    /* the CPU lacks features the plan requires */
    EP_ERR_PLAN_ALIGN = -111,       /* plan buffer not 8-byte aligned */
    EP_ERR_PLAN_IO = -112,
    EP_ERR_PLAN_UNSIGNED = -113,    /* a public key was given and the plan carries no signature */
    EP_ERR_PLAN_SIGNATURE = -114,   /* the plan's signature does not verify under the given key */
    /* memory: -200 .. -299 */
    EP_ERR_ARENA_TOO_SMALL = -200,
    EP_ERR_ARENA_ALIGN = -201,
    /* data seen while running: -300 .. -399 */
    EP_ERR_RUN_INDEX = -300,        /* an index value out of range, or an integer divisor of 0 */
    EP_ERR_RUN_BOUND = -301,        /* a size exceeded its planned bound */
    EP_ERR_RUN_SHAPE = -302,        /* a run-time shape operand is invalid (element counts differ) */
    /* delegates: -400 .. -499 */
    EP_ERR_DELEGATE = -400,         /* a delegate failed (its reason: ep_session_partition) */
    EP_ERR_DELEGATE_BLOB = -401,    /* a delegate refused its blob: corrupt, or for another device or version */
    EP_ERR_DELEGATE_ABI = -402,     /* a registered delegate's vtable is of another ABI version */
    /* internal: -500 .. */
    EP_ERR_INTERNAL = -500
} ep_status;

typedef struct ep_session ep_session;

/* The session's tables in the arena, per plan: what ep_plan_query's session_bytes adds to the plan's
 * tensor region. Fixed figures (each an upper bound of the C struct on every target, checked by
 * _Static_assert in src/session.c), so a compiler computes a board's exact arena without the board's
 * build: session_bytes = align64(EP_SESSION_BYTES + n_tensors * EP_SESSION_TENSOR_BYTES
 *   + n_ops * EP_SESSION_OP_BYTES + n_opio * EP_SESSION_OPIO_BYTES + n_io * EP_SESSION_IO_BYTES
 *   + n_syms * EP_SESSION_SYM_BYTES), n_opio being the OPIO section's count and n_io the IO section's. */
#define EP_SESSION_BYTES 1024
#define EP_SESSION_TENSOR_BYTES 64
#define EP_SESSION_OP_BYTES 128
#define EP_SESSION_OPIO_BYTES 8
#define EP_SESSION_IO_BYTES 4
#define EP_SESSION_SYM_BYTES 8
#define EP_SESSION_PARTITION_BYTES 2304  /* the runtime's record, the delegate's ctx and tensor table */

/* What a plan needs, read without opening it. */
typedef struct ep_plan_info {
    uint32_t version_major;
    uint32_t version_minor;
    uint64_t arena_bytes;       /* exact arena size ep_session_open needs */
    uint64_t planned_bytes;     /* the plan's tensor region (part of arena_bytes) */
    uint64_t session_bytes;     /* session tables (part of arena_bytes) */
    uint64_t const_bytes;       /* weights, used in place from the plan */
    uint64_t required_features; /* EP_CPU_* bits */
    uint32_t n_tensors;
    uint32_t n_ops;
    uint32_t n_inputs;
    uint32_t n_outputs;
} ep_plan_info;

typedef struct ep_options {
    uint32_t struct_size;       /* sizeof(ep_options), for growth */
    uint32_t flags;             /* EP_OPT_* */
    uint64_t cpu_features_mask; /* features to pretend the CPU lacks are cleared here; 0 = all */
    char *error_buf;            /* optional: a one-line reason when open fails */
    uint32_t error_buf_len;
    uint32_t n_threads;         /* threads for ep_run, the caller included: 0 or 1 one; N > 1 starts N-1
                                   workers at open (at most 8), joined by ep_session_close; results are
                                   bit-identical for any N. A build without threads runs one. */
    uint64_t seed;              /* the key of the random ops that have no seed of their own (plan RANDOM;
                                   docs/runtime.md "Random numbers"); absent from an older, shorter struct: 0 */
    const ep_delegate *const *delegates;   /* accelerators for the plan's partitions (delegate.h), or NULL; */
    uint32_t n_delegates;                  /* each must outlive the session. A partition runs on the first */
    uint32_t reserved;                     /* one of its blob's kind, else on the CPU */
    const uint8_t *public_key;  /* 32 bytes (Ed25519) or NULL: open refuses a plan it has not signed
                                   (docs/signing.md); absent from an older, shorter struct: NULL */
} ep_options;
#define EP_OPT_SKIP_CRC 1       /* trust a plan already checked (e.g. in signed flash) */
#define EP_OPT_PROFILE 2        /* time every op (ep_session_profile); without it ep_run is untouched */

/* One op's profile counters (EP_OPT_PROFILE), over the runs since open or ep_session_profile_reset. */
typedef struct ep_op_profile {
    const char *name;           /* the source node's name (may be "") */
    const char *kind;           /* runtime op: "conv2d", "gemm", ... */
    uint64_t calls;
    uint64_t total_ns;          /* wall time of the op's kernel (CLOCK_MONOTONIC), all threads working */
    uint64_t flops;             /* 0: the runtime has no cost model; the compiler writes one (plan META op_cost) */
    uint64_t bytes;             /* bytes of the op's operands (inputs, weights, outputs) at their current shapes */
    uint64_t last_start_ns;     /* CLOCK_MONOTONIC at the start of the last call */
    uint64_t last_ns;           /* duration of the last call */
    uint32_t profiled;          /* 1 when the session was opened with EP_OPT_PROFILE */
} ep_op_profile;

/* A graph input or output. Pointers stay valid while the session is open. */
typedef struct ep_io_desc {
    const char *name;
    int32_t dtype;              /* EP_DTYPE_* */
    int32_t rank;
    int32_t dims[8];            /* current shape: inputs as last set, outputs as the last run made them */
    uint64_t nbytes;            /* bytes at the current shape */
    int32_t min_dims[8];        /* per dim: the smallest value it may take (== max for a static dim) */
    int32_t max_dims[8];        /* per dim: the bound the arena is planned for */
    const char *dim_names[8];   /* symbol name of a variable dim ("T"), NULL for a static one */
    uint64_t max_nbytes;        /* bytes at the bound (the buffer's capacity) */
    int32_t dim_steps[8];       /* per dim: 1, or the step a variable dim's values are multiples of */
} ep_io_desc;

/* Where a partition of the plan runs (ep_session_partition). */
typedef struct ep_partition_info {
    uint32_t struct_size;       /* set by the caller: fields past it are not written */
    uint32_t index;             /* the partition's number (0..) */
    uint32_t op;                /* its DELEGATE op */
    uint32_t n_cpu_ops;         /* the CPU ops that run in its place when no delegate does */
    uint32_t kind;              /* EP_DELEGATE_KIND_* of its blob */
    int32_t status;             /* EP_OK: a delegate runs it; else why the CPU does (EP_ERR_NOT_FOUND: no
                                   delegate of its kind registered; EP_ERR_DELEGATE_*: refused at open) */
    uint64_t delegate_runs;     /* runs the delegate executed */
    uint64_t cpu_runs;          /* runs the CPU ops executed (an execute that failed included) */
    int32_t last_execute_status;/* EP_OK, or the status of the last failed execute */
    uint32_t reserved;
    const char *delegate;       /* the bound delegate's name, or "" */
    const char *reason;         /* one line: why the CPU runs it, or "" */
} ep_partition_info;

/* What a session runs with (ep_session_query). */
typedef struct ep_session_info {
    uint32_t struct_size;       /* sizeof(ep_session_info), set by the caller: fields past it are not written */
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t n_ops;
    uint32_t n_threads;         /* threads ep_run uses, the caller included (1 when n_threads <= 1 or the
                                   build has no threads) */
    uint32_t n_partitions;      /* DELEGATE ops of the plan (ep_session_partition) */
    const char *last_error;     /* detail for the last failed ep_run (names the op), or "" */
} ep_session_info;

EP_API const char *ep_version(void);
EP_API const char *ep_status_str(ep_status status);

/* Checks the CRC, the container and every record (op shapes are checked at open). */
EP_NODISCARD EP_API ep_status ep_plan_validate(const void *plan, size_t plan_len);
/* Reads what opening needs; checks the structure but not the CRC (cheap; open checks it). */
EP_NODISCARD EP_API ep_status ep_plan_query(const void *plan, size_t plan_len, ep_plan_info *info);

EP_NODISCARD EP_API ep_status ep_session_open(ep_session **out, const void *plan, size_t plan_len,
                                              void *arena, size_t arena_len, const ep_options *options);
/* Joins the session's worker threads, if any: with n_threads > 1, close before freeing or reusing the arena. */
EP_API void ep_session_close(ep_session *s);
EP_NODISCARD EP_API ep_status ep_session_query(const ep_session *s, ep_session_info *info);

/* Graph inputs and outputs: kind is EP_IO_INPUT or EP_IO_OUTPUT, i counts within the kind. */
EP_NODISCARD EP_API ep_status ep_session_io_desc(const ep_session *s, uint32_t kind, uint32_t i, ep_io_desc *desc);
EP_NODISCARD EP_API ep_status ep_session_find(const ep_session *s, uint32_t kind, const char *name, uint32_t *i);
/* The zero-copy view into the arena (NULL when out of range). Write inputs, read outputs; inputs keep
 * their contents across runs. */
EP_API void *ep_session_io_buffer(ep_session *s, uint32_t kind, uint32_t i);
/* Variable-length inputs: sets input i's shape for the next runs. Each variable dim must lie in its
 * [min, max] (EP_ERR_RUN_BOUND otherwise, nothing changed), static dims must match (EP_ERR_SIZE).
 * Inputs sharing a symbol must agree when ep_run starts. Outputs get their shapes from the run. */
EP_NODISCARD EP_API ep_status ep_session_set_input_shape(ep_session *s, uint32_t i, const int32_t *dims,
                                                         uint32_t rank);
/* Copying forms: nbytes must equal the tensor's size at its current shape. */
EP_NODISCARD EP_API ep_status ep_session_set_input(ep_session *s, uint32_t i, const void *data, size_t nbytes);
EP_NODISCARD EP_API ep_status ep_session_get_output(const ep_session *s, uint32_t i, void *data, size_t nbytes);

EP_NODISCARD EP_API ep_status ep_run(ep_session *s);
/* Resets the streaming state (tensors the plan marks EP_TENSOR_FLAG_STATE) to zero bytes, or to the byte the
 * plan gives a state (an int8 state's zero point): the next run starts a new stream. Open resets it too. */
EP_NODISCARD EP_API ep_status ep_reset(ep_session *s);

/* Partition k (0 <= k < ep_session_info.n_partitions): where it runs and why. */
EP_NODISCARD EP_API ep_status ep_session_partition(const ep_session *s, uint32_t k, ep_partition_info *info);

/* Op i's counters (zero unless opened with EP_OPT_PROFILE; names and bytes are always filled). */
EP_NODISCARD EP_API ep_status ep_session_profile(const ep_session *s, uint32_t op, ep_op_profile *out);
EP_NODISCARD EP_API ep_status ep_session_profile_reset(ep_session *s);

/* CPU features, as found by the runtime (EP_CPU_* bits). */
EP_API uint64_t ep_cpu_features(void);
/* CRC-32C (Castagnoli) as the plan header uses it; for tools that write plans. */
EP_API uint32_t ep_crc32c(const void *data, size_t len);
/* Signed plans (src/sign.c, meson option sign): EP_OK when the plan carries a signature that key (32 bytes)
 * verifies (plan_format.h ep_signature_rec); EP_ERR_PLAN_UNSIGNED, EP_ERR_PLAN_SIGNATURE, or a structural
 * error otherwise. EP_ERR_PLAN_UNSUPPORTED in a build without signatures. ep_session_open calls it when
 * ep_options.public_key is set. */
EP_NODISCARD EP_API ep_status ep_plan_verify(const void *plan, size_t plan_len, const uint8_t *public_key);

/* Hot swap (src/swap.c, meson option swap): a slot serves requests on one session at a time and replaces it
 * between requests. A request takes the session with ep_slot_acquire (it waits while another request or a swap
 * holds the slot), writes inputs, runs, reads outputs and gives it back with ep_slot_release: it always ends on
 * the plan it started on. To replace the plan, open the new one into a second arena (ep_session_open checks
 * every byte before anything changes; requests keep running meanwhile), then ep_slot_swap installs it between
 * two requests and hands back the old session for the caller to close (its arena is then free for the next
 * swap). ep_slot_reopen replaces the plan in the slot's own arena when no second one fits: the new plan is
 * validated and sized first; if its open still fails the old plan is opened again, so the slot keeps serving
 * (EP_ERR_INTERNAL and an empty slot only if the old plan then fails to open too: ep_slot_acquire gives NULL).
 * With the threads option off the slot takes no lock: the caller serialises requests and swaps. No heap. */
typedef struct ep_slot { uint64_t opaque[16]; } ep_slot;
EP_NODISCARD EP_API ep_status ep_slot_init(ep_slot *slot, ep_session *s);
EP_API void ep_slot_destroy(ep_slot *slot);                     /* does not close the session */
EP_API ep_session *ep_slot_acquire(ep_slot *slot);              /* NULL: slot not initialised, or empty */
EP_API void ep_slot_release(ep_slot *slot, ep_session *s);
EP_NODISCARD EP_API ep_status ep_slot_swap(ep_slot *slot, ep_session *next, ep_session **old);
EP_NODISCARD EP_API ep_status ep_slot_reopen(ep_slot *slot, const void *plan, size_t plan_len, void *arena,
                                             size_t arena_len, const ep_options *options, const void *old_plan,
                                             size_t old_plan_len);
EP_API uint64_t ep_slot_swaps(const ep_slot *slot);             /* plans installed since ep_slot_init */
/* Shared-arena groups (src/group.c; docs/groups.md): plans grouped by `edgeplan group` share one arena and run
 * one at a time; each keeps its streaming state in bytes of its own. ep_group_query reads a member's record
 * (EP_ERR_NOT_FOUND: the plan is no group member). ep_group_open checks that the n plans form one group, in
 * member order, and opens each into its place in the group arena (group_arena_bytes, 64-aligned) with the same
 * options; on failure none stays open. Close each session with ep_session_close.
 * A member's inputs and outputs lie in the bytes the members share, so a request (write inputs, run, read
 * outputs) must not overlap another member's: ep_group_lock makes the group this member's until
 * ep_group_unlock (EP_ERR_GROUP_BUSY while another member holds it), and ep_run of another member meanwhile
 * fails with EP_ERR_GROUP_BUSY (as it does while a member's ep_run is in flight). Callers that serialise their
 * requests themselves need no lock. EP_ERR_PLAN_UNSUPPORTED (ep_group_lock: EP_ERR_INVALID_ARG) in a build
 * without groups (a selective build whose ops file has no "feature groups" line). */
typedef struct ep_group_info {
    uint64_t group_id;
    uint64_t arena_offset;       /* the member's arena in the group arena */
    uint64_t group_arena_bytes;  /* the group arena the members need */
    uint64_t state_bytes;        /* the member's own bytes, kept across the other members' runs */
    uint32_t member, n_members;
} ep_group_info;
EP_NODISCARD EP_API ep_status ep_group_query(const void *plan, size_t plan_len, ep_group_info *info);
EP_NODISCARD EP_API ep_status ep_group_open(ep_session **out, const void *const *plans, const size_t *plan_lens,
                                            uint32_t n, void *group_arena, size_t group_arena_len,
                                            const ep_options *options);
EP_NODISCARD EP_API ep_status ep_group_lock(ep_session *s);
EP_API void ep_group_unlock(ep_session *s);   /* no effect unless s holds the group */
/* EP_CDEF_END */

#ifdef __cplusplus
}
#endif
#endif
