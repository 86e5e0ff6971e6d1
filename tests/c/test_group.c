/* Shared-arena groups (src/group.c): two members built by hand from tests/c/ep_plan_build.h's plan
 * (y = relu(x) + c; c = 0.5 in member 0, 1.5 in member 1), laid out as `edgeplan group` lays them out:
 *
 *   group arena: [member 0 tables | member 1 tables | member 1 state (64) | shared (192) | busy word (64)]
 *
 * Member 1 keeps its intermediate t in its own range (flagged state); every other tensor lies in the shared
 * range. Checked: ep_group_query; alternating runs give each member's answer; ep_run refuses while the busy
 * word says a member runs or holds the group (EP_ERR_GROUP_BUSY); two threads making requests on the two
 * members at once (ep_group_lock around inputs, run and outputs) never get a wrong answer, only refusals; every single-field change of a member's record, members out of order or
 * missing, a small arena, and tensors or scratch reaching another member's bytes are refused with a status
 * (ep_group_open leaves no session open); 4,000 byte mutations of the records (CRC re-sealed) never crash. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep_check.h"
#include "ep_plan_build.h"

#define C1 1.5f
#define SHARED 192u

static uint64_t tables;   /* the plan's session tables (ep_plan_query): the same for both members */
static uint64_t total;    /* the group arena */
static _Alignas(64) uint8_t arena[1 << 16];

static ep_section *section(epb_plan *p, uint32_t kind) {
    const ep_plan_header *h = (const ep_plan_header *)(const void *)p->bytes;
    for (uint32_t i = 0; i < h->section_count; i++) {
        ep_section *s = (ep_section *)(void *)(p->bytes + h->section_table_offset + (size_t)i * sizeof(ep_section));
        if (s->kind == kind) return s;
    }
    return NULL;
}

static ep_tensor_rec *tensor(epb_plan *p, uint32_t i) {
    return (ep_tensor_rec *)(void *)(p->bytes + section(p, EP_SECTION_TENSORS)->offset + i * sizeof(ep_tensor_rec));
}

static ep_group_rec *group_rec(epb_plan *p) { return (ep_group_rec *)(void *)(p->bytes + section(p, EP_SECTION_GROUP)->offset); }

static void finish(epb_plan *p) {
    ep_plan_header *h = (ep_plan_header *)(void *)p->bytes;
    h->section_count = p->n_sections;
    h->file_size = p->len;
    epb_seal(p);
}

/* Member m of the two-member group, sealed. */
static void make_member(epb_plan *p, uint32_t m) {
    epb_build(p, 0, 0);
    const float c = m ? C1 : EPB_C;
    memcpy(p->bytes + section(p, EP_SECTION_CONST)->offset, &c, sizeof c);
    const uint64_t state[2] = {0, 64};
    const uint64_t base = m ? tables + state[0] : 0, region = base + tables;
    const uint64_t shared_start = 2 * tables + state[0] + state[1], busy = shared_start + SHARED;
    total = busy + 64;
    const uint64_t shared_off = shared_start - region;
    tensor(p, 0)->offset += shared_off;   /* x */
    tensor(p, 3)->offset += shared_off;   /* y */
    if (m) {
        tensor(p, 1)->offset = 0;         /* t: member 1's own range */
        tensor(p, 1)->flags |= EP_TENSOR_FLAG_STATE;
    } else {
        tensor(p, 1)->offset += shared_off;
    }
    ((ep_plan_header *)(void *)p->bytes)->arena_size = total - region;
    ep_group_rec r;
    memset(&r, 0, sizeof r);
    r.group_id = 0x1234;
    r.arena_offset = base;
    r.group_arena_size = total;
    r.state_size = state[m];
    r.shared_offset = shared_off;
    r.busy_offset = busy - region;
    r.member = m;
    r.n_members = 2;
    epb_section(p, EP_SECTION_GROUP, EP_SECTION_FLAG_CRITICAL, &r, sizeof r, 1, sizeof r);
    finish(p);
}

static epb_plan members[2], work[2];

static int open_group(const epb_plan *a, const epb_plan *b, uint32_t n, size_t len, ep_session **s) {
    const void *plans[2] = {a->bytes, b->bytes};
    const size_t lens[2] = {a->len, b->len};
    s[0] = s[1] = (ep_session *)(uintptr_t)1;   /* must come back NULL on failure */
    return ep_group_open(s, plans, lens, n, arena, len, NULL);
}

static void close_all(ep_session **s, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) ep_session_close(s[i]);
}

