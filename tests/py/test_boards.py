"""Board profiles (boards/*.toml + boards/cross/*.ini) and `edgeplan compile --board` (host only; the
builds and runs under qemu are in test_cross.py)."""
from __future__ import annotations

import re

import pytest

from conftest import zoo  # noqa: E402

from edgeplan import boards  # noqa: E402

EXPECTED = {"rpi4", "rpi5", "rk3588", "imx8mp", "generic-aarch64", "armv7", "x86-64"}


def test_every_board_loads():
    assert EXPECTED <= set(boards.list_boards())
    for name in boards.list_boards():
        b = boards.load_board(name)
        assert b.name == name and b.cores >= 1 and b.ram_mb > 0 and b.arch in ("aarch64", "arm", "x86_64")
        assert b.size_budget["runtime_bytes"] > 0 and b.size_budget["run_static_bytes"] > 0
        if b.native:
            assert b.arch == "x86_64" and not b.qemu
        else:
            assert b.cross_file.is_file(), b.cross_file
            ini = b.cross_file.read_text()
            assert f"cpu_family = '{b.arch}'" in ini
            assert "exe_wrapper" in ini and b.qemu[0] in ini
        if b.arch == "aarch64":
            assert "NEON" in b.features


def test_feature_names_match_header(root):
    text = (root / "runtime_c" / "include" / "edgeplan" / "plan_format.h").read_text()
    hdr = {m[0]: int(m[1], 0) for m in re.findall(r"#define EP_CPU_(\w+) (\w+)", text)}
    assert boards.CPU_FEATURES == hdr
    assert boards.load_board("rpi5").feature_mask == hdr["NEON"] | hdr["CRC32"] | hdr["DOTPROD"] | hdr["FP16"]
    assert not boards.load_board("rpi4").feature_mask & (hdr["DOTPROD"] | hdr["FP16"])


def test_mini_toml_matches_tomllib():
    for name in boards.list_boards():
        path = boards.load_board(name).path
        assert boards._mini_toml(path.read_text()) == boards._load_toml(path)


def test_unknown_board():
    with pytest.raises(ValueError, match="known boards"):
        boards.load_board("nonesuch")


def test_compile_for_board(tmp_path):
    import onnx
    from edgeplan.cli import main
    from edgeplan.plan import read_plan
    m = tmp_path / "tiny.onnx"
    onnx.save(zoo().build("tiny"), m)
    out = tmp_path / "tiny.eplan"
    assert main(["compile", str(m), "--board", "rpi4", "-o", str(out)]) == 0
    p = read_plan(out.read_bytes())
    assert p["meta"]["target"] == "rpi4"            # the board recorded in the plan's metadata
    assert p["header"]["required_features"] == 0    # every chosen variant has a portable kernel
    assert any(o["op"] == "conv2d" and o["variant"] == 1 for o in p["ops"])   # packed GEMM for the A72
    assert main(["compile", str(m), "--board", "armv7", "-o", str(out)]) == 0
    assert all(o["variant"] == 0 for o in read_plan(out.read_bytes())["ops"])  # ref kernels on armv7
    with pytest.raises(SystemExit):
        main(["compile", str(m), "--board", "nonesuch", "-o", str(out)])
