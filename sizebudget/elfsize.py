"""Per-component size of a linked ELF (pyelftools only, no binutils).

Totals come from the linked file's section headers. Components come from its symbol table: every
sized FUNC/OBJECT symbol is traced to the object file that defined it (the objects are given as .o
files, folders of them, or static archives; meson's object names keep the source path, e.g.
kernels_neon_conv2d_f32.c.o), and the object's path names the component:

    src/<x>.c                -> core/<x>        (plan loader, session, status, crc32c, cpu, dispatch, ops table)
                                                except optional features: src/pool.c -> threads/pool,
                                                src/shapes_run.c -> dynamic/shapes_run, src/profile.c -> profile/profile,
                                                src/partition.c -> delegate/partition
    src/ops/<x>.c            -> shape/<family>  (shape functions)
    kernels/<isa>/<x>.c      -> <isa>/<family>  (isa: ref, neon, neon-fp16, neon-dotprod, x86)
    delegates/<x>...         -> delegate/<x>

Bytes no symbol covers are anonymous: string literals, switch tables and float constants in
.rodata (spread over the live objects in proportion to their own anonymous .rodata, an estimate),
and alignment padding (other/padding). Symbols from no given object (crt files, libgcc) are other/*.
"""
from __future__ import annotations

import io
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.elffile import ELFFile

from edgeplan.compiler.optable import FAMILIES, OPS

# Output sections -> the categories of the target metric (.text + .rodata + .data). .data.rel.ro holds
# const tables of pointers (opcode table, kernel tables), which are .rodata in a static firmware link.
CATEGORIES = {".text": "text", ".rodata": "rodata", ".data": "data", ".data.rel.ro": "data", ".bss": "bss",
              ".tbss": "bss", ".tdata": "data", ".sdata": "data", ".sbss": "bss"}
METRIC = ("text", "rodata", "data")          # "size" = the sum of these

# kernel and shape-function file stems -> family: the op table's (each op and each family name), and the
# files named after a kernel's technique rather than an op
FAMILY_OF_STEM = {**{name: o.family for name, o in OPS.items()}, **{f: f for f in FAMILIES},
                  "dwconv": "conv", "conv": "conv", "winograd": "conv", "conv_transpose": "conv",
                  "packed": "packed-gemm", "act": "act"}
# runtime features outside the minimal core (their own groups, so the core budget stays the plan loader,
# session and executor): the thread pool, run-time shape resolution for variable dims, the profiler, the
# partitions (DELEGATE ops), the branch checks of control ops, hot swap, signatures, arena groups
OPTIONAL_CORE = {"pool": "threads/pool", "shapes_run": "dynamic/shapes_run", "profile": "profile/profile",
                 "partition": "delegate/partition", "swap": "swap/swap", "sign": "sign/sign",
                 "sha512": "sign/sha512", "ed25519": "sign/ed25519", "sign_none": "sign/none",
                 "group": "group/group", "branches": "control/branches"}
_DTYPE_SUFFIX = re.compile(r"_(f32|f16|s8|u8|s16|s32|any|i8|q8)$")
_CORE_SUFFIX = re.compile(r"_(x86|aarch64|arm|generic|neon)$")


