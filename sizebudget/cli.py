"""python -m edgeplan.sizebudget / edgeplan size.

    python -m edgeplan.sizebudget [check] [--board B ...] [--config C ...] [--json] [--update-baseline]
        builds the size probes (default boards: generic-aarch64 and x86-64; configs core, mobilenetv2,
        all, speech), prints the per-component tables and fails (exit 1) on a budget breach or a ratchet failure.
    python -m edgeplan.sizebudget measure FILE.so [--objects DIR|LIB.a|X.o ...] [--json] [--budget BYTES]
        the table of any linked ELF.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from . import BASELINE, BUDGETS
from .budgets import (check_budget, check_ratchet, load_baseline, load_toml, parse_threshold,
                      write_baseline)
from .elfsize import Report, group_of, measure

GROUP_ORDER = ["core", "threads", "dynamic", "profile", "shape", "ref", "neon", "neon-fp16", "neon-dotprod", "x86", "delegate", "tool", "other"]
COLS = ("text", "rodata", "data", "bss", "size")


def format_table(title: str, rep: Report, budget=None, base=None) -> str:
    w = max([len(c) for c in rep.components] + [24]) + 2
    lines = [title, f"  {'component':<{w}}" + "".join(f"{c:>9}" for c in COLS)]

    def row(name, v, mark=""):
        return f"  {name:<{w}}" + "".join(f"{v.get(c, 0):>9,}" for c in COLS) + mark

    groups = rep.groups()
    order = sorted(groups, key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else 99, g))
    for g in order:
        comps = sorted(((c, v) for c, v in rep.components.items() if group_of(c) == g), key=lambda kv: -kv[1]["size"])
        for c, v in comps:
            lines.append(row(c, v))
        if len(comps) > 1:
            lines.append(row(f"= {g}", groups[g]))
    t = rep.totals
    extra = []
    if budget:
        extra.append(f"budget {budget:,} ({100 * t['size'] / budget:.0f} %)")
    if base:
        d = t["size"] - int(base.get("size", 0))
        extra.append(f"baseline {int(base.get('size', 0)):,} ({d:+,})")
    lines.append(row("TOTAL .text+.rodata+.data", t) + ("   " + ", ".join(extra) if extra else ""))
    disk = f"stripped file {rep.stripped_bytes:,} bytes; " if rep.stripped_bytes else ""
    lines.append(f"  ({disk}not counted: {t['other']:,} bytes of .eh_frame, dynamic-linking tables and headers)")
    return "\n".join(lines)


def _boards(names):
    from .probes import CI_BOARDS, _edgeplan
    boards_mod, _ = _edgeplan()
    if not names:
        names = list(CI_BOARDS)
    if names == ["all"]:
        names = boards_mod.list_boards()
    return [boards_mod.load_board(n) for n in names]


def cmd_check(a) -> int:
    from .probes import CONFIGS, ProbeError, build_probe, source_root
    budgets = load_toml(Path(a.budgets)) if a.budgets else {}
    baseline = load_baseline(Path(a.baseline)) if a.baseline else {}
    threshold = parse_threshold(a.threshold)
    configs = a.config or list(CONFIGS)
    # the default build folder is per source tree: a folder configured for another checkout would
    # otherwise be rebuilt from that checkout and measure the wrong code
    tree = hashlib.sha1(str(source_root().resolve()).encode()).hexdigest()[:10]
    root = Path(a.build_root or os.environ.get("SIZEBUDGET_BUILD")
                or Path(tempfile.gettempdir()) / f"edgeplan-size-{tree}")
    reports, findings = {}, []
    try:
        boards = _boards(a.board)
    except ValueError as e:
        print(f"sizebudget: {e}", file=sys.stderr)
        return 2
    for b in boards:
        for c in configs:
            probe = f"{b.name}/{c}"
            t = time.perf_counter()
            try:
                rep = build_probe(b, c, root)
            except ProbeError as e:
                print(f"sizebudget: {probe}: {e}", file=sys.stderr)
                return 2
            reports[probe] = rep
            limits = budgets.get(probe, {})
            findings += check_budget(probe, rep, limits)
            if not a.update_baseline:
                findings += check_ratchet(probe, rep, baseline.get(probe), threshold)
            if not a.json:
                print(format_table(f"{probe}: {rep.path} ({rep.arch}, built in {time.perf_counter() - t:.1f} s)",
                                   rep, limits.get("size"), baseline.get(probe)))
                print()
    missing_budget = [p for p in reports if p not in budgets]
    if a.update_baseline:
        write_baseline(Path(a.baseline), reports, baseline)
    if a.json:
        print(json.dumps({"probes": {p: r.to_json() for p, r in reports.items()},
                          "findings": [f.__dict__ for f in findings]}, indent=1))
    else:
        if missing_budget:
            print(f"note: no budget in {a.budgets} for {', '.join(missing_budget)}")
        if a.update_baseline:
            print(f"baseline updated: {a.baseline} ({len(reports)} probe(s))")
        for f in findings:
            print(f"FAIL [{f.kind}] {f.message}")
        if not findings:
            print(f"ok: {len(reports)} probe(s) within budget" + ("" if a.update_baseline else " and baseline"))
    return 1 if findings else 0


def cmd_measure(a) -> int:
    rep = measure(a.file, a.objects or [])
    findings = []
    if a.budget:
        findings = check_budget(Path(a.file).name, rep, {"size": a.budget})
    if a.json:
        print(json.dumps(dict(rep.to_json(), findings=[f.__dict__ for f in findings]), indent=1))
    else:
        print(format_table(f"{a.file} ({rep.arch})", rep, a.budget))
        for f in findings:
            print(f"FAIL [{f.kind}] {f.message}")
    return 1 if findings else 0


def build_parser(prog="sizebudget") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Binary-size budgets of the edgeplan runtime (docs/size.md)")
    sub = p.add_subparsers(dest="cmd")
    c = sub.add_parser("check", help="build the size probes, print the tables, check budgets and the baseline")
    add_check_args(c)
    m = sub.add_parser("measure", help="per-component table of a linked ELF")
    m.add_argument("file")
    m.add_argument("--objects", nargs="*", help="object files, folders of them or static archives it was linked from")
    m.add_argument("--budget", type=int, help="fail when .text+.rodata+.data exceeds this many bytes")
    m.add_argument("--json", action="store_true")
    m.set_defaults(fn=cmd_measure)
    return p


def add_check_args(c) -> None:
    c.add_argument("--board", action="append", help="board profile (boards/*.toml), repeatable, or 'all'; "
                   "default: generic-aarch64 and x86-64")
    c.add_argument("--config", action="append", choices=["core", "mobilenetv2", "mobilenetv2-int8", "all", "speech"],
                   help="probe configuration, repeatable; default: all four")
    c.add_argument("--budgets", default=str(BUDGETS), help="budgets file ('' for none)")
    c.add_argument("--baseline", default=str(BASELINE), help="baseline file ('' for no ratchet)")
    c.add_argument("--threshold", default="64,1%", help="allowed growth over the baseline: bytes and/or percent")
    c.add_argument("--update-baseline", action="store_true", help="rewrite the baseline with these measurements")
    c.add_argument("--build-root", help="where the probe builds go (default $SIZEBUDGET_BUILD or /tmp/edgeplan-size-<tree hash>)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(fn=cmd_check)


def main(argv=None, prog="sizebudget") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("check", "measure", "-h", "--help"):
        argv = ["check"] + argv
    a = build_parser(prog).parse_args(argv)
    return a.fn(a)
