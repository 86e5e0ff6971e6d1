"""The fuzz targets of tests/fuzz (meson -Dfuzz=true, docs/fuzzing.md), built in their own sanitizer build:
with clang as libFuzzer binaries (coverage-guided, the whole runtime instrumented), else on the mutation
driver (tests/fuzz/driver.c). Each runs 50,000 executions from a copy of its committed corpus after replaying
every committed crash (tests/fuzz/crashes/<target>/); a crash, a sanitizer report or a leak fails the test.
Targets: a plan (fuzz_plan, with its field-aware custom mutator), the speech layer's wav reader (fuzz_wav),
edgeplan-run's .npy reader (fuzz_npy) and the virtual NPU's blobs (fuzz_vnpu)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import meson_cmd

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"
TARGETS = ["fuzz_plan", "fuzz_wav", "fuzz_npy", "fuzz_vnpu"]
RUNS = 50000

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fuzz_build(tmp_path_factory):
    build = tmp_path_factory.mktemp("fuzz") / "build"
    cc = "clang" if shutil.which("clang") else os.environ.get("CC", "cc")
    r = subprocess.run(meson_cmd() + ["setup", str(build), str(ROOT), "-Dfuzz=true", "-Dpython=false",
                                      "-Dtests=false", "--buildtype=debugoptimized",
                                      "-Db_sanitize=address,undefined", "-Db_lundef=false"],
                       capture_output=True, text=True, env=dict(os.environ, CC=cc))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    r = subprocess.run(["ninja", "-C", str(build)] + [f"tests/fuzz/{t}" for t in TARGETS], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    return build, cc == "clang"


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_target(fuzz_build, target, tmp_path):
    build, libfuzzer = fuzz_build
    exe = build / "tests" / "fuzz" / target
    env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=1")
    crashes = sorted((FUZZ / "crashes" / target).glob("*")) if (FUZZ / "crashes" / target).is_dir() else []
    if crashes:   # every crash found so far stays fixed
        r = subprocess.run([str(exe)] + [str(c) for c in crashes] + (["-runs=0"] if not libfuzzer else []),
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert r.returncode == 0, r.stderr[-4000:]
    corpus = tmp_path / "corpus"
    shutil.copytree(FUZZ / "corpus" / target, corpus)
    args = [f"-runs={RUNS}", "-seed=20261205"] + (["-rss_limit_mb=4096", "-timeout=20", "-max_len=65536"]
                                                  if libfuzzer else [])
    r = subprocess.run([str(exe)] + args + [str(corpus)], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert f"Done {RUNS}" in r.stdout + r.stderr or f"Done {RUNS + len(list(corpus.iterdir()))}" in r.stdout, \
        (r.stdout + r.stderr)[-2000:]