def component_of_object(obj: str) -> str:
    """Component name of an object file path (meson-mangled or a plain path)."""
    name = Path(obj).name
    name = re.sub(r"\.(o|obj)$", "", name)
    name = re.sub(r"\.(c|cc|cpp|S|s)$", "", name)
    # meson: "<target>.p/<path with / replaced by _>.c.o"; a plain build keeps folders in the path
    full = (str(Path(obj).parent).replace("\\", "/") + "/" + name).replace("/", "_")
    m = re.search(r"(?:^|_)kernels_(ref|neon|x86|arm)_(\w+)$", full)
    if m:
        isa, stem = m.group(1), m.group(2)
        if stem.endswith("_dotprod"):
            isa, stem = "neon-dotprod", stem[: -len("_dotprod")]
        elif stem.endswith("_fp16"):
            isa, stem = "neon-fp16", stem[: -len("_fp16")]
        return f"{isa}/{_family(stem)}"
    m = re.search(r"(?:^|_)src_ops_(\w+)$", full)
    if m and m.group(1) != "info":                    # src/ops_info.c is the core's opcode table
        return f"shape/{_family(m.group(1))}"
    m = re.search(r"(?:^|_)delegates_(\w+)$", full)
    if m:
        return f"delegate/{m.group(1).split('_')[0]}"
    m = re.search(r"(?:^|_)speech_(\w+)$", full)
    if m:
        return f"speech/{m.group(1)}"
    m = re.search(r"(?:^|_)tools_(\w+)$", full)
    if m:
        return f"tool/{m.group(1)}"
    m = re.search(r"(?:^|_)src_(\w+)$", full)
    if m:
        stem = _CORE_SUFFIX.sub('', m.group(1))
        return OPTIONAL_CORE.get(stem, f"core/{stem}")
    return f"other/{name}"


def _family(stem: str) -> str:
    s = _DTYPE_SUFFIX.sub("", stem)
    if s.endswith("_table") or s == "table":
        return "table"
    if s in FAMILY_OF_STEM:
        return FAMILY_OF_STEM[s]
    head = s.split("_")[0]
    return FAMILY_OF_STEM.get(head, s)


def group_of(component: str) -> str:
    return component.split("/", 1)[0]


# ---------------------------------------------------------------- object files

@dataclass
class ObjInfo:
    name: str
    component: str
    globals: set = field(default_factory=set)
    locals: set = field(default_factory=set)
    anon_rodata: int = 0                          # .rodata* bytes no symbol covers (strings, tables)


