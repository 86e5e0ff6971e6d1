"""Binary-size budgets (docs/size.md): the size probes of the runtime for aarch64 (cross,
-Os, stripped) and x86-64 are built and checked against sizebudget/budgets.toml and the committed
baseline; a budget set below the actual size fails and names the component; a selective build runs
the plan it was built for and rejects ops it lacks; compile --board checks the board's RAM."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from conftest import ROOT, zoo

pytestmark = pytest.mark.slow   # cross-builds the aarch64 probes (~30 s) and several selective builds

AARCH64_CC = "aarch64-linux-gnu-gcc"


def sizebudget(*args, timeout=600, env=None):
    """python -m edgeplan.sizebudget (the checkout's sizebudget/, installed as a subpackage)."""
    return subprocess.run([sys.executable, "-m", "edgeplan.sizebudget", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    """Builds every probe of the CI boards once: {probe: report json}, plus the build root."""
    if shutil.which(AARCH64_CC) is None:
        pytest.fail(f"{AARCH64_CC} is not installed: the aarch64 size check cannot run. Install it with "
                    "`apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross` (.ci/run does).")
    root = tmp_path_factory.mktemp("size")
    r = sizebudget("check", "--board", "generic-aarch64", "--board", "x86-64", "--json", "--build-root", root)
    assert r.returncode in (0, 1), f"probe build failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    out = json.loads(r.stdout)
    out["returncode"], out["root"] = r.returncode, root
    return out


def test_probes_within_budgets_and_baseline(probes):
    """What CI enforces: every probe of generic-aarch64 and x86-64 within budgets.toml and the ratchet."""
    msgs = "\n".join(f["message"] for f in probes["findings"])
    assert probes["returncode"] == 0 and not probes["findings"], f"size check failed:\n{msgs}"
    assert set(probes["probes"]) == {f"{b}/{c}" for b in ("generic-aarch64", "x86-64")
                                     for c in ("core", "mobilenetv2", "mobilenetv2-int8", "all", "speech")}


def test_issue_targets_on_aarch64(probes):
    """The issue's targets (aarch64, -Os, stripped, .text+.rodata+.data)."""
    p = probes["probes"]
    assert p["generic-aarch64/core"]["arch"] == "AArch64"
    assert p["generic-aarch64/core"]["totals"]["size"] <= 16 * 1024
    assert p["generic-aarch64/mobilenetv2"]["totals"]["size"] <= 64 * 1024
    assert p["generic-aarch64/mobilenetv2-int8"]["totals"]["size"] <= 64 * 1024
    assert p["generic-aarch64/all"]["totals"]["size"] <= 512 * 1024


def test_components_are_attributed(probes):
    """Core, shape functions, kernel families per ISA: almost every byte has a named owner."""
    for probe, rep in probes["probes"].items():
        comps = rep["components"]
        anon = sum(v["size"] for c, v in comps.items() if c.startswith("other/"))
        assert anon <= 0.03 * rep["totals"]["size"] + 512, (probe, anon)
        if probe.endswith("/speech"):   # the speech layer alone: no runtime in it
            assert "speech/speech" in comps and not any(c.startswith(("core/", "shape/")) for c in comps), comps
            continue
        assert {"core/plan", "core/session", "core/status"} <= set(comps), probe
        isa = "neon" if probe.startswith("generic-aarch64") else "x86"
        if probe.endswith("/core"):
            assert not any(c.startswith(("shape/", "ref/conv", f"{isa}/conv")) for c in comps), (probe, comps)
        if probe.endswith("/all"):
            assert {"shape/conv", "ref/conv", "ref/pool", f"{isa}/conv", f"{isa}/packed-gemm"} <= set(comps), probe
        if probe.endswith("/mobilenetv2"):
            # the plain convolutions, or on x86 the C8 layout's (docs/kernels.md)
            assert ({f"{isa}/conv"} <= set(comps) or {f"{isa}/blocked_dw", f"{isa}/blocked_pw"} <= set(comps)) and (
                "ref/resize" not in comps and "shape/resize" not in comps), probe
            assert not any(c.endswith("/quant") for c in comps), probe
        if probe.endswith("/mobilenetv2-int8"):   # the int8 kernels, not the float convolutions they replace
            assert f"{isa}/quant" in comps and f"{isa}/conv" not in comps and "ref/resize" not in comps, (probe, comps)


def test_budget_below_actual_size_fails_and_names_component(probes, tmp_path):
    core = probes["probes"]["generic-aarch64/core"]
    session = core["components"]["core/session"]["size"]
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(f"[generic-aarch64.core]\nsize = {core['totals']['size'] - 1}\n"
                       f'"core/session" = {session - 100}\n')
    r = sizebudget("check", "--board", "generic-aarch64", "--config", "core", "--budgets", budgets,
                   "--baseline", "", "--build-root", probes["root"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL [budget] generic-aarch64/core" in r.stdout
    assert "component core/session is" in r.stdout and "> budget" in r.stdout
    assert "largest components: core/" in r.stdout


def test_ratchet_names_the_components_that_grew(probes, tmp_path):
    rep = probes["probes"]["generic-aarch64/all"]
    base = {c: v["size"] for c, v in rep["components"].items()}
    grow = 5000   # above the default threshold (1 % of this probe, about 2 KB)
    base["neon/conv"] -= grow
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"generic-aarch64/all": {"size": rep["totals"]["size"] - grow,
                                                            "components": base}}))
    r = sizebudget("check", "--board", "generic-aarch64", "--config", "all", "--budgets", "",
                   "--baseline", baseline, "--build-root", probes["root"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL [ratchet]" in r.stdout and "neon/conv" in r.stdout and f"(+{grow:,})" in r.stdout
    r = sizebudget("check", "--board", "generic-aarch64", "--config", "all", "--budgets", "",
                   "--baseline", baseline, "--build-root", probes["root"], "--update-baseline")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(baseline.read_text())["generic-aarch64/all"]["size"] == rep["totals"]["size"]


def test_selective_build_runs_its_plan_and_rejects_other_ops(probes, tmp_path):
    """The x86-64 MobileNetV2 probe (a native library) opens and runs MobileNetV2 and refuses a plan
    with an op it was built without."""
    lib = Path(probes["root"]) / "x86-64" / "mobilenetv2" / "libedgeplan.so"
    ops = (Path(probes["root"]) / "x86-64" / "mobilenetv2.ops").read_text()
    assert "conv2d f32 blocked_pw" in ops and "resize" not in ops   # MobileNetV2 on the C8 layout
    import edgeplan
    models = zoo()
    m = edgeplan.compile(models.build("mobilenetv2"), board="x86-64")   # compiled with the full runtime
    t = edgeplan.compile(models.build("tiny"), board="x86-64")
    m.save(tmp_path / "m.eplan")
    t.save(tmp_path / "t.eplan")
    from test_dynamic import conv_encoder      # a variable-length plan: the selective build has no symbols
    edgeplan.compile(conv_encoder(), dims={"T": (1, 64)}, board="x86-64").save(tmp_path / "d.eplan")
    assert "feature dynamic" not in ops
    extra = sorted({k[0] for k in t.report["kernels"]} - {k[0] for k in m.report["kernels"]})
    assert extra, "tiny should use ops MobileNetV2 does not (maxpool, softmax...)"
    code = f"""
import numpy as np
from edgeplan import Session, EdgeplanError
s = Session({str(tmp_path / 'm.eplan')!r})
y = s.run({{s.inputs[0].name: np.ones(s.inputs[0].shape, np.float32)}})
assert all(np.isfinite(v).all() for v in y.values())
try:
    Session({str(tmp_path / 't.eplan')!r})
    print("OPENED")
except EdgeplanError as e:
    print("REJECTED", e)
try:
    Session({str(tmp_path / 'd.eplan')!r})
    print("OPENED")
except EdgeplanError as e:
    print("DYNAMIC", e)
from edgeplan import SessionGroup, plan_group
g = plan_group([{str(tmp_path / 'm.eplan')!r}, {str(tmp_path / 'm.eplan')!r}])
try:
    Session(g.plans[0])
    print("OPENED")
except EdgeplanError as e:
    print("GROUPLESS", e)
try:
    SessionGroup(g)
    print("OPENED")
except EdgeplanError as e:
    print("NO GROUPS", e)
"""
    env = dict(os.environ, EDGEPLAN_LIB=str(lib))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "REJECTED" in r.stdout and "plan uses an op or kernel this build lacks" in r.stdout, (extra, r.stdout)
    assert "DYNAMIC" in r.stdout and "built without them" in r.stdout, r.stdout
    # a group member needs a build with "feature groups" (edgeplan group --ops-out writes it)
    assert "GROUPLESS" in r.stdout and "unknown critical section kind 13" in r.stdout, r.stdout
    assert "NO GROUPS" in r.stdout and "this build lacks" in r.stdout, r.stdout


def test_gen_config_selection(tmp_path):
    from conftest import runtime_script
    gen_config = runtime_script("gen_config")
    inv = gen_config.inventory((ROOT / "runtime_c/ops.def").read_text())
    assert inv["conv2d"][:2] == ["default", "packed"] and "winograd" in inv["conv2d"]
    assert gen_config.parse_selection("none", None, inv) == set()
    sel = gen_config.parse_selection("pool,conv2d:packed", None, inv)
    assert ("maxpool", "default") in sel and ("conv2d", "packed") in sel and ("conv2d", "default") not in sel
    sel = gen_config.parse_selection("", "# c\nconv2d f32 depthwise\ngemm f32 packed\n", inv)
    assert sel == {("conv2d", "depthwise"), ("gemm", "packed")}
    with pytest.raises(ValueError, match="no variant"):
        gen_config.parse_selection("conv2d:fast", None, inv)
    with pytest.raises(ValueError, match="unknown op"):
        gen_config.parse_selection("", "convolution f32 default\n", inv)
    h = gen_config.render(inv, sel, "test")
    assert "#define EP_HAVE_OP_CONV2D 1" in h and "#define EP_HAVE_CONV2D_DEFAULT 0" in h
    assert "#define EP_HAVE_OP_RESIZE 0" in h
    # runtime features: variable dims and arena groups are built in where a plan's ops file asks for them
    assert gen_config.parse_features("none", None) == set()
    assert gen_config.parse_features("all", None) == {"dynamic", "groups"}
    assert gen_config.parse_features("", "feature groups\nconv2d f32 default\n") == {"groups"}
    assert gen_config.parse_features("", "conv2d f32 default\n") == set()
    assert gen_config.parse_features("", "feature dynamic\nrange s64 default\n") == {"dynamic"}
    assert gen_config.parse_selection("", "feature dynamic\nrange s64 default\n", inv) == {("range", "default")}
    with pytest.raises(ValueError, match="unknown feature"):
        gen_config.parse_selection("", "feature threads\n", inv)
    assert "#define EP_HAVE_DYNAMIC 0" in gen_config.render(inv, sel, "test", set())
    assert "#define EP_HAVE_GROUPS 0" in gen_config.render(inv, sel, "test", {"dynamic"})


def test_compile_ops_out_and_ram_check(tmp_path):
    onnx.save(zoo().build("tiny"), tmp_path / "t.onnx")
    ep = [sys.executable, "-m", "edgeplan.cli"]
    r = subprocess.run(ep + ["compile", str(tmp_path / "t.onnx"), "--board", "rpi4", "-o", str(tmp_path / "t.eplan"),
                             "--ops-out", str(tmp_path / "t.ops")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RAM on rpi4:" in r.stdout and "of 2048 MiB" in r.stdout
    lines = [ln.split() for ln in (tmp_path / "t.ops").read_text().splitlines() if not ln.startswith("#")]
    assert lines and all(len(ln) == 3 for ln in lines) and ["conv2d", "f32", "packed"] in lines
    # the same plan on a board whose RAM cannot hold it: compile fails and writes nothing
    boards = tmp_path / "boards"
    shutil.copytree(ROOT / "boards", boards)
    text = (boards / "rpi4.toml").read_text().replace('name = "rpi4"', 'name = "tiny-ram"')
    text = text.replace("ram_mb = 2048", "ram_mb = 0")
    (boards / "tiny-ram.toml").write_text(text)
    env = dict(os.environ, EDGEPLAN_BOARDS=str(boards))
    r = subprocess.run(ep + ["compile", str(tmp_path / "t.onnx"), "--board", "tiny-ram", "-o", str(tmp_path / "x.eplan")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 1 and "does not fit in tiny-ram's RAM" in r.stderr, r.stdout + r.stderr
    assert not (tmp_path / "x.eplan").exists()


def test_measure_of_a_missing_or_non_elf_file_is_explained(tmp_path):
    """python -m edgeplan.sizebudget measure: one line and exit 2, no traceback (`edgeplan size` has its own
    wording, tests/py/test_cli_hostile.py)."""
    import subprocess
    import sys
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an elf")
    for f, words in ((junk, "not an ELF file"), (tmp_path / "missing.so", "cannot read")):
        r = subprocess.run([sys.executable, "-m", "edgeplan.sizebudget", "measure", str(f)], capture_output=True,
                           text=True)
        assert r.returncode == 2 and "Traceback" not in r.stderr and words in r.stderr, r.stderr
