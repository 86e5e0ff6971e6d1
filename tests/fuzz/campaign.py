"""A fuzzing campaign over every target of tests/fuzz (docs/fuzzing.md): builds the targets (or takes a build dir),
gives each a share of the executions, runs them one after the other from a copy of its seed corpus, and prints
per target the executions, the crashes (libFuzzer's crash-/leak-/timeout-/oom- artifacts, or a failing exit), the
seconds, and with libFuzzer the edges covered and the corpus it grew to; then the totals. Exits 1 on any crash.

    python3 tests/fuzz/campaign.py --execs 1000000                 # configures and builds ./build-fuzz
    python3 tests/fuzz/campaign.py --execs 1000000 --build DIR     # a build made with -Dfuzz=true
    python3 tests/fuzz/campaign.py --execs 200000 --targets fuzz_npy,fuzz_vnpu --keep OUT

The build is clang's libFuzzer with ASan + UBSan when clang is on PATH, else the mutation driver (driver.c)."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"
# the share of the executions each target gets: the plan is the runtime's whole attack surface
SHARES = {"fuzz_plan": 0.4, "fuzz_vnpu": 0.3, "fuzz_npy": 0.15, "fuzz_wav": 0.15}
SANITIZERS = {"UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1", "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1"}
ARTIFACTS = ("crash-", "leak-", "timeout-", "oom-", "slow-unit-")


def build(build_dir: Path, targets: list) -> bool:
    """Configures build_dir (when it has no build.ninja) and builds the targets; True for libFuzzer binaries."""
    meson = [shutil.which("meson")] if shutil.which("meson") else [sys.executable, "-m", "mesonbuild.mesonmain"]
    if not (build_dir / "build.ninja").is_file():
        cc = "clang" if shutil.which("clang") else os.environ.get("CC", "cc")
        r = subprocess.run(meson + ["setup", str(build_dir), str(ROOT), "-Dfuzz=true", "-Dpython=false",
                                    "-Dtests=false", "--buildtype=debugoptimized", "-Db_sanitize=address,undefined",
                                    "-Db_lundef=false"], env=dict(os.environ, CC=cc), capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"campaign: meson setup {build_dir} failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    r = subprocess.run(["ninja", "-C", str(build_dir)] + [f"tests/fuzz/{t}" for t in targets],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"campaign: building the targets failed (was {build_dir} configured with -Dfuzz=true?):\n"
                 f"{r.stdout[-3000:]}{r.stderr[-2000:]}")
    out = subprocess.run(meson + ["introspect", "--compilers", str(build_dir)], capture_output=True, text=True)
    return '"id": "clang"' in out.stdout


def run_target(exe: Path, target: str, execs: int, seed: int, libfuzzer: bool, work: Path) -> dict:
    corpus, art = work / target / "corpus", work / target / "artifacts"
    shutil.copytree(FUZZ / "corpus" / target, corpus)
    art.mkdir(parents=True)
    seeds = len(list(corpus.iterdir()))
    args = [str(exe), f"-runs={execs}", f"-seed={seed}"]
    if libfuzzer:
        args += ["-rss_limit_mb=4096", "-timeout=20", "-max_len=65536", f"-artifact_prefix={art}/",
                 "-print_final_stats=1"]
    t0 = time.monotonic()
    r = subprocess.run(args + [str(corpus)], capture_output=True, text=True, cwd=art,
                       env=dict(os.environ, **SANITIZERS))
    seconds = time.monotonic() - t0
    log = r.stdout + r.stderr
    (work / target / "log.txt").write_text(log)
    found = [p.name for p in art.iterdir() if p.name.startswith(ARTIFACTS) and p.name not in ("crash-0", "crash-1")]
    if not libfuzzer and r.returncode:   # the driver leaves the input it died on in crash-0 / crash-1
        found += [p.name for p in art.iterdir() if p.name in ("crash-0", "crash-1")]
    m = re.search(r"Done (\d+) runs", log)
    done = int(m.group(1)) if m else 0
    cov = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", log)
    return dict(target=target, execs=done, crashes=len(found) or int(r.returncode != 0), seconds=seconds,
                edges=int(cov[-1][0]) if cov else None, corpus=int(cov[-1][2]) if cov else None, seeds=seeds,
                artifacts=found, rc=r.returncode)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--execs", type=int, default=1_000_000, help="executions over all targets (default 1,000,000)")
    ap.add_argument("--build", type=Path, default=ROOT / "build-fuzz", help="fuzz build dir (made when absent)")
    ap.add_argument("--targets", default=",".join(SHARES), help="comma list (default: all)")
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--keep", type=Path, help="keep corpora, artifacts and logs here (default: a temporary dir)")
    a = ap.parse_args(argv)
    a.build = a.build.resolve()
    targets = [t for t in a.targets.split(",") if t]
    unknown = [t for t in targets if t not in SHARES]
    if unknown:
        ap.error(f"unknown target {', '.join(unknown)}; known: {', '.join(SHARES)}")
    libfuzzer = build(a.build, targets)
    total_share = sum(SHARES[t] for t in targets)
    work = a.keep or Path(tempfile.mkdtemp(prefix="ep-campaign-"))
    if a.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    print(f"campaign: {a.execs:,} executions, {'libFuzzer' if libfuzzer else 'mutation driver'}, seed {a.seed}, "
          f"build {a.build}", flush=True)
    print(f"{'target':<10} {'executions':>11} {'crashes':>7} {'seconds':>8} {'exec/s':>7} {'edges':>6} "
          f"{'corpus':>12}", flush=True)
    rows = []
    for t in targets:
        n = max(1, round(a.execs * SHARES[t] / total_share))
        row = run_target(a.build / "tests" / "fuzz" / t, t, n, a.seed, libfuzzer, work)
        rows.append(row)
        corpus = f"{row['seeds']} -> {row['corpus']}" if row["corpus"] is not None else "-"
        print(f"{t:<10} {row['execs']:>11,} {row['crashes']:>7} {row['seconds']:>8.1f} "
              f"{row['execs'] / max(row['seconds'], 1e-9):>7,.0f} {row['edges'] if row['edges'] else '-':>6} "
              f"{corpus:>12}", flush=True)
        for name in row["artifacts"]:
            print(f"  {work / t / 'artifacts' / name}")
    execs, crashes, secs = (sum(r[k] for r in rows) for k in ("execs", "crashes", "seconds"))
    print(f"{'total':<10} {execs:>11,} {crashes:>7} {secs:>8.1f} {execs / max(secs, 1e-9):>7,.0f}")
    if crashes:
        print(f"campaign: {crashes} crash(es); logs and inputs in {work} (copy an input to "
              f"tests/fuzz/crashes/<target>/ once fixed)")
    elif not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
