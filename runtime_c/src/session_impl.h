/* The session's layout, shared by session.c (open, I/O, run loop) and shapes_run.c (run-time shape
 * resolution). Not installed. */
#ifndef EP_SESSION_IMPL_H
#define EP_SESSION_IMPL_H
#include "internal.h"
#include "ep_config.h"   /* EP_HAVE_DYNAMIC: variable dims (plan 1.1 symbols); 0 compiles that path out.
                            EP_HAVE_GROUPS: shared-arena groups (src/group.c) */

#define EP_SESSION_MAGIC 0x53535045u  /* "EPSS" */
#define EP_CTL_IF 1
#define EP_CTL_ELSE 2
#define EP_CTL_DELEGATE 3        /* a partition: its delegate runs, or the CPU ops after it (src/partition.c) */
#define EP_MAX_BRANCH_DEPTH 16   /* If nesting a plan may have */
#define EP_HAVE_CONTROL EP_HAVE_OP_IF   /* a build without the control ops compiles the branch code out */
#define EP_HAVE_PARTITIONS EP_HAVE_OP_DELEGATE   /* likewise the delegate code (a board without an NPU) */

typedef struct ep_bound_op {
    ep_kernel_fn fn;
    ep_op op;
    uint32_t name;           /* NAMES offset of the source node */
    uint8_t dyn;             /* an operand has variable dims: shapes are resolved before the kernel */
    uint8_t data_dep;        /* the kernel sets its outputs' variable dims */
    uint8_t ctl;             /* EP_CTL_*: the executor moves along the op list instead */
    uint8_t exact_fp;        /* CAST: runs in the caller's floating-point state (subnormals converted exactly) */
    uint32_t skip;           /* control ops: the ops to skip (ep_branch_params.skip, ep_delegate_params.skip) */
    /* profiling (EP_OPT_PROFILE): fn is then prof_trampoline, which times prof_fn (the kernel) */
    ep_kernel_fn prof_fn;
    uint64_t prof_calls, prof_ns, prof_last_start, prof_last_ns;
} ep_bound_op;

/* One partition (a DELEGATE op) in the session's tables: EP_SESSION_PARTITION_BYTES each. What the delegate
 * sees (desc, its tensors, ctx) stays in place from init to destroy. */
typedef struct ep_partition {
    const ep_delegate *d;    /* the delegate that runs it; NULL: the CPU ops do */
    ep_delegate_partition desc;
    int32_t status;          /* EP_OK with d; else why the CPU runs it */
    int32_t last_exec;       /* the last failed execute's status, or EP_OK */
    uint32_t n_cpu_ops;
    uint32_t bound;          /* 1 once its DELEGATE op has been seen at open (each partition once) */
    uint64_t delegate_runs, cpu_runs;
    char reason[112];
    _Alignas(16) unsigned char ctx[EP_DELEGATE_CTX_BYTES];
    ep_delegate_tensor io[2 * EP_DELEGATE_MAX_IO];   /* inputs, then outputs */
} ep_partition;

struct ep_session {
    uint32_t magic;
    uint32_t n_tensors, n_ops, n_inputs, n_outputs;
    ep_plan_view view;
    ep_tensor *tensors;
    ep_bound_op *ops;
    ep_tensor **io_ptrs;     /* operand pointers of all ops (OPIO order) */
    uint32_t *io_index;      /* n_inputs + n_outputs tensor indices */
    uint8_t *region;         /* the planned tensor region */
    int64_t *sym_val;        /* n_syms values of the current run; -1: not bound yet */
    uint32_t n_syms;
    uint8_t dynamic;         /* symbols or data-dependent ops: ep_run resolves shapes */
    char last_error[160];
    ep_pool pool;            /* worker threads (ep_options.n_threads; src/pool.h): a fixed size */
    ep_run_info run_info;    /* every op's run: the RANDOM op's key (ep_options.seed) and run counter */
    ep_partition *parts;     /* n_parts partitions (DELEGATE ops), by their number */
    uint32_t n_parts;
    uint8_t profiling;       /* EP_OPT_PROFILE: delegate executes are timed too */
    uint32_t *group_busy;    /* a group member: the group's busy word (src/group.c); NULL otherwise */
    uint32_t group_token;    /* the word's value while this member holds the group */
};

static inline int ep_session_live(const ep_session *s) { return s && s->magic == EP_SESSION_MAGIC; }

/* Graph input or output i (NULL when out of range or the session is not open). */
static inline const ep_tensor *ep_session_io(const ep_session *s, uint32_t i, int output) {
    if (!ep_session_live(s)) return NULL;
    if (output ? i >= s->n_outputs : i >= s->n_inputs) return NULL;
    return &s->tensors[s->io_index[output ? s->n_inputs + i : i]];
}

/* shapes_run.c: each returns EP_OK or a status, with the reason in s->last_error */
int ep_shapes_bind_inputs(ep_session *s);                                  /* run start */
int ep_shapes_resolve_op(ep_session *s, uint32_t i, const ep_bound_op *b);  /* before op i's kernel */
int ep_shapes_bind_data(ep_session *s, uint32_t i, const ep_bound_op *b);   /* after a data-dependent kernel */
int ep_shapes_resolve_outputs(ep_session *s);                              /* run end: outputs that are views */
void ep_shapes_clear_outputs(ep_session *s);        /* a failed run: variable output dims become 0 */
/* open: every variable dim an op reads or an output has gets a value in time (reason in e) */
int ep_shapes_check_bound(const ep_session *s, ep_err *e);

/* branches.c: IF / ELSE and DELEGATE ops describe properly nested branches (reason in e) */
int ep_check_branches(const ep_session *s, ep_err *e);

/* partition.c: binds the plan's partitions to the registered delegates (reasons in each record; fails only
 * on a plan whose partitions are malformed), runs one (1: the delegate ran, skip its CPU ops), and destroys
 * them at close */
int ep_partitions_open(ep_session *s, const ep_options *opt, ep_err *e);
int ep_partition_run(ep_session *s, ep_bound_op *b);
void ep_partitions_close(ep_session *s);

/* session.c: ep_run's work, for a live session */
int ep_session_run(ep_session *s)
#if defined(__GNUC__)
    __attribute__((noinline))   /* one copy: ep_run and ep_group_run call it */
#endif
    ;

/* group.c: binds a group member's session to its group's busy word (checking the member's layout; EP_OK for a
 * plan without a GROUP section), and runs a member: EP_ERR_GROUP_BUSY while another member runs or holds the
 * group (ep_group_lock) */
int ep_group_bind(ep_session *s, ep_err *e);
int ep_group_run(ep_session *s);

/* profile.c: makes op b's kernel a timing trampoline (EP_OPT_PROFILE) */
void ep_profile_bind(ep_bound_op *b);

#endif
