"""RandomNormal, RandomUniform, their -Like forms and Bernoulli (the RANDOM op, docs/plan-format.md "Random
numbers"). No other runtime draws the same numbers, so the checks are: a numpy transcription of the generator
(Philox4x32-10 and the float transforms, written from the spec) that the runtime must match bit for bit,
statistical checks of the distributions, and the seed rules (session seed, op seed, runs, reset, threads,
ISA levels).

Statistical tolerances: the generator is deterministic, so each check is one fixed draw, but a draw from a
correct generator passes only with the stated margin: 5 standard errors of the estimate at the sample size
(for a mean, sigma / sqrt(N); for a variance, sigma^2 sqrt(2 / N); for a frequency, sqrt(p (1 - p) / N)),
which a correct generator misses with probability below 1e-6, while a wrong transform (a scale off by 1%,
a bias of 0.02 sigma) exceeds it at N = 2^18."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import edgeplan
from edgeplan import EdgeplanError, Session
from edgeplan._cdef import K

NO_AVX2 = 1 << 62   # nonzero mask with the AVX2/FMA bits clear: the reference kernels run
MASK32 = 0xFFFFFFFF

# ---------------------------------------------------------------- the generator, from the spec


def philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on arrays of uint32 counter words (Salmon et al. 2011)."""
    c = [np.asarray(x, np.uint64) & MASK32 for x in (c0, c1, c2, c3)]
    k = [np.uint64(k0 & MASK32), np.uint64(k1 & MASK32)]
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & np.uint64(MASK32),
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & np.uint64(MASK32)]
        k = [(k[0] + np.uint64(0x9E3779B9)) & np.uint64(MASK32), (k[1] + np.uint64(0xBB67AE85)) & np.uint64(MASK32)]
    return [x.astype(np.uint32) for x in c]


f = np.float32


def fx(s):
    return f(float.fromhex(s))


def u01(w):
    return (w >> np.uint32(8)).astype(f) * f(2.0 ** -24)


def ln(x):
    """ln of positive normal floats, exactly as kernels/ref/random_philox.h ep_rand_ln computes it."""
    b = x.view(np.uint32)
    e = (b >> np.uint32(23)).astype(np.int32) - 127
    mb = (b & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)
    big = mb > np.uint32(0x3FB504F3)
    mb = np.where(big, mb - np.uint32(0x00800000), mb)
    e = np.where(big, e + 1, e)
    fr = mb.view(f) - f(1)
    s = fr / (f(2) + fr)
    z = s * s
    q = z * (fx("0x1.555556p-2") + z * (fx("0x1.99999ap-3") + z * (fx("0x1.24924ap-3") + z * fx("0x1.c71c72p-4"))))
    t = s + s * q
    return e.astype(f) * fx("0x1.62e430p-1") + (t + t)


def cos_sin(j):
    n = (j + np.uint32(1 << 21)) >> np.uint32(22)
    fr = j.astype(np.int32) - (n << np.uint32(22)).astype(np.int32)
    x = fr.astype(f) * fx("0x1.921fb6p-22")
    z = x * x
    s = x + x * (z * (-fx("0x1.555556p-3") + z * (fx("0x1.111112p-7") + z * (-fx("0x1.a01a02p-13")
                                                                             + z * fx("0x1.71de3ap-19")))))
    c = f(1) + z * (f(-0.5) + z * (fx("0x1.555556p-5") + z * (-fx("0x1.6c16c2p-10") + z * (
        fx("0x1.a01a02p-16") + z * -fx("0x1.27e4fcp-22")))))
    q = n & np.uint32(3)
    cos = np.select([q == 0, q == 1, q == 2], [c, -s, -c], s)
    sin = np.select([q == 0, q == 1, q == 2], [s, c, -s], -c)
    return cos, sin


def normal_pair(v0, v1):
    u1 = ((v0 >> np.uint32(8)) + np.uint32(1)).astype(f) * f(2.0 ** -24)
    r = np.sqrt(f(-2) * ln(u1))
    c, s = cos_sin(v1 >> np.uint32(8))
    return r * c, r * s


