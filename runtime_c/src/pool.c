/* The session's worker threads (see pool.h). One job at a time: the caller publishes (fn, ctx, n_tasks),
 * bumps the generation counter, runs tasks itself, then waits until every worker has finished the job.
 * Tasks are taken from an atomic counter, so a worker that wakes late just takes fewer of them.
 * Workers spin for up to EP_POOL_SPIN_NS after a job (the next op usually follows within microseconds),
 * then sleep on a condition variable until the next job or ep_pool_stop. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>
#include "internal.h"
#include "pool.h"

#if defined(CLOCK_MONOTONIC)
uint64_t ep_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#else /* no POSIX clocks: C11's wall clock */
uint64_t ep_now_ns(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

static void run_inline(uint32_t n_tasks, ep_task_fn fn, void *ctx) {
    for (uint32_t t = 0; t < n_tasks; t++) fn(ctx, t);
}

#if defined(EP_THREADS) && EP_THREADS
#include <sched.h>
#include <unistd.h>

#ifndef EP_POOL_PURE_NS
#define EP_POOL_PURE_NS 20000    /* 20 us of pure spinning, */
#endif
#ifndef EP_POOL_SPIN_NS
#define EP_POOL_SPIN_NS 100000   /* then yielding, up to 0.1 ms before a worker or a waiting caller sleeps */
#endif

#if defined(__x86_64__) || defined(__i386__)
static inline void cpu_relax(void) { __builtin_ia32_pause(); }
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
static inline void cpu_relax(void) { __asm__ __volatile__("yield" ::: "memory"); }
#else
static inline void cpu_relax(void) {}
#endif

/* Spins until (*a == v) == until_eq, for up to EP_POOL_SPIN_NS; returns the last value seen. The first
 * EP_POOL_PURE_NS only pause; after that the core is offered to others (sched_yield) every 64 pauses,
 * so that a busy or shared machine gets it back. */
static unsigned spin(atomic_uint *a, unsigned v, int until_eq) {
    uint64_t t0 = 0;
    for (uint32_t i = 1;; i++) {
        const unsigned x = atomic_load_explicit(a, memory_order_acquire);
        if ((x == v) == until_eq) return x;
        cpu_relax();
        if (i & 63) continue;
        const uint64_t t = ep_now_ns();
        if (!t0) t0 = t;
        if (t - t0 > EP_POOL_SPIN_NS) return x;
        if (t - t0 > EP_POOL_PURE_NS) sched_yield();
    }
}

static void run_tasks(ep_pool *p) {
    for (;;) {
        const unsigned t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (t >= p->n_tasks) return;
        p->fn(p->ctx, t);
    }
}

static void *worker_main(void *arg) {
    ep_pool *p = ((ep_pool_worker *)arg)->pool;
    unsigned seen = 0;   /* the pool starts at generation 0 */
    for (;;) {
        unsigned g = spin(&p->gen, seen, 0);
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while ((g = atomic_load(&p->gen)) == seen) pthread_cond_wait(&p->wake, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (atomic_load(&p->stop)) return NULL;
        ep_fp_set(p->fp);   /* the poster's floating-point state */
        run_tasks(p);
        if (atomic_fetch_sub(&p->pending, 1) == 1) {   /* the last one out tells a sleeping caller */
            pthread_mutex_lock(&p->mu);
            if (p->caller_waiting) pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

/* Publishes a new generation (a job, or stop) and wakes sleeping workers. */
static void post(ep_pool *p) {
    atomic_fetch_add(&p->gen, 1);
    if (atomic_load(&p->sleepers)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Sleeping workers take tens of microseconds to wake: then only larger ops are worth splitting
 * (min_work * EP_POOL_WAKE_FACTOR), and small ones leave the workers asleep. */
#define EP_POOL_WAKE_FACTOR 16
uint32_t ep_pool_threads_for(const ep_pool *p, uint64_t work) {
    if (!p || p->n_threads <= 1 || work < p->min_work) return 1;
    if (work < (uint64_t)p->min_work * EP_POOL_WAKE_FACTOR &&
        atomic_load_explicit(&((ep_pool *)p)->sleepers, memory_order_relaxed))
        return 1;
    return p->n_threads;
}

void ep_parallel_for(ep_pool *p, uint32_t n_tasks, ep_task_fn fn, void *ctx) {
    if (!p || p->n_threads <= 1 || n_tasks <= 1) {
        run_inline(n_tasks, fn, ctx);
        return;
    }
    p->fn = fn;
    p->fp = ep_fp_get();
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->pending, p->n_threads - 1, memory_order_relaxed);
    post(p);
    run_tasks(p);
    if (spin(&p->pending, 0, 1) == 0) return;
    pthread_mutex_lock(&p->mu);
    p->caller_waiting = 1;
    while (atomic_load(&p->pending)) pthread_cond_wait(&p->done, &p->mu);
    p->caller_waiting = 0;
    pthread_mutex_unlock(&p->mu);
}

uint32_t ep_pool_start(ep_pool *p, uint32_t n_threads) {
    memset(p, 0, sizeof(*p));
    p->n_threads = 1;
    p->min_work = EP_POOL_MIN_WORK;
    if (n_threads > EP_MAX_THREADS) n_threads = EP_MAX_THREADS;
    if (n_threads <= 1) return 1;
    if (pthread_mutex_init(&p->mu, NULL)) return 1;
    if (pthread_cond_init(&p->wake, NULL) || pthread_cond_init(&p->done, NULL)) {
        pthread_mutex_destroy(&p->mu);
        return 1;
    }
    uint32_t started = 0;
    for (; started + 1 < n_threads; started++) {
        p->workers[started].pool = p;
        if (pthread_create(&p->workers[started].thread, NULL, worker_main, &p->workers[started])) break;
    }
    p->n_threads = 1 + started;
    p->owner = started ? (long)getpid() : 0;
    if (!started) {
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
    }
    return p->n_threads;
}

int ep_pool_forked(const ep_pool *p) { return p->n_threads > 1 && (long)getpid() != p->owner; }

void ep_pool_stop(ep_pool *p) {
    if (!p || p->n_threads <= 1) return;
    if (ep_pool_forked(p)) {   /* the child has no workers to join, and the mutex may be held by one */
        p->n_threads = 1;
        return;
    }
    atomic_store(&p->stop, 1);
    post(p);
    for (uint32_t i = 0; i + 1 < p->n_threads; i++) pthread_join(p->workers[i].thread, NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    p->n_threads = 1;
}

#else /* inline-only build: no pthreads */

uint32_t ep_pool_threads_for(const ep_pool *p, uint64_t work) {
    (void)p;
    (void)work;
    return 1;
}

void ep_parallel_for(ep_pool *p, uint32_t n_tasks, ep_task_fn fn, void *ctx) {
    (void)p;
    run_inline(n_tasks, fn, ctx);
}

uint32_t ep_pool_start(ep_pool *p, uint32_t n_threads) {
    (void)n_threads;
    memset(p, 0, sizeof(*p));
    p->n_threads = 1;
    p->min_work = EP_POOL_MIN_WORK;
    return 1;
}

void ep_pool_stop(ep_pool *p) { (void)p; }
int ep_pool_forked(const ep_pool *p) { (void)p; return 0; }

#endif
