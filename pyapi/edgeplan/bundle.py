"""Deploy bundles and board builds: cross-build the C runtime for a board (meson + the board's cross
file) and write a folder that runs a model on that board with nothing else installed.

    edgeplan bundle model.onnx --board rpi4 -o dist/

dist/ then holds a statically linked ``edgeplan-run`` for the board, ``lib/libedgeplan.so``,
``include/edgeplan/*.h``, the plan, the board profile and a README with the command to run it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .boards import Board, load_board


class BuildError(RuntimeError):
    pass


def source_root() -> Path:
    """A tree with the runtime's meson build: EDGEPLAN_SRC, else the checkout this module lives in,
    else the copy installed with the package (edgeplan/_src)."""
    here = Path(__file__).resolve().parent
    cands = [Path(os.environ["EDGEPLAN_SRC"])] if os.environ.get("EDGEPLAN_SRC") else []
    cands += [here.parents[1], here / "_src"]
    for d in cands:
        if (d / "meson.build").is_file() and (d / "runtime_c" / "meson.build").is_file():
            return d
    raise BuildError("edgeplan: the runtime sources were not found (set EDGEPLAN_SRC to a checkout)")


def _cross_compiler(cross_file: Path) -> str:
    for line in cross_file.read_text().splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip() == "c":
            return v.strip().strip("'\"")
    return ""


def check_toolchain(board: Board) -> None:
    """Raises BuildError naming what is missing to build (and, for tests, run) code for the board."""
    missing = [t for t in ("meson", "ninja") if shutil.which(t) is None]
    if board.cross_file is not None:
        cc = _cross_compiler(board.cross_file)
        if not cc or shutil.which(cc) is None:
            missing.append(cc or f"the C compiler of {board.cross_file}")
    if missing:
        raise BuildError(
            f"edgeplan: cannot build for board {board.name!r}: missing {', '.join(missing)}. On Debian/Ubuntu: "
            "apt-get install gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross "
            "libc6-dev-armhf-cross qemu-user; pip install meson ninja")


def build_runtime(board, build_dir, *, static_run: bool = True, tests: bool = False,
                  buildtype: str = "release", quiet: bool = True, selective: str = "") -> Path:
    """Configures (once) and builds the runtime for `board` in build_dir; returns build_dir.
    Outputs: runtime_c/edgeplan-run, runtime_c/libedgeplan.so (and the C tests when tests=True)."""
    b = board if isinstance(board, Board) else load_board(board)
    check_toolchain(b)
    build = Path(build_dir)
    src = source_root()
    if not (build / "build.ninja").is_file():
        cmd = ["meson", "setup", str(build), str(src), "-Dpython=false", f"-Dtests={'true' if tests else 'false'}",
               f"-Dstatic_run={'true' if static_run else 'false'}", f"--buildtype={buildtype}",
               f"-Dselective={selective}"]
        if b.cross_file is not None:
            cmd += ["--cross-file", str(b.cross_file)]
        _run(cmd, quiet)
    else:   # a reused build folder: only the kernel selection may differ (docs/size.md)
        _run(["meson", "configure", str(build), f"-Dselective={selective}"], quiet)
    _run(["ninja", "-C", str(build)], quiet)
    return build


def _run(cmd, quiet: bool) -> None:
    r = subprocess.run(cmd, capture_output=quiet, text=True)
    if r.returncode != 0:
        tail = ((r.stdout or "") + (r.stderr or ""))[-3000:] if quiet else ""
        raise BuildError(f"edgeplan: {' '.join(cmd)} failed ({r.returncode})\n{tail}")


def _readme(board: Board, plan_name: str, plan, runner_cmd: str) -> str:
    sess_lines = []
    try:
        from .runtime import Session
        s = Session(plan.to_bytes())
        for t in s.inputs:
            sess_lines.append(f"- input `{t.name}`: {t.dtype} {list(t.shape)}")
        for t in s.outputs:
            sess_lines.append(f"- output `{t.name}`: {t.dtype} {list(t.shape)}")
        arena = f"{s.arena_bytes:,} bytes"
    except Exception:  # the host may not have the runtime built; the README is still useful
        arena = "see `edgeplan-run` output"
    io = "\n".join(sess_lines)
    return f"""# edgeplan bundle: {plan_name} for {board.name}

Board: {board.description} ({board.arch}, CPU features {', '.join(board.features) or 'baseline'}).

Run it on the board (inputs are .npy files; an input not given is zero):

```sh
{runner_cmd}
```

`edgeplan-run` is statically linked (no libc or Python needed on the board). It prints each output's
shape and summary, the latency (median of --repeat runs), the arena size and peak RSS.
`--threads N` runs each op on N threads (the board has {board.cores} cores; results are the same bits).

{io}
- arena: {arena}, allocated once; no allocation while running

