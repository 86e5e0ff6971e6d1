/* Shared-arena groups (plan_format.h ep_group_rec; docs/groups.md): plans compiled together share one arena and
 * run one at a time. Each member keeps its own bytes (session tables, streaming state) apart; the rest of its
 * planned region is the group's shared range. A word in the arena's last 64 bytes says which member holds
 * the group: for one run, or from ep_group_lock to ep_group_unlock (a whole request: inputs, run, outputs);
 * ep_run of another member meanwhile fails. No heap: ep_group_open re-reads the records rather than keeping them. */
#include <stdatomic.h>
#include <string.h>

#include "session_impl.h"

#if EP_HAVE_GROUPS

#define GROUP_IDLE 0x49475045u   /* "EPGI": no member holds the group */
#define GROUP_HELD 0x48000000u   /* | member: that member runs, or holds the group (ep_group_lock) */
#define GROUP_MEMBERS 0x01000000u

/* The plan's GROUP record into *r: 1, or 0 when it has none, or a status for a malformed section. The section
 * table and each section's range were checked by ep_plan_parse. */
static int group_rec(const ep_plan_view *v, ep_group_rec *r, ep_err *e) {
    const ep_section *secs = (const ep_section *)(const void *)(v->base + v->hdr->section_table_offset);
    int found = 0;
    for (uint32_t i = 0; i < v->hdr->section_count; i++) {
        const ep_section *s = &secs[i];
        if (s->kind != EP_SECTION_GROUP) continue;
        if (found++ || s->count != 1 || s->record_size < sizeof *r || s->record_size % 8 || s->size < s->record_size)
            return ep_fail(e, EP_ERR_PLAN_SECTION, "group section: one record of %u bytes expected",
                           (unsigned)sizeof *r);
        memcpy(r, v->base + s->offset, sizeof *r);
    }
    return found;
}

/* [off, off + n) lies in the member's own range or in the shared one (n == 0: anywhere) */
static int in_ranges(uint64_t off, uint64_t n, const ep_group_rec *r) {
    return !n || off + n <= r->state_size || (off >= r->shared_offset && off + n <= r->busy_offset);
}

int ep_group_bind(ep_session *s, ep_err *e) {
    ep_group_rec r;
    const ep_plan_view *v = &s->view;
    const int found = group_rec(v, &r, e);
    if (found <= 0) return found;
    const uint64_t region = v->hdr->arena_size;
    if (r.state_size % 64 || r.shared_offset % 64 || region < 64 || r.busy_offset != region - 64 ||
        r.state_size > r.shared_offset || r.shared_offset > r.busy_offset || r.member >= r.n_members ||
        r.n_members > GROUP_MEMBERS || r.reserved)
        return ep_fail(e, EP_ERR_PLAN_SECTION, "group record: its ranges do not fit the planned region");
    /* a member reaches nothing of the others': its tensors and scratch lie in its own range or the shared one */
    for (uint32_t i = 0; i < v->n_tensors; i++) {
        const ep_tensor_rec *t = ep_view_tensor(v, i);
        if (t->storage == EP_STORAGE_ARENA && !in_ranges(t->offset, t->nbytes, &r))
            return ep_fail(e, EP_ERR_PLAN_TENSOR, "tensor %u: outside the group member's ranges", i);
    }
    for (uint32_t i = 0; i < v->n_ops; i++) {
        const ep_op_rec *o = ep_view_op(v, i);
        if (!in_ranges(o->scratch_offset, o->scratch_size, &r))
            return ep_fail(e, EP_ERR_PLAN_OP, "op %u: scratch outside the group member's ranges", i);
    }
    atomic_uint *w = (atomic_uint *)(void *)(s->region + r.busy_offset);
    unsigned cur = atomic_load(w);
    if (cur != GROUP_IDLE && (cur & ~(GROUP_MEMBERS - 1)) != GROUP_HELD)   /* fresh memory: the group is idle */
        atomic_compare_exchange_strong(w, &cur, GROUP_IDLE);
    s->group_busy = (uint32_t *)(void *)w;
    s->group_token = GROUP_HELD | r.member;
    return EP_OK;
}

/* 1: the group was idle and is now s's; 2: s holds it already (ep_group_lock); 0: another member holds it */
static int enter(ep_session *s) {
    unsigned cur = GROUP_IDLE;
    if (atomic_compare_exchange_strong((atomic_uint *)(void *)s->group_busy, &cur, s->group_token)) return 1;
    return cur == s->group_token ? 2 : 0;
}

int ep_group_run(ep_session *s) {
    const int held = enter(s);
    if (!held) {
        s->last_error[0] = '\0';
        return EP_ERR_GROUP_BUSY;
    }
    const int rc = ep_session_run(s);
    if (held == 1) atomic_store((atomic_uint *)(void *)s->group_busy, GROUP_IDLE);
    return rc;
}

ep_status ep_group_lock(ep_session *s) {
    if (!ep_session_live(s) || !s->group_busy) return EP_ERR_INVALID_ARG;
    return enter(s) == 1 ? EP_OK : EP_ERR_GROUP_BUSY;
}

