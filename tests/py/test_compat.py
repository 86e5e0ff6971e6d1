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
    old = edgeplan.Session(DATA / "tiny-plan-1.0.eplan")
    new = edgeplan.Session(edgeplan.compile(zoo().build("tiny")))
    x = np.random.default_rng(0).standard_normal(old.inputs[0].shape).astype(np.float32)
    np.testing.assert_array_equal(old.run(x=x)["y"], new.run(x=x)["y"])


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
