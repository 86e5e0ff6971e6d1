"""Hard limits (budgets.toml) and the ratchet (baseline.json).

budgets.toml has one table per board x probe configuration:

    [generic-aarch64.core]
    size = 16384          # .text + .rodata + .data of the stripped probe, bytes
    core = 14336          # optional caps per component group ("core", "neon", ...) or component ("neon/conv")

baseline.json holds the last accepted measurement of every probe ({"<board>/<config>": {"size": N,
"components": {component: size}}}); a probe that grew past the threshold (max(64 bytes, 1 %) by
default) fails, naming the components that grew. `--update-baseline` rewrites it."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .elfsize import Report, group_of


def load_toml(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the subset the board profiles use
        try:
            import tomli as tomllib  # type: ignore
        except ImportError:
            from edgeplan.boards import _mini_toml
            return _flatten(_mini_toml(Path(path).read_text()))
    with open(path, "rb") as f:
        return _flatten(tomllib.load(f))


def _flatten(t: dict) -> dict:
    """{"board/config": {key: bytes}} from either nested tables or "board.config" keys."""
    out = {}
    for board, v in t.items():
        if "." in board:
            b, c = board.split(".", 1)
            out[f"{b}/{c}"] = dict(v)
            continue
        for config, limits in v.items():
            if isinstance(limits, dict):
                out[f"{board}/{config}"] = dict(limits)
    return out


@dataclass
class Finding:
    probe: str
    kind: str          # "budget" | "ratchet"
    message: str


def top_components(rep: Report, n: int = 5) -> str:
    comps = sorted(rep.components.items(), key=lambda kv: -kv[1]["size"])[:n]
    return ", ".join(f"{c} {v['size']:,}" for c, v in comps)


def check_budget(probe: str, rep: Report, limits: dict) -> list:
    """Findings for every limit of the probe that the report exceeds (each names the component)."""
    out = []
    for key, limit in (limits or {}).items():
        if key == "size":
            if rep.totals["size"] > limit:
                out.append(Finding(probe, "budget",
                                   f"{probe}: {rep.totals['size']:,} bytes (.text+.rodata+.data) > budget {limit:,} "
                                   f"(+{rep.totals['size'] - limit:,}); largest components: {top_components(rep)}"))
            continue
        if "/" in key:
            got = rep.components.get(key, {}).get("size", 0)
        else:
            got = rep.groups().get(key, {}).get("size", 0)
        if got > limit:
            inside = sorted(((c, v["size"]) for c, v in rep.components.items()
                             if c == key or ("/" not in key and group_of(c) == key)), key=lambda kv: -kv[1])[:5]
            out.append(Finding(probe, "budget",
                               f"{probe}: component {key} is {got:,} bytes > budget {limit:,} (+{got - limit:,})"
                               + (f" ({', '.join(f'{c} {s:,}' for c, s in inside)})" if "/" not in key else "")))
    return out


def parse_threshold(s: str):
    """'1%' -> (0, 0.01); '256' -> (256, 0); '64,1%' -> (64, 0.01)."""
    abs_, rel = 0, 0.0
    for part in str(s).split(","):
        part = part.strip()
        if part.endswith("%"):
            rel = float(part[:-1]) / 100
        elif part:
            abs_ = int(part)
    return abs_, rel


def check_ratchet(probe: str, rep: Report, base: dict, threshold=(64, 0.01)) -> list:
    """A finding when the probe grew past max(abs, rel * baseline) bytes, naming what grew."""
    if not base:
        return []
    old = int(base.get("size", 0))
    new = rep.totals["size"]
    allowed = max(threshold[0], int(old * threshold[1]))
    if new - old <= allowed:
        return []
    grew = []
    prev = base.get("components", {})
    for c, v in rep.components.items():
        d = v["size"] - int(prev.get(c, 0))
        if d > 0:
            grew.append((d, c, int(prev.get(c, 0)), v["size"]))
    grew.sort(reverse=True)
    names = "; ".join(f"{c} {a:,} -> {b:,} (+{d:,})" for d, c, a, b in grew[:8])
    return [Finding(probe, "ratchet",
                    f"{probe}: grew {old:,} -> {new:,} bytes (+{new - old:,}, allowed +{allowed:,}); "
                    f"grew: {names or 'no single component'}. If intended, run "
                    f"`python -m edgeplan.sizebudget --update-baseline` and commit sizebudget/baseline.json")]


def load_baseline(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}


def baseline_entry(rep: Report) -> dict:
    return {"size": rep.totals["size"], "text": rep.totals["text"], "rodata": rep.totals["rodata"],
            "data": rep.totals["data"], "bss": rep.totals["bss"],
            "components": {c: v["size"] for c, v in rep.components.items() if v["size"]}}


def write_baseline(path: Path, reports: dict, old: dict | None = None) -> dict:
    """Merges the reports ({probe: Report}) into the baseline file (others kept) and writes it."""
    data = dict(old or {})
    for probe, rep in reports.items():
        data[probe] = baseline_entry(rep)
    Path(path).write_text(json.dumps(dict(sorted(data.items())), indent=1, sort_keys=False) + "\n")
    return data
