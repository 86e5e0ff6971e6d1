"""The C headers as Python sees them: one cffi FFI built from the declarations in
runtime_c/include/edgeplan/{plan_format.h,delegate.h,edgeplan.h,external.h,vnpu.h} (between the EP_CDEF markers),
and their integer constants as attributes of ``K``. Nothing here is written twice."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import cffi

_HERE = Path(__file__).resolve().parent
_CANDIDATES = (_HERE / "include" / "edgeplan",                       # installed wheel
               _HERE.parents[1] / "runtime_c" / "include" / "edgeplan")  # source checkout


def header_dir() -> Path:
    for d in _CANDIDATES:
        if (d / "edgeplan.h").is_file():
            return d
    raise FileNotFoundError("edgeplan C headers not found in " + ", ".join(map(str, _CANDIDATES)))


def _region(text: str) -> str:
    m = re.search(r"/\* EP_CDEF_BEGIN \*/(.*?)/\* EP_CDEF_END \*/", text, re.S)
    if not m:
        raise RuntimeError("header lacks EP_CDEF markers")
    return m.group(1).replace("EP_NODISCARD ", "").replace("EP_API ", "")


def _load():
    d = header_dir()
    names = ("plan_format.h", "delegate.h", "edgeplan.h", "external.h", "vnpu.h")
    texts = [_region((d / name).read_text()) for name in names]
    ffi = cffi.FFI()
    consts = {}
    for t in texts:
        ffi.cdef(t)
        for name, val in re.findall(r"^#define\s+(EP_\w+)\s+(-?(?:0x[0-9A-Fa-f]+|\d+))\s*(?:/\*.*)?$", t, re.M):
            consts[name] = int(val, 0)
        for name, val in re.findall(r"^\s*(EP_\w+)\s*=\s*(-?\d+)\s*,?", t, re.M):
            consts[name] = int(val)
    return ffi, SimpleNamespace(**consts), d


ffi, K, HEADER_DIR = _load()

# EP_DTYPE_* code <-> numpy dtype
import numpy as _np  # noqa: E402

EP_TO_NUMPY = {
    K.EP_DTYPE_F32: _np.dtype(_np.float32), K.EP_DTYPE_U8: _np.dtype(_np.uint8),
    K.EP_DTYPE_I8: _np.dtype(_np.int8), K.EP_DTYPE_I16: _np.dtype(_np.int16),
    K.EP_DTYPE_I32: _np.dtype(_np.int32), K.EP_DTYPE_I64: _np.dtype(_np.int64),
    K.EP_DTYPE_BOOL: _np.dtype(_np.bool_), K.EP_DTYPE_F16: _np.dtype(_np.float16),
}
EP_TO_NUMPY[K.EP_DTYPE_F64] = _np.dtype(_np.float64)
EP_TO_NUMPY.update({K.EP_DTYPE_U16: _np.dtype(_np.uint16), K.EP_DTYPE_U32: _np.dtype(_np.uint32),
                    K.EP_DTYPE_U64: _np.dtype(_np.uint64)})
try:   # numpy has no bfloat16; ml_dtypes (which onnx needs) has
    import ml_dtypes as _ml_dtypes
    EP_TO_NUMPY[K.EP_DTYPE_BF16] = _np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - a runtime-only install: bfloat16 tensors are then unreadable
    pass
NUMPY_TO_EP = {v: k for k, v in EP_TO_NUMPY.items()}
