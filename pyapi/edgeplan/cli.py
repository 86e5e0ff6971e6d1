"""The edgeplan command line: compile, run, profile, inspect, demo."""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np


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


def _peak_rss_kib() -> int:
    # VmHWM is this process's own peak; ru_maxrss also carries a parent's peak across exec on Linux
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


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


def _compile(model, shapes, out=None, board=None, dims=None, state=None):
    import edgeplan
    from edgeplan.compiler.errors import CompileError
    try:
        if dims:
            from edgeplan.compiler.dynamic import parse_dims
            dims = parse_dims(list(dims))
        plan = edgeplan.compile(model, shapes=shapes, board=board, dims=dims or None, state=state or None)
    except CompileError as e:
        print(f"edgeplan: cannot compile {model if isinstance(model, str) else 'model'}:\n{e}", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as e:
        print(f"edgeplan: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    except Exception as e:  # noqa: BLE001 - e.g. protobuf's DecodeError for a file that is not ONNX
        if type(e).__name__ != "DecodeError":
            raise
        print(f"edgeplan: {model} is not an ONNX model ({e})", file=sys.stderr)
        raise SystemExit(1) from None
    if out:
        plan.save(out)
    return plan


def cmd_compile(a) -> int:
    out = a.output or str(Path(a.model).with_suffix(".eplan"))
    t = time.perf_counter()
    board = _board(a.board)
    plan = _compile(a.model, _parse_shapes(a.shape), None, board=board, dims=a.dim, state=_parse_state(a.state))
    if board is not None:   # weights + arena + runtime against the board's RAM (sizebudget, docs/size.md)
        from edgeplan.boards import ram_check
        fits, text = ram_check(board, plan)
        print(text)
        if not fits:
            print(f"edgeplan: {a.model} does not fit in {board.name}'s RAM; plan not written", file=sys.stderr)
            return 1
    plan.save(out)
    print(f"compiled {a.model} -> {out}{f' for {a.board}' if a.board else ''} in {time.perf_counter() - t:.2f} s")
    print(plan.summary())
    if a.ops_out:   # the kernel set, for a selective runtime build: meson -Dselective=FILE
        from edgeplan.compiler.kernelset import ops_text
        Path(a.ops_out).write_text(ops_text(plan.report.get("kernels", []), source=out,
                                            features=plan.report.get("features", [])))
        print(f"kernel set ({len(plan.report.get('kernels', []))} kernels) -> {a.ops_out}")
    return 0


def cmd_size(a) -> int:
    """edgeplan size: sizebudget's CLI (installed with the package, or the checkout's sizebudget/)."""
    try:
        from sizebudget.cli import main as size_main
    except ImportError:
        from edgeplan.bundle import source_root
        sys.path.insert(0, str(source_root()))
        try:
            from sizebudget.cli import main as size_main
        except ImportError:
            print("edgeplan: sizebudget not found (run from a checkout, or set EDGEPLAN_SRC)", file=sys.stderr)
            return 2
    return size_main(a.args, prog="edgeplan size")


def _board(name):
    if not name:
        return None
    from edgeplan.boards import load_board
    try:
        return load_board(name)
    except ValueError as e:
        raise SystemExit(f"edgeplan: {e}") from None


def cmd_bundle(a) -> int:
    from edgeplan.bundle import BuildError, make_bundle
    from edgeplan.compiler.errors import CompileError
    board = _board(a.board)
    t = time.perf_counter()
    try:
        out = make_bundle(a.model, board, a.output, shapes=_parse_shapes(a.shape), selective=a.selective)
    except (BuildError, CompileError) as e:
        print(f"{e}", file=sys.stderr)
        return 1
    print(f"bundle for {board.name} written to {out}/ in {time.perf_counter() - t:.1f} s:")
    for f in sorted(p for p in Path(out).rglob("*") if p.is_file()):
        print(f"  {f.relative_to(out)}  ({f.stat().st_size:,} bytes)")
    print(f"run: see {Path(out) / 'README.md'}")
    return 0


def _run_and_report(sess, feeds: dict, repeat: int, outputs=None) -> dict:
    times = []
    outs = {}
    for _ in range(max(1, repeat)):
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
          f"in place; peak RSS {_peak_rss_kib() / 1024:.1f} MiB")
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


def cmd_run(a) -> int:
    from edgeplan import EdgeplanError, Session
    try:
        sess = Session(a.plan, threads=a.threads)
    except (EdgeplanError, OSError, ValueError) as e:
        print(f"edgeplan: {e}", file=sys.stderr)
        return 1
    feeds = _random_feeds(sess) if a.random else {}
    for item in a.input or []:
        name, sep, path = item.partition("=")
        if not sep:
            if len(sess.inputs) != 1:
                print("edgeplan: the plan has several inputs; use --input NAME=FILE.npy", file=sys.stderr)
                return 2
            name, path = sess.inputs[0].name, item
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            print(f"edgeplan: cannot read {path} as a .npy array: {e}", file=sys.stderr)
            return 1
    missing = [t.name for t in sess.inputs if t.name not in feeds]
    if missing:
        print(f"edgeplan: no value for input(s) {', '.join(missing)}: give --input NAME=FILE.npy or --random",
              file=sys.stderr)
        return 2
    try:
        outs = _run_and_report(sess, feeds, a.repeat)
    except (EdgeplanError, KeyError, TypeError, ValueError) as e:
        print(f"edgeplan: {e}", file=sys.stderr)
        return 1
    for item in a.output or []:
        name, sep, path = item.partition("=")
        if not sep:
            name, path = next(iter(outs)), item
        np.save(path, outs[name])
    return 0


def cmd_profile(a) -> int:
    from edgeplan import EdgeplanError, Session
    from edgeplan.profile import profile_session, random_feeds, report_text, write_trace
    try:
        sess = Session(a.plan, threads=a.threads, profile=True)
    except (EdgeplanError, OSError, ValueError) as e:
        print(f"edgeplan: {e}", file=sys.stderr)
        return 1
    feeds = random_feeds(sess)
    for item in a.input or []:
        name, sep, path = item.partition("=")
        if not sep:
            name, path = sess.inputs[0].name, item
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            print(f"edgeplan: cannot read {path} as a .npy array: {e}", file=sys.stderr)
            return 1
    try:
        result = profile_session(sess, feeds, runs=a.runs, warmup=a.warmup, trace=bool(a.trace))
    except (EdgeplanError, KeyError, TypeError, ValueError) as e:
        print(f"edgeplan: {e}", file=sys.stderr)
        return 1
    print(f"{a.plan}: {sess.n_ops} ops")
    print(report_text(result, top=a.top))
    if a.trace:
        write_trace(result, a.trace, title=Path(a.plan).name)
        print(f"trace ({len(result['events'])} events) -> {a.trace} (chrome://tracing or ui.perfetto.dev)")
    return 0


def cmd_inspect(a) -> int:
    from edgeplan.plan import inspect_text
    from edgeplan.runtime import load_library
    from edgeplan._cdef import ffi
    try:
        data = Path(a.plan).read_bytes()
    except OSError as e:
        print(f"edgeplan: {e}", file=sys.stderr)
        return 1
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    rc = load_library().ep_plan_validate(ffi.from_buffer(buf), len(data))
    if rc:
        from edgeplan.runtime import status_str
        print(f"edgeplan: {a.plan}: invalid plan: {status_str(rc)} ({rc})", file=sys.stderr)
        return 1
    print(inspect_text(data))
    return 0


def cmd_demo(a) -> int:
    import tempfile
    from edgeplan import Session, models
    print(f"building the zoo model '{a.model}' (deterministic weights) ...")
    kw = {"size": a.size} if a.size else {}
    model = models.build(a.model, **kw)
    with tempfile.TemporaryDirectory() as d:
        onnx_path = Path(d) / f"{a.model}.onnx"
        import onnx
        onnx.save(model, onnx_path)
        plan_path = Path(d) / f"{a.model}.eplan"
        t = time.perf_counter()
        plan = _compile(str(onnx_path), {}, plan_path)
        print(f"compiled in {time.perf_counter() - t:.2f} s")
        print(plan.summary())
        t = time.perf_counter()
        sess = Session(plan_path)
        print(f"opened {plan_path.name} in {(time.perf_counter() - t) * 1e3:.2f} ms")
        _run_and_report(sess, _random_feeds(sess), a.repeat)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="edgeplan", description="Compile ONNX models to plans and run them.")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile an ONNX model into a plan")
    c.add_argument("model")
    c.add_argument("-o", "--output")
    c.add_argument("--shape", action="append", metavar="NAME=D0,D1,...", help="pin an input's shape")
    c.add_argument("--dim", action="append", metavar="NAME=MIN..MAX",
                   help="bound a variable dim by the model's dim name (e.g. T=1..3000) or a data-dependent "
                        "length; one plan serves every value in range, its arena planned for MAX")
    c.add_argument("--state", action="append", metavar="INPUT=OUTPUT",
                   help="streaming state: OUTPUT is fed back into INPUT after every run, kept in the arena")
    c.add_argument("--board", help="pick kernel variants and weight packing for this board (see boards/)")
    c.add_argument("--ops-out", metavar="FILE", help="write the plan's kernel set (op dtype variant per line) for "
                   "a selective runtime build: meson -Dselective=FILE")
    c.set_defaults(fn=cmd_compile)
    bu = sub.add_parser("bundle", help="compile for a board and write a deploy folder with a static edgeplan-run")
    bu.add_argument("model")
    bu.add_argument("--board", required=True, help="board profile name (boards/*.toml)")
    bu.add_argument("-o", "--output", default="dist")
    bu.add_argument("--shape", action="append", metavar="NAME=D0,D1,...", help="pin an input's shape")
    bu.add_argument("--selective", action="store_true",
                    help="build the runtime with only the kernels this plan uses (smaller; docs/size.md)")
    bu.set_defaults(fn=cmd_bundle)
    r = sub.add_parser("run", help="run a plan")
    r.add_argument("plan")
    r.add_argument("--input", action="append", metavar="[NAME=]FILE.npy")
    r.add_argument("--output", action="append", metavar="[NAME=]FILE.npy")
    r.add_argument("--random", action="store_true", help="feed seeded random inputs")
    r.add_argument("--repeat", type=int, default=1)
    r.add_argument("--threads", type=int, default=1, help="threads per run, this one included (default 1)")
    r.set_defaults(fn=cmd_run)
    pr = sub.add_parser("profile", help="per-op time, share, GFLOP/s and bytes of a plan; Chrome trace")
    pr.add_argument("plan")
    pr.add_argument("--runs", type=int, default=10, help="timed runs (default 10)")
    pr.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")
    pr.add_argument("--threads", type=int, default=1, help="threads per run, this one included (default 1)")
    pr.add_argument("--input", action="append", metavar="[NAME=]FILE.npy", help="inputs (default: seeded random)")
    pr.add_argument("--trace", metavar="OUT.json", help="write a Chrome trace-event file of every timed run")
    pr.add_argument("--top", type=int, default=0, help="print only the N slowest ops")
    pr.set_defaults(fn=cmd_profile)
    i = sub.add_parser("inspect", help="show a plan's header, sections, tensors, ops and arena map")
    i.add_argument("plan")
    i.set_defaults(fn=cmd_inspect)
    sz = sub.add_parser("size", help="binary-size budgets: build the size probes and check them (sizebudget)",
                        add_help=False)
    sz.add_argument("args", nargs=argparse.REMAINDER)
    sz.set_defaults(fn=cmd_size)
    d = sub.add_parser("demo", help="build a zoo CNN, compile it, run it")
    d.add_argument("--model", default="mobilenetv2")
    d.add_argument("--size", type=int, default=0)
    d.add_argument("--repeat", type=int, default=5)
    d.set_defaults(fn=cmd_demo)
    from edgeplan.speech import add_parsers as add_speech_parsers   # edgeplan asr / tts (speech.py)
    add_speech_parsers(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["size"]:          # everything after "size" is sizebudget's own command line
        return cmd_size(argparse.Namespace(args=argv[1:]))
    a = p.parse_args(argv)
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