def _read_archive(data: bytes):
    """(member name, bytes) of a System V / GNU ar archive."""
    if not data.startswith(b"!<arch>\n"):
        raise ValueError("not an ar archive")
    pos, longnames = 8, b""
    while pos + 60 <= len(data):
        hdr = data[pos:pos + 60]
        name = hdr[:16].decode("ascii", "replace").rstrip()
        size = int(hdr[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name in ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            continue
        if name == "//":
            longnames = body
            continue
        if name.startswith("/") and name[1:].isdigit():
            off = int(name[1:])
            end = longnames.find(b"\n", off)
            name = longnames[off:end].decode("utf-8", "replace")
        yield name.rstrip("/"), body


def _iter_objects(paths):
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in sorted(p.rglob("*.o")) + sorted(p.rglob("*.obj")) + sorted(p.rglob("*.a")):
                yield from _iter_objects([f])
        elif p.suffix == ".a":
            data = p.read_bytes()
            # thin archives list paths instead of holding members
            if data.startswith(b"!<thin>\n"):
                continue
            for name, body in _read_archive(data):
                yield f"{p.stem}.a.p/{name}", body
        elif p.is_file():
            yield str(p), p.read_bytes()


def read_objects(paths) -> list:
    objs = []
    for name, data in _iter_objects(paths):
        try:
            elf = ELFFile(io.BytesIO(data))
        except Exception:
            continue
        comp = component_of_object(name)
        info = ObjInfo(name=name, component=comp)
        sym = elf.get_section_by_name(".symtab")
        covered = defaultdict(int)
        if sym is not None:
            for s in sym.iter_symbols():
                t = s["st_info"]["type"]
                shndx = s["st_shndx"]
                if t not in ("STT_FUNC", "STT_OBJECT") or not isinstance(shndx, int) or not s.name:
                    continue
                (info.locals if s["st_info"]["bind"] == "STB_LOCAL" else info.globals).add(s.name)
                if s["st_size"]:
                    covered[shndx] += s["st_size"]
        for i, sec in enumerate(elf.iter_sections()):
            if sec.name.startswith(".rodata") and sec["sh_type"] == "SHT_PROGBITS":
                info.anon_rodata += max(0, sec["sh_size"] - covered.get(i, 0))
        objs.append(info)
    return objs


# ---------------------------------------------------------------- the linked file

@dataclass
class Report:
    path: str
    arch: str
    sections: dict                                # output section -> bytes (allocated sections)
    totals: dict                                  # text/rodata/data/bss/size/other
    components: dict                              # component -> {text, rodata, data, bss, size}
    file_bytes: int = 0
    stripped_bytes: int = 0

    def to_json(self) -> dict:
        return dict(path=self.path, arch=self.arch, file_bytes=self.file_bytes, stripped_bytes=self.stripped_bytes,
                    totals=self.totals, sections=self.sections, components=self.components)

    def groups(self) -> dict:
        g: dict = defaultdict(lambda: dict.fromkeys(("text", "rodata", "data", "bss", "size"), 0))
        for c, v in self.components.items():
            for k in g[group_of(c)]:
                g[group_of(c)][k] += v[k]
        return dict(g)


def _empty():
    return dict.fromkeys(("text", "rodata", "data", "bss"), 0)


def measure(elf_path, objects=()) -> Report:
    """Sizes of a linked ELF and their split over components (objects: .o / .a / folders)."""
    elf_path = Path(elf_path)
    if not objects and (elf_path.parent / (elf_path.name + ".p")).is_dir():   # meson's object folder
        objects = [elf_path.parent / (elf_path.name + ".p")]
    objs = read_objects(objects) if objects else []
    by_global: dict = defaultdict(list)
    by_local: dict = defaultdict(list)
    for o in objs:
        for n in o.globals:
            by_global[n].append(o)
        for n in o.locals:
            by_local[n].append(o)
    with open(elf_path, "rb") as f:
        elf = ELFFile(f)
        arch = elf.get_machine_arch()
        secs = list(elf.iter_sections())
        sections, cat_of_idx = {}, {}
        for i, s in enumerate(secs):
            if not (s["sh_flags"] & 0x2) or not s.name:       # SHF_ALLOC
                continue
            sections[s.name] = sections.get(s.name, 0) + s["sh_size"]
            if s.name in CATEGORIES:
                cat_of_idx[i] = CATEGORIES[s.name]
        totals = _empty()
        for name, size in sections.items():
            if name in CATEGORIES:
                totals[CATEGORIES[name]] += size
        totals["size"] = sum(totals[k] for k in METRIC)
        totals["other"] = sum(v for k, v in sections.items() if k not in CATEGORIES)

        # symbols, grouped by the STT_FILE entry that precedes them (locals of one source file)
        syms, groups, cur = [], defaultdict(set), (0, "")
        symtab = elf.get_section_by_name(".symtab")
        if symtab is not None:
            for s in symtab.iter_symbols():
                t = s["st_info"]["type"]
                if t == "STT_FILE":
                    cur = (cur[0] + 1, s.name)
                    continue
                shndx = s["st_shndx"]
                if t not in ("STT_FUNC", "STT_OBJECT") or not isinstance(shndx, int) or shndx not in cat_of_idx:
                    continue
                if not s["st_size"]:
                    continue
                local = s["st_info"]["bind"] == "STB_LOCAL"
                syms.append((s.name, s["st_value"], s["st_size"], shndx, local, cur))
                if local:
                    groups[cur].add(s.name)
        file_bytes = elf_path.stat().st_size

    comps: dict = defaultdict(_empty)
    seen = set()
    live = set()
    for name, addr, size, shndx, local, fname in syms:
        key = (addr, size, shndx)
        if key in seen:
            continue
        seen.add(key)
        obj = _owner(name, local, fname, groups, by_global, by_local)
        if obj is not None:
            comp = obj.component
            live.add(obj.name)
        else:
            comp = _component_of_symbol(name) or _other_component(fname[1])
        comps[comp][cat_of_idx[shndx]] += size

    # anonymous bytes: .rodata spread over live objects by their anonymous .rodata; the rest is padding
    for cat in ("text", "rodata", "data", "bss"):
        gap = totals[cat] - sum(c[cat] for c in comps.values())
        if gap <= 0:
            continue
        if cat == "rodata" and objs:
            weights = {o.component: 0 for o in objs}
            for o in objs:
                if o.name in live:
                    weights[o.component] += o.anon_rodata
            wsum = sum(weights.values())
            if wsum:
                share = min(gap, wsum)
                given = 0
                for c, w in sorted(weights.items()):
                    n = share * w // wsum
                    if n:
                        comps[c][cat] += n
                        given += n
                gap -= given
        if gap > 0:
            comps["other/padding" if cat != "rodata" or not objs else "other/anonymous"][cat] += gap
    out = {}
    for c, v in sorted(comps.items()):
        v = dict(v)
        v["size"] = sum(v[k] for k in METRIC)
        out[c] = v
    return Report(path=str(elf_path), arch=arch, sections=sections, totals=totals, components=out,
                  file_bytes=file_bytes)


def _owner(name, local, file_group, groups, by_global, by_local):
    fname = file_group[1]
    cands = by_global.get(name) or []
    if len(cands) == 1:
        return cands[0]
    if not cands:
        cands = by_local.get(name) or []
    if not cands:
        return None
    if len(cands) == 1:
        return cands[0]
    # several objects define a static of this name (pk_tile in ref/ and neon/ packed_f32.c): the
    # one whose statics best match the STT_FILE group the symbol sits in
    same_src = [o for o in cands if fname and o.name.endswith(fname + ".o")] or cands
    group = groups.get(file_group, set())
    return max(same_src, key=lambda o: (len(o.locals & group) - len(group - o.locals - o.globals), o.name))


_SYM = re.compile(r"^ep_(ref|neon|x86)_([a-z0-9]+(?:_[a-z0-9]+)*?)(?:_(?:f32|f16|s8|u8|any|dotprod|fp16))*$")


def _component_of_symbol(name: str) -> str:
    """Fallback without object files: ep_<isa>_<op>... kernels and ep_shape_<op> shape functions."""
    m = _SYM.match(name)
    if m:
        return f"{m.group(1)}/{_family(m.group(2))}"
    m = re.match(r"^ep_shape_(\w+)$", name)
    if m:
        return f"shape/{_family(m.group(1))}"
    m = re.match(r"^ep_kernels_init_(ref|neon|x86)$", name)
    if m:
        return f"{m.group(1)}/table"
    for prefix, comp in _CORE_PREFIXES:
        if name.startswith(prefix):
            return comp
    if name.startswith("ep_"):
        return "core/other"
    if name.startswith("__"):           # compiler runtime helpers (libgcc: 64-bit division, conversions)
        return "other/libgcc"
    return ""


_CORE_PREFIXES = [("ep_plan_verify", "sign/sign"), ("ep_sha512_", "sign/sha512"), ("ep_ed25519_", "sign/ed25519"),
                  ("ep_plan_", "core/plan"), ("ep_view_", "core/plan"), ("ep_fail", "core/plan"),
                  ("ep_status_str", "core/status"), ("ep_version", "core/status"), ("ep_crc32c", "core/crc32c"),
                  ("ep_cpu_", "core/cpu"), ("ep_kernels_init", "core/dispatch"), ("ep_op_info", "core/ops_info"),
                  ("ep_act_", "ref/act"), ("ep_partition", "delegate/partition"),
                  ("ep_session_partition", "delegate/partition"), ("ep_slot_", "swap/swap"), ("ep_group_", "group/group"), ("ep_", "core/session")]


def _other_component(fname: str) -> str:
    if not fname:
        return "other/unknown"
    base = re.sub(r"\.(c|S|s|o)$", "", Path(fname).name)
    if base.startswith("crt"):
        return "other/crt"
    if fname.endswith(".c"):          # a static of one of our files, no object given: name it by file
        return component_of_object("src/" + fname + ".o") if base in _CORE_FILES else f"file/{base}"
    return f"other/{base}"


_CORE_FILES = {"plan", "session", "status", "crc32c", "crc32c_x86", "crc32c_aarch64", "crc32c_generic", "cpu_x86",
               "cpu_aarch64", "cpu_generic", "dispatch", "dispatch_x86", "dispatch_aarch64", "ops_info", "partition"}
