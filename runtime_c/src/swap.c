/* Hot swap: a slot serves requests on one session and replaces it between two requests (edgeplan.h, "Hot
 * swap"). The slot's lock is held from ep_slot_acquire to ep_slot_release, so a swap waits for the request in
 * flight and a request never sees half a swap. Opening the next plan, the expensive part, happens outside the
 * lock, into the caller's second arena. */
#include <string.h>

#include "edgeplan/edgeplan.h"

#ifdef EP_THREADS
#include <pthread.h>
#endif

#define SLOT_MAGIC 0x544F4C53u   /* "SLOT" */

typedef struct slot_impl {
    uint32_t magic;
    uint32_t reserved;
    ep_session *cur;
    uint64_t swaps;
#ifdef EP_THREADS
    pthread_mutex_t lock;
#endif
} slot_impl;

_Static_assert(sizeof(slot_impl) <= sizeof(ep_slot), "ep_slot's storage is too small for the slot");
_Static_assert(_Alignof(slot_impl) <= _Alignof(ep_slot), "ep_slot's storage is under-aligned");

static slot_impl *impl(ep_slot *slot) {
    slot_impl *p = (slot_impl *)(void *)slot;
    return slot && p->magic == SLOT_MAGIC ? p : NULL;
}

static void lock(slot_impl *p) {
#ifdef EP_THREADS
    pthread_mutex_lock(&p->lock);
#else
    (void)p;
#endif
}

static void unlock(slot_impl *p) {
#ifdef EP_THREADS
    pthread_mutex_unlock(&p->lock);
#else
    (void)p;
#endif
}

ep_status ep_slot_init(ep_slot *slot, ep_session *s) {
    if (!slot || !s) return EP_ERR_INVALID_ARG;
    memset(slot, 0, sizeof *slot);
    slot_impl *p = (slot_impl *)(void *)slot;
#ifdef EP_THREADS
    if (pthread_mutex_init(&p->lock, NULL)) return EP_ERR_INTERNAL;
#endif
    p->cur = s;
    p->magic = SLOT_MAGIC;
    return EP_OK;
}

void ep_slot_destroy(ep_slot *slot) {
    slot_impl *p = impl(slot);
    if (!p) return;
#ifdef EP_THREADS
    pthread_mutex_destroy(&p->lock);
#endif
    memset(slot, 0, sizeof *slot);
}

ep_session *ep_slot_acquire(ep_slot *slot) {
    slot_impl *p = impl(slot);
    if (!p) return NULL;
    lock(p);
    if (!p->cur) { unlock(p); return NULL; }   /* a failed ep_slot_reopen left it empty */
    return p->cur;
}

void ep_slot_release(ep_slot *slot, ep_session *s) {
    slot_impl *p = impl(slot);
    if (p && s && s == p->cur) unlock(p);
}

ep_status ep_slot_swap(ep_slot *slot, ep_session *next, ep_session **old) {
    slot_impl *p = impl(slot);
    if (!p || !next || !old) return EP_ERR_INVALID_ARG;
    lock(p);
    if (next == p->cur) { unlock(p); return EP_ERR_INVALID_ARG; }
    *old = p->cur;
    p->cur = next;
    p->swaps++;
    unlock(p);
    return EP_OK;
}

ep_status ep_slot_reopen(ep_slot *slot, const void *plan, size_t plan_len, void *arena, size_t arena_len,
                         const ep_options *options, const void *old_plan, size_t old_plan_len) {
    slot_impl *p = impl(slot);
    if (!p || !plan || !arena || !old_plan) return EP_ERR_INVALID_ARG;
    /* Everything that can be checked without the arena is checked before the old session goes. */
    ep_status rc = ep_plan_validate(plan, plan_len);
    if (rc) return rc;
    ep_plan_info info;
    memset(&info, 0, sizeof info);
    rc = ep_plan_query(plan, plan_len, &info);
    if (rc) return rc;
    if (info.arena_bytes > arena_len) return EP_ERR_ARENA_TOO_SMALL;
    lock(p);
    ep_session_close(p->cur);
    ep_session *s = NULL;
    rc = ep_session_open(&s, plan, plan_len, arena, arena_len, options);
    if (rc == EP_OK) {
        p->swaps++;
    } else {
        /* the old plan opened in this arena before: open it again so the slot keeps serving */
        ep_status back = ep_session_open(&s, old_plan, old_plan_len, arena, arena_len, options);
        if (back) s = NULL;
    }
    p->cur = s;
    unlock(p);
    return s ? rc : EP_ERR_INTERNAL;
}

uint64_t ep_slot_swaps(const ep_slot *slot) {
    const slot_impl *p = (const slot_impl *)(const void *)slot;
    return slot && p->magic == SLOT_MAGIC ? p->swaps : 0;
}
