"""Shared-arena groups (docs/groups.md): several plans that run one at a time share one arena.

    group = edgeplan.plan_group(["mobilenetv2.eplan", "vad.eplan", "asr.eplan"])
    group.save("board/")                      # one member plan per model, each with its GROUP record
    sessions = edgeplan.SessionGroup(group)   # or the saved member files, in order

A board runs its vision, VAD, ASR and TTS models one after another, rarely at once: their activations need
not be in memory together. Each member keeps its own bytes (its session tables and its streaming state,
kept across the other members' runs); every other byte of its planned region (activations, inputs,
outputs, scratch) lies in one range the members share. The group arena is then the members' own bytes plus
the largest member's shared part, against the sum of their separate arenas.

Grouping rewrites compiled plans (any plan: nothing is recompiled). Each member's state tensors move to its
own range, packed; its other arena tensors and scratch move, in their planned layout, to the shared range;
the header's arena size becomes the member's reach to the group arena's end; a critical GROUP section
(plan_format.h ep_group_rec) records the layout, and the CRC is sealed again. The runtime checks every
member's tensors against the two ranges at open, and ep_group_open that the members describe one layout;
ep_run of a member while another runs fails with EP_ERR_GROUP_BUSY."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ._cdef import K, ffi
from .plan import Plan, PlanBytesError, _struct, _u64, plan_sections, query, with_section, write_atomic

GROUP_REC = ffi.sizeof("ep_group_rec")
_A = K.EP_ARENA_ALIGN
# record fields read and rewritten in place (plan_format.h, through the cffi declarations)
_T_STORAGE, _T_FLAGS = ffi.offsetof("ep_tensor_rec", "storage"), ffi.offsetof("ep_tensor_rec", "flags")
_T_OFFSET, _T_NBYTES = ffi.offsetof("ep_tensor_rec", "offset"), ffi.offsetof("ep_tensor_rec", "nbytes")
_O_SCRATCH, _O_SCRATCH_SIZE = ffi.offsetof("ep_op_rec", "scratch_offset"), ffi.offsetof("ep_op_rec", "scratch_size")
_H_ARENA = ffi.offsetof("ep_plan_header", "arena_size")


class GroupError(ValueError):
    """Plans that cannot form a group, with what to do."""


def _align(x: int) -> int:
    return -(-x // _A) * _A


def _load(member) -> tuple[bytes, str]:
    """(plan bytes, a name) of a member: a plan path, plan bytes or an edgeplan.Plan."""
    if hasattr(member, "to_bytes"):
        return member.to_bytes(), getattr(member, "report", {}).get("name", "")
    if isinstance(member, (str, os.PathLike)):
        p = Path(member)
        return p.read_bytes(), p.stem
    if isinstance(member, (bytes, bytearray, memoryview)):
        return bytes(member), ""
    raise TypeError(f"a group member is a plan path, plan bytes or an edgeplan.Plan, got {type(member).__name__}")


def _records(data: bytes, kind: int) -> tuple[int, int, int]:
    """(offset, count, record size) of the plan's section of `kind` (0, 0, 0 when absent)."""
    tbl, secs = plan_sections(data)
    for i, (k, off) in enumerate(secs):
        if k == kind:
            sec = _struct("ep_section", data, tbl + i * ffi.sizeof("ep_section"))
            if off + sec.count * sec.record_size > len(data):
                raise PlanBytesError(f"section kind {kind} runs past the end of the plan")
            return off, sec.count, sec.record_size
    return 0, 0, 0


@dataclass
class _Layout:
    """One member's arena ranges before grouping."""
    data: bytes
    name: str
    tables: int              # session tables (board-independent: edgeplan.h's published figures)
    planned: int             # the plan's planned region
    state: list              # merged [start, end) ranges of the state tensors
    state_bytes: int = 0     # the own range, packed and 64-aligned
    low: int = 0             # the lowest byte of the shared part (64-aligned)
    moves: dict = field(default_factory=dict)   # state range start -> its offset in the own range

    @property
    def shared_bytes(self) -> int:
        return _align(self.planned - self.low) if self.planned > self.low else 0

    @property
    def separate_arena(self) -> int:
        return self.tables + self.planned


