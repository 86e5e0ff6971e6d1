"""Plan bytes in Python: the compiled artefact (``Plan``) and a reader for ``edgeplan inspect``.
The reader parses records through the same cffi declarations the writer uses."""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._cdef import EP_TO_NUMPY, K, ffi

SECTION_NAMES = {getattr(K, n): n[len("EP_SECTION_"):].lower() for n in dir(K)
                 if n.startswith("EP_SECTION_") and not n.startswith("EP_SECTION_FLAG") and n != "EP_SECTION_ALIGN"}
OP_NAMES = {getattr(K, n): n[len("EP_OP_"):].lower() for n in dir(K) if n.startswith("EP_OP_") and n != "EP_OP_COUNT"}


@dataclass
class Plan:
    """A compiled plan: its bytes and what the compiler reports about it."""
    data: bytes
    report: dict = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        return self.data

    def save(self, path) -> None:
        """Writes the plan atomically: a new file in the same directory, renamed over ``path``. A process
        that has the old plan open (mmapped) keeps it, and the next open reads the new one."""
        write_atomic(path, self.data)

    @property
    def arena_bytes(self) -> int:
        return self.report.get("arena_bytes", 0)

    def summary(self) -> str:
        r = self.report
        lines = [f"ops: {r['n_ops']} ({', '.join(f'{k} {v}' for k, v in sorted(r['op_counts'].items()))})"]
        if r.get("fused"):
            # "Conv 'layer1.0.conv1' + BatchNormalization + Relu" -> pattern counts (names via inspect)
            pats: dict = {}
            for f in r["fused"]:
                pat = re.sub(r" '[^']*'", "", f)
                pats[pat] = pats.get(pat, 0) + 1
            lines.append(f"fused: {len(r['fused'])} (" + "; ".join(f"{p} x{n}" for p, n in
                                                          sorted(pats.items(), key=lambda kv: -kv[1])) + ")")
        lines += [f"warning: {w}" for w in r.get("warnings", ())]
        lines.append(f"weights: {r['const_bytes']:,} bytes")
        lb = r["lower_bound"]
        ratio = r["planned_bytes"] / lb if lb else 1.0
        lines.append(f"arena: {r['planned_bytes']:,} bytes planned (lower bound {lb:,}, {ratio:.3f}x, "
                     f"strategy {r['strategy']}); session tables {r['session_bytes']:,}; "
                     f"total arena {r['arena_bytes']:,} bytes")
        if r.get("inplace"):
            lines.append(f"in place: {len(r['inplace'])} ops reuse an input buffer")
        if r.get("symbols"):
            lines.append("variable dims: " + ", ".join(f"{y[0]}={y[1]}..{y[2]}" + (f":{y[3]}" if len(y) > 3 else "")
                                                 for y in r["symbols"])
                         + " (one plan serves every length; the arena is planned for the maximum)")
        if r.get("state"):
            lines.append(f"streaming state: {', '.join(r['state'])} (kept across runs; reset() restarts it)")
        lines.append(f"plan: {len(self.data):,} bytes")
        return "\n".join(lines)

    def inspect(self) -> str:
        """The plan as `edgeplan inspect` prints it."""
        return inspect_text(self.data)


