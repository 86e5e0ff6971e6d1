/* Worker-thread pool of a session (internal; docs/performance.md "Threads").
 *
 * The pool is a fixed-size struct that lives inside the session, i.e. in the caller's arena: no heap.
 * ep_session_open starts n_threads - 1 workers (the calling thread is thread 0) and ep_session_close
 * joins them. Between parallel regions a worker spins briefly, then sleeps on a condition variable.
 * Kernels reach the pool through their bound op (ep_op.pool, NULL = single thread) and split work
 * with ep_parallel_for (ep_kernel.h). Built with EP_THREADS (meson -Dthreads, on by default where
 * pthreads exist); without it the pool is inline-only: every parallel_for runs on the caller.
 * Not reentrant: a task must not call ep_parallel_for on the same pool. */
#ifndef EP_POOL_H
#define EP_POOL_H

#include <stdint.h>
#include "ep_kernel.h"

#define EP_MAX_THREADS 8          /* threads per session, the caller included */
#define EP_POOL_MIN_WORK 131072   /* default: split an op only above this much work (~MACs, ~5 us) */

#if defined(EP_THREADS) && EP_THREADS
#include <pthread.h>
#include <stdatomic.h>

struct ep_pool;
typedef struct ep_pool_worker {
    struct ep_pool *pool;
    pthread_t thread;
} ep_pool_worker;

struct ep_pool {
    uint32_t n_threads;             /* running threads, the caller included (1: inline) */
    uint32_t min_work;              /* ep_pool_threads_for: below this, one thread */
    /* the current job (written by the caller before gen is bumped) */
    ep_task_fn fn;
    void *ctx;
    uint32_t n_tasks;
    uint64_t fp;                    /* the caller's floating-point state (ep_fp_get), for the workers */
    atomic_uint next;               /* next task index to take */
    atomic_uint pending;            /* workers that have not finished the current job */
    atomic_uint gen;                /* job generation; workers wait for it to change */
    atomic_uint sleepers;           /* workers blocked on wake */
    atomic_int stop;
    int caller_waiting;             /* under mu */
    long owner;                     /* pid of the process whose threads these are (fork leaves them behind) */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    ep_pool_worker workers[EP_MAX_THREADS - 1];
};
#else
struct ep_pool {
    uint32_t n_threads;             /* always 1 */
    uint32_t min_work;
};
#endif

typedef struct ep_pool ep_pool;

/* Starts up to n_threads - 1 workers (n_threads clamped to 1..EP_MAX_THREADS); returns the number
 * of threads the pool runs, the caller included (fewer if pthread_create fails; 1 without EP_THREADS). */
uint32_t ep_pool_start(ep_pool *p, uint32_t n_threads);
/* Stops and joins the workers; the pool may then be discarded (or started again). In a child of
 * fork(), where the workers do not exist, it only forgets them. */
void ep_pool_stop(ep_pool *p);
/* 1 when the pool has workers and this process is a child of fork() of the one that started them: the
 * workers exist only in the parent, so a parallel job would wait for them for ever. */
int ep_pool_forked(const ep_pool *p);
/* CLOCK_MONOTONIC in nanoseconds (the profiler's clock; Python's time.monotonic_ns on Linux). */
uint64_t ep_now_ns(void);

#endif