def _tensors(data: bytes):
    off, n, rs = _records(data, K.EP_SECTION_TENSORS)
    for i in range(n):
        r = off + i * rs
        yield r, data[r + _T_STORAGE], data[r + _T_FLAGS], _u64(data, r + _T_OFFSET), _u64(data, r + _T_NBYTES)


def _ops(data: bytes):
    off, n, rs = _records(data, K.EP_SECTION_OPS)
    for i in range(n):
        r = off + i * rs
        yield r, _u64(data, r + _O_SCRATCH), _u64(data, r + _O_SCRATCH_SIZE)


def _layout(data: bytes, name: str) -> _Layout:
    import numpy as np

    from .runtime import load_library, status_str
    buf = np.frombuffer(data, np.uint8).copy()   # the runtime's own check (structure and CRC) first
    rc = load_library().ep_plan_validate(ffi.from_buffer(buf), len(buf)) if len(buf) else K.EP_ERR_PLAN_TRUNCATED
    if rc != K.EP_OK:
        raise GroupError(f"{name}: not a valid plan ({status_str(rc)}); compile it again")
    if _records(data, K.EP_SECTION_GROUP)[1]:
        raise GroupError(f"{name}: already a group member; group the plans it was made from")
    if _records(data, K.EP_SECTION_SIGNATURE)[1]:
        raise GroupError(f"{name}: a signed plan; grouping changes its bytes, so group the unsigned plan and sign "
                         "the members (edgeplan group --sign KEY)")
    q = query(data)
    state = sorted((o, o + n) for _, st, fl, o, n in _tensors(data)
                   if st == K.EP_STORAGE_ARENA and fl & K.EP_TENSOR_FLAG_STATE and n)
    merged: list = []
    for a, b in state:
        if merged and a < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    lay = _Layout(data, name, q["session_bytes"], q["planned_bytes"], [tuple(r) for r in merged])
    pos = 0
    for a, b in lay.state:                 # the own range: the state ranges packed, each keeping a % 64
        pos = _align(pos) + a % _A
        lay.moves[a] = pos
        pos += b - a
    lay.state_bytes = _align(pos)
    low = lay.planned
    for _, st, fl, o, n in _tensors(data):
        if st != K.EP_STORAGE_ARENA or not n:
            continue
        inside = [r for r in lay.state if o < r[1] and r[0] < o + n]
        if inside and not (len(inside) == 1 and inside[0][0] <= o and o + n <= inside[0][1]):
            raise GroupError(f"{name}: a tensor straddles its state and other bytes; recompile the plan")
        if not inside:
            low = min(low, o)
    for _, so, ss in _ops(data):
        if ss:
            if any(so < b and a < so + ss for a, b in lay.state):
                raise GroupError(f"{name}: an op's scratch overlaps its state; recompile the plan")
            low = min(low, so)
    lay.low = low // _A * _A
    return lay


