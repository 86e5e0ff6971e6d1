"""The edgeplan command line: compile, run, profile, inspect, demo."""
from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .cliutil import (check_writable, die, io_list, nonnegative_int, npy_bytes, open_session, os_reason,
                      peak_rss_kib, positive_int, read_inputs, write_file)
from .speech import add_parsers as add_speech_parsers   # edgeplan asr / tts


def _parse_shapes(items) -> dict:
    shapes = {}
    for item in items or []:
        name, sep, dims = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            shapes[name] = tuple(int(d) for d in dims.replace("x", ",").split(",") if d != "")
        except ValueError:
            raise SystemExit(f"edgeplan: --shape expects NAME=D0,D1,..., got {item!r}") from None
    return shapes


def _summary(name: str, y: np.ndarray) -> str:
    s = f"  {name}: {y.dtype} {list(y.shape)}"
    if y.size and y.dtype.kind == "f":
        s += (f"  min {float(y.min()):.6g} max {float(y.max()):.6g} mean {float(y.mean()):.6g}"
              f" argmax {int(np.argmax(y))}")
    return s


def _parse_state(items) -> dict:
    state = {}
    for item in items or ():
        src, sep, dst = item.partition("=")
        if not sep or not src or not dst:
            raise SystemExit(f"edgeplan: --state expects INPUT=OUTPUT (e.g. h_in=h_out), got {item!r}")
        state[src] = dst
    return state


def _parse_consts(items) -> dict:
    consts = {}
    for item in items or ():
        name, sep, vals = item.partition("=")
        try:
            if not sep or not name or name in consts:
                raise ValueError
            nums = [float(v) for v in vals.split(",") if v.strip()]
            if not nums:
                raise ValueError
        except ValueError:
            die(f"--const expects NAME=V or NAME=V1,V2,... once per input (e.g. sr=16000), got {item!r}", 2)
        consts[name] = nums[0] if len(nums) == 1 else nums
    return consts


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= 4096:
        raise argparse.ArgumentTypeError(f"expects a whole number of iterations in 1..4096, got {text!r}")
    return v


