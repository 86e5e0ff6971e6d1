"""Plan mutation under AddressSanitizer + UndefinedBehaviorSanitizer: >= 10,000 truncated, bit-flipped and
field-poked variants of real plans (CRC re-sealed so they reach the deep checks). Each must be rejected
with an error code or open and run; any crash, sanitizer report or hang fails the test."""
import re
import shutil
import subprocess
import sys

import pytest

import edgeplan
from conftest import zoo

N_MUTATIONS = 12000


def _sources(root):
    rt = root / "runtime_c"
    srcs = sorted((rt / "src").glob("*.c")) + sorted((rt / "src" / "ops").glob("*.c"))
    # the portable build: no ISA-specific files (cpu_x86.c, crc32c_aarch64.c, dispatch_x86.c, ...)
    isa = ("_x86.c", "_aarch64.c", "_armv7.c", "_arm.c")
    srcs = [s for s in srcs if not s.name.endswith(isa)]
    assert any(s.name == "dispatch.c" for s in srcs) and any(s.name == "cpu_generic.c" for s in srcs)
    return srcs + sorted((rt / "kernels" / "ref").glob("*.c"))


@pytest.fixture(scope="module")
def harness(root, tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.fail("no C compiler")
    d = tmp_path_factory.mktemp("fuzz")
    out = d / "fuzz_plans"
    rt = root / "runtime_c"
    # every op and variant (what meson's configure step writes for -Dkernels=all)
    subprocess.run([sys.executable, str(rt / "gen_config.py"), "--ops", str(rt / "ops.def"),
                    "--kernels", "all", "-o", str(d / "ep_config.h")], check=True)
    cmd = [cc, "-std=c11", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
           "-fno-omit-frame-pointer", f"-I{d}", f"-I{rt}", f"-I{rt / 'include'}", f"-I{rt / 'kernels'}", f"-I{rt / 'src'}",
           str(root / "tests" / "c" / "fuzz_plans.c"), *map(str, _sources(root)), "-lm", "-o", str(out)]
    subprocess.run(cmd, check=True)
    return out


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    d = tmp_path_factory.mktemp("plans")
    m = zoo()
    paths = []
    # small weights: every mutation copies the whole plan, and weights add bytes, not code paths
    for name, kw in [("tiny", {}), ("mobilenetv2", {"size": 32, "width": 0.25, "num_classes": 10}),
                     ("yolo", {"size": 64, "nc": 2, "width": 0.0625})]:
        p = d / f"{name}.eplan"
        edgeplan.compile(m.build(name, **kw)).save(p)
        paths.append(p)
    # plan 1.1: variable dims with rules, a data-dependent length, streaming state
    from test_dynamic import conv_encoder, gru_stream_model, range_model
    for name, model, kw in [("encoder", conv_encoder(), dict(dims={"T": (1, 64)})),
                            ("lenreg", range_model(), dict(dims={"N": (1, 8), "frames": (0, 40)})),
                            ("gru_state", gru_stream_model(), dict(dims={"T": (1, 16)}, state={"h_in": "h_out"}))]:
        p = d / f"{name}.eplan"
        edgeplan.compile(model, **kw).save(p)
        paths.append(p)
    return paths


def test_mutated_plans_never_crash(harness, plans):
    # tiny twice: half the mutations on the cheapest plan, the rest on the two op-rich ones
    r = subprocess.run([str(harness), str(N_MUTATIONS), "20261129", str(plans[0]), *map(str, plans)],
                       capture_output=True,
                       text=True, timeout=1200,
                       env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1", "UBSAN_OPTIONS": "print_stacktrace=1"})
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0, r.stderr[-3000:]
    m = re.search(r"(\d+) mutated plans: (\d+) rejected by validate, (\d+) rejected at open, (\d+) opened and ran", r.stdout)
    assert m, r.stdout
    total, q, o, ran = map(int, m.groups())
    assert total >= 10000
    # the mutations must reach every layer: container checks, open-time op checks, and kernels
    assert q > 1000 and o > 500 and ran > 100, r.stdout


def test_real_plans_run_clean_under_sanitizers(harness, plans):
    r = subprocess.run([str(harness), "0", "0", *map(str, plans)], capture_output=True, text=True, timeout=600)
    print(r.stdout, r.stderr[-3000:])
    assert r.returncode == 0 and r.stdout.count(": ok") == len(plans)
