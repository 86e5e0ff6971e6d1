"""Writes the fuzz targets' seed corpus (tests/fuzz/corpus/<target>/): small compiled zoo plans, each with a
control byte appended (fuzz_plan.c), wav files of every sample width the reader takes (fuzz_wav.c), and small
.npy arrays of float32, int8, int32 and float16 with 1-4 dims (fuzz_npy.c).

    PYTHONPATH=pyapi python3 tests/fuzz/make_corpus.py"""
import io
import struct
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def plans(out: Path):
    import edgeplan
    from edgeplan import models
    out.mkdir(parents=True, exist_ok=True)
    seeds = {
        "tiny": edgeplan.compile(models.build("tiny", size=16)),
        "kws": edgeplan.compile(models.build("kws", hidden=16), dims={"T": (1, 12)}, state={"h_in": "h_out"}),
    }
    for name, plan in seeds.items():
        for ctl in (0x00, 0x0d):    # 1 thread, min lengths; 2 threads, profiling, max lengths
            (out / f"{name}-{ctl:02x}.bin").write_bytes(plan.to_bytes() + bytes([ctl]))


def _wav(channels, bits, frames, extensible=False) -> bytes:
    width = bits // 8
    rng = np.random.default_rng(bits * 10 + channels)
    data = rng.integers(0, 256, size=frames * channels * width, dtype=np.uint8).tobytes()
    tag = 0xFFFE if extensible else 1
    fmt = struct.pack("<HHIIHH", tag, channels, 16000, 16000 * channels * width, channels * width, bits)
    if extensible:
        fmt += struct.pack("<HHI", 22, bits, 0) + struct.pack("<H", 1) + bytes(14)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def wavs(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    for ch, bits, ext in ((1, 16, False), (2, 8, False), (1, 24, False), (3, 32, False), (2, 16, True)):
        (out / f"pcm{bits}-{ch}ch{'-ext' if ext else ''}.wav").write_bytes(_wav(ch, bits, 64, ext))


def npys(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    shapes = {"float32": (5,), "int8": (2, 3), "int32": (2, 2, 3), "float16": (1, 2, 2, 3)}
    for dtype, shape in shapes.items():
        a = (rng.standard_normal(shape) * 50).astype(dtype)
        b = io.BytesIO()
        np.lib.format.write_array(b, a, version=(1, 0))   # fortran_order False: C order
        (out / f"{dtype}-{len(shape)}d.npy").write_bytes(b.getvalue())
    b = io.BytesIO()
    np.lib.format.write_array(b, np.arange(6, dtype=np.float32).reshape(3, 2), version=(2, 0))
    (out / "float32-2d-v2.npy").write_bytes(b.getvalue())


if __name__ == "__main__":
    plans(HERE / "corpus" / "fuzz_plan")
    wavs(HERE / "corpus" / "fuzz_wav")
    npys(HERE / "corpus" / "fuzz_npy")
