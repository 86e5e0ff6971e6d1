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

from ._cdef import K
from .plan import Plan, PlanBytesError, _u32, _u64, plan_sections, query, with_section, write_atomic

GROUP_REC = 64        # sizeof(ep_group_rec)
_A = 64               # EP_ARENA_ALIGN


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
            e = tbl + i * 32
            return off, _u32(data, e + 24), _u32(data, e + 28)
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
        yield r, data[r + 1], data[r + 3], _u64(data, r + 8), _u64(data, r + 16)   # rec, storage, flags, off, nbytes


def _ops(data: bytes):
    off, n, rs = _records(data, K.EP_SECTION_OPS)
    for i in range(n):
        r = off + i * rs
        yield r, _u64(data, r + 24), _u64(data, r + 32)   # rec, scratch offset, scratch size


def _layout(data: bytes, name: str) -> _Layout:
    try:
        plan_sections(data)
    except PlanBytesError as e:
        raise GroupError(f"{name}: {e}") from None
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
                out[r + 8:r + 16] = move(o, n).to_bytes(8, "little")
        for r, so, ss in _ops(L.data):
            out[r + 24:r + 32] = (move(so, ss) if ss else shared_off).to_bytes(8, "little")
        out[40:48] = (total - region).to_bytes(8, "little")   # the header's arena size: to the group's end
        out, rec = with_section(bytes(out), K.EP_SECTION_GROUP, GROUP_REC, K.EP_SECTION_FLAG_CRITICAL)
        fields = (group_id, base, total, L.state_bytes, shared_off, busy - region)
        out[rec:rec + 48] = b"".join(v.to_bytes(8, "little") for v in fields)
        out[rec + 48:rec + 56] = i.to_bytes(4, "little") + len(lays).to_bytes(4, "little")
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
    keys = ("group_id", "arena_offset", "group_arena_size", "state_size", "shared_offset", "busy_offset")
    d = {k: _u64(data, off + 8 * j) for j, k in enumerate(keys)}
    d.update(member=_u32(data, off + 48), n_members=_u32(data, off + 52))
    return d