/* One request on member m: 0 with the right answer, 1 refused as busy, -1 otherwise. */
static int request(ep_session *s, uint32_t m, long n) {
    float x[EPB_T], y[EPB_T];
    for (int i = 0; i < EPB_T; i++) x[i] = (float)((n * 7 + i * 13) % 17) - 8.0f;
    if (ep_group_lock(s) == EP_ERR_GROUP_BUSY) return 1;   /* inputs and outputs lie in the shared bytes */
    int rc = ep_session_set_input(s, 0, x, sizeof x);
    if (!rc) rc = ep_run(s);
    if (!rc) rc = ep_session_get_output(s, 0, y, sizeof y);
    ep_group_unlock(s);
    if (rc) return -1;
    for (int i = 0; i < EPB_T; i++)
        if (y[i] != (x[i] > 0 ? x[i] : 0.0f) + (m ? C1 : EPB_C)) return -1;
    return 0;
}

typedef struct runner {
    ep_session *s;
    uint32_t m;
    long runs, ok, busy, wrong;
} runner;

static atomic_int go;

static void *run_loop(void *arg) {
    runner *r = arg;
    while (!atomic_load(&go)) {
    }
    for (long n = 0; n < r->runs; n++) {
        const int v = request(r->s, r->m, n);
        if (v == 0) r->ok++;
        else if (v == 1) r->busy++;
        else r->wrong++;
    }
    return NULL;
}

static void check_runs(void) {
    ep_session *s[2];
    CHECK(open_group(&members[0], &members[1], 2, sizeof arena, s) == EP_OK, "open group");
    if (!s[0] || !s[1]) return;
    long bad = 0;
    for (long n = 0; n < 200; n++) bad += request(s[n % 2], (uint32_t)(n % 2), n) != 0;
    CHECK(bad == 0, "alternating runs: %ld wrong", bad);

    /* a member in flight: the busy word (the group arena's last 64 bytes) says so */
    uint32_t *word = (uint32_t *)(void *)(arena + total - 64), idle = *word;
    *word = 0x42475045u;   /* "EPGB" */
    CHECK(request(s[0], 0, 1) == 1 && request(s[1], 1, 2) == 1, "runs refused while the group is busy");
    *word = idle;
    CHECK(request(s[0], 0, 3) == 0 && request(s[1], 1, 4) == 0 && *word == idle, "runs again once it is idle");
    /* a member holding the group (ep_group_lock): its runs keep it, the other's are refused */
    CHECK(ep_group_lock(s[0]) == EP_OK && ep_group_lock(s[1]) == EP_ERR_GROUP_BUSY, "lock");
    CHECK(ep_run(s[1]) == EP_ERR_GROUP_BUSY && ep_run(s[0]) == EP_OK && *word != idle, "runs while locked");
    ep_group_unlock(s[1]);   /* not the holder: no effect */
    CHECK(ep_run(s[1]) == EP_ERR_GROUP_BUSY, "unlock by another member has no effect");
    ep_group_unlock(s[0]);
    CHECK(*word == idle && ep_run(s[1]) == EP_OK, "unlocked");

    /* both members at once from two threads: refusals, never a wrong answer */
    runner r[2] = {{s[0], 0, 200000, 0, 0, 0}, {s[1], 1, 200000, 0, 0, 0}};
    pthread_t t[2];
    atomic_store(&go, 0);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run_loop, &r[i]);
    atomic_store(&go, 1);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(r[0].wrong == 0 && r[1].wrong == 0, "concurrent runs: %ld + %ld wrong", r[0].wrong, r[1].wrong);
    CHECK(r[0].ok + r[0].busy == r[0].runs && r[1].ok + r[1].busy == r[1].runs,
          "concurrent runs: each ran or was refused");
    printf("concurrent: member 0 ran %ld, refused %ld; member 1 ran %ld, refused %ld\n", r[0].ok, r[0].busy,
           r[1].ok, r[1].busy);
    close_all(s, 2);
}

static void check_query(void) {
    ep_group_info gi;
    CHECK(ep_group_query(members[1].bytes, members[1].len, &gi) == EP_OK && gi.member == 1 && gi.n_members == 2 &&
          gi.arena_offset == tables && gi.group_arena_bytes == total && gi.state_bytes == 64, "ep_group_query");
    epb_plan plain;
    epb_build(&plain, 0, 0);
    CHECK(ep_group_query(plain.bytes, plain.len, &gi) == EP_ERR_NOT_FOUND, "a plain plan is no member");
}

