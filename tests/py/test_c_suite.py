"""Runs the C unit tests (kernel families) through meson, as a board build would (-Dpython=false)."""
import shutil
import subprocess
import sys

import pytest


def test_meson_c_tests(root, tmp_path):
    meson = shutil.which("meson")
    cmd = [meson] if meson else [sys.executable, "-m", "mesonbuild.mesonmain"]
    build = tmp_path / "build"
    subprocess.run(cmd + ["setup", str(build), str(root), "-Dpython=false", "-Dtests=true",
                    "--buildtype=debugoptimized", "-Db_sanitize=address,undefined"], check=True,
                   capture_output=True, text=True)
    r = subprocess.run(cmd + ["test", "-C", str(build), "--print-errorlogs"], capture_output=True, text=True)
    print(r.stdout[-4000:], r.stderr[-2000:])
    assert r.returncode == 0
    import re
    ok = re.search(r"^Ok:\s+(\d+)", r.stdout, re.M)
    assert ok and int(ok.group(1)) >= 2, "the C tests did not run"