def _compile(model, shapes, out=None, board=None, dims=None, state=None, consts=None, max_trips=0, quantize=None,
             calibration=None, observer="percentile", target_sqnr=30.0, npu=None, npu_cpu=(), preprocess=None):
    import edgeplan
    from edgeplan.compiler.errors import CompileError
    from edgeplan.compiler.ptq import CalibrationError
    try:
        if dims:
            from edgeplan.compiler.dynamic import parse_dims
            dims = parse_dims(list(dims))
        plan = edgeplan.compile(model, shapes=shapes, board=board, dims=dims or None, state=state or None,
                                consts=consts or None, max_trips=max_trips or 0, quantize=quantize,
                                calibration=calibration, observer=observer, target_sqnr=target_sqnr, npu=npu,
                                npu_unsupported=tuple(npu_cpu or ()), preprocess=preprocess)
    except CalibrationError as e:
        die(f"cannot quantise {model}: {e}")
    except CompileError as e:
        print(f"edgeplan: cannot compile {model if isinstance(model, str) else 'model'}:\n{e}", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as e:
        die(f"cannot read {e.filename or model}: {os_reason(e)}")
    except Exception as e:  # noqa: BLE001 - e.g. protobuf's DecodeError for a file that is not ONNX
        if type(e).__name__ != "DecodeError":
            raise
        die(f"{model} is not an ONNX model ({e})")
    if out:
        save_plan(plan, out)
    return plan


def save_plan(plan, path, data: bytes | None = None) -> None:
    """Writes the plan (or data, its signed bytes) to path."""
    if data is not None:
        write_file(path, data)
        return
    try:
        plan.save(path)
    except OSError as e:
        die(f"cannot write {path}: {os_reason(e)}")


def cmd_compile(a) -> int:
    models = a.model
    if len(models) > 1 or a.group:
        return _compile_group(a, models)
    a.model = models[0]
    out = a.output or str(Path(a.model).with_suffix(".eplan"))
    # the outputs are checked before compiling, so a bad path fails at once, not after the compile
    check_writable(out, "-o", keep=(a.model,))
    if a.ops_out:
        check_writable(a.ops_out, "--ops-out", keep=(a.model,))
    if a.calibration and a.quantize not in ("int8", "auto"):
        why = {"int8-dynamic": "quantises activations at run time", "fp16": "stores 16-bit weights",
               "bf16": "stores 16-bit weights", "fp16-exact": "stores 16-bit weights"}.get(a.quantize)
        die("--calibration is for post-training quantisation: add --quantize int8"
            + (f" (--quantize {a.quantize} {why} and needs none)" if why else ""))
    if a.preprocess and not a.calibration:
        die("--preprocess is the recipe for a calibration folder of images or wavs: add --quantize int8 "
            "--calibration DIR")
    if a.precision_report and a.quantize != "auto":
        die("--precision-report is the mixed-precision report: add --quantize auto")
    if a.precision_report:
        check_writable(a.precision_report, "--precision-report", keep=(a.model,))
    if a.npu_cpu and not a.npu:
        die("--npu-cpu keeps named ops off the NPU: add --npu PROFILE")
    if a.npu:
        from edgeplan.compiler.partition.profiles import list_profiles
        if a.npu not in list_profiles():
            die(f"unknown NPU profile {a.npu!r}; known: {', '.join(list_profiles())}", 2)
    sign_key = None
    if a.sign:
        from edgeplan.signing import SigningError, load_secret_key
        try:
            sign_key = load_secret_key(a.sign)   # before compiling: a bad key fails at once
        except SigningError as e:
            die(str(e))
    t = time.perf_counter()
    board = _board(a.board)
    plan = _compile(a.model, _parse_shapes(a.shape), None, board=board, dims=a.dim, state=_parse_state(a.state),
                    consts=_parse_consts(a.const), max_trips=a.max_trips, quantize=a.quantize,
                    calibration=a.calibration, observer=a.observer, target_sqnr=a.target_sqnr, npu=a.npu,
                    npu_cpu=a.npu_cpu, preprocess=a.preprocess)
    calib = plan.report.get("calibration")
    if calib:
        print(f"calibration: {calib['samples']} input(s), {calib['observer']} observer, ranges "
              + ("from the cache" if calib["ranges_cached"] else "observed (cached for the next compile)"))
    mixed = plan.report.get("mixed_precision")
    if mixed is not None:
        from edgeplan.compiler.ptq import report_text
        print(report_text(mixed))
        if a.precision_report:
            write_file(a.precision_report, (json.dumps(mixed, indent=1) + "\n").encode())
    if board is not None:   # weights + arena + runtime against the board's RAM (sizebudget, docs/size.md)
        from edgeplan.boards import ram_check
        fits, text = ram_check(board, plan)
        print(text)
        if not fits:
            print(f"edgeplan: {a.model} does not fit in {board.name}'s RAM; plan not written", file=sys.stderr)
            return 1
    if sign_key is not None:
        from edgeplan.signing import sign_plan
        save_plan(plan, out, data=sign_plan(plan, sign_key))
        print(f"signed with {a.sign} (Ed25519)")
    else:
        save_plan(plan, out)
    print(f"compiled {a.model} -> {out}{f' for {a.board}' if a.board else ''} in {time.perf_counter() - t:.2f} s")
    print(plan.summary())
    if a.npu:
        from edgeplan.plan import placement_text
        print("\n".join(placement_text(plan.report.get("partitions"))))
    if a.ops_out:   # the kernel set, for a selective runtime build: meson -Dselective=FILE
        from edgeplan.compiler.kernelset import ops_text
        write_file(a.ops_out, ops_text(plan.report.get("kernels", []), source=out,
                                       features=plan.report.get("features", [])).encode())
        print(f"kernel set ({len(plan.report.get('kernels', []))} kernels) -> {a.ops_out}")
    return 0


def _compile_group(a, models) -> int:
    """edgeplan compile A B ... --group DIR: each model compiled with the same options, then grouped."""
    if not a.group:
        die(f"{len(models)} models: add --group DIR to compile them into one shared arena (docs/groups.md), or "
            "compile each alone")
    for flag, v in (("-o", a.output), ("--precision-report", a.precision_report), ("--npu", a.npu)):
        if v:
            die(f"{flag} is for one model; with --group the members go to DIR (compile a member alone with "
                f"{flag}, then `edgeplan group` the plans)")
    if a.calibration or (a.quantize and a.quantize not in ("fp16", "bf16", "fp16-exact", "int8-dynamic")):
        die("--group compiles every model with the same options: quantise with calibration model by model, then "
            "`edgeplan group` the plans")
    board = _board(a.board)
    plans = []
    for m in models:
        t = time.perf_counter()
        p = _compile(m, _parse_shapes(a.shape), None, board=board, dims=a.dim, state=_parse_state(a.state),
                     consts=_parse_consts(a.const), max_trips=a.max_trips, quantize=a.quantize)
        print(f"compiled {m} in {time.perf_counter() - t:.2f} s: arena {p.report['arena_bytes']:,} bytes")
        plans.append(p.to_bytes())
    return _write_group(plans, [Path(m).stem for m in models], a.group, a.sign, a.ops_out)


def _write_group(plans, names, folder, sign, ops_out) -> int:
    from edgeplan.group import GroupError, plan_group
    key = None
    if sign:
        from edgeplan.signing import SigningError, load_secret_key
        try:
            key = load_secret_key(sign)
        except SigningError as e:
            die(str(e))
    try:
        group = plan_group(plans, names)
    except GroupError as e:
        die(str(e))
    try:
        paths = group.save(folder, sign=key)
    except OSError as e:
        die(f"cannot write {folder}: {os_reason(e)}")
    print(group.summary())
    print(f"group of {len(paths)} -> {folder}/ ({', '.join(p.name for p in paths)})"
          + (f", signed with {sign}" if key is not None else ""))
    if ops_out:   # one runtime for every member: the union of their kernels, with group support
        from edgeplan.compiler.kernelset import ops_text
        from edgeplan.plan import read_plan
        kernels, features = set(), {"groups"}
        for data in plans:
            meta = read_plan(data).get("meta", {})
            kernels |= {tuple(k) for k in meta.get("kernels", [])}
            features |= set(meta.get("features", []))
        write_file(ops_out, ops_text(sorted(list(k) for k in kernels), source=str(folder),
                                     features=sorted(features)).encode())
        print(f"kernel set ({len(kernels)} kernels) -> {ops_out}")
    return 0


def cmd_group(a) -> int:
    plans = []
    for path in a.plans:
        try:
            plans.append(Path(path).read_bytes())
        except OSError as e:
            die(f"cannot read {path}: {os_reason(e)}")
    names = a.names.split(",") if a.names else [Path(p).stem for p in a.plans]
    if len(names) != len(plans):
        die(f"--names gives {len(names)} names for {len(plans)} plans")
    return _write_group(plans, names, a.output, a.sign, a.ops_out)


def cmd_size(a) -> int:
    """edgeplan size: the size checker's CLI (edgeplan.sizebudget; the checkout's sizebudget/)."""
    from .sizebudget.cli import main as size_main
    try:
        return size_main(a.args, prog="edgeplan size")
    except OSError as e:                  # `size measure FILE`: a missing file or a directory
        die(f"size: cannot read {e.filename or ' '.join(a.args)}: {os_reason(e)}")
    except Exception as e:  # noqa: BLE001 - pyelftools' ELFError: `size measure` on a file that is not ELF
        if type(e).__name__ != "ELFError":
            raise
        die(f"size: {' '.join(a.args)}: not an ELF file ({e})")


def _board(name):
    if not name:
        return None
    from edgeplan.boards import load_board
    try:
        return load_board(name)
    except ValueError as e:
        raise SystemExit(f"edgeplan: {e}") from None


def _bundle_failed(a, e: Exception) -> int:
    from edgeplan.bundle import BuildError
    from edgeplan.compiler.errors import CompileError
    if isinstance(e, BuildError):       # its message starts with "edgeplan:" and carries the build's tail
        print(f"{e}", file=sys.stderr)
        return 1
    if isinstance(e, CompileError):
        print(f"edgeplan: cannot compile {a.model or 'the speech models'}:\n{e}", file=sys.stderr)
        return 1
    from edgeplan.piper import VoiceError
    if isinstance(e, VoiceError):
        die(str(e), 2)
    if isinstance(e, OSError):
        die(f"cannot write the bundle to {a.output}: {os_reason(e)}" + (f" ({e.filename})" if e.filename else ""))
    if type(e).__name__ == "DecodeError":   # protobuf's, for a file that is not ONNX
        die(f"{a.model} is not an ONNX model ({e})")
    raise e


def cmd_bundle(a) -> int:
    from edgeplan.bundle import make_bundle
    board = _board(a.board)
    if a.voice or a.whisper or a.vad:
        return _speech_bundle(a, board)
    if not a.model:
        die("bundle needs a MODEL (or --voice / --whisper / --vad for a speech bundle)", 2)
    shapes = _parse_shapes(a.shape)
    # checked before the bundle folder is made and the runtime is built (minutes on a cross toolchain)
    try:
        with open(a.model, "rb"):
            pass
    except OSError as e:
        die(f"cannot read {a.model}: {os_reason(e)}")
    if Path(a.output).exists() and not Path(a.output).is_dir():
        die(f"cannot write the bundle to {a.output}: {os.strerror(errno.ENOTDIR)} (it is a file)")
    t = time.perf_counter()
    fresh = not Path(a.output).exists()
    try:
        out = make_bundle(a.model, board, a.output, shapes=shapes, selective=a.selective)
    except Exception as e:  # noqa: BLE001 - sorted out in _bundle_failed, which re-raises the unexpected
        if fresh:           # make_bundle makes the folder before it compiles: leave no empty one behind
            try:
                os.rmdir(a.output)
            except OSError:
                pass
        return _bundle_failed(a, e)
    return _bundle_written("bundle", board, out, t)


def _bundle_written(what: str, board, out, t0: float) -> int:
    print(f"{what} for {board.name} written to {out}/ in {time.perf_counter() - t0:.1f} s:")
    for f in sorted(p for p in Path(out).rglob("*") if p.is_file()):
        print(f"  {f.relative_to(out)}  ({f.stat().st_size:,} bytes)")
    print(f"run: see {Path(out) / 'README.md'}")
    return 0


def _speech_bundle(a, board) -> int:
    from edgeplan.bundle import make_speech_bundle
    for f in (a.voice, a.vad):
        if f is not None and not Path(f).is_file():
            die(f"cannot read {f}: {os.strerror(errno.ENOENT)}")
    if a.whisper is not None and not (Path(a.whisper) / "whisper.json").is_file():
        die(f"--whisper {a.whisper}: not a Whisper folder (tools/whisper_ct2.py writes one)", 2)
    if a.model:
        die("bundle: give a MODEL or the speech models (--voice / --whisper / --vad), not both", 2)
    t = time.perf_counter()
    try:
        out = make_speech_bundle(board, a.output, voice=a.voice, whisper=a.whisper, vad=a.vad)
    except Exception as e:  # noqa: BLE001 - sorted out in _bundle_failed, which re-raises the unexpected
        return _bundle_failed(a, e)
    return _bundle_written("speech bundle", board, out, t)


def _run_and_report(sess, feeds: dict, repeat: int) -> dict:
    times = []
    outs = {}
    for _ in range(repeat):
        t = time.perf_counter()
        outs = sess.run(feeds)
        times.append((time.perf_counter() - t) * 1e3)
    print("outputs:")
    for name, y in outs.items():
        print(_summary(name, y))
    times.sort()
    print(f"latency: median {times[len(times) // 2]:.3f} ms, min {times[0]:.3f} ms over {len(times)} run(s), "
          f"{getattr(sess, 'threads', 1)} thread(s)")
    print(f"arena: {sess.arena_bytes:,} bytes (tensors {sess.planned_bytes:,}); weights {sess.const_bytes:,} bytes "
          f"in place; peak RSS {peak_rss_kib() / 1024:.1f} MiB")
    return outs


def _random_feeds(sess, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {}
    for t in sess.inputs:
        if t.dtype.kind == "f":
            feeds[t.name] = rng.standard_normal(t.shape).astype(t.dtype)
        else:
            feeds[t.name] = np.zeros(t.shape, dtype=t.dtype)
    return feeds


def output_targets(sess, items, keep=()) -> list:
    """--output [NAME=]FILE.npy items -> [(output name, path)], names and paths checked before the run
    (none may be one of ``keep``). FILE alone: the i-th --output takes the plan's i-th output, as
    edgeplan-run does."""
    names = [t.name for t in sess.outputs]
    targets = []
    for i, item in enumerate(items or ()):
        name, sep, path = item.partition("=")
        if not sep:
            if i >= len(names):
                die(f"--output {item}: the plan has {len(names)} output(s) ({io_list(sess.outputs)}), so "
                    f"--output number {i + 1} needs a name: --output NAME=FILE.npy", 2)
            name, path = names[i], item
        elif name not in names:
            die(f"--output {item}: the plan has no output {name!r}; its outputs: {io_list(sess.outputs)}", 2)
        if not path:
            die(f"--output {item}: no file after '='", 2)
        targets.append((name, check_writable(path, "--output", keep)))
    return targets


def _npu_device(preset):
    """The virtual NPU for --npu PRESET (edgeplan.vnpu), or None."""
    if not preset:
        return None
    from edgeplan import EdgeplanError
    from edgeplan.runtime import load_library
    try:
        load_library().ep_vnpu_open
    except (AttributeError, NotImplementedError):
        die("--npu: this runtime library was built without the virtual NPU (meson -Dvnpu)", 2)
    from edgeplan.vnpu import VirtualNPU
    try:
        return VirtualNPU(preset)
    except EdgeplanError as e:
        die(f"--npu {preset}: {e}", 2)


def _partition_lines(sess, dev) -> list:
    """Where each partition ran: the delegate with its modelled cycles, or the CPU with the reason."""
    out = []
    for p in sess.partitions:
        if p["delegate"]:
            out.append(f"partition {p['index']} (op {p['op']}, {p['n_cpu_ops']} ops): {p['delegate']}, "
                       f"{p['delegate_runs']} run(s)" + (f", {p['cpu_runs']} on the CPU after a failed execute"
                                                          if p["cpu_runs"] else ""))
        else:
            out.append(f"partition {p['index']} (op {p['op']}, {p['n_cpu_ops']} ops): CPU ({p['reason']})")
    if dev is not None and sess.partitions:
        c = dev.counters()
        mhz = dev.clock_mhz
        out.append(f"vNPU {dev.name}: {c['active_cycles']:,} cycles in the last execute "
                   f"({c['active_cycles'] / mhz / 1e3:.3f} ms at {mhz} MHz), {c['mac_ops']:,} MACs, SRAM "
                   f"{c['sram_rd_bytes']:,} B read / {c['sram_wr_bytes']:,} B written, external "
                   f"{c['ext_rd_bytes']:,} B read")
    return out


def _public_key(a):
    """--public-key FILE: the raw 32-byte key, or None."""
    if not getattr(a, "public_key", None):
        return None
    from edgeplan.signing import SigningError, load_public_key
    try:
        return load_public_key(a.public_key)
    except SigningError as e:
        die(str(e))


def cmd_keygen(a) -> int:
    from edgeplan.signing import SigningError, keygen
    try:
        secret, public = keygen(a.output)
    except (SigningError, OSError) as e:
        die(str(e) if isinstance(e, SigningError) else f"cannot write {a.output}: {os_reason(e)}")
    print(f"secret key -> {secret} (keep it off the board); public key -> {public} (32 bytes: give it to "
          "Session(public_key=...) or edgeplan-run --public-key)")
    return 0


def cmd_sign(a) -> int:
    from edgeplan.signing import SigningError, load_secret_key, sign_plan
    out = a.output or a.plan
    try:
        key = load_secret_key(a.key)
        data = sign_plan(Path(a.plan).read_bytes(), key)
    except OSError as e:
        die(f"cannot read {a.plan}: {os_reason(e)}")
    except SigningError as e:
        die(f"{a.plan}: {e}")
    write_file(out, data)
    print(f"signed {a.plan} with {a.key} -> {out} ({len(data):,} bytes)")
    return 0


def cmd_run(a) -> int:
    from edgeplan import EdgeplanError
    dev = _npu_device(a.npu)
    sess = open_session(a.plan, threads=a.threads, delegates=[dev] if dev else (), public_key=_public_key(a))
    targets = output_targets(sess, a.output, keep=(a.plan,))
    feeds = read_inputs(sess, a.input, _random_feeds(sess) if a.random else {})
    missing = [t.name for t in sess.inputs if t.name not in feeds]
    if missing:
        die(f"no value for input(s) {', '.join(missing)}: give --input NAME=FILE.npy or --random", 2)
    try:
        outs = _run_and_report(sess, feeds, a.repeat)
    except (EdgeplanError, KeyError, TypeError, ValueError) as e:
        die(f"{a.plan}: {e}")
    for line in _partition_lines(sess, dev):
        print(line)
    for name, path in targets:      # exactly the path given (no ".npy" appended, unlike np.save)
        write_file(path, npy_bytes(outs[name]))
    return 0


def cmd_profile(a) -> int:
    import json
    from edgeplan import EdgeplanError
    from edgeplan.profile import chrome_trace, profile_session, random_feeds, report_text
    dev = _npu_device(a.npu)
    sess = open_session(a.plan, threads=a.threads, profile=True, delegates=[dev] if dev else ())
    if a.trace:
        check_writable(a.trace, "--trace", keep=(a.plan,))
    feeds = read_inputs(sess, a.input, random_feeds(sess))
    try:
        result = profile_session(sess, feeds, runs=a.runs, warmup=a.warmup, trace=bool(a.trace), npu=dev)
    except (EdgeplanError, KeyError, TypeError, ValueError) as e:
        die(f"{a.plan}: {e}")
    print(f"{a.plan}: {sess.n_ops} ops")
    print(report_text(result, top=a.top))
    if a.trace:
        write_file(a.trace, json.dumps(chrome_trace(result, title=Path(a.plan).name)).encode())
        print(f"trace ({len(result['events'])} events) -> {a.trace} (chrome://tracing or ui.perfetto.dev)")
    return 0


def cmd_inspect(a) -> int:
    from edgeplan.plan import inspect_text
    from edgeplan.runtime import load_library
    from edgeplan._cdef import ffi
    try:
        data = Path(a.plan).read_bytes()
    except OSError as e:
        die(f"cannot read {a.plan}: {os_reason(e)}")
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    rc = load_library().ep_plan_validate(ffi.from_buffer(buf), len(data))
    if rc:
        from edgeplan.runtime import status_str
        print(f"edgeplan: {a.plan}: invalid plan: {status_str(rc)} ({rc})", file=sys.stderr)
        return 1
    print(inspect_text(data))
    from edgeplan.signing import signature_info
    sig = signature_info(data)
    print(f"signature: Ed25519, key id {sig['key_id']}" if sig else "signature: none (unsigned)")
    key = _public_key(a)
    if key is not None:
        from edgeplan.runtime import status_str
        from edgeplan.signing import verify_plan
        rc = verify_plan(data, key)
        print(f"signature check with {a.public_key}: " + ("verified" if rc == 0 else f"FAILED: {status_str(rc)}"))
        return 0 if rc == 0 else 1
    return 0


def _runner() -> str | None:
    """The C runner edgeplan-run: next to this interpreter (a venv or pip install), else on PATH."""
    import shutil
    p = Path(sys.executable).with_name("edgeplan-run")
    return str(p) if p.is_file() else shutil.which("edgeplan-run")


def _run_in_child(plan_path: Path, repeat: int) -> int:
    """Runs the plan in a process of its own, so the figures it prints (latency, arena, peak RSS) are the
    runtime's and not this compiler's: the C runner as a board runs it, else `edgeplan run`."""
    import subprocess
    sess = open_session(plan_path)
    d = plan_path.parent
    args = []
    for t, (name, x) in zip(sess.inputs, _random_feeds(sess).items()):
        path = d / f"input{len(args) // 2}.npy"
        write_file(path, npy_bytes(x))
        args += ["--input", f"{name}={path}"]
    sess.close()
    runner = _runner()
    if runner:
        cmd = [runner, str(plan_path), *args, "--repeat", str(repeat)]
        print(f"running it with the C runner ({Path(runner).name}, its own process):")
    else:
        cmd = [sys.executable, "-m", "edgeplan.cli", "run", str(plan_path), *args, "--repeat", str(repeat)]
        print("running it with `edgeplan run` in its own process (edgeplan-run not found):")
    sys.stdout.flush()
    return subprocess.run(cmd).returncode


def cmd_demo(a) -> int:
    from edgeplan import models
    if a.model not in models.NAMES:
        die(f"--model {a.model!r}: unknown zoo model; choose from {', '.join(models.NAMES)}", 2)
    print(f"building the zoo model '{a.model}' (deterministic weights) ...")
    kw = {"size": a.size} if a.size else {}
    try:
        model = models.build(a.model, **kw)
    except (TypeError, ValueError) as e:
        die(f"cannot build the zoo model {a.model!r}{f' at --size {a.size}' if a.size else ''}: {e}")
    # a speech model's sequence dim is symbolic: pinned at the zoo's typical length (models.INPUTS)
    name, shape = models.INPUTS.get(a.model, (None, None))
    first = next((x for x in model.graph.input if x.name == name), None)
    symbolic = first is not None and any(d.dim_param for d in first.type.tensor_type.shape.dim)
    shapes = {name: tuple(shape)} if symbolic else {}
    dims = None
    if a.model in ("tts", "tts_acoustic") and shapes:   # mel frames: the token durations' sum, each <= MAX_DURATION
        from edgeplan.models.tts import MAX_DURATION
        dims = [f"frames=1..{MAX_DURATION * shape[-1]}"]
    with tempfile.TemporaryDirectory() as d:
        onnx_path = Path(d) / f"{a.model}.onnx"
        import onnx
        onnx.save(model, onnx_path)
        plan_path = Path(d) / f"{a.model}.eplan"
        t = time.perf_counter()
        plan = _compile(str(onnx_path), shapes, plan_path, dims=dims)
        print(f"compiled in {time.perf_counter() - t:.2f} s")
        print(plan.summary())
        return _run_in_child(plan_path, a.repeat)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="edgeplan", description="Compile ONNX models to plans and run them.")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile an ONNX or TFLite model into a plan")
    c.add_argument("model", nargs="+", help="the model; several with --group")
    c.add_argument("-o", "--output", help="the plan file (default: the model's name with .eplan)")
    c.add_argument("--group", metavar="DIR", help="compile the models into one shared arena, for models that run "
                   "one at a time (each keeps its streaming state): one member plan each in DIR (docs/groups.md)")
    c.add_argument("--shape", action="append", metavar="NAME=D0,D1,...", help="pin an input's shape")
    c.add_argument("--dim", action="append", metavar="NAME=MIN..MAX",
                   help="bound a variable dim by the model's dim name (e.g. T=1..3000) or a data-dependent "
                        "length; one plan serves every value in range, its arena planned for MAX")
    c.add_argument("--state", action="append", metavar="INPUT=OUTPUT",
                   help="streaming state: OUTPUT is fed back into INPUT after every run, kept in the arena")
    c.add_argument("--const", action="append", metavar="INPUT=V[,V...]",
                   help="freeze an input to the value the deployment always feeds (e.g. sr=16000): it leaves "
                        "the plan, and what depends on it is decided at compile time")
    c.add_argument("--max-trips", type=_positive_int, default=0, metavar="N",
                   help="unroll a Loop whose trip count is only known at run time to N iterations, each run "
                        "only while the loop goes on (a run that needs more fails)")
    c.add_argument("--board", help="pick kernel variants and weight packing for this board (see boards/)")
    c.add_argument("--quantize", choices=["int8", "auto", "int8-dynamic", "fp16", "bf16", "fp16-exact"],
                   help="post-training "
                   "quantisation of a float model: Conv, MatMul and Gemm on the int8 kernels (needs --calibration); "
                   "auto: mixed precision, the most sensitive layers kept float until the output SQNR reaches "
                   "--target-sqnr; int8-dynamic: GEMMs with constant weights on int8 weights and on activations "
                   "quantised per row at run time (no calibration); fp16 / bf16: convolution and GEMM weights "
                   "stored in 16 bits, float32 arithmetic; fp16-exact: only the weights float16 holds exactly (a "
                   "model shipped in float16), the float32 plan's results")
    c.add_argument("--target-sqnr", type=float, default=30.0, metavar="DB",
                   help="--quantize auto: the output SQNR against the float model to reach (default 30 dB)")
    c.add_argument("--precision-report", metavar="FILE.json", help="--quantize auto: write each layer's precision "
                   "and sensitivity")
    c.add_argument("--calibration", metavar="DIR", help="calibration inputs for --quantize: one .npy (single-input "
                   "model) or .npz (arrays named by the inputs) file per sample, or images or wavs prepared by the "
                   "folder's preprocess.toml (docs/quantization.md)")
    c.add_argument("--preprocess", metavar="RECIPE.toml", help="the recipe for a calibration folder of images or "
                   "wavs, instead of the folder's preprocess.toml")
    c.add_argument("--observer", choices=["percentile", "minmax", "mse"], default="percentile",
                   help="activation ranges for --quantize: the 99.99th percentiles (default), the extremes, or "
                   "the clip of least int8 reconstruction error (mse)")
    c.add_argument("--npu", metavar="PROFILE", help="offload to an NPU the runs of ops it runs faster than the CPU "
                   "(profiles: boards/npu/; docs/npu.md); the plan keeps their CPU ops as the fallback")
    c.add_argument("--npu-cpu", action="append", metavar="NODE", help="with --npu: keep this node's op on the CPU")
    c.add_argument("--ops-out", metavar="FILE", help="write the plan's kernel set (op dtype variant per line) for "
                   "a selective runtime build: meson -Dselective=FILE")
    c.add_argument("--sign", metavar="KEY", help="sign the plan with this secret key (from `edgeplan keygen`): a "
                   "board given the public key refuses any other plan (docs/signing.md)")
    c.set_defaults(fn=cmd_compile)
    gr = sub.add_parser("group", help="group compiled plans into one shared arena (models that run one at a "
                        "time; each keeps its streaming state): one member plan each in a folder")
    gr.add_argument("plans", nargs="+", metavar="PLAN", help="compiled plans, in the order they are opened")
    gr.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder for the member plans")
    gr.add_argument("--names", metavar="A,B,...", help="member names (default: the plans' file names)")
    gr.add_argument("--sign", metavar="KEY", help="sign every member with this secret key (edgeplan keygen)")
    gr.add_argument("--ops-out", metavar="FILE", help="the members' kernel set with group support, for one "
                    "selective runtime build: meson -Dselective=FILE")
    gr.set_defaults(fn=cmd_group)
    kg = sub.add_parser("keygen", help="make an Ed25519 key pair for signing plans: NAME (secret), NAME.pub")
    kg.add_argument("-o", "--output", required=True, metavar="NAME")
    kg.set_defaults(fn=cmd_keygen)
    sg = sub.add_parser("sign", help="sign a compiled plan (replaces an existing signature)")
    sg.add_argument("plan")
    sg.add_argument("--key", required=True, metavar="KEY", help="the secret key from `edgeplan keygen`")
    sg.add_argument("-o", "--output", help="the signed plan (default: the plan, rewritten)")
    sg.set_defaults(fn=cmd_sign)
    bu = sub.add_parser("bundle", help="compile for a board and write a deploy folder with a static edgeplan-run")
    bu.add_argument("model", nargs="?", help="an ONNX model (or none, with the speech options)")
    bu.add_argument("--voice", metavar="VOICE.onnx", help="speech bundle: a Piper voice (its .onnx.json beside it)")
    bu.add_argument("--whisper", metavar="DIR", help="speech bundle: a Whisper folder (tools/whisper_ct2.py)")
    bu.add_argument("--vad", metavar="VAD.onnx", help="speech bundle: a Silero VAD v5/v6 export")
    bu.add_argument("--board", required=True, help="board profile name (boards/*.toml)")
    bu.add_argument("-o", "--output", default="dist")
    bu.add_argument("--shape", action="append", metavar="NAME=D0,D1,...", help="pin an input's shape")
    bu.add_argument("--selective", action="store_true",
                    help="build the runtime with only the kernels this plan uses (smaller; docs/size.md)")
    bu.set_defaults(fn=cmd_bundle)
    r = sub.add_parser("run", help="run a plan")
    r.add_argument("plan")
    r.add_argument("--input", action="append", metavar="[NAME=]FILE.npy")
    r.add_argument("--output", action="append", metavar="[NAME=]FILE.npy",
                   help="write an output as .npy at exactly FILE (no .npy appended); FILE alone: the i-th "
                        "--output takes the plan's i-th output")
    r.add_argument("--random", action="store_true", help="feed seeded random inputs")
    r.add_argument("--repeat", type=positive_int, default=1)
    r.add_argument("--threads", type=positive_int, default=1, help="threads per run, this one included (default 1)")
    r.add_argument("--npu", metavar="PRESET", help="run the plan's partitions on the virtual NPU of this preset "
                   "(u55-128-sram, u55-256-shared, rk3588-core-like, ...) and print its modelled cycles")
    r.add_argument("--public-key", metavar="FILE.pub", help="refuse the plan unless this key signed it")
    r.set_defaults(fn=cmd_run)
    pr = sub.add_parser("profile", help="per-op time, share, GFLOP/s and bytes of a plan; Chrome trace")
    pr.add_argument("plan")
    pr.add_argument("--runs", type=positive_int, default=10, help="timed runs (default 10)")
    pr.add_argument("--warmup", type=nonnegative_int, default=2, help="untimed runs first (default 2)")
    pr.add_argument("--threads", type=positive_int, default=1, help="threads per run, this one included (default 1)")
    pr.add_argument("--input", action="append", metavar="[NAME=]FILE.npy", help="inputs (default: seeded random)")
    pr.add_argument("--trace", metavar="OUT.json", help="write a Chrome trace-event file of every timed run")
    pr.add_argument("--top", type=nonnegative_int, default=0, help="print only the N slowest ops (0: all)")
    pr.add_argument("--npu", metavar="PRESET", help="run the partitions on the virtual NPU of this preset: NPU ops "
                    "on their own trace track at the modelled time, and the end-to-end estimate")
    pr.set_defaults(fn=cmd_profile)
    i = sub.add_parser("inspect", help="show a plan's header, sections, tensors, ops and arena map")
    i.add_argument("plan")
    i.add_argument("--public-key", metavar="FILE.pub", help="also check the plan's signature with this key")
    i.set_defaults(fn=cmd_inspect)
    sz = sub.add_parser("size", help="binary-size budgets: build the size probes and check them (sizebudget)",
                        add_help=False)
    sz.add_argument("args", nargs=argparse.REMAINDER)
    sz.set_defaults(fn=cmd_size)
    d = sub.add_parser("demo", help="build a zoo model, compile it, run it on seeded random inputs")
    d.add_argument("--model", default="mobilenetv2")
    d.add_argument("--size", type=nonnegative_int, default=0, help="input size (0: the model's default)")
    d.add_argument("--repeat", type=positive_int, default=5)
    d.set_defaults(fn=cmd_demo)
    add_speech_parsers(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["size"]:          # everything after "size" is sizebudget's own command line
            return cmd_size(argparse.Namespace(args=argv[1:]))
        a = p.parse_args(argv)
        rc = a.fn(a)
        sys.stdout.flush()                # here, so a closed pipe is caught below, not at exit
        return rc
    except KeyboardInterrupt:
        print("edgeplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:               # `edgeplan ... | head`: the reader left; stop quietly
        try:   # the interpreter's last flush of stdout would fail again: point it at /dev/null
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141


if __name__ == "__main__":
    sys.exit(main())
