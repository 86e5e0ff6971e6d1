"""NPU profiles: one TOML file per target in boards/npu/ (the device, what it runs, its memories and
bandwidths, the per-invoke sync cost, the CPU beside it), and the partitioner's Backend for each.

    >>> from edgeplan.compiler.partition.profiles import list_profiles, load_profile, backend_for
    >>> load_profile("u55-256-sram").macs_per_cycle

Every profile today targets the virtual NPU (``delegate = "vnpu"``): its device numbers are those of the
vNPU preset of the same name (include/edgeplan/vnpu.h), which the encoder writes into each blob and the
cycle model times (one model: the C library's, through ``edgeplan.vnpu.estimate``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..._cdef import K
from ...boards import _load_toml, boards_dir


@dataclass(frozen=True)
class NpuProfile:
    name: str
    description: str
    delegate: str
    preset: str
    macs_per_cycle: int
    clock_mhz: int
    sram_kib: int
    sram_mbps: int
    ext_mbps: int
    weights: str
    sync_us: float
    cpu: str
    min_ops: int
    min_macs: int
    ops: tuple
    dtypes: tuple
    max_kernel: int
    max_stride: int
    path: Path


def profiles_dir() -> Path:
    return boards_dir() / "npu"


def list_profiles() -> list:
    """Names of every NPU profile, sorted."""
    d = profiles_dir()
    return sorted(p.stem for p in d.glob("*.toml")) if d.is_dir() else []


def load_profile(name: str) -> NpuProfile:
    """The NPU profile `name`; ValueError naming the known ones otherwise."""
    path = profiles_dir() / f"{name}.toml"
    if not path.is_file():
        raise ValueError(f"unknown NPU profile {name!r}; known: {', '.join(list_profiles()) or 'none'}")
    t = _load_toml(path)
    s = t.get("supported", {})
    try:
        return NpuProfile(t["name"], t.get("description", ""), t["delegate"], t["preset"], int(t["macs_per_cycle"]),
                          int(t["clock_mhz"]), int(t["sram_kib"]), int(t["sram_mbps"]), int(t["ext_mbps"]),
                          t.get("weights", "sram"), float(t.get("sync_us", 0.0)), t.get("cpu", ""),
                          int(t.get("min_ops", 2)), int(t.get("min_macs", 1_000_000)), tuple(s.get("ops", ())),
                          tuple(s.get("dtypes", ("int8",))),
                          int(s.get("max_kernel", 8)), int(s.get("max_stride", 3)), path)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: malformed NPU profile ({e})") from None


def backend_for(name: str):
    """The partitioner's Backend for NPU profile `name` (compiler/partition.Backend)."""
    from . import Backend
    prof = load_profile(name)
    if prof.delegate != "vnpu":
        raise ValueError(f"NPU profile {name!r}: delegate {prof.delegate!r} has no encoder in this compiler")
    from ...vnpu import config, estimate
    from . import vnpu_encode
    cfg = config(prof.preset)

    def supported(op):
        if op.kind not in prof.ops:
            return f"{op.kind} is not in the profile's ops"
        p = op.params
        if op.kind == "qconv2d":
            if max(int(k) for k in p["kernel"]) > prof.max_kernel:
                return f"kernel over {prof.max_kernel}x{prof.max_kernel}"
            if max(int(v) for v in p["stride"]) > prof.max_stride:
                return f"stride over {prof.max_stride}"
        return vnpu_encode.supported(op)

    def seconds(blob: bytes) -> float:
        return estimate(blob, cfg)["total"]["active_cycles"] / (prof.clock_mhz * 1e6)

    def detail(blob: bytes) -> dict:
        return estimate(blob, cfg)

    def groups(graph):   # the int8 max pool (CAST -> MAXPOOL -> CAST) when the profile lists maxpool
        return vnpu_encode.groups(graph) if "maxpool" in prof.ops else {}

    return Backend(prof.name, K.EP_DELEGATE_KIND_VNPU, supported,
                   lambda ops, ins, outs: vnpu_encode.encode(ops, ins, outs, cfg), seconds,
                   sync_s=prof.sync_us * 1e-6, min_ops=prof.min_ops, min_macs=prof.min_macs, detail=detail,
                   cpu=prof.cpu, groups=groups)