void ep_group_unlock(ep_session *s) {
    unsigned mine = ep_session_live(s) && s->group_busy ? s->group_token : 0;
    if (mine) atomic_compare_exchange_strong((atomic_uint *)(void *)s->group_busy, &mine, GROUP_IDLE);
}

static int member(const void *plan, size_t len, uint32_t i, ep_plan_view *v, ep_group_rec *r, ep_err *e) {
    int rc = ep_plan_parse(v, plan, len, 0, e);   /* the structure: ep_session_open checks the rest */
    if (rc) return rc;
    if ((rc = group_rec(v, r, e)) < 0) return rc;
    if (!rc) return ep_fail(e, EP_ERR_INVALID_ARG, "plan %u is not a group member (compile with edgeplan group)", i);
    return EP_OK;
}

ep_status ep_group_query(const void *plan, size_t plan_len, ep_group_info *info) {
    ep_plan_view v;
    ep_group_rec r;
    if (!info) return EP_ERR_INVALID_ARG;
    int rc = ep_plan_parse(&v, plan, plan_len, 0, NULL);
    if (rc) return rc;
    if ((rc = group_rec(&v, &r, NULL)) <= 0) return rc ? rc : EP_ERR_NOT_FOUND;
    memset(info, 0, sizeof *info);
    info->group_id = r.group_id;
    info->arena_offset = r.arena_offset;
    info->group_arena_bytes = r.group_arena_size;
    info->state_bytes = r.state_size;
    info->member = r.member;
    info->n_members = r.n_members;
    return EP_OK;
}

ep_status ep_group_open(ep_session **out, const void *const *plans, const size_t *plan_lens, uint32_t n,
                        void *group_arena, size_t group_arena_len, const ep_options *opt) {
    ep_err err = {0, 0};
    if (opt && opt->struct_size >= offsetof(ep_options, error_buf_len) + sizeof(uint32_t)) {
        err.buf = opt->error_buf;
        err.len = opt->error_buf_len;
    }
    if (!out || !plans || !plan_lens || !n || !group_arena) return ep_fail(&err, EP_ERR_INVALID_ARG, "no group");
    for (uint32_t i = 0; i < n; i++) out[i] = NULL;
    ep_plan_view v;
    ep_group_rec r, first;
    /* the layout the records must describe: member i's arena right after member i-1's tables and state, the
     * shared range after the last one's, every member's arena ending at the group arena's end */
    uint64_t base = 0;
    int rc;
    for (uint32_t i = 0; i < n; i++) {
        if ((rc = member(plans[i], plan_lens[i], i, &v, &r, &err))) return rc;
        if (!i) first = r;
        const uint64_t tables = ep_session_table_bytes(&v);
        if (r.group_id != first.group_id || r.n_members != n || r.member != i ||
            r.group_arena_size != first.group_arena_size)
            return ep_fail(&err, EP_ERR_INVALID_ARG, "plan %u is not member %u of plan 0's group of %u", i, i,
                           first.n_members);
        if (r.arena_offset != base || r.state_size > v.hdr->arena_size ||
            base + tables + v.hdr->arena_size != first.group_arena_size)
            return ep_fail(&err, EP_ERR_PLAN_SECTION, "plan %u: its group record does not match its tables", i);
        base += tables + r.state_size;
    }
    if (group_arena_len < first.group_arena_size)
        return ep_fail(&err, EP_ERR_ARENA_TOO_SMALL, "group arena too small: %llu bytes given, %llu needed",
                       (unsigned long long)group_arena_len, (unsigned long long)first.group_arena_size);
    for (uint32_t i = 0; i < n; i++) {
        rc = member(plans[i], plan_lens[i], i, &v, &r, &err);
        if (!rc && r.arena_offset + ep_session_table_bytes(&v) + r.shared_offset != base)
            rc = ep_fail(&err, EP_ERR_PLAN_SECTION, "plan %u: its shared range starts inside another member", i);
        if (!rc)
            rc = ep_session_open(&out[i], plans[i], plan_lens[i], (uint8_t *)group_arena + r.arena_offset,
                                 first.group_arena_size - r.arena_offset, opt);
        if (rc) {
            for (uint32_t k = 0; k < i; k++) {
                ep_session_close(out[k]);
                out[k] = NULL;
            }
            return rc;
        }
    }
    return EP_OK;
}

#else   /* a build without groups (a selective build whose ops file has no "feature groups" line): open refuses
           a member (its GROUP section is critical) and the group API says the build lacks it */

ep_status ep_group_query(const void *plan, size_t plan_len, ep_group_info *info) {
    (void)plan, (void)plan_len, (void)info;
    return EP_ERR_PLAN_UNSUPPORTED;
}

ep_status ep_group_open(ep_session **out, const void *const *plans, const size_t *plan_lens, uint32_t n,
                        void *group_arena, size_t group_arena_len, const ep_options *options) {
    (void)plans, (void)plan_lens, (void)group_arena, (void)group_arena_len, (void)options;
    if (out)
        for (uint32_t i = 0; i < n; i++) out[i] = NULL;
    return EP_ERR_PLAN_UNSUPPORTED;
}

ep_status ep_group_lock(ep_session *s) {
    (void)s;
    return EP_ERR_INVALID_ARG;
}

void ep_group_unlock(ep_session *s) { (void)s; }
#endif