static void expect_refused(const char *what) {
    ep_session *s[2];
    const int rc = open_group(&work[0], &work[1], 2, sizeof arena, s);
    CHECK(rc != EP_OK && !s[0] && !s[1], "%s: refused (%d)", what, rc);
    if (rc == EP_OK) close_all(s, 2);
}

static void check_refusals(void) {
    ep_session *s[2];
    CHECK(open_group(&members[1], &members[0], 2, sizeof arena, s) != EP_OK && !s[0] && !s[1], "out of order");
    CHECK(open_group(&members[0], &members[1], 1, sizeof arena, s) != EP_OK && !s[0], "a member missing");
    CHECK(open_group(&members[0], &members[1], 2, total - 64, s) == EP_ERR_ARENA_TOO_SMALL && !s[0] && !s[1],
          "arena too small");
    /* every field of either record, changed alone */
    static const int64_t deltas[] = {1, 64, -64, 1 << 20};
    for (uint32_t m = 0; m < 2; m++)
        for (size_t f = 0; f < sizeof(ep_group_rec) / 8; f++)
            for (size_t d = 0; d < sizeof deltas / sizeof *deltas; d++) {
                work[0] = members[0], work[1] = members[1];
                uint64_t v;
                uint8_t *at = (uint8_t *)group_rec(&work[m]) + 8 * f;
                memcpy(&v, at, 8);
                v += (uint64_t)deltas[d];
                memcpy(at, &v, 8);
                epb_seal(&work[m]);
                char what[64];
                snprintf(what, sizeof what, "member %u record word %zu %+lld", m, f, (long long)deltas[d]);
                expect_refused(what);
            }
    /* member 0 reaching member 1's session tables (the bytes between its own range and the shared one) */
    work[0] = members[0], work[1] = members[1];
    tensor(&work[0], 1)->offset = 0;
    epb_seal(&work[0]);
    ep_session *one = NULL;
    CHECK(ep_session_open(&one, work[0].bytes, work[0].len, arena, sizeof arena, NULL) == EP_ERR_PLAN_TENSOR,
          "a tensor outside the member's ranges");
    expect_refused("a tensor outside the member's ranges");
    work[0] = members[0];
    ep_op_rec *op = (ep_op_rec *)(void *)(work[0].bytes + section(&work[0], EP_SECTION_OPS)->offset);
    op->scratch_offset = 64, op->scratch_size = 64;
    epb_seal(&work[0]);
    CHECK(ep_session_open(&one, work[0].bytes, work[0].len, arena, sizeof arena, NULL) == EP_ERR_PLAN_OP,
          "scratch outside the member's ranges");
    /* a member opened on its own, in an arena of its own, runs (no other member's bytes in reach) */
    CHECK(ep_session_open(&one, members[1].bytes, members[1].len, arena, sizeof arena, NULL) == EP_OK &&
          request(one, 1, 5) == 0, "a member alone");
    ep_session_close(one);
}

/* Byte mutations of the records, the CRC re-sealed: a status or a working group, never a crash. */
static void check_mutations(void) {
    chk_seed(20261206);
    long opened = 0;
    for (int it = 0; it < 4000; it++) {
        work[0] = members[0], work[1] = members[1];
        epb_plan *p = &work[chk_rnd() % 2];
        uint8_t *r = (uint8_t *)group_rec(p);
        const int n = 1 + (int)(chk_rnd() % 4);
        for (int k = 0; k < n; k++) r[chk_rnd() % sizeof(ep_group_rec)] ^= (uint8_t)(1u << (chk_rnd() % 8));
        epb_seal(p);
        ep_session *s[2];
        if (open_group(&work[0], &work[1], 2, sizeof arena, s) == EP_OK) {
            opened++;
            CHECK(request(s[0], 0, it) == 0 && request(s[1], 1, it) == 0, "a mutated group that opens runs right");
            close_all(s, 2);
        }
    }
    printf("mutations: 4000, %ld still a valid group\n", opened);
    CHECK(1, "mutations survived");
}

int main(void) {
    epb_plan plain;
    epb_build(&plain, 0, 0);
    ep_plan_info info;
    if (ep_plan_query(plain.bytes, plain.len, &info)) return 1;
    tables = info.session_bytes;
    make_member(&members[0], 0);
    make_member(&members[1], 1);
    check_query();
    check_runs();
    check_refusals();
    check_mutations();
    printf("test_group: %d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail ? 1 : 0;
}
