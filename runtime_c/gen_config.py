#!/usr/bin/env python3
"""Writes ep_config.h: which ops and kernel variants this runtime build includes (meson runs it at
configure time; see meson.options `kernels` and `selective`).

The inventory is read from plan_format.h (EP_OP_<NAME> opcodes and EP_<OP>_VARIANT_<NAME> variants,
plus variant 0, DEFAULT, for every op), so a new op or variant needs no edit here. For each op the
header defines EP_HAVE_OP_<OP> (its shape function / opcode table entry) and for each variant
EP_HAVE_<OP>_<VARIANT> (its kernel table entries, ref and ISA), each 0 or 1. Nothing else reads
the selection: an excluded kernel is still compiled but referenced by no table, so the linker's
--gc-sections drops it.

Selection syntax (-Dkernels): "all", "none", or a comma list of items, each an op ("conv2d"), an
op and variant ("conv2d:packed"), or a family ("conv", "linear", "pool", "elementwise", "layout",
"resize", "softmax_reduce"). A selective file (-Dselective, written by `edgeplan compile
--ops-out`) has one "<op> <dtype> <variant>" line per kernel a plan needs; '#' starts a comment.
Selecting a variant also selects its op; every kernel here has a portable ref version, which the
table keeps as the fallback of the ISA one.
"""
from __future__ import annotations

import argparse
import re
import sys

# Families: the src/ops/ files' grouping, for -Dkernels convenience and the size report.
FAMILIES = {
    "conv": ["conv2d", "conv_transpose2d"],
    "linear": ["gemm", "matmul"],
    "pool": ["maxpool", "avgpool", "global_avgpool"],
    "elementwise": ["unary", "binary"],
    "layout": ["concat", "split", "slice", "transpose", "pad", "gather", "copy"],
    "resize": ["resize"],
    "softmax_reduce": ["softmax", "reduce"],
}


def inventory(header_text: str) -> dict:
    """{op: [variant, ...]} (lower case, DEFAULT first) from plan_format.h."""
    ops = {}
    for m in re.finditer(r"^#define EP_OP_(\w+)\s+(\d+)", header_text, re.M):
        if m.group(1) != "COUNT":
            ops[m.group(1).lower()] = ["default"]
    for m in re.finditer(r"^#define EP_(\w+?)_VARIANT_(\w+)\s+(\d+)", header_text, re.M):
        op = m.group(1).lower()
        if op in ops:
            ops[op].append(m.group(2).lower())
    return ops


FEATURES = ("dynamic",)   # runtime features a plan may need beyond its kernels ("feature <name>" lines)


def parse_features(kernels: str, selective_text: str | None) -> set:
    """Features built in: a selective build has those its ops file names; -Dkernels=none has none (no op
    could use them); any other -Dkernels has all."""
    if selective_text is not None:
        out = set()
        for raw in selective_text.splitlines():
            line = raw.split("#", 1)[0].split()
            if len(line) >= 2 and line[0].lower() == "feature" and line[1].lower() in FEATURES:
                out.add(line[1].lower())
        return out
    items = [s.strip().lower() for s in kernels.split(",") if s.strip()]
    return set() if items in (["none"], []) else set(FEATURES)


def parse_selection(kernels: str, selective_text: str | None, inv: dict) -> set:
    """The set of (op, variant) pairs selected; ValueError naming an unknown item."""
    sel = set()
    if selective_text is not None:
        for n, raw in enumerate(selective_text.splitlines(), 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            if line[0].lower() == "feature":
                if len(line) < 2 or line[1].lower() not in FEATURES:
                    raise ValueError(f"line {n}: unknown feature {' '.join(line[1:])!r}; known: {', '.join(FEATURES)}")
                continue
            op = line[0].lower()
            variant = line[2].lower() if len(line) > 2 else None
            _add(sel, op, variant, inv, f"line {n}")
        return sel
    items = [s.strip().lower() for s in kernels.split(",") if s.strip()]
    if items == ["all"]:
        return {(op, v) for op, vs in inv.items() for v in vs}
    if items == ["none"] or not items:
        return set()
    for item in items:
        op, _, variant = item.partition(":")
        if op in FAMILIES and not variant:
            for o in FAMILIES[op]:
                if o in inv:
                    _add(sel, o, None, inv, item)
            continue
        _add(sel, op, variant or None, inv, item)
    return sel


def _add(sel: set, op: str, variant, inv: dict, where: str) -> None:
    if op not in inv:
        raise ValueError(f"{where}: unknown op {op!r}; known: {', '.join(sorted(inv))} "
                         f"or families {', '.join(sorted(FAMILIES))}")
    if variant is None:
        sel.update((op, v) for v in inv[op])
        return
    if variant.isdigit() and int(variant) < len(inv[op]):
        variant = inv[op][int(variant)]
    if variant not in inv[op]:
        raise ValueError(f"{where}: op {op!r} has no variant {variant!r}; known: {', '.join(inv[op])}")
    sel.add((op, variant))


def render(inv: dict, sel: set, origin: str, features=frozenset(FEATURES)) -> str:
    lines = ["/* Generated by runtime_c/gen_config.py at meson configure time: do not edit.",
             f" * Selection: {origin} */",
             "#ifndef EP_CONFIG_H", "#define EP_CONFIG_H", ""]
    ops_on = {op for op, _ in sel}
    for op, variants in inv.items():
        lines.append(f"#define EP_HAVE_OP_{op.upper()} {int(op in ops_on)}")
        for v in variants:
            lines.append(f"#define EP_HAVE_{op.upper()}_{v.upper()} {int((op, v) in sel)}")
    lines += ["", f"#define EP_CONFIG_N_KERNELS {len(sel)}"]
    lines += [f"#define EP_HAVE_{f.upper()} {int(f in features)}" for f in FEATURES]
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--header", required=True, help="plan_format.h")
    p.add_argument("--kernels", default="all")
    p.add_argument("--selective", default="", help="ops file from `edgeplan compile --ops-out` (overrides --kernels)")
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args(argv)
    with open(a.header, encoding="utf-8") as f:
        inv = inventory(f.read())
    text = None
    if a.selective:
        with open(a.selective, encoding="utf-8") as f:
            text = f.read()
    try:
        sel = parse_selection(a.kernels, text, inv)
    except ValueError as e:
        src = a.selective or "-Dkernels"
        print(f"gen_config.py: {src}: {e}", file=sys.stderr)
        return 1
    origin = f"selective={a.selective}" if a.selective else f"kernels={a.kernels}"
    out = render(inv, sel, origin, parse_features(a.kernels, text))
    try:
        with open(a.output, encoding="utf-8") as f:
            if f.read() == out:
                return 0      # unchanged: keep the timestamp so nothing rebuilds
    except OSError:
        pass
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