@dataclass
class Group:
    """The member plans of a shared-arena group and what grouping saved."""
    plans: list                  # edgeplan.Plan per member, in member order
    names: list
    group_arena_bytes: int
    separate_arena_bytes: list   # each member's arena on its own
    state_bytes: list            # each member's own range (streaming state)
    tables_bytes: list           # each member's session tables
    shared_bytes: int            # the range the members share

    @property
    def ratio(self) -> float:
        return self.group_arena_bytes / max(1, sum(self.separate_arena_bytes))

    def save(self, folder, *, sign=None) -> list:
        """Writes the members as NN-name.eplan into folder (created); their paths, in member order. With
        `sign` (a secret key or its file) each member is signed."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for i, (p, n) in enumerate(zip(self.plans, self.names)):
            data = p.to_bytes()
            if sign is not None:
                from .signing import sign_plan
                data = sign_plan(data, sign)
            path = out / f"{i:02d}-{n or 'member'}.eplan"
            write_atomic(path, data)
            paths.append(path)
        return paths

    def summary(self) -> str:
        w = max([len(n) for n in self.names] + [6])
        lines = [f"{'member':<{w}}  {'alone':>12}  {'tables':>10}  {'state':>10}  {'shared part':>12}"]
        for n, a, t, s, p in zip(self.names, self.separate_arena_bytes, self.tables_bytes, self.state_bytes,
                                 (p.report["shared_part"] for p in self.plans)):
            lines.append(f"{n:<{w}}  {a:>12,}  {t:>10,}  {s:>10,}  {p:>12,}")
        total = sum(self.separate_arena_bytes)
        lines.append(f"group arena: {self.group_arena_bytes:,} bytes (own bytes {sum(self.tables_bytes) + sum(self.state_bytes):,}"
                     f" + shared {self.shared_bytes:,} + busy word 64) against {total:,} for the separate arenas: "
                     f"{self.ratio:.3f}x")
        return "\n".join(lines)


def plan_group(members, names=None) -> Group:
    """Groups compiled plans (paths, bytes or edgeplan.Plan objects, in the order they will be opened) into
    one shared arena. names: one per member (default: the file stems, or member0, member1, ...)."""
    from .compiler.writer import crc32c
    members = list(members)
    if not members:
        raise GroupError("a group needs at least one plan")
    loaded = [_load(m) for m in members]
    names = list(names) if names is not None else [n or f"member{i}" for i, (_, n) in enumerate(loaded)]
    if len(names) != len(loaded):
        raise GroupError(f"{len(names)} names for {len(loaded)} plans")
    lays = [_layout(d, n) for (d, _), n in zip(loaded, names)]
    own = [L.tables + L.state_bytes for L in lays]
    shared_start = sum(own)
    shared = max(L.shared_bytes for L in lays)
    busy = shared_start + shared
    total = busy + _A
    h = hashlib.blake2b(digest_size=8)
    for L in lays:
        h.update(L.data)
    group_id = int.from_bytes(h.digest(), "little")
    plans, base = [], 0
    for i, L in enumerate(lays):
        region = base + L.tables                 # the member's planned region in the group arena
        shared_off = shared_start - region
        out = bytearray(L.data)

        def move(o: int, n: int) -> int:
            for a, b in L.state:
                if a <= o < b or (n and a <= o and o + n <= b):
                    return L.moves[a] + (o - a)
            return shared_off + max(0, o - L.low)

        for r, st, _, o, n in _tensors(L.data):
            if st == K.EP_STORAGE_ARENA:
                out[r + _T_OFFSET:r + _T_OFFSET + 8] = move(o, n).to_bytes(8, "little")
        for r, so, ss in _ops(L.data):
            out[r + _O_SCRATCH:r + _O_SCRATCH + 8] = (move(so, ss) if ss else shared_off).to_bytes(8, "little")
        out[_H_ARENA:_H_ARENA + 8] = (total - region).to_bytes(8, "little")   # the member's reach: to the group's end
        out, at = with_section(bytes(out), K.EP_SECTION_GROUP, GROUP_REC, K.EP_SECTION_FLAG_CRITICAL)
        rec = ffi.new("ep_group_rec *", dict(group_id=group_id, arena_offset=base, group_arena_size=total,
                                             state_size=L.state_bytes, shared_offset=shared_off,
                                             busy_offset=busy - region, member=i, n_members=len(lays)))
        out[at:at + GROUP_REC] = bytes(ffi.buffer(rec))
        out[12:16] = bytes(4)
        out[12:16] = crc32c(bytes(out)).to_bytes(4, "little")
        report = dict(name=names[i], member=i, n_members=len(lays), arena_offset=base, group_arena_bytes=total,
                      state_bytes=L.state_bytes, shared_part=L.shared_bytes, separate_arena_bytes=L.separate_arena,
                      arena_bytes=total - base)
        plans.append(Plan(bytes(out), report))
        base += L.tables + L.state_bytes
    return Group(plans, names, total, [L.separate_arena for L in lays], [L.state_bytes for L in lays],
                 [L.tables for L in lays], shared)


def group_info(data: bytes) -> dict | None:
    """A member plan's GROUP record as a dict, or None for a plan outside any group."""
    try:
        off, n, _ = _records(data, K.EP_SECTION_GROUP)
    except PlanBytesError:
        return None
    if not n or off + GROUP_REC > len(data):
        return None
    r = _struct("ep_group_rec", data, off)
    return {k: int(getattr(r, k)) for k in ("group_id", "arena_offset", "group_arena_size", "state_size",
                                             "shared_offset", "busy_offset", "member", "n_members")}
