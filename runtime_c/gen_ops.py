#!/usr/bin/env python3
"""Reads the op table (runtime_c/ops.def) and writes what is generated from it:

  - the numbered opcode and variant block of include/edgeplan/plan_format.h (between the
    EP_OPS_BEGIN / EP_OPS_END markers), which the C code and cffi read;
  - pyapi/edgeplan/compiler/optable.py, the compiler's view of the table (plain data).

    python3 runtime_c/gen_ops.py           rewrite both
    python3 runtime_c/gen_ops.py --check   exit 1 naming the files that are not current

`read_ops` is also what gen_config.py (meson configure) uses to learn the ops, variants and families.
The C side reads ops.def directly as X-macros (src/ops_info.c, kernels/ep_ops.h, kernels/*_table.c)."""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OPS_DEF = HERE / "ops.def"
HEADER = HERE / "include" / "edgeplan" / "plan_format.h"
OPTABLE = ROOT / "pyapi" / "edgeplan" / "compiler" / "optable.py"

FLAGS = {"EP_OPF_INPLACE": 1, "EP_OPF_DATA_DEP": 2, "EP_OPF_OUT_DECLARED": 4, "EP_OPF_CONTROL": 8, "EP_OPF_VIEW": 16, "EP_OPF_LAYOUT": 32}
VARIADIC = 0xFFFF
MAX_OP_OUTPUTS = 64   # EP_MAX_OP_OUTPUTS (kernels/ep_kernel.h)
ISAS = ("ref", "x86", "neon", "neon_dotprod")   # neon_dotprod: SDOT kernels, bound by the neon table on EP_CPU_DOTPROD


@dataclass
class Op:
    NAME: str
    name: str
    code: int
    params: str
    min_in: int
    max_in: int
    min_out: int
    max_out: int
    flags: int
    family: str
    since: int
    variants: dict = field(default_factory=lambda: {"default": 0})   # name -> number
    kernels: list = field(default_factory=list)                      # (isa, variant, fn)


class OpsDefError(ValueError):
    pass


def _int(tok: str, where: str) -> int:
    tok = tok.strip()
    if tok == "EP_VARIADIC":
        return VARIADIC
    if tok == "EP_MAX_OP_OUTPUTS":
        return MAX_OP_OUTPUTS
    if not re.fullmatch(r"\d+", tok):
        raise OpsDefError(f"{where}: {tok!r} is not a number")
    return int(tok)


def _flags(tok: str, where: str) -> int:
    v = 0
    for f in (x.strip() for x in tok.split("|")):
        if f == "0":
            continue
        if f not in FLAGS:
            raise OpsDefError(f"{where}: unknown flag {f!r} (known: {', '.join(FLAGS)})")
        v |= FLAGS[f]
    return v


def read_ops(path=OPS_DEF, text: str | None = None) -> dict:
    """{name: Op} in table order (from ops.def at path, or its text), checked: codes and names unique,
    variants numbered in order, kernels of known variants, a ref kernel for every variant."""
    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    body = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    ops: dict = {}
    by_upper: dict = {}
    for n, line in enumerate(body.splitlines(), 1):
        line = line.strip()
        m = re.fullmatch(r"EP_(OP|VARIANT|KERNEL)\((.*)\)", line)
        if not m:
            if line and not line.startswith("#"):
                raise OpsDefError(f"ops.def line {n}: not a row: {line!r}")
            continue
        kind, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        where = f"ops.def line {n}"
        if kind == "OP":
            if len(args) != 11:
                raise OpsDefError(f"{where}: EP_OP takes 11 arguments, got {len(args)}")
            op = Op(args[0], args[1], _int(args[2], where), args[3], _int(args[4], where), _int(args[5], where),
                    _int(args[6], where), _int(args[7], where), _flags(args[8], where), args[9],
                    _int(args[10], where))
            if op.name.upper() != op.NAME:
                raise OpsDefError(f"{where}: {op.NAME} and {op.name} must be the same name")
            if op.name in ops or any(o.code == op.code for o in ops.values()):
                raise OpsDefError(f"{where}: op {op.name} or code {op.code} is already in the table")
            if op.code < 1 or op.min_in > op.max_in or op.min_out > op.max_out or op.max_out > MAX_OP_OUTPUTS:
                raise OpsDefError(f"{where}: {op.name}: bad code or arity")
            ops[op.name] = by_upper[op.NAME] = op
        else:
            need = 3 if kind == "VARIANT" else 4
            if len(args) != need:
                raise OpsDefError(f"{where}: EP_{kind} takes {need} arguments, got {len(args)}")
            upper = args[0] if kind == "VARIANT" else args[1]
            op = by_upper.get(upper)
            if op is None:
                raise OpsDefError(f"{where}: EP_{kind} of {upper}, which no EP_OP row above defines")
            if kind == "VARIANT":
                v, num = args[1].lower(), _int(args[2], where)
                if v in op.variants or num in op.variants.values() or num != len(op.variants):
                    raise OpsDefError(f"{where}: {op.name} variant {v} = {num}: variants are numbered 1, 2, ...")
                op.variants[v] = num
            else:
                isa, v, fn = args[0], args[2].lower(), args[3]
                if isa not in ISAS or v not in op.variants:
                    raise OpsDefError(f"{where}: kernel {fn}: unknown isa {isa!r} or variant {v!r} of {op.name}")
                if any(k[0] == isa and k[1] == v for k in op.kernels):
                    raise OpsDefError(f"{where}: {op.name} {v} has two {isa} kernels")
                op.kernels.append((isa, v, fn))
    for op in ops.values():
        missing = [v for v in op.variants if not any(k[0] == "ref" and k[1] == v for k in op.kernels)]
        if missing:
            raise OpsDefError(f"ops.def: {op.name} variant(s) {', '.join(missing)} have no ref kernel "
                              f"(every variant has a portable fallback)")
    return ops


