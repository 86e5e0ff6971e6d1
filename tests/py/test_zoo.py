"""The zoo CNNs end to end against onnxruntime (the test-only oracle), at their default sizes.

Tolerance: max |edgeplan - ort| / max |ort| <= 1e-4 in float32. Both compute in float32 but sum in
different orders (and ort uses FMA and blocked GEMMs), so outputs differ by rounding; over ResNet-50's 53
convolutions that stays below ~3e-5 here, and 1e-4 still catches any real error (a wrong pad, a
mis-fused epilogue or a bad layout gives differences of order 1)."""
import numpy as np
import onnxruntime as ort
import pytest

import edgeplan
from conftest import rel_err, zoo

CASES = [("tiny", {}), ("mobilenetv2", {}), ("resnet50", {}), ("yolo", {}),
         ("mobilenetv2", {"size": 96, "width": 0.5}), ("yolo", {"size": 160})]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: c[0] + "".join(f"-{k}{v}" for k, v in c[1].items()))
def compiled(request):
    name, kw = request.param
    model = zoo().build(name, **kw)
    return name, model, edgeplan.compile(model)


def test_matches_onnxruntime(compiled):
    name, model, plan = compiled
    sess = edgeplan.Session(plan)
    rng = np.random.default_rng(7)
    feeds = {t.name: rng.standard_normal(t.shape).astype(np.float32) for t in sess.inputs}
    got = sess.run(feeds)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert list(got) == [o.name for o in model.graph.output]
    for (k, y), r in zip(got.items(), ref):
        assert y.shape == r.shape
        err = rel_err(y, r)
        print(f"{name} {k}: max|diff|/max|ref| = {err:.2e}")
        assert err <= 1e-4


def test_arena_within_10_percent_of_lower_bound(compiled):
    name, _, plan = compiled
    r = plan.report
    print(f"{name}: planned {r['planned_bytes']:,} B, lower bound {r['lower_bound']:,} B ({r['strategy']})")
    assert r["lower_bound"] <= r["planned_bytes"] <= 1.10 * r["lower_bound"]
    assert "lower bound" in plan.summary()


def test_fusions_are_reported(compiled):
    name, model, plan = compiled
    n_bn = sum(n.op_type == "BatchNormalization" for n in model.graph.node)
    ops = plan.report["op_counts"]
    # every BatchNormalization is folded into its conv: no standalone affine ops remain for them
    assert n_bn == 0 or len(plan.report["fused"]) >= n_bn * 0.9
    # and every Conv is a conv2d op, or a stage of a fused inverted-residual block ("... block (expand+depthwise+...)")
    in_blocks = sum(len([s for s in f[f.index("(") + 1:-1].split("+") if s != "residual"])
                    for f in plan.report["fused"] if f.startswith("inverted-residual"))
    assert ops.get("conv2d", 0) + in_blocks == sum(n.op_type == "Conv" for n in model.graph.node)
