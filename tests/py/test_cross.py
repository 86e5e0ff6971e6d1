"""ARM boards under qemu-user: cross builds, the C suites, zoo models end to end, CPU-feature refusal,
and the deploy bundle. Nothing here is skipped: without the cross toolchain or qemu-user the tests FAIL
and say what to install (.ci/run installs it).

  aarch64 (boards/cross/aarch64.ini, baseline armv8-a): `meson test` twice, QEMU_CPU=cortex-a72 (no
      dotprod/fp16: a stray instruction traps, and the feature-masked paths run) and QEMU_CPU=max; the
      kernel-check families (tests/c/check_*.c) must each check the NEON table against the reference;
  armv7 (boards/cross/armv7.ini, Cortex-A7, NEON hard-float): `meson test` once;
  zoo models compiled on the host for rpi4 and rpi5, run by the aarch64 edgeplan-run under qemu
      (cortex-a72 / cortex-a76) and by this host; outputs must agree within E2E_RTOL;
  a plan requiring dotprod is refused on cortex-a72 (EP_ERR_PLAN_FEATURES) and runs on cortex-a76;
  `edgeplan bundle` for rpi4 with MobileNetV2 runs under qemu and matches the host.

E2E_RTOL = 1e-4 on max|arm - host| / max|host|: both runs are fp32 over the same plan; the NEON and
AVX2 kernels sum each dot product in different orders and with different FMA placement, so each layer
differs by a few ulps of its sum of |terms| (the kernel checks bound this per op at 2 (K+4) eps), and
the relative difference measured over these networks is ~1e-6; 1e-4 leaves headroom for the deeper
nets without hiding a wrong kernel (a wrong tap or tail gives O(1e-2) or more).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.cross, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
from conftest import rel_err, zoo  # noqa: E402

E2E_RTOL = 1e-4
APT = ("apt-get install gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross "
       "libc6-dev-armhf-cross qemu-user (.ci/run does this)")
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"


def _require(*tools):
    missing = [t for t in ("meson", "ninja") + tools if shutil.which(t) is None]
    if missing:
        pytest.fail(f"ARM cross tests need {', '.join(missing)}: {APT}", pytrace=False)


def _setup_build(build: Path, cross: str, **opts) -> Path:
    cmd = ["meson", "setup", str(build), str(ROOT), "--cross-file", str(ROOT / "boards" / "cross" / cross),
           "-Dpython=false", "--buildtype=release"] + [f"-D{k}={v}" for k, v in opts.items()]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    r = subprocess.run(["ninja", "-C", str(build)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-3000:]
    return build


def _meson_test(build: Path, env_extra: dict, min_ok: int) -> str:
    env = dict(os.environ, **env_extra)
    r = subprocess.run(["meson", "test", "-C", str(build), "--print-errorlogs", "--num-processes", "2"],
                       capture_output=True, text=True, env=env)
    print(r.stdout[-6000:], r.stderr[-2000:])
    assert r.returncode == 0, "the C suite failed under qemu (see the log above)"
    ok = re.search(r"^Ok:\s+(\d+)", r.stdout, re.M)
    assert ok and int(ok.group(1)) >= min_ok, f"expected >= {min_ok} C tests to pass, got: {r.stdout[-1500:]}"
    return (build / "meson-logs" / "testlog.txt").read_text()


@pytest.fixture(scope="module")
def aarch64_build(tmp_path_factory):
    _require("aarch64-linux-gnu-gcc", "qemu-aarch64")
    # with the virtual NPU (a host-side stand-in that board builds leave out): its C check and the NPU runs
    return _setup_build(tmp_path_factory.mktemp("xa64") / "build", "aarch64.ini", tests="true", vnpu="enabled")


C_TESTS = 11   # tests/c/meson.build, without check_vnpu (the aarch64 build has it too)
FAMILIES = ["check_conv", "check_linear", "check_elementwise", "check_pool", "check_sequence"]


@pytest.mark.parametrize("cpu", ["cortex-a72", "max"])
def test_aarch64_c_suite(aarch64_build, cpu):
    # max runs the kernel checks of the levels above NEON only (dotprod, fp16): the same binary and seeds check
    # the NEON table's kernels under cortex-a72, and the max run would repeat those cases bit for bit
    env = {"QEMU_CPU": cpu, "EP_CHECK_ABOVE_BASELINE": "1" if cpu == "max" else "0"}
    log = _meson_test(aarch64_build, env, min_ok=C_TESTS + 1)
    if cpu == "max":
        assert re.search(r"^EP_CHECK_ABOVE_BASELINE: only the kernels that differ from table neon's", log, re.M)
        assert re.search(r"^  neon_dotprod +\w+ +\w+ +ep_neon_dotprod_\w+ +[1-9]\d* passed 0 failed$", log, re.M)
    # the kernel checks ran on the CPU asked for (each checks ep_cpu_features() against QEMU_CPU), over the NEON
    # table, with no failure in any family
    assert f"QEMU_CPU={cpu}" in log
    for fam in FAMILIES:
        assert re.search(rf"^{fam}: \d+ cases .*; \d+ checks passed, 0 failed$", log, re.M), fam
    assert re.search(r"^table neon\w* \(features 0x[0-9a-f]+\): \d+ entries override ref$", log, re.M)
    assert re.search(r"^  neon\w* +\w+ +\w+ +ep_neon_\w+ +[1-9]\d* passed 0 failed$", log, re.M)
    assert re.search(r"^check_vnpu: .*0 failed", log, re.M), "check_vnpu did not report"


def test_armv7_c_suite(tmp_path_factory):
    _require("arm-linux-gnueabihf-gcc", "qemu-arm")
    build = _setup_build(tmp_path_factory.mktemp("xa32") / "build", "armv7.ini", tests="true")
    _meson_test(build, {}, min_ok=C_TESTS)


# ---- zoo models end to end: host compile, aarch64 edgeplan-run under qemu vs this host ----

E2E = {  # model -> build kwargs (small inputs: emulated fp32 is ~30x slower)
    "tiny": {},
    "mobilenetv2": {"size": 64},
    "resnet50": {"size": 32},
    "yolo": {"size": 64},
}
QEMU_CPU = {"rpi4": "cortex-a72", "rpi5": "cortex-a76"}


def _host_run(plan_path: Path, x: np.ndarray) -> dict:
    import edgeplan
    s = edgeplan.Session(str(plan_path))
    return s.run({s.inputs[0].name: x})


def _arm_run(runner: Path, plan: Path, x: np.ndarray, outs: list, cpu: str, tmp: Path, sysroot=True):
    xin = tmp / "x.npy"
    np.save(xin, x)
    cmd = ["qemu-aarch64", "-cpu", cpu] + (["-L", AARCH64_SYSROOT] if sysroot else []) + [str(runner), str(plan),
                                                                                        "--input", str(xin)]
    for i, name in enumerate(outs):
        cmd += ["--output", f"{name}={tmp / f'y{i}.npy'}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    return {name: np.load(tmp / f"y{i}.npy") for i, name in enumerate(outs)}, r.stdout


@pytest.mark.parametrize("board", ["rpi4", "rpi5"])
@pytest.mark.parametrize("name", list(E2E))
def test_zoo_on_aarch64(aarch64_build, tmp_path, name, board):
    import edgeplan
    model = zoo().build(name, **E2E[name])
    plan = edgeplan.compile(model, board=board)
    plan_path = tmp_path / f"{name}.eplan"
    plan.save(str(plan_path))
    x = np.random.default_rng(0).standard_normal(
        [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]).astype(np.float32)
    host = _host_run(plan_path, x)
    arm, log = _arm_run(aarch64_build / "runtime_c" / "edgeplan-run", plan_path, x, list(host), QEMU_CPU[board],
                        tmp_path)
    for k in host:
        assert arm[k].shape == host[k].shape and arm[k].dtype == host[k].dtype
        err = rel_err(arm[k], host[k])
        print(f"{name} on {board}: output {k} rel err {err:.2e}")
        assert err <= E2E_RTOL, f"{name} {k}: aarch64 vs host rel err {err:.3g} > {E2E_RTOL}"


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_16bit_weights_on_aarch64_bit_exact(aarch64_build, tmp_path, fmt, monkeypatch):
    """A 16-bit weight plan on NEON (FCVTL / USHLL conversions) equals, bit for bit, the float32 plan holding
    the rounded weights, on the same CPU."""
    import edgeplan
    from edgeplan.boards import load_board
    from test_weights16 import float32_on_rounded
    model = zoo().build("mobilenetv2", size=64)
    target = load_board("rpi4").target()
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    runs = []
    for i, plan in enumerate((edgeplan.compile(model, board="rpi4", quantize=fmt),
                              float32_on_rounded(model, fmt, monkeypatch, target))):
        path = tmp_path / f"p{i}.eplan"
        plan.save(str(path))
        d = tmp_path / f"r{i}"
        d.mkdir()
        runs.append(_arm_run(aarch64_build / "runtime_c" / "edgeplan-run", path, x, ["output"], "cortex-a72", d)[0])
    assert np.array_equal(runs[0]["output"], runs[1]["output"])


def test_mobilenetv2_int8_on_the_vnpu_under_aarch64(aarch64_build, tmp_path):
    """The partitioned int8 MobileNetV2 run by the aarch64 edgeplan-run on the virtual NPU equals, byte for
    byte, the same plan run on the board's CPU (its fallback ops, NEON int8 kernels)."""
    import edgeplan
    from test_npu_profiles import _int8
    m, name, shape, cal = _int8("mobilenetv2", size=64, width=0.5, num_classes=50)
    plan = edgeplan.compile(m, quantize="int8", calibration=cal, board="rpi4", npu="u55-256-sram")
    assert plan.report["partitions"]["n_partitions"] == 1
    path = tmp_path / "m.eplan"
    plan.save(str(path))
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    runner = aarch64_build / "runtime_c" / "edgeplan-run"
    out = [t.name for t in edgeplan.Session(str(path)).outputs]
    d1, d2 = tmp_path / "npu", tmp_path / "cpu"
    d1.mkdir()
    d2.mkdir()
    xin = tmp_path / "x.npy"
    np.save(xin, x)
    base = ["qemu-aarch64", "-cpu", "cortex-a72", "-L", AARCH64_SYSROOT, str(runner), str(path), "--input", str(xin)]
    r = subprocess.run(base + ["--vnpu", "u55-256-sram", "--output", f"{out[0]}={d1 / 'y.npy'}"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and "cycles" in r.stdout and "CPU:" not in r.stdout, r.stdout + r.stderr
    r = subprocess.run(base + ["--output", f"{out[0]}={d2 / 'y.npy'}"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    a, b = np.load(d1 / "y.npy"), np.load(d2 / "y.npy")
    assert np.abs(a - b).max() == 0.0


# ---- a plan the CPU cannot run is refused with a clear error ----

def _with_required_features(data: bytes, features: int) -> bytes:
    from edgeplan.runtime import load_library
    from edgeplan._cdef import ffi
    b = bytearray(data)
    off = ffi.offsetof("ep_plan_header", "required_features")
    b[off:off + 8] = features.to_bytes(8, "little")
    b[12:16] = b"\0\0\0\0"
    crc = load_library().ep_crc32c(ffi.from_buffer(bytes(b)), len(b))
    b[12:16] = int(crc).to_bytes(4, "little")
    return bytes(b)


def test_plan_requiring_dotprod_refused_on_a72(aarch64_build, tmp_path):
    import edgeplan
    from edgeplan._cdef import K
    plan = edgeplan.compile(zoo().build("tiny"), board="rpi5")
    p = tmp_path / "dotprod.eplan"
    p.write_bytes(_with_required_features(plan.to_bytes(), K.EP_CPU_DOTPROD))
    runner = str(aarch64_build / "runtime_c" / "edgeplan-run")
    r = subprocess.run(["qemu-aarch64", "-cpu", "cortex-a72", "-L", AARCH64_SYSROOT, runner, str(p)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    msg = r.stdout + r.stderr
    assert "needs CPU features 0x2" in msg, msg   # EP_ERR_PLAN_FEATURES' reason, naming the missing bits
    r = subprocess.run(["qemu-aarch64", "-cpu", "cortex-a76", "-L", AARCH64_SYSROOT, runner, str(p)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


# ---- the deploy bundle ----

def test_bundle_rpi4_mobilenetv2(tmp_path):
    _require("aarch64-linux-gnu-gcc", "qemu-aarch64")
    import onnx
    from edgeplan.cli import main
    model = zoo().build("mobilenetv2", size=64)
    onnx_path = tmp_path / "mobilenetv2.onnx"
    onnx.save(model, onnx_path)
    dist = tmp_path / "dist"
    assert main(["bundle", str(onnx_path), "--board", "rpi4", "-o", str(dist)]) == 0
    for f in ("edgeplan-run", "mobilenetv2.eplan", "README.md", "lib/libedgeplan.so",
              "include/edgeplan/edgeplan.h", "include/edgeplan/plan_format.h", "board.toml"):
        assert (dist / f).is_file(), f
    assert "./edgeplan-run mobilenetv2.eplan" in (dist / "README.md").read_text()
    # statically linked (no PT_INTERP, no DT_NEEDED) for aarch64: runs under qemu without the sysroot
    from elftools.elf.elffile import ELFFile
    with open(dist / "edgeplan-run", "rb") as f:
        elf = ELFFile(f)
        assert elf["e_machine"] == "EM_AARCH64"
        assert not any(seg["p_type"] == "PT_INTERP" for seg in elf.iter_segments())
        dyn = elf.get_section_by_name(".dynamic")
        assert dyn is None or not any(t.entry.d_tag == "DT_NEEDED" for t in dyn.iter_tags())
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    host = _host_run(dist / "mobilenetv2.eplan", x)
    arm, _ = _arm_run(dist / "edgeplan-run", dist / "mobilenetv2.eplan", x, list(host), "cortex-a72", tmp_path,
                      sysroot=False)
    for k in host:
        err = rel_err(arm[k], host[k])
        print(f"bundle mobilenetv2 rpi4: {k} rel err {err:.2e}")
        assert err <= E2E_RTOL


# ---- speech plans: variable lengths and data-dependent sizes resolved by the aarch64 runtime ----
SPEECH = {  # model -> (dims, input array at a length below the bound)
    "asr": ({"samples": (400, 16000)}, lambda r: (r.standard_normal((1, 8000)) * 0.1).astype(np.float32)),
    "hifigan": ({"frames": (1, 32)}, lambda r: r.standard_normal((1, 80, 10)).astype(np.float32)),
    "tts_acoustic": ({"N": (1, 16), "frames": (1, 128)}, lambda r: r.integers(1, 30, (1, 8)).astype(np.int64)),
}


@pytest.mark.parametrize("name", list(SPEECH))
def test_speech_on_aarch64(aarch64_build, tmp_path, name):
    import edgeplan
    dims, make_x = SPEECH[name]
    plan = edgeplan.compile(zoo().build(name), dims=dims, board="rpi4")
    plan_path = tmp_path / f"{name}.eplan"
    plan.save(str(plan_path))
    x = make_x(np.random.default_rng(1))
    host = _host_run(plan_path, x)
    arm, _ = _arm_run(aarch64_build / "runtime_c" / "edgeplan-run", plan_path, x, list(host), "cortex-a72", tmp_path)
    for k in host:
        assert arm[k].shape == host[k].shape and arm[k].dtype == host[k].dtype, (k, arm[k].shape, host[k].shape)
        if host[k].dtype.kind == "f":
            assert rel_err(arm[k], host[k]) <= E2E_RTOL, k
        else:
            np.testing.assert_array_equal(arm[k], host[k])


SECONDS = 6   # the Whisper window of the round trip under emulation


@pytest.mark.slow
def test_speech_round_trip_on_aarch64_without_python(aarch64_build, tmp_path, monkeypatch):
    """The board tool edgeplan-speech under qemu-aarch64 (cortex-a72) with plans compiled for rpi4: the
    Piper voice speaks a short sentence (ids from its map), the host resamples the wav to 16 kHz, Whisper
    tiny.en transcribes it; the transcript equals the host's, and the audio the host's to float rounding.
    The Silero VAD finds the same speech segments as on the host."""
    import json
    import wave

    import edgeplan
    from scipy.signal import resample_poly
    from conftest import ROOT, pinned
    from edgeplan import piper
    from test_speech_board import speech_tool, whisper_plans
    monkeypatch.setenv("EDGEPLAN_CACHE", str(tmp_path / "cache"))
    tool_arm = aarch64_build / "runtime_c" / "edgeplan-speech"
    qemu = ["qemu-aarch64", "-cpu", "cortex-a72", "-L", AARCH64_SYSROOT, str(tool_arm)]

    def arm(*args):
        r = subprocess.run(qemu + [str(a) for a in args], capture_output=True, text=True, timeout=1500)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def host(*args):
        r = subprocess.run([speech_tool()] + [str(a) for a in args], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    # the voice, for rpi4 and for the host
    model = pinned("piper_en_us_joe_medium")
    v = piper.Voice.load(model)
    ids = ",".join(map(str, v.ids("fˈeɪl ˈʌɡɛn. fˈeɪl bˈɛɾɚ.")))
    for board, name in (("rpi4", "voice_arm.eplan"), (None, "voice_host.eplan")):
        edgeplan.compile(str(model), shapes={"input": (1, 96), "input_lengths": (1,), "scales": (3,)},
                         dims={"/Range_output_0": (1, 400)}, board=board).save(str(tmp_path / name))
    arm("tts", tmp_path / "voice_arm.eplan", "--ids", ids, "--scales", "0,1,0", "-o", tmp_path / "arm.wav")
    host("tts", tmp_path / "voice_host.eplan", "--ids", ids, "--scales", "0,1,0", "-o", tmp_path / "host.wav")

    def pcm(p):
        with wave.open(str(p), "rb") as w:
            return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0
    a, b = pcm(tmp_path / "arm.wav"), pcm(tmp_path / "host.wav")
    assert a.shape == b.shape and np.abs(a - b).max() <= 1e-3 * np.abs(b).max() + 2 / 32768
    y16 = resample_poly(a.astype(np.float64), 320, 441)
    with wave.open(str(tmp_path / "arm16k.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(np.clip(np.round(y16 * 32768), -32768, 32767).astype("<i2").tobytes())
    # Whisper with a 6 s window (the encoder on 300 of its 1500 positions: a fifth of the 30 s window's cost
    # and less, which emulation needs): the host's plans, then the same folder's graphs compiled for rpi4
    hd = whisper_plans(tmp_path / "whisper_host", seconds=SECONDS)
    ad = tmp_path / "whisper_arm"
    ad.mkdir()
    for f in ("whisper.txt", "vocabulary.txt"):
        shutil.copy(hd / f, ad / f)
    from edgeplan.whisper import graph_dims
    assert json.loads((hd / "whisper.json").read_text())["window"] == SECONDS * 16000
    dims = graph_dims(json.loads((hd / "whisper.json").read_text()))
    import importlib.util
    spec = importlib.util.spec_from_file_location("whisper_ct2", ROOT / "tools" / "whisper_ct2.py")
    ct2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ct2)
    ct2.convert(pinned("whisper_tiny_en_ct2"), tmp_path / "onnx", SECONDS)
    for g in ("encoder", "decoder", "decoder_with_past"):
        edgeplan.compile(str(tmp_path / "onnx" / f"{g}.onnx"), dims=dims.get(g), board="rpi4").save(str(ad / f"{g}.eplan"))
    want = host("asr", hd, tmp_path / "arm16k.wav")
    assert "fail" in want.lower(), want
    assert arm("asr", ad, tmp_path / "arm16k.wav") == want
    # the VAD on the recording
    wav = pinned("speech_beckett") / "beckett.wav"
    vad_onnx = pinned("silero_vad")
    from edgeplan.vad import compile_vad
    compile_vad(vad_onnx, 16000, board="rpi4").save(str(tmp_path / "vad_arm.eplan"))
    compile_vad(vad_onnx, 16000).save(str(tmp_path / "vad_host.eplan"))
    assert arm("vad", tmp_path / "vad_arm.eplan", wav) == host("vad", tmp_path / "vad_host.eplan", wav)
