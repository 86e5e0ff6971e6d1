"""The int8 kernels use exact instructions only (QUANTIZATION.md, hygiene check): no VPMADDUBSW (_mm*_maddubs_epi16
saturates its pair sums at 16 bits on full-range int8 data) and no VQRDMULH (a doubling high multiply with its own
rounding: another requantisation formula than ep_requant's single rounding). A grep over the int8 kernel sources."""
import re

FORBIDDEN = re.compile(r"_mm\d*_maddubs_epi16|\bvqrdmulh\w*")


def _int8_sources(root):
    k = root / "runtime_c" / "kernels"
    return sorted(set(k.glob("*/quant*")) | set(k.glob("quant_*")))


def test_int8_kernels_use_exact_instructions_only(root):
    files = _int8_sources(root)
    assert any(f.parent.name == "x86" for f in files) and any(f.parent.name == "neon" for f in files), files
    hits = [f"{f.relative_to(root)}:{n}: {line.strip()}" for f in files
            for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if FORBIDDEN.search(line)]
    assert not hits, "forbidden int8 instructions:\n" + "\n".join(hits)


def test_the_guard_sees_them():
    assert FORBIDDEN.search("acc = _mm256_maddubs_epi16(a, b);") and FORBIDDEN.search("v = vqrdmulhq_s32(a, b);")
    assert not FORBIDDEN.search("_mm256_madd_epi16(a, b)  /* not VPMADDUBSW, not VQRDMULH */")
