"""Plans written by an earlier edgeplan still open and give the same results (docs/plan-format.md,
compatibility policy). tests/py/data holds plans that commit 68da561's compiler wrote (plan 1.0 and 1.1,
runtime 0.1): the zoo's tiny CNN, and a variable-length encoder."""
from pathlib import Path

import numpy as np

import edgeplan
from conftest import zoo
from test_dynamic import conv_encoder

DATA = Path(__file__).resolve().parent / "data"


def test_a_plan_1_0_of_runtime_0_1_opens_and_matches():
    """Equal to today's plan of the same model within 1e-6 relative: the ops, variants and layouts are the
    same, but the weights folded today (BatchNormalization into the convs, in numpy float32) may differ by 1
    ulp from the stored plan's, as numpy's vector loops differ between hosts (37 of 1,802 weights on an AMD
    EPYC against the Xeon that wrote the file)."""
    old = edgeplan.Session(DATA / "tiny-plan-1.0.eplan")
    new = edgeplan.Session(edgeplan.compile(zoo().build("tiny")))
    x = np.random.default_rng(0).standard_normal(old.inputs[0].shape).astype(np.float32)
    np.testing.assert_allclose(old.run(x=x)["y"], new.run(x=x)["y"], rtol=1e-6, atol=1e-7)


def test_a_plan_1_1_with_variable_dims_opens_and_matches():
    old = edgeplan.Session(DATA / "encoder-plan-1.1.eplan")
    new = edgeplan.Session(edgeplan.compile(conv_encoder(), dims={"T": (1, 64)}))
    name = old.inputs[0].name
    for t in (1, 17, 64):
        shape = [t if n else d for d, n in zip(old.inputs[0].max_shape, old.inputs[0].dim_names)]
        x = np.random.default_rng(t).standard_normal(shape).astype(np.float32)
        a, b = old.run({name: x}), new.run({name: x})
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