def reference(kind, n, key, run=0, stream=0, a=0.0, b=1.0, p=None):
    """The RANDOM op's n elements (plan_format.h ep_random_params) as float32."""
    blocks = (n + 3) // 4
    i = np.arange(blocks, dtype=np.uint64)
    w = philox(i, run & MASK32, run >> 32, stream, key & MASK32, key >> 32)
    a, b = f(a), f(b)
    if kind == "normal":
        z0, z1 = normal_pair(w[0], w[1])
        z2, z3 = normal_pair(w[2], w[3])
        v = a + b * np.stack([z0, z1, z2, z3], 1).reshape(-1)
    elif kind == "uniform":
        v = a + (b - a) * u01(np.stack(w, 1).reshape(-1))
    else:
        u = u01(np.stack(w, 1).reshape(-1))[:n]
        return np.where(u < np.asarray(p, f).reshape(-1), f(1), f(0))
    return v[:n]


def test_reference_philox_matches_the_published_known_answers():
    """Random123's kat_vectors for philox4x32_10 (tests/c/test_ref_random.c checks the C generator on them)."""
    cases = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
             ((MASK32,) * 4, (MASK32, MASK32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
             ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
              (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for c, k, want in cases:
        assert tuple(int(x) for x in philox(*c, *k)) == want


# ---------------------------------------------------------------- models


def model(nodes, inputs, outputs, opset=17):
    g = h.make_graph(nodes, "random", inputs, outputs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def vi(name, shape, dt=T.FLOAT):
    return h.make_tensor_value_info(name, dt, shape)


def normal_model(shape, **attrs):
    return model([h.make_node("RandomNormal", [], ["y"], shape=list(shape), **attrs)], [], [vi("y", list(shape))])


def uniform_model(shape, **attrs):
    return model([h.make_node("RandomUniform", [], ["y"], shape=list(shape), **attrs)], [], [vi("y", list(shape))])


def bernoulli_model(shape, dt=T.FLOAT, **attrs):
    return model([h.make_node("Bernoulli", ["p"], ["y"], **attrs)], [vi("p", list(shape))], [vi("y", list(shape), dt)])


N = 1 << 18


@pytest.fixture(scope="module")
def normal_plan():
    return edgeplan.compile(normal_model((N // 512, 512), mean=1.5, scale=2.0))


def test_outputs_match_the_numpy_reference_bit_for_bit(normal_plan):
    """Every element, on the first and second run, for the session's seed and for the op's own seed."""
    s = Session(normal_plan, seed=0x0123456789ABCDEF)
    for run in range(2):
        got = s.run()["y"].reshape(-1)
        want = reference("normal", N, 0x0123456789ABCDEF, run=run, a=1.5, b=2.0)
        assert got.tobytes() == want.tobytes(), np.flatnonzero(got != want)[:10]
    plan = edgeplan.compile(uniform_model((1001,), low=-2.0, high=5.0, seed=-7.0))
    got = Session(plan, seed=99).run()["y"]
    assert got.tobytes() == reference("uniform", 1001, (-7) & (2 ** 64 - 1), a=-2.0, b=5.0).tobytes()
    p = np.linspace(0, 1, 999, dtype=np.float32).reshape(27, 37)
    got = Session(edgeplan.compile(bernoulli_model((27, 37), seed=3.0))).run(p=p)["y"]
    assert got.tobytes() == reference("bernoulli", 999, 3, p=p).reshape(27, 37).tobytes()


def test_normal_mean_and_variance(normal_plan):
    """N(1.5, 2^2) at N = 2^18: mean within 5 sigma/sqrt(N) = 0.0195, variance within 5 sigma^2 sqrt(2/N) =
    0.055; the mass within one sigma within 5 sqrt(0.683 * 0.317 / N) = 0.0045 of 0.6827."""
    y = Session(normal_plan).run()["y"].astype(np.float64)
    assert abs(y.mean() - 1.5) < 5 * 2.0 / np.sqrt(N)
    assert abs(y.var() - 4.0) < 5 * 4.0 * np.sqrt(2 / N)
    assert abs(np.mean(np.abs(y - 1.5) < 2.0) - 0.682689) < 5 * np.sqrt(0.683 * 0.317 / N)
    assert np.isfinite(y).all() and np.abs(y - 1.5).max() < 2.0 * 5.8   # |z| <= sqrt(48 ln 2) = 5.77


def test_uniform_range_and_mean():
    """U[-1, 3) at N = 2^18: every value in range, mean within 5 (4 / sqrt(12)) / sqrt(N) = 0.0113 of 1, and
    each quarter of the range within 5 sqrt(0.25 * 0.75 / N) of 1/4."""
    y = Session(edgeplan.compile(uniform_model((N,), low=-1.0, high=3.0))).run()["y"].astype(np.float64)
    assert y.min() >= -1.0 and y.max() < 3.0
    assert abs(y.mean() - 1.0) < 5 * (4 / np.sqrt(12)) / np.sqrt(N)
    counts = np.histogram(y, bins=4, range=(-1, 3))[0] / N
    assert np.all(np.abs(counts - 0.25) < 5 * np.sqrt(0.25 * 0.75 / N))


@pytest.mark.parametrize("p", [0.0, 0.03, 0.5, 0.9, 1.0])
def test_bernoulli_frequency(p):
    """The frequency of ones within 5 sqrt(p (1 - p) / N) of p (exactly 0 or 1 at p = 0 and 1)."""
    shape = (N // 256, 256)
    y = Session(edgeplan.compile(bernoulli_model(shape))).run(p=np.full(shape, p, np.float32))["y"]
    assert set(np.unique(y)) <= {0.0, 1.0}
    assert abs(y.mean() - p) <= 5 * np.sqrt(p * (1 - p) / y.size)


def test_bernoulli_output_dtypes_and_double_probabilities():
    """dtype int64 / bool outputs are a cast of the float draw; double probabilities (the model computes in
    float32, compiler/floats.py) give the same draws."""
    p = np.random.default_rng(0).random((64, 8)).astype(np.float32)
    base = Session(edgeplan.compile(bernoulli_model((64, 8)))).run(p=p)["y"]
    for dt, np_dt in ((T.INT64, np.int64), (T.BOOL, np.bool_)):
        got = Session(edgeplan.compile(bernoulli_model((64, 8), dt, dtype=dt))).run(p=p)["y"]
        assert got.dtype == np_dt and np.array_equal(got.astype(np.float32), base)
    m = model([h.make_node("Bernoulli", ["p"], ["y"])], [vi("p", [64, 8], T.DOUBLE)], [vi("y", [64, 8], T.DOUBLE)])
    got = Session(edgeplan.compile(m)).run(p=p.astype(np.float64))["y"]
    assert got.dtype == np.float64 and np.array_equal(got, base)


def test_threads_and_isa_levels_give_the_same_numbers(normal_plan):
    want = Session(normal_plan, seed=5).run()["y"]
    for kw in ({"threads": 4}, {"cpu_features_mask": NO_AVX2}, {"threads": 2, "cpu_features_mask": NO_AVX2}):
        assert Session(normal_plan, seed=5, **kw).run()["y"].tobytes() == want.tobytes(), kw


def test_seed_rules():
    """Session seed: same seed same numbers, another seed others; each run the next numbers, reset starts
    again; an op's own seed ignores the session's but still moves on with the runs."""
    plan = edgeplan.compile(uniform_model((4096,)))
    a = Session(plan, seed=11)
    r0, r1 = a.run()["y"], a.run()["y"]
    assert not np.array_equal(r0, r1)
    assert Session(plan, seed=11).run()["y"].tobytes() == r0.tobytes()
    assert not np.array_equal(Session(plan, seed=12).run()["y"], r0)
    assert not np.array_equal(Session(plan).run()["y"], r0)
    a.reset()
    assert a.run()["y"].tobytes() == r0.tobytes()
    seeded = edgeplan.compile(uniform_model((4096,), seed=2.0))
    s0 = Session(seeded, seed=1).run()["y"]
    b = Session(seeded, seed=1234)
    assert b.run()["y"].tobytes() == s0.tobytes()
    assert not np.array_equal(b.run()["y"], s0)
    with pytest.raises(ValueError):
        Session(plan, seed=-1)


def test_two_ops_draw_different_numbers():
    """Each random op of a plan has its own stream, even with the same seed attribute."""
    m = model([h.make_node("RandomUniform", [], ["a"], shape=[256], seed=1.0),
               h.make_node("RandomUniform", [], ["b"], shape=[256], seed=1.0)], [], [vi("a", [256]), vi("b", [256])])
    plan = edgeplan.compile(m)
    out = Session(plan).run()
    assert not np.array_equal(out["a"], out["b"])
    streams = sorted(reference("uniform", 256, 1, stream=k).tobytes() for k in (0, 1))
    assert sorted((out["a"].tobytes(), out["b"].tobytes())) == streams


def test_like_forms_follow_a_variable_length():
    """Piper's noise: RandomNormalLike(x) * noise_scale, with x of a run-time length; the numbers are the
    first elements of the op's sequence at every length."""
    m = model([h.make_node("RandomNormalLike", ["x"], ["n"]),
               h.make_node("Mul", ["n", "s"], ["y"]),
               h.make_node("RandomUniformLike", ["x"], ["u"], low=2.0, high=3.0)],
              [vi("x", [1, "T"])], [vi("y", [1, "T"]), vi("u", [1, "T"])])
    m.graph.initializer.append(h.make_tensor("s", T.FLOAT, [], [0.667]))
    plan = edgeplan.compile(m, dims={"T": (1, 300)})
    s = Session(plan, seed=77)
    for t in (300, 5, 123):
        s.reset()
        out = s.run(x=np.zeros((1, t), np.float32))
        assert out["y"].shape == (1, t) and out["u"].shape == (1, t)
        normal = reference("normal", t, 77)
        assert out["y"].reshape(-1).tobytes() == (normal * f(0.667)).tobytes()
        assert out["u"].reshape(-1).tobytes() == reference("uniform", t, 77, stream=1, a=2.0, b=3.0).tobytes()


def test_compiler_refusals():
    for m, why in ((model([h.make_node("RandomNormal", [], ["y"])], [], [vi("y", [2])]), "shape"),
                   (normal_model((4,), dtype=T.STRING), "dtype"),
                   (normal_model((4,), scale=float("inf")), "finite"),
                   (uniform_model((4,), low=-3e38, high=3e38), "overflows")):
        with pytest.raises(Exception, match=why):
            edgeplan.compile(m)


def _patched(plan_bytes, seed: int, offset: int, value: int) -> bytes:
    """The plan with the u32 at `offset` bytes past the RANDOM params' seed field (found by its value) set."""
    data = bytearray(plan_bytes)
    at = data.find(seed.to_bytes(8, "little"))
    assert at > 0 and data.find(seed.to_bytes(8, "little"), at + 1) < 0
    data[at + offset:at + offset + 4] = (value & MASK32).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize("offset,value", [(8, 3), (8, 0xFFFFFFFF), (12, K.EP_DTYPE_F16), (12, K.EP_DTYPE_I32),
                                          (16 + 8 + 4, 2)], ids=["kind3", "kind~0", "f16", "i32", "has_seed2"])
def test_hostile_params_are_refused(offset, value):
    seed = 0xABCDEF << 24   # a float32 value (the ONNX attribute is one)
    plan = edgeplan.compile(uniform_model((16,), seed=float(seed)))
    Session(_patched(plan.to_bytes(), seed, 8, K.EP_RANDOM_UNIFORM), check_crc=False).run()   # unchanged: opens
    with pytest.raises(EdgeplanError) as e:
        Session(_patched(plan.to_bytes(), seed, offset, value), check_crc=False)
    assert e.value.status == K.EP_ERR_PLAN_PARAMS


def _edgeplan_run():
    """The C runner: the one built with EDGEPLAN_LIB, else the installed one (next to python, or on PATH)."""
    import shutil
    import sys
    lib = os.environ.get("EDGEPLAN_LIB")
    for p in ([Path(lib).with_name("edgeplan-run")] if lib else []) + [Path(sys.executable).with_name("edgeplan-run")]:
        if p.exists():
            return str(p)
    return shutil.which("edgeplan-run")


@pytest.mark.skipif(_edgeplan_run() is None, reason="edgeplan-run is not built or installed")
def test_edgeplan_run_takes_a_seed(tmp_path):
    plan = edgeplan.compile(uniform_model((64,)))
    path = tmp_path / "r.eplan"
    plan.save(path)
    out = tmp_path / "y.npy"
    r = subprocess.run([_edgeplan_run(), str(path), "--seed", "0x2a", "--output", str(out), "--quiet"],
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    assert np.load(out).tobytes() == Session(plan, seed=42).run()["y"].tobytes()
    r = subprocess.run([_edgeplan_run(), str(path), "--seed", "-1"], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and "--seed" in r.stderr
