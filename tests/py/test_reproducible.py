"""The compiler is a function of its input: the same model compiles to the same plan bytes, run after
run (no ordering by object address or hash seed), so a plan can be rebuilt and compared byte for byte."""
import edgeplan
from conftest import zoo


def test_the_same_model_gives_the_same_plan_bytes():
    m = zoo()
    # yolo's parallel branches give the memory planner buffers with equal start times to order
    model = m.build("yolo", size=64, nc=2, width=0.0625)
    first = edgeplan.compile(model).data
    for _ in range(3):
        assert edgeplan.compile(model).data == first