def write_atomic(path, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file in the same directory and a rename: a reader
    sees the old file or the new one, never a partly written or rewritten one (rewriting a file in place
    gives a process that has it mmapped SIGBUS, or silently changed bytes). The new file gets the usual
    permissions (0666 less the umask); raises OSError as open() would."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class PlanBytesError(ValueError):
    """Plan bytes a tool cannot rewrite (not a plan, truncated, a section table out of range)."""


_HDR = 64      # sizeof(ep_plan_header)
_SEC = 32      # sizeof(ep_section)


def _u32(b, off):
    return int.from_bytes(b[off:off + 4], "little")


def _u64(b, off):
    return int.from_bytes(b[off:off + 8], "little")


def plan_sections(b: bytes) -> tuple[int, list]:
    """(section table offset, [(kind, offset)...]) of a plan's bytes, checked as far as a rewrite needs."""
    if len(b) < _HDR or _u32(b, 0) != K.EP_PLAN_MAGIC:
        raise PlanBytesError("not an edgeplan plan")
    if _u64(b, 16) != len(b):
        raise PlanBytesError(f"the plan's header gives {_u64(b, 16)} bytes, the file has {len(b)}: truncated or "
                             "padded")
    tbl, n = _u64(b, 24), _u32(b, 32)
    if tbl + n * _SEC > len(b):
        raise PlanBytesError("the plan's section table is out of range")
    return tbl, [(_u32(b, tbl + i * _SEC), _u64(b, tbl + i * _SEC + 8)) for i in range(n)]


def with_section(data: bytes, kind: int, rec_size: int, flags: int = 0) -> tuple[bytearray, int]:
    """The plan with a section of `kind` holding one zeroed record of rec_size bytes (an existing one of that
    kind reused), appended at the end; the record's offset. The header's file size and section count are
    updated, the CRC is not. When the section table has no room for one more entry, the sections after it
    move down 64 bytes."""
    tbl, secs = plan_sections(data)
    for k, off in secs:
        if k == kind:
            out = bytearray(data)
            out[off:off + rec_size] = bytes(rec_size)
            return out, off
    out = bytearray(data)
    n = len(secs)
    first = min((off for _, off in secs), default=len(out))
    if tbl + (n + 1) * _SEC > first:          # no room for one more entry: move the sections down 64 bytes
        if tbl + n * _SEC > first:
            raise PlanBytesError("the plan's section table overlaps its sections: re-compile it")
        shift = K.EP_SECTION_ALIGN
        out[first:first] = bytes(shift)
        for i in range(n):
            o = tbl + i * _SEC + 8
            out[o:o + 8] = (_u64(out, o) + shift).to_bytes(8, "little")
    out += bytes(-len(out) % K.EP_SECTION_ALIGN)
    rec_off = len(out)
    out += bytes(rec_size)
    entry = tbl + n * _SEC
    out[entry:entry + _SEC] = (kind.to_bytes(4, "little") + flags.to_bytes(4, "little") + rec_off.to_bytes(8, "little")
                               + rec_size.to_bytes(8, "little") + (1).to_bytes(4, "little")
                               + rec_size.to_bytes(4, "little"))
    out[32:36] = (n + 1).to_bytes(4, "little")
    out[16:24] = len(out).to_bytes(8, "little")
    return out, rec_off


def _struct(ctype: str, buf: bytes, off: int):
    return ffi.cast(ctype + " *", ffi.from_buffer(buf) + off)[0]


def _partitions(data: bytes, h) -> int:
    """The plan's DELEGATE ops (each takes EP_SESSION_PARTITION_BYTES of the session's tables)."""
    n = 0
    for i in range(h.section_count):
        sec = _struct("ep_section", data, h.section_table_offset + i * ffi.sizeof("ep_section"))
        if sec.kind == K.EP_SECTION_OPS and sec.count:
            recs = np.frombuffer(data, np.uint8, sec.count * sec.record_size, sec.offset).reshape(sec.count, -1)
            n += int(np.count_nonzero(recs[:, :2].copy().view("<u2") == K.EP_OP_DELEGATE))
    return n


def query(data: bytes) -> dict:
    """What ep_plan_query reports for a well-formed plan, computed from its header and section table:
    arena_bytes (exactly what ep_session_open needs on any board), planned_bytes, session_bytes,
    const_bytes. Needs no runtime library; the session tables' size uses the figures edgeplan.h
    publishes (EP_SESSION_*_BYTES)."""
    h = _struct("ep_plan_header", data, 0)
    count, size = {}, {}
    for i in range(h.section_count):
        sec = _struct("ep_section", data, h.section_table_offset + i * ffi.sizeof("ep_section"))
        count[sec.kind], size[sec.kind] = sec.count, sec.size
    tables = (K.EP_SESSION_BYTES + count.get(K.EP_SECTION_TENSORS, 0) * K.EP_SESSION_TENSOR_BYTES
              + count.get(K.EP_SECTION_OPS, 0) * K.EP_SESSION_OP_BYTES
              + count.get(K.EP_SECTION_OPIO, 0) * K.EP_SESSION_OPIO_BYTES
              + count.get(K.EP_SECTION_IO, 0) * K.EP_SESSION_IO_BYTES
              + count.get(K.EP_SECTION_SYMS, 0) * K.EP_SESSION_SYM_BYTES
              + _partitions(data, h) * K.EP_SESSION_PARTITION_BYTES)
    tables = -(-tables // K.EP_ARENA_ALIGN) * K.EP_ARENA_ALIGN
    return {"arena_bytes": tables + h.arena_size, "planned_bytes": h.arena_size, "session_bytes": tables,
            "const_bytes": size.get(K.EP_SECTION_CONST, 0)}


def read_plan(data: bytes) -> dict:
    """Parses plan bytes into plain Python (for inspect and tests). Assumes a valid plan."""
    h = _struct("ep_plan_header", data, 0)
    sections = []
    by_kind = {}
    for i in range(h.section_count):
        s = _struct("ep_section", data, h.section_table_offset + i * ffi.sizeof("ep_section"))
        rec = dict(kind=SECTION_NAMES.get(s.kind, f"unknown({s.kind})"), critical=bool(s.flags & 1),
                   offset=s.offset, size=s.size, count=s.count, record_size=s.record_size)
        sections.append(rec)
        by_kind[s.kind] = s
    names = b""
    if K.EP_SECTION_NAMES in by_kind:
        s = by_kind[K.EP_SECTION_NAMES]
        names = data[s.offset:s.offset + s.size]

    def name(off):
        if off == K.EP_NO_NAME or off >= len(names):
            return ""
        end = names.find(b"\0", off)
        return names[off:end if end >= 0 else len(names)].decode("utf-8", "replace")

    kinds = {K.EP_SYM_INPUT: "input", K.EP_SYM_DERIVED: "derived", K.EP_SYM_DATA: "data"}
    syms = []
    if K.EP_SECTION_SYMS in by_kind:
        s = by_kind[K.EP_SECTION_SYMS]
        for i in range(s.count):
            y = _struct("ep_sym_rec", data, s.offset + i * s.record_size)
            syms.append(dict(name=name(y.name), kind=kinds.get(y.kind, str(y.kind)), min=y.min, max=y.max,
                             rule=(y.src - 1, y.mul, y.add, y.div) if y.src else None, step=max(1, y.step),
                             src2=y.src2 - 1 if y.src2 else None))
    tensors = []
    s = by_kind[K.EP_SECTION_TENSORS]
    for i in range(s.count):
        t = _struct("ep_tensor_rec", data, s.offset + i * s.record_size)
        tensors.append(dict(name=name(t.name), dtype=str(EP_TO_NUMPY.get(t.dtype, t.dtype)),
                            storage="const" if t.storage == K.EP_STORAGE_CONST else "arena",
                            shape=list(t.dims[0:t.rank]), offset=t.offset, nbytes=t.nbytes, flags=t.flags,
                            dim_sym=list(t.dim_sym[0:t.rank]), layout=t.layout))
    opio = []
    if K.EP_SECTION_OPIO in by_kind:
        s = by_kind[K.EP_SECTION_OPIO]
        opio = list(ffi.cast("uint32_t *", ffi.from_buffer(data) + s.offset)[0:s.count])
    ops = []
    s = by_kind[K.EP_SECTION_OPS]
    for i in range(s.count):
        o = _struct("ep_op_rec", data, s.offset + i * s.record_size)
        io = opio[o.io_first:o.io_first + o.n_in + o.n_out]
        ops.append(dict(op=OP_NAMES.get(o.opcode, str(o.opcode)), variant=o.variant, name=name(o.name),
                        inputs=io[:o.n_in], outputs=io[o.n_in:], scratch=(o.scratch_offset, o.scratch_size)))
        if o.opcode in (K.EP_OP_IF, K.EP_OP_ELSE) and K.EP_SECTION_PARAMS in by_kind:
            ops[-1]["skip"] = _struct("ep_branch_params", data, by_kind[K.EP_SECTION_PARAMS].offset + o.params_offset).skip
        if o.opcode == K.EP_OP_DELEGATE and K.EP_SECTION_PARAMS in by_kind:
            dp = _struct("ep_delegate_params", data, by_kind[K.EP_SECTION_PARAMS].offset + o.params_offset)
            ops[-1].update(skip=dp.skip, kind=dp.kind, partition=dp.partition)
    io = {"inputs": [], "outputs": []}
    s = by_kind[K.EP_SECTION_IO]
    for i in range(s.count):
        r = _struct("ep_io_rec", data, s.offset + i * s.record_size)
        io["inputs" if r.kind == K.EP_IO_INPUT else "outputs"].append(r.tensor)
    meta = {}
    if K.EP_SECTION_META in by_kind:
        s = by_kind[K.EP_SECTION_META]
        try:
            meta = json.loads(data[s.offset:s.offset + s.size] or b"{}")
        except ValueError:   # also UnicodeDecodeError
            meta = {}
        if not isinstance(meta, dict):   # META is ancillary: anything else means no metadata
            meta = {}
    header = dict(version=f"{h.version_major}.{h.version_minor}", header_size=h.header_size,
                  file_size=h.file_size, crc32c=f"0x{h.crc32c:08x}", arena_size=h.arena_size,
                  required_features=h.required_features, sections=h.section_count)
    return dict(header=header, sections=sections, tensors=tensors, ops=ops, io=io, meta=meta, syms=syms)


def _shape_str(t: dict, syms: list) -> str:
    """[1, 80, T<=3000]: variable dims by their symbol's name and bound."""
    dims = [str(d) if not k else f"{syms[k - 1]['name']}<={d}" for d, k in zip(t["shape"], t["dim_sym"])]
    return "[" + ", ".join(dims) + "]"


def inspect_text(data: bytes) -> str:
    p = read_plan(data)
    h = p["header"]
    out = [f"edgeplan plan {h['version']}: {h['file_size']:,} bytes, crc32c {h['crc32c']}, "
           f"arena region {h['arena_size']:,} bytes, required CPU features 0x{h['required_features']:x}"]
    out.append("sections:")
    for s in p["sections"]:
        out.append(f"  {s['kind']:<9} offset {s['offset']:>10}  size {s['size']:>11,}  count {s['count']:>6}"
                   f"{'' if s['critical'] else '  (ancillary)'}")
    t = p["tensors"]
    y = p["syms"]
    out.append("inputs:  " + ", ".join(f"{t[i]['name']} {t[i]['dtype']}{_shape_str(t[i], y)}" for i in p["io"]["inputs"]))
    out.append("outputs: " + ", ".join(f"{t[i]['name']} {t[i]['dtype']}{_shape_str(t[i], y)}" for i in p["io"]["outputs"]))
    if y:
        out.append("variable dims (one plan serves every value in range; arena, scratch and weights are planned "
                   "for the maximum):")
        for k, sym in enumerate(y):
            how = {"input": "set by the input shapes", "data": "set by a data-dependent op at run time",
                   "derived": "computed by the ops' shape functions"}.get(sym["kind"], sym["kind"])
            if sym["rule"]:
                src, mul, add, div = sym["rule"]
                of = y[src]["name"] + (f"*{y[sym['src2']]['name']}" if sym["src2"] is not None else "")
                how = f"floor(({mul}*{of} + {add}) / {div})"
            step = f":{sym['step']}" if sym["step"] > 1 else ""
            out.append(f"  {sym['name']}={sym['min']}..{sym['max']}{step}  ({sym['kind']}: {how})")
    state = [x["name"] for x in t if x["flags"] & K.EP_TENSOR_FLAG_STATE]
    if state:
        out.append("streaming state (kept in the arena across runs, zeroed by reset): " + ", ".join(state))
    from .group import group_info
    g = group_info(data)
    if g:
        out.append(f"group member {g['member']} of {g['n_members']} (group {g['group_id']:016x}): its arena at "
                   f"{g['arena_offset']:,} of a {g['group_arena_size']:,}-byte group arena; own bytes "
                   f"[0, {g['state_size']:,}), shared [{g['shared_offset']:,}, {g['busy_offset']:,}) of its region")
    out.append(f"ops ({len(p['ops'])}):")
    for i, o in enumerate(p["ops"]):
        ins = ", ".join("-" if x == K.EP_NO_TENSOR else f"%{x}" for x in o["inputs"])
        outs = ", ".join(f"%{x}" for x in o["outputs"])
        sc = f"  scratch {o['scratch'][1]}@{o['scratch'][0]}" if o["scratch"][1] else ""
        if o["op"] == "delegate":   # the partition: a delegate runs it, else its CPU ops after it
            kind = o["kind"].to_bytes(4, "little").decode("ascii", "replace")
            sc += f"  partition {o['partition']} ({kind}), CPU ops {i + 1}..{i + o['skip']}"
        elif "skip" in o:   # the branches: IF false goes past its ELSE; ELSE (the then branch done) past its own
            sc += (f"  then {i + 1}..{i + o['skip'] - 1}, else at {i + o['skip']}" if o["op"] == "if"
                   else f"  else {i + 1}..{i + o['skip']}")
        out.append(f"  {i:>4} {o['op']:<16} v{o['variant']} {outs} <- {ins}  [{o['name']}]{sc}")
    out.append("tensors:")
    scales = p["meta"].get("code_scales")
    scales = scales if isinstance(scales, dict) else {}
    for i, x in enumerate(t):
        q = scales.get(x["name"])
        q = f"  scale {q[0]:.6g} zero point {q[1]}" if isinstance(q, list) and len(q) == 2 and all(
            isinstance(v, (int, float)) for v in q) else ""
        lay = "  layout C8 [N][C/8][H][W][8]" if x["layout"] == K.EP_LAYOUT_C8 else ""
        out.append(f"  %{i:<4} {x['storage']:<5} {x['offset']:>10} +{x['nbytes']:<10} {x['dtype']:<8} "
                   f"{_shape_str(x, y)} {x['name']}{q}{lay}")
    out += placement_text(p["meta"].get("partitions"))
    fused = p["meta"].get("fused")
    if isinstance(fused, list) and fused:
        out.append("fused:")
        out += [f"  {f}" for f in fused]
    amap = p["meta"].get("arena_map", [])
    rows = amap if isinstance(amap, list) else None
    if rows is not None and not all(isinstance(b, list) and len(b) == 5 and all(type(x) is int for x in b[:4])
                                    for b in rows):
        rows = None
    if rows is None:
        out.append("arena map: malformed in the plan's META section (ancillary: ignored)")
    else:
        out.append("arena map (offset, bytes, live ops):")
        for b in rows:
            out.append(f"  {b[0]:>10} {b[1]:>10}  ops {b[2]}..{b[3]}  {b[4]}")
    return "\n".join(out)


def placement_text(rep) -> list:
    """The META section's partition report (compiler/partition) as inspect prints it; [] when absent or
    malformed (the section is ancillary)."""
    try:
        out = [f"npu placement ({rep['backend']} against the {rep['cpu']} CPU model, sync {rep['sync_us']:.1f} us "
               f"per invoke): {rep['n_partitions']} partition(s), {rep['npu_ops']} op(s) on the NPU; modelled "
               f"end to end {rep['partitioned_us']:.1f} us, CPU only {rep['cpu_only_us']:.1f} us"]
        for r in rep["runs"]:
            where = f"partition {r['partition']}" if r["placed"] else f"CPU ({r['reason']})"
            npu = f"{r['npu_us']:.1f}" if r["npu_us"] is not None else "-"
            out.append(f"  {r['n_ops']:>4} op(s) {r['ops'][0]}..{r['ops'][-1]}: NPU {npu} us, CPU {r['cpu_us']:.1f} us"
                       f" -> {where}")
        for why, n in sorted(rep["refused"].items()):
            out.append(f"  not on the NPU: {n} x {why}")
        return out
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        return [] if rep is None else ["npu placement: malformed in the plan's META section (ancillary: ignored)"]


def is_plan_file(path) -> bool:
    """Whether the file at path starts with a plan's magic ("EPLN"), whatever its name."""
    with open(path, "rb") as f:
        return f.read(4) == b"EPLN"


def cache_dir() -> Path:
    """Where the speech tools cache the plans they compile: $EDGEPLAN_CACHE, else ~/.cache/edgeplan."""
    return Path(os.environ.get("EDGEPLAN_CACHE") or Path.home() / ".cache" / "edgeplan")
