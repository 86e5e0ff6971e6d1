/* Hot swap under load (src/swap.c): one thread serves requests through an ep_slot while another replaces the
 * plan 1,000 times, alternating between two plans that give different answers (tests/c/ep_plan_build.h:
 * y = relu(x) + c, c = 0.5 in plan A, 1.5 in plan B). Every request's output must equal plan A's or plan B's
 * reference output for its input, element for element; none may fail. Each installed plan serves at least one
 * request before the next swap. Every 50th swap first tries a corrupt
 * plan, which must be refused while the old plan keeps serving. ep_slot_reopen (the same arena) is checked
 * too: a corrupt plan is refused and the old one serves on; a good one replaces it. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep_check.h"
#include "ep_plan_build.h"

#define N_SWAPS 1000
#define C_B 1.5f

static epb_plan plan_a, plan_b, plan_bad;
static ep_slot slot;
static atomic_int stop;
static atomic_long served;   /* requests completed: the swapper lets each installed plan serve at least one */

typedef struct tally {
    long requests, wrong, failed, saw_a, saw_b;
} tally;

static void set_const(epb_plan *p, float c) {
    const ep_plan_header *h = (const ep_plan_header *)(const void *)p->bytes;
    for (uint32_t i = 0; i < h->section_count; i++) {
        ep_section *s = (ep_section *)(void *)(p->bytes + h->section_table_offset + (size_t)i * sizeof(ep_section));
        if (s->kind == EP_SECTION_CONST) memcpy(p->bytes + s->offset, &c, sizeof c);
    }
    epb_seal(p);
}

/* One request: input x from the request number, output checked against both plans' answers. */
static void request(ep_session *s, long n, tally *t) {
    float x[EPB_T], y[EPB_T];
    for (int i = 0; i < EPB_T; i++) x[i] = (float)((n * 7 + i * 13) % 17) - 8.0f;
    int rc = ep_session_set_input(s, 0, x, sizeof x);
    if (rc == EP_OK) rc = ep_run(s);
    if (rc == EP_OK) rc = ep_session_get_output(s, 0, y, sizeof y);
    t->requests++;
    if (rc != EP_OK) { t->failed++; return; }
    int is_a = 1, is_b = 1;
    for (int i = 0; i < EPB_T; i++) {
        const float r = x[i] > 0 ? x[i] : 0.0f;
        is_a &= y[i] == r + EPB_C;
        is_b &= y[i] == r + C_B;
    }
    if (is_a) t->saw_a++;
    else if (is_b) t->saw_b++;
    else t->wrong++;
}

static void *serve(void *arg) {
    tally *t = arg;
    for (long n = 0; !atomic_load(&stop); n++) {
        ep_session *s = ep_slot_acquire(&slot);
        if (!s) { t->failed++; continue; }
        request(s, n, t);
        ep_slot_release(&slot, s);
        atomic_fetch_add(&served, 1);
    }
    return NULL;
}

static ep_session *open_in(const epb_plan *p, void *arena, size_t len, int *rc) {
    ep_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    ep_session *s = NULL;
    *rc = ep_session_open(&s, p->bytes, p->len, arena, len, &o);
    return *rc == EP_OK ? s : NULL;
}

