"""Size probes: the runtime (libedgeplan.so) built for a board with -Os, no debug info, NDEBUG and
--gc-sections, in three configurations:

    core         -Dkernels=none: plan loader, session, executor, status, crc, cpu; no op at all
    mobilenetv2  -Dselective=<ops file>: the kernels `edgeplan compile --board B --ops-out` lists for
                 the zoo MobileNetV2 (fp32)
    mobilenetv2-int8  the same for the zoo MobileNetV2 quantised to int8 after training (--quantize int8,
                 seeded calibration inputs): its int8 kernels and the float ops around them
    all          -Dkernels=all: every op, every variant, every ISA kernel of the board's arch
    speech       the speech layer (runtime_c/speech/: wav, VAD segments, byte-level BPE) alone, as a shared
                 object of its own: the board tools link it beside the runtime

One meson build folder per board is reconfigured for each configuration (only the tables and the
opcode table recompile). Each result is copied to <root>/<board>/<config>/libedgeplan.so, with a
stripped copy beside it, and measured with elfsize against the build's object files."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from .elfsize import Report, measure

CONFIGS = ("core", "mobilenetv2", "mobilenetv2-int8", "all", "speech")
CI_BOARDS = ("generic-aarch64", "x86-64")


class ProbeError(RuntimeError):
    pass


def _edgeplan():
    """edgeplan's boards and bundle modules (this package's parent)."""
    from edgeplan import boards, bundle
    return boards, bundle


def source_root() -> Path:
    """The runtime's sources: this checkout, else those installed with the package (edgeplan/_src)."""
    from edgeplan.bundle import source_root as root
    return root()


def _cross_value(cross_file: Path, key: str) -> str:
    section = ""
    for line in cross_file.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line
            continue
        k, sep, v = line.partition("=")
        if sep and section == "[binaries]" and k.strip() == key:
            v = v.strip()
            return v.strip("'\"") if not v.startswith("[") else v.strip("[]").split(",")[0].strip().strip("'\"")
    return ""


def toolchain_error(board) -> str:
    """'' when meson, ninja and the board's C compiler are installed, else what is missing and how to get it."""
    missing = [t for t in ("meson", "ninja") if shutil.which(t) is None]
    if board.cross_file is not None:
        cc = _cross_value(board.cross_file, "c")
        if not cc or shutil.which(cc) is None:
            missing.append(cc or f"the C compiler of {board.cross_file}")
    elif shutil.which(os.environ.get("CC", "cc")) is None:
        missing.append("cc")
    if not missing:
        return ""
    return (f"cannot build size probes for board {board.name!r}: missing {', '.join(missing)}. "
            "On Debian/Ubuntu: apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross "
            "gcc-arm-linux-gnueabihf libc6-dev-armhf-cross (.ci/run does this); pip install meson ninja")


def model_ops_file(model: str, board, out: Path) -> Path:
    """Compiles the zoo model for the board and writes its kernel set (edgeplan compile --ops-out)."""
    import edgeplan
    from edgeplan.compiler.kernelset import ops_text
    from edgeplan import models
    if model.endswith("-int8"):
        import numpy as np
        zoo = models.build(model[:-len("-int8")])
        name, shape = models.INPUTS[model[:-len("-int8")]]
        rng = np.random.default_rng(0)
        cal = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(2)]
        plan = edgeplan.compile(zoo, board=board, quantize="int8", calibration=cal)
    else:
        plan = edgeplan.compile(models.build(model), board=board)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = ops_text(plan.report["kernels"], source=f"zoo {model} for {board.name}")
    if not out.is_file() or out.read_text() != text:
        out.write_text(text)
    return out


def _run(cmd, log: Path) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}\n")
    if r.returncode:
        raise ProbeError(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")


def setup_args(board, kernels="all", selective="") -> list:
    """The meson options of a probe build (docs/size.md quotes them). The core probe (no op at all) has
    no thread pool, hot swap or signature check either: there is nothing for workers to run or replace. The virtual NPU
    (a host-side stand-in for silicon) is never part of a board's runtime."""
    args = ["--buildtype=minsize", "-Ddebug=false", "-Db_ndebug=true", "-Dpython=false", "-Dtests=false",
            "-Dstatic_run=false", "-Dvnpu=disabled", f"-Dkernels={kernels}", f"-Dselective={selective}",
            f"-Dthreads={'disabled' if kernels == 'none' and not selective else 'auto'}",
            f"-Dswap={'false' if kernels == 'none' and not selective else 'true'}",
            f"-Dsign={'false' if kernels == 'none' and not selective else 'true'}"]
    if board.cross_file is not None:
        args += ["--cross-file", str(board.cross_file)]
    return args


def build_probe(board, config: str, root: Path, *, log=None) -> Report:
    """Builds one probe configuration for the board under root and measures it."""
    boards_mod, _ = _edgeplan()
    if isinstance(board, str):
        board = boards_mod.load_board(board)
    err = toolchain_error(board)
    if err:
        raise ProbeError(err)
    root = Path(root).resolve()
    bdir = root / board.name / "build"
    log = Path(log or root / board.name / "build.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    kernels, selective = "all", ""
    if config in ("core", "speech"):
        kernels = "none"
    elif config == "all":
        kernels = "all"
    else:                              # a zoo model: its kernel set
        selective = str(model_ops_file(config, board, root / board.name / f"{config}.ops"))
    opts = setup_args(board, kernels, selective)
    if not (bdir / "build.ninja").is_file():
        _run(["meson", "setup", str(bdir), str(source_root())] + opts, log)
    else:
        _run(["meson", "configure", str(bdir)] + [o for o in opts if o.startswith("-D")], log)
    target = "libedgeplan_speech_probe.so" if config == "speech" else "libedgeplan.so"
    _run(["ninja", "-C", str(bdir), f"runtime_c/{target}"], log)
    out = root / board.name / config
    out.mkdir(parents=True, exist_ok=True)
    lib = out / target
    shutil.copy2(bdir / "runtime_c" / target, lib)
    stripped = out / target.replace(".so", ".stripped.so")
    strip = _cross_value(board.cross_file, "strip") if board.cross_file is not None else "strip"
    stripped_bytes = 0
    if strip and shutil.which(strip):
        subprocess.run([strip, "--strip-all", "-o", str(stripped), str(lib)], check=True)
        stripped_bytes = stripped.stat().st_size
    rdir = bdir / "runtime_c"
    objects = [rdir / f"{target}.p"]
    if config != "speech":
        objects += sorted(rdir.glob("libedgeplan_*.a.p"))   # the ISA libs, linked whole
    rep = measure(lib, objects)
    rep.stripped_bytes = stripped_bytes
    rep.path = str(lib)
    return rep


def run_probes(boards, configs, root: Path, progress=None) -> dict:
    """{(board, config): Report} for every board x config."""
    out = {}
    for b in boards:
        for c in configs:
            t = time.perf_counter()
            out[(b if isinstance(b, str) else b.name, c)] = build_probe(b, c, root)
            if progress:
                progress(f"built {b if isinstance(b, str) else b.name}/{c} in {time.perf_counter() - t:.1f} s")
    return out
