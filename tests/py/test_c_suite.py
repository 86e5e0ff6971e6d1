"""Runs the C tests (tests/c: the reference kernels' known answers, the kernel-table checks of every family, the
public API on a hand-built plan, plan mutation) through meson under ASan + UBSan, as a board build would
(-Dpython=false). Every test listed in tests/c/meson.build must pass, and every kernel-check family must report
0 failures."""
import os
import re
import subprocess

import pytest

from conftest import meson_cmd

C_TESTS = ["test_ref_linear", "test_ref_elementwise", "test_ref_speech", "test_ref_random", "test_runtime_api",
           "test_speech_io", "check_conv", "check_linear", "check_elementwise", "check_pool", "check_sequence",
           "fuzz_plans", "test_swap"]
FAMILIES = ["check_conv", "check_linear", "check_elementwise", "check_pool", "check_sequence"]


@pytest.mark.slow
def test_meson_c_tests(asan_build):
    r = subprocess.run(meson_cmd() + ["test", "-C", str(asan_build), "--print-errorlogs"], capture_output=True,
                       text=True, env=dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"))
    print(r.stdout[-4000:], r.stderr[-2000:])
    assert r.returncode == 0
    ok = re.search(r"^Ok:\s+(\d+)", r.stdout, re.M)
    assert ok and int(ok.group(1)) >= len(C_TESTS), "the C tests did not all run"
    for t in C_TESTS:
        assert re.search(rf"\b{t}\s+OK\b", r.stdout), f"{t} did not pass"
    log = (asan_build / "meson-logs" / "testlog.txt").read_text()
    for fam in FAMILIES:
        assert re.search(rf"^{fam}: \d+ cases .*; \d+ checks passed, 0 failed$", log, re.M), fam
    assert "test_runtime_api: " in log and re.search(r"test_runtime_api: \d+ passed, 0 failed", log)
    assert re.search(r"test_swap: 1000 swaps under load: \d+ requests .*, 0 wrong, 0 failed", log)
    assert re.search(r"test_swap: \d+ passed, 0 failed", log)

