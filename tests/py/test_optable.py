"""The op table (runtime_c/ops.def) is the one place per op: the generated files are current, and what
the compiler reads from it agrees with the C header that cffi and the runtime see."""
import subprocess
import sys

import pytest

from edgeplan._cdef import K, ffi
from edgeplan.compiler.optable import FAMILIES, OPS


def _gen_ops(root):
    from conftest import runtime_script
    return runtime_script("gen_ops")


def test_generated_files_are_current(root):
    r = subprocess.run([sys.executable, str(root / "runtime_c" / "gen_ops.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_the_compiler_table_matches_the_header():
    assert OPS and max(o.code for o in OPS.values()) + 1 == K.EP_OP_COUNT
    for name, o in OPS.items():
        assert getattr(K, o.const) == o.code, name
        assert ffi.sizeof(o.params) % 8 == 0, f"{o.params} must be a multiple of 8 bytes (PARAMS records are 8-aligned)"
        for number, v in enumerate(o.variants):
            assert getattr(K, f"EP_{name.upper()}_VARIANT_{v.upper()}") == number
        assert any(k[0] == "ref" for k in o.kernels)
    assert sorted(n for names in FAMILIES.values() for n in names) == sorted(OPS)


@pytest.mark.parametrize("row, msg", [
    ("EP_OP(CONV2D, conv2d, 1, ep_conv2d_params, 2, 4, 1, 1, 0, conv, 0)", "already in the table"),
    ("EP_OP(FOO, foo, 99, ep_axis_params, 1, 1, 1, 1, EP_OPF_FAST, layout, 0)", "unknown flag 'EP_OPF_FAST'"),
    ("EP_VARIANT(GEMM, FAST, 5)", "variants are numbered 1, 2, ..."),
    ("EP_KERNEL(avx512, GEMM, DEFAULT, ep_avx512_gemm_f32)", "unknown isa 'avx512'"),
    ("EP_OP(FOO, foo, 99, ep_axis_params, 1, 1, 1, 1, 0, layout, 0)", "foo variant(s) default have no ref kernel"),
    ("EP_KERNEL(ref, NOPE, DEFAULT, ep_ref_nope_f32)", "which no EP_OP row above defines"),
])
def test_a_wrong_row_is_named(root, row, msg):
    gen_ops = _gen_ops(root)
    text = (root / "runtime_c" / "ops.def").read_text().replace("#undef EP_OP", row + "\n#undef EP_OP")
    with pytest.raises(gen_ops.OpsDefError, match=msg.replace("(", "\\(").replace(")", "\\)")):
        gen_ops.read_ops(text=text)
