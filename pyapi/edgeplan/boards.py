"""Board profiles: one TOML file per board in boards/ (CPU, EP_CPU_* features, cores, RAM, compiler flags,
meson cross file, qemu command, size budget).

    >>> from edgeplan.boards import load_board, list_boards
    >>> b = load_board("rpi4"); b.features, b.feature_mask, b.cross_file

The profiles live in the installed package (edgeplan/boards/) or, in a checkout, in the repository's boards/.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional



def _cpu_features() -> dict:
    """EP_CPU_* bits of plan_format.h by short name ({"NEON": 1, ...}), read from the header via _cdef."""
    from ._cdef import K
    return {n[len("EP_CPU_"):]: v for n, v in vars(K).items() if n.startswith("EP_CPU_")}


CPU_FEATURES = _cpu_features()


def boards_dir() -> Path:
    """The folder holding <name>.toml and cross/*.ini (EDGEPLAN_BOARDS overrides)."""
    env = os.environ.get("EDGEPLAN_BOARDS")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for d in (here / "boards", here.parents[1] / "boards"):
        if d.is_dir() and any(d.glob("*.toml")):
            return d
    raise FileNotFoundError("edgeplan: no boards/ folder found (installed package or checkout)")


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    arch: str                     # meson cpu_family: aarch64, arm, x86_64
    cpu: str
    march: str
    features: tuple               # EP_CPU_* names the board's CPU has
    cores: int
    ram_mb: int
    npu: str
    c_args: tuple
    cross_file: Optional[Path]    # absolute path, None for a native (host) build
    qemu: tuple                   # command prefix that runs the board's binaries here, () when native
    size_budget: dict = field(default_factory=dict)
    cache_l2_kib: int = 512
    path: Optional[Path] = None

    @property
    def feature_mask(self) -> int:
        """The EP_CPU_* bits of the board's CPU."""
        m = 0
        for f in self.features:
            m |= CPU_FEATURES[f]
        return m

    @property
    def native(self) -> bool:
        return self.cross_file is None

    def target(self):
        """The compiler's kernel-selection target for this board (compiler/passes/select.py).

        aarch64 boards get the packed-GEMM, depthwise and Winograd variants (NEON kernels exist for all
        three) with an im2col budget of half the L2 per pass, Winograd on x86-64's channel and pixel rule
        and weight budget, and fused inverted-residual blocks whose per-thread scratch is half the L2. x86-64 is the compiler's own x86 target.
        armv7 runs the reference kernels, whose fastest forms are variant 0."""
        from .compiler.target import TARGETS, Target
        if self.arch == "x86_64":
            return TARGETS["x86-64"]
        if self.arch == "aarch64":
            return Target(self.name, packed=True, winograd=True, pack_bytes=int(self.l2_kib) * 1024 // 2,
                          threads=max(1, min(int(self.cores), 8)), winograd_budget=0.5,
                          block_bytes=int(self.l2_kib) * 1024 // 2)
        return Target(self.name)

    @property
    def l2_kib(self) -> int:
        return self.cache_l2_kib

    @property
    def required_features(self) -> int:
        """EP_CPU_* bits a plan compiled for this board must require: those of the kernel variants the
        compiler picks that have no portable reference kernel. Every variant in plan format 1.0 has one
        (ISA kernels are chosen at open), so this is 0 and a plan for rpi5 still opens on an rpi4."""
        return 0


def _parse_value(s: str):
    s = s.strip()
    if s in ("true", "false"):
        return s == "true"
    return ast.literal_eval(s)


def _strip_comment(line: str) -> str:
    out, quote = [], None
    for ch in line:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        out.append(ch)
    return "".join(out).strip()


def _mini_toml(text: str) -> dict:
    """The TOML subset the profiles use (tables, strings, ints, bools, one-line arrays), for Python < 3.11."""
    root: dict = {}
    cur = root
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            cur = root.setdefault(line[1:-1].strip(), {})
            continue
        key, sep, val = line.partition("=")
        if not sep:
            raise ValueError(f"bad line: {raw!r}")
        cur[key.strip()] = _parse_value(val)
    return root


def _load_toml(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore
        except ImportError:
            return _mini_toml(path.read_text())
    with open(path, "rb") as f:
        return tomllib.load(f)


def list_boards() -> list:
    """Names of every board profile, sorted."""
    return sorted(p.stem for p in boards_dir().glob("*.toml"))


def load_board(name: str) -> Board:
    """The profile of board `name` (see list_boards()); ValueError for an unknown board."""
    d = boards_dir()
    path = d / f"{name}.toml"
    if not path.is_file():
        raise ValueError(f"unknown board {name!r}; known boards: {', '.join(list_boards())}")
    t = _load_toml(path)
    unknown = [f for f in t.get("features", []) if f not in CPU_FEATURES]
    if unknown:
        raise ValueError(f"{path}: unknown CPU feature(s) {unknown}; known: {sorted(CPU_FEATURES)}")
    cross = t.get("cross_file") or ""
    return Board(
        name=t["name"], description=t.get("description", ""), arch=t["arch"], cpu=t.get("cpu", ""),
        march=t.get("march", ""), features=tuple(t.get("features", [])), cores=int(t.get("cores", 1)),
        ram_mb=int(t.get("ram_mb", 0)), npu=t.get("npu", ""), c_args=tuple(t.get("c_args", [])),
        cross_file=(d / cross).resolve() if cross else None, qemu=tuple(t.get("qemu", [])),
        size_budget=dict(t.get("size_budget", {})), cache_l2_kib=int(t.get("l2_kib", 512)), path=path)


def ram_check(board: Board, plan, runtime_bytes: Optional[int] = None) -> tuple:
    """(fits, one-line report) of a plan on the board: plan bytes (weights used in place + tables) +
    arena + runtime against the board's RAM less `ram_reserved_mb` (profile key, default 0: the OS's
    share). runtime_bytes defaults to the measured size of the board's all-kernels runtime in
    sizebudget/baseline.json (.text+.rodata+.data+.bss), else the profile's size_budget.runtime_bytes."""
    r = plan.report
    plan_b = int(r.get("plan_bytes", len(plan.to_bytes())))
    arena = int(r.get("arena_bytes", 0))
    rt_src = "given"
    if runtime_bytes is None:
        runtime_bytes, rt_src = _measured_runtime(board.name), "measured"
    if runtime_bytes is None:
        runtime_bytes, rt_src = board.size_budget.get("runtime_bytes", 0), "budget"
    rt = int(runtime_bytes)
    reserved = 0
    if board.path is not None:
        reserved = int(_load_toml(board.path).get("ram_reserved_mb", 0))
    ram = (board.ram_mb - reserved) * 1024 * 1024
    need = plan_b + arena + rt
    mib = 1024 * 1024
    text = (f"RAM on {board.name}: plan {plan_b / mib:.2f} MiB (weights {int(r.get('const_bytes', 0)) / mib:.2f}) "
            f"+ arena {arena / mib:.2f} MiB + runtime {rt / 1024:.0f} KiB ({rt_src}) = {need / mib:.2f} MiB of "
            f"{ram / mib:.0f} MiB{' usable' if reserved else ''} ({100 * need / ram if ram else float('inf'):.1f} %)")
    return need <= ram, text


def _measured_runtime(name: str) -> Optional[int]:
    """The all-kernels runtime's bytes for board `name` from sizebudget's baseline, when it is around."""
    import json
    here = Path(__file__).resolve().parent
    for p in (here.parents[1] / "sizebudget" / "baseline.json", here.parent / "sizebudget" / "baseline.json"):
        try:
            e = json.loads(p.read_text()).get(f"{name}/all")
        except (OSError, ValueError):
            continue
        if e:
            return int(e["size"]) + int(e.get("bss", 0))
    return None
