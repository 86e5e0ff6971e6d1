"""The plan records as cffi lays them out (what the Python writer uses) must be what the C compiler lays
out. cffi's API mode compiles the declarations against the real header and refuses to build or import
on any size, offset or constant mismatch."""
import importlib.util
import sys

import cffi
import pytest

from edgeplan import _cdef


def test_cffi_layout_matches_c_compiler(tmp_path):
    text = _cdef._region((_cdef.HEADER_DIR / "plan_format.h").read_text())
    ffi = cffi.FFI()
    ffi.cdef(text)
    ffi.set_source("_ep_layout_check", '#include "edgeplan/plan_format.h"',
                   include_dirs=[str(_cdef.HEADER_DIR.parent)])
    so = ffi.compile(tmpdir=str(tmp_path))
    spec = importlib.util.spec_from_file_location("_ep_layout_check", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)   # raises on a layout mismatch
    for struct in ("ep_plan_header", "ep_section", "ep_tensor_rec", "ep_op_rec", "ep_io_rec", "ep_conv2d_params",
                   "ep_pad_params", "ep_resize_params", "ep_slice_params"):
        assert mod.ffi.sizeof(struct) == _cdef.ffi.sizeof(struct), struct
    assert mod.lib.EP_PLAN_MAGIC == _cdef.K.EP_PLAN_MAGIC
    sys.modules.pop("_ep_layout_check", None)


@pytest.mark.parametrize("struct,size", [("ep_plan_header", 64), ("ep_section", 32), ("ep_tensor_rec", 72),
                                         ("ep_op_rec", 40), ("ep_io_rec", 8)])
def test_documented_record_sizes(struct, size):
    # docs/plan-format.md states these sizes; changing one is a major format change
    assert _cdef.ffi.sizeof(struct) == size


def test_the_compiler_knows_the_arena_the_runtime_will_ask_for():
    """plan.query (header, section table and the EP_SESSION_*_BYTES figures; no runtime library) equals
    ep_plan_query, so the compiler's arena figure is the board's whatever its word size."""
    import edgeplan
    from edgeplan.plan import query
    from edgeplan.runtime import plan_info
    from conftest import zoo
    from test_dynamic import conv_encoder
    for plan in (edgeplan.compile(zoo().build("tiny")), edgeplan.compile(conv_encoder(), dims={"T": (1, 64)})):
        c = plan_info(plan.data)
        assert query(plan.data) == {k: c[k] for k in ("arena_bytes", "planned_bytes", "session_bytes", "const_bytes")}
        assert plan.report["arena_bytes"] == c["arena_bytes"]