def families(ops: dict) -> dict:
    out: dict = {}
    for op in ops.values():
        out.setdefault(op.family, []).append(op.name)
    return out


# ---------------------------------------------------------------- plan_format.h block

BEGIN = "/* EP_OPS_BEGIN: generated from runtime_c/ops.def by runtime_c/gen_ops.py; do not edit */"
END = "/* EP_OPS_END */"


def header_block(ops: dict) -> str:
    rows = sorted(ops.values(), key=lambda o: o.code)
    lines = [BEGIN, "/* opcodes (ep_op_rec.opcode) */"]
    lines += [f"#define EP_OP_{o.NAME} {o.code}" for o in rows]
    lines.append(f"#define EP_OP_COUNT {max(o.code for o in rows) + 1}         /* one past the last opcode */")
    lines.append("/* kernel variants (ep_op_rec.variant): DEFAULT (0) is every op's plain layout; the others'")
    lines.append(" * layouts are described below */")
    lines.append("#define EP_VARIANT_DEFAULT 0")
    lines.append(f"#define EP_MAX_VARIANTS {max(4, max(len(o.variants) for o in rows))}")
    for o in rows:
        for v, num in o.variants.items():
            lines.append(f"#define EP_{o.NAME}_VARIANT_{v.upper()} {num}")
    lines.append(END)
    return "\n".join(lines)


def render_header(text: str, ops: dict) -> str:
    i, j = text.find("/* EP_OPS_BEGIN"), text.find(END)
    if i < 0 or j < i:
        raise OpsDefError(f"{HEADER.name}: the EP_OPS_BEGIN / EP_OPS_END markers are missing")
    return text[:i] + header_block(ops) + text[j + len(END):]


# ---------------------------------------------------------------- compiler/optable.py

def render_optable(ops: dict) -> str:
    out = ['"""The op table as the compiler sees it: generated from runtime_c/ops.def by runtime_c/gen_ops.py',
           '(do not edit; tests/py/test_optable.py checks it is current). Per runtime op: its opcode constant',
           'and C params struct (plan_format.h), arity, flags, family, variants and the plan minor version',
           'that introduced it."""',
           "from __future__ import annotations", "", "from typing import NamedTuple", "", "",
           "class OpSpec(NamedTuple):",
           "    code: int",
           "    const: str              # EP_OP_* name in plan_format.h",
           "    params: str             # C params struct",
           "    min_in: int",
           "    max_in: int             # 0xFFFF: variadic",
           "    min_out: int",
           "    max_out: int",
           "    inplace: bool           # an output may exactly alias an input",
           "    data_dep: bool          # the kernel sets its outputs' variable dims",
           "    out_declared: bool      # the shape function takes output extents from the declared output",
           "    control: bool           # run by the executor itself (IF / ELSE)",
           "    view: bool              # output 0 is a view of input 0 (the kernel moves no data)",
           "    family: str",
           "    since: int              # plan minor version that introduced the opcode",
           "    variants: tuple         # variant names by number (0: default)",
           "    kernels: tuple          # (isa, variant, C function)",
           "", "", "OPS = {"]
    for o in ops.values():
        variants = tuple(sorted(o.variants, key=o.variants.get))
        out.append(f"    {o.name!r}: OpSpec({o.code}, 'EP_OP_{o.NAME}', {o.params!r}, {o.min_in}, {o.max_in}, "
                   f"{o.min_out}, {o.max_out}, {bool(o.flags & 1)}, {bool(o.flags & 2)}, {bool(o.flags & 4)}, {bool(o.flags & 8)}, {bool(o.flags & 16)}, "
                   f"{o.family!r}, {o.since},")
        out.append(f"                  {variants!r},")
        out.append(f"                  {tuple(o.kernels)!r}),")
    out.append("}")
    out += ["", "FAMILIES = {"]
    out += [f"    {f!r}: {tuple(names)!r}," for f, names in families(ops).items()]
    out += ["}", ""]
    return "\n".join(out)


def outputs(ops: dict) -> dict:
    return {HEADER: render_header(HEADER.read_text(encoding="utf-8"), ops), OPTABLE: render_optable(ops)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="only check that the generated files are current")
    a = p.parse_args(argv)
    try:
        ops = read_ops()
        want = outputs(ops)
    except OpsDefError as e:
        print(f"gen_ops.py: {e}", file=sys.stderr)
        return 1
    stale = [path for path, text in want.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]
    if a.check:
        for path in stale:
            print(f"gen_ops.py: {path.relative_to(ROOT)} is not current: run python3 runtime_c/gen_ops.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(want[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