int main(void) {
    epb_build(&plan_a, 0, 0);
    plan_b = plan_a;
    set_const(&plan_b, C_B);
    plan_bad = plan_b;
    plan_bad.bytes[plan_bad.len - 5] ^= 0x20;   /* not resealed: the CRC refuses it */

    ep_plan_info info;
    CHECK(ep_plan_query(plan_a.bytes, plan_a.len, &info) == EP_OK, "query");
    const size_t len = (size_t)(info.arena_bytes + 63) / 64 * 64;
    void *arenas[2] = {aligned_alloc(64, len), aligned_alloc(64, len)};
    int rc;
    ep_session *cur = open_in(&plan_a, arenas[0], len, &rc);
    CHECK(cur != NULL, "open A: %s", ep_status_str(rc));
    if (!cur) return 1;
    CHECK(ep_slot_init(&slot, cur) == EP_OK, "slot init");

    tally t = {0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, serve, &t) == 0, "start the serving thread");
    int free_arena = 1, refused = 0, swapped = 0;
    for (int k = 0; k < N_SWAPS; k++) {
        if (k % 50 == 0) {   /* a corrupt plan: refused, nothing changes */
            ep_session *bad = open_in(&plan_bad, arenas[free_arena], len, &rc);
            refused += bad == NULL && rc == EP_ERR_PLAN_CRC;
            if (bad) ep_session_close(bad);
        }
        ep_session *next = open_in(k % 2 ? &plan_a : &plan_b, arenas[free_arena], len, &rc);
        if (!next) continue;
        ep_session *old = NULL;
        if (ep_slot_swap(&slot, next, &old) != EP_OK) { ep_session_close(next); continue; }
        ep_session_close(old);      /* no request holds it: the swap waited for the one in flight */
        free_arena ^= 1;
        swapped++;
        /* let the new plan serve two requests (the first may have started on the old one) */
        const long seen = atomic_load(&served);
        while (atomic_load(&served) < seen + 2) sched_yield();
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    CHECK(swapped == N_SWAPS && ep_slot_swaps(&slot) == N_SWAPS, "swaps: %d of %d", swapped, N_SWAPS);
    CHECK(refused == N_SWAPS / 50, "corrupt plans refused: %d of %d", refused, N_SWAPS / 50);
    CHECK(t.wrong == 0 && t.failed == 0, "requests: %ld, %ld wrong, %ld failed", t.requests, t.wrong, t.failed);
    CHECK(t.saw_a > 0 && t.saw_b > 0, "both plans served: A %ld, B %ld", t.saw_a, t.saw_b);
    printf("test_swap: %d swaps under load: %ld requests (A %ld, B %ld), %ld wrong, %ld failed; %d corrupt plans "
           "refused\n", swapped, t.requests, t.saw_a, t.saw_b, t.wrong, t.failed, refused);

    /* the same arena: the slot's plan is A (the last swap installed it); a corrupt plan leaves it serving */
    const void *serving = plan_a.bytes;
    size_t serving_len = plan_a.len;
    rc = ep_slot_reopen(&slot, plan_bad.bytes, plan_bad.len, arenas[free_arena ^ 1], len, NULL, serving, serving_len);
    CHECK(rc == EP_ERR_PLAN_CRC, "reopen with a corrupt plan: %s", ep_status_str(rc));
    tally t2 = {0};
    ep_session *s = ep_slot_acquire(&slot);
    CHECK(s != NULL, "the slot serves after a refused reopen");
    if (s) { request(s, 3, &t2); ep_slot_release(&slot, s); }
    CHECK(t2.saw_a == 1, "the old plan (A) still answers");
    rc = ep_slot_reopen(&slot, plan_b.bytes, plan_b.len, arenas[free_arena ^ 1], len, NULL, serving, serving_len);
    CHECK(rc == EP_OK, "reopen with plan B: %s", ep_status_str(rc));
    s = ep_slot_acquire(&slot);
    if (s) { request(s, 4, &t2); ep_slot_release(&slot, s); }
    CHECK(t2.saw_b == 1 && t2.wrong == 0, "plan B answers after the reopen");
    rc = ep_slot_reopen(&slot, plan_a.bytes, plan_a.len, arenas[free_arena ^ 1], 64, NULL, plan_a.bytes, plan_a.len);
    CHECK(rc == EP_ERR_ARENA_TOO_SMALL, "reopen into too small an arena: %s", ep_status_str(rc));

    ep_session *last = ep_slot_acquire(&slot);
    ep_slot_release(&slot, last);
    ep_slot_destroy(&slot);
    CHECK(ep_slot_acquire(&slot) == NULL, "a destroyed slot serves nothing");
    ep_session_close(last);
    free(arenas[0]);
    free(arenas[1]);
    printf("test_swap: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail ? 1 : 0;
}