Files: `edgeplan-run` (the runner), `{plan_name}` (the plan: weights are used in place from it),
`lib/libedgeplan.so` + `include/edgeplan/` (to run plans from your own C program:
`cc app.c -Iinclude -Llib -ledgeplan -lm`, API in `include/edgeplan/edgeplan.h`), `board.toml`.
"""


def make_bundle(model, board, out_dir, *, shapes: dict | None = None, build_dir=None, name: str | None = None,
                selective: bool = False) -> Path:
    """Compiles `model` (ONNX path/bytes/ModelProto) for `board`, cross-builds the runtime and writes the
    bundle into out_dir. Returns out_dir. selective: the runtime gets only the kernels the plan uses
    (kernels.ops in the bundle, meson -Dselective; docs/size.md)."""
    import edgeplan
    b = board if isinstance(board, Board) else load_board(board)
    out = Path(out_dir)
    stem = name or (Path(model).stem if isinstance(model, (str, os.PathLike)) else "model")
    plan = edgeplan.compile(model, shapes=shapes, board=b)   # before anything is written
    out.mkdir(parents=True, exist_ok=True)
    plan_name = f"{stem}.eplan"
    plan.save(str(out / plan_name))
    build = Path(build_dir) if build_dir else out / ".build"
    ops = ""
    if selective:
        from .compiler.kernelset import ops_text
        ops = str((out / "kernels.ops").resolve())
        Path(ops).write_text(ops_text(plan.report.get("kernels", []), source=plan_name,
                                      features=plan.report.get("features", [])))
    build_runtime(b, build, static_run=True, selective=ops)
    shutil.copy2(build / "runtime_c" / "edgeplan-run", out / "edgeplan-run")
    (out / "lib").mkdir(exist_ok=True)
    shutil.copy2(build / "runtime_c" / "libedgeplan.so", out / "lib" / "libedgeplan.so")
    inc = out / "include" / "edgeplan"
    inc.mkdir(parents=True, exist_ok=True)
    hdr = source_root() / "runtime_c" / "include" / "edgeplan"
    for h in ("edgeplan.h", "plan_format.h"):
        shutil.copy2(hdr / h, inc / h)
    if b.path is not None:
        shutil.copy2(b.path, out / "board.toml")
    cmd = f"./edgeplan-run {plan_name} --input input.npy --output output.npy --repeat 10"
    (out / "README.md").write_text(_readme(b, plan_name, plan, cmd))
    if not build_dir:
        shutil.rmtree(build, ignore_errors=True)
    return out


def make_speech_bundle(board, out_dir, *, voice=None, whisper=None, vad=None, build_dir=None,
                       max_seconds: float = 11.6) -> Path:
    """A board folder for the speech pipelines without Python: edgeplan-speech (static) and, for each
    model given, its plans compiled for `board`: voice.eplan (a Piper voice's .onnx, its 192-id plan;
    voice.onnx.json beside it), vad.eplan (a Silero VAD v5/v6 .onnx at 16 kHz, its state in the arena),
    asr/ (a Whisper folder of tools/whisper_ct2.py: the encoder and decoder_with_past plans, or encoder and decoder,
    whisper.txt, vocabulary.txt). Everything is compiled before anything is written."""
    import edgeplan
    b = board if isinstance(board, Board) else load_board(board)
    if voice is None and whisper is None and vad is None:
        raise BuildError("edgeplan bundle --speech: give --voice, --whisper or --vad")
    plans, copies = {}, {}
    if voice is not None:
        from . import piper
        v = piper.Voice.load(voice)
        frames = max(1, int(max_seconds * v.rate) // piper.HOP)
        plans["voice.eplan"] = piper.compile_voice(voice, piper.BUCKETS[1], frames, board=b)
        copies["voice.onnx.json"] = Path(voice).with_name(Path(voice).name + ".json")
    if vad is not None:
        from .vad import compile_vad
        plans["vad.eplan"] = compile_vad(vad, 16000, board=b)
    if whisper is not None:
        import json
        from .whisper import GRAPHS, WEIGHTS, graph_dims
        wd = Path(whisper)
        dims = graph_dims(json.loads((wd / "whisper.json").read_text()))
        for g in GRAPHS:   # with the cached decoder, the plain one is not needed (the prompt runs on the cache)
            if g == "decoder" and (wd / "decoder_with_past.onnx").is_file():
                continue
            if (wd / f"{g}.onnx").is_file():
                plans[f"asr/{g}.eplan"] = edgeplan.compile(str(wd / f"{g}.onnx"), dims=dims.get(g), board=b,
                                                           quantize=WEIGHTS)
        for f in ("whisper.txt", "vocabulary.txt"):
            copies[f"asr/{f}"] = wd / f
    out = Path(out_dir)
    (out / "asr").mkdir(parents=True, exist_ok=True)
    for name, plan in plans.items():
        plan.save(str(out / name))
    for name, src in copies.items():
        shutil.copy2(src, out / name)
    if whisper is None:
        (out / "asr").rmdir()
    build = Path(build_dir) if build_dir else out / ".build"
    build_runtime(b, build, static_run=True)
    shutil.copy2(build / "runtime_c" / "edgeplan-speech", out / "edgeplan-speech")
    lines = [f"# edgeplan speech bundle for {b.name}", "", f"Board: {b.description} ({b.arch}). `edgeplan-speech` "
             "is statically linked: nothing else is needed on the board.", "", "```sh"]
    if vad is not None:
        lines.append("./edgeplan-speech vad vad.eplan speech16k.wav          # one \"start end\" (seconds) a line")
    if voice is not None:
        lines.append("./edgeplan-speech tts voice.eplan --ids 1,0,20,0,2 -o out.wav   # Piper phoneme ids "
                     "(voice.onnx.json: phoneme_id_map)")
    if whisper is not None:
        lines.append("./edgeplan-speech asr asr speech16k.wav                # the text")
    lines += ["```", "", "Each prints its latency and memory (the plans' bytes, the arenas, the peak RSS) on stderr."]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    if not build_dir:
        shutil.rmtree(build, ignore_errors=True)
    return out
