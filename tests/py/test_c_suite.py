"""Runs the C unit tests (kernel families) through meson, as a board build would (-Dpython=false)."""
import shutil
import subprocess

import pytest


def test_meson_c_tests(root, tmp_path):
    meson = shutil.which("meson")
    if meson is None:
        pytest.fail("meson is not installed (pip install '.[test]' brings it)")
    build = tmp_path / "build"
    subprocess.run([meson, "setup", str(build), str(root), "-Dpython=false", "-Dtests=true",
                    "--buildtype=debugoptimized", "-Db_sanitize=address,undefined"], check=True,
                   capture_output=True, text=True)
    r = subprocess.run([meson, "test", "-C", str(build), "--print-errorlogs"], capture_output=True, text=True)
    print(r.stdout[-4000:], r.stderr[-2000:])
    assert r.returncode == 0
    import re
    ok = re.search(r"^Ok:\s+(\d+)", r.stdout, re.M)
    assert ok and int(ok.group(1)) >= 2, "the C tests did not run"
