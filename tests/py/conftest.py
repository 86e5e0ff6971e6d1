import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def zoo():
    """The model builders: the installed edgeplan.models, else the checkout's models/."""
    try:
        from edgeplan import models
    except ImportError:
        sys.path.insert(0, str(ROOT))
        import models
    return models


def rel_err(got, ref) -> float:
    """max |got - ref| / max |ref| (the issue's end-to-end metric)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    denom = max(float(np.abs(ref).max()) if ref.size else 0.0, 1e-30)
    return float(np.abs(got - ref).max()) / denom if ref.size else 0.0
