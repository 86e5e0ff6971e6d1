"""Accuracy of post-training int8 on a real recogniser: PP-OCRv4 rec (the RapidOCR wheel's export) reading text
lines rendered with PIL from a fixed word list in the DejaVu fonts Debian ships, character error rate against
the rendered text, fp32 and int8 (edgeplan compile --quantize int8, calibrated on other rendered lines).

    python3 bench/ocr_int8.py [--lines 500] [--calibration 32] [--observer percentile|minmax|mse] [--target-sqnr DB]

With --target-sqnr, also the mixed-precision plan (--quantize auto) for that output SQNR. Prints the CER of each, the share of lines whose int8 text equals the fp32 text, and the latency of each at
one thread. Needs the pinned model (python3 tests/models/fetch.py) and fonts-dejavu-core."""
from __future__ import annotations

import argparse
import glob
import os
import platform
import sys
import time

import numpy as np

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pyapi")]

MODEL = os.path.expanduser("~/.cache/edgeplan-models/ppocrv4_rec.onnx")
WORDS = ("the of and to in is you that it he was for on are as with his they at be this have from or one had by "
         "word but not what all were we when your can said there use an each which she do how their if will up "
         "other about out many then them these so some her would make like him into time has look two more write "
         "go see number no way could people my than first water been call who oil its now find long down day did "
         "get come made may part over new sound take only little work know place year live me back give most very "
         "after thing our just name good sentence man think say great where help through much before line right "
         "too mean old any same tell boy follow came want show also around form three small set put end does "
         "another well large must big even such because turn here why ask went men read need land different home "
         "us move try kind hand picture again change off play spell air away animal house point page letter "
         "mother answer found study still learn should America world 2024 100 3.14 42 1999 7 $5 No.9").split()
H, W = 48, 320


def fonts() -> list:
    fs = sorted(f for f in glob.glob("/usr/share/fonts/truetype/dejavu/*.ttf") if "Math" not in f)
    if not fs:
        sys.exit("no DejaVu fonts: apt-get install fonts-dejavu-core")
    return fs


def render(rng, font_files) -> tuple:
    """(image [1, 3, 48, 320] float32 normalised as PP-OCR does, text)."""
    from PIL import Image, ImageDraw, ImageFont
    text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 4))))
    font = ImageFont.truetype(str(rng.choice(font_files)), int(rng.integers(26, 36)))
    box = font.getbbox(text)
    w, h = box[2] - box[0] + 16, box[3] - box[1] + 12
    ink, paper = int(rng.integers(0, 70)), int(rng.integers(190, 256))
    img = Image.new("L", (w, h), paper)
    ImageDraw.Draw(img).text((8 - box[0], 6 - box[1]), text, font=font, fill=ink)
    nw = min(W, max(1, int(round(w * H / h))))
    img = img.resize((nw, H), Image.BILINEAR).convert("RGB")
    a = (np.asarray(img, np.float32) / 255.0 - 0.5) / 0.5
    out = np.zeros((1, 3, H, W), np.float32)
    out[0, :, :, :nw] = a.transpose(2, 0, 1)
    return out, text


def decode(logits: np.ndarray, chars: list) -> str:
    idx = logits.reshape(logits.shape[-2], logits.shape[-1]).argmax(-1)
    out, prev = [], 0
    for i in idx:
        if i != prev and i != 0:
            out.append(chars[i])
        prev = i
    return "".join(out)


def edit(a: str, b: str) -> int:
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return d[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--calibration", type=int, default=32)
    ap.add_argument("--observer", default="percentile", choices=["percentile", "minmax", "mse"])
    ap.add_argument("--target-sqnr", type=float, default=None, help="also the mixed-precision plan for this SQNR")
    a = ap.parse_args()
    import onnx
    import edgeplan
    model = onnx.load(MODEL)
    chars = ["<blank>"] + model.metadata_props[0].value.split("\n") + [" "]
    name = model.graph.input[0].name
    shapes = {name: (1, 3, H, W)}
    ff = fonts()
    cal = [{name: render(np.random.default_rng(10_000 + k), ff)[0]} for k in range(a.calibration)]
    t = time.perf_counter()
    q8 = edgeplan.compile(model, shapes=shapes, quantize="int8", calibration=cal, observer=a.observer)
    t_ptq = time.perf_counter() - t
    fp = edgeplan.compile(model, shapes=shapes)
    sessions = [("fp32", edgeplan.Session(fp)), ("int8", edgeplan.Session(q8))]
    if a.target_sqnr is not None:
        t = time.perf_counter()
        mixed = edgeplan.compile(model, shapes=shapes, quantize="auto", calibration=cal, observer=a.observer,
                                 target_sqnr=a.target_sqnr)
        rep = mixed.report["mixed_precision"]
        print(f"mixed: {rep['int8_layers']} int8 and {rep['float_layers']} float layers, calibration SQNR "
              f"{rep['output_sqnr_db']:.1f} dB (target {a.target_sqnr}), search {time.perf_counter() - t:.0f} s")
        sessions.append(("mixed", edgeplan.Session(mixed)))
    out = model.graph.output[0].name
    errs = {k: 0 for k, _ in sessions}
    same = total = 0
    times = {k: [] for k, _ in sessions}
    for k in range(a.lines):
        x, text = render(np.random.default_rng(k), ff)
        got = {}
        for label, s in sessions:
            t = time.perf_counter()
            y = s.run({name: x})[out]
            times[label].append(time.perf_counter() - t)
            got[label] = decode(y, chars)
            errs[label] += edit(got[label], text)
        same += got["fp32"] == got["int8"]
        total += len(text)
    ops = q8.report["op_counts"]
    print(f"PP-OCRv4 rec, {a.lines} rendered lines ({len(ff)} DejaVu fonts), {a.calibration} calibration lines, "
          f"observer {a.observer}; {platform.processor() or platform.machine()}")
    print(f"int8 plan: {ops.get('qconv2d', 0)} QCONV2D, {ops.get('qgemm', 0)} QGEMM, {ops.get('qlut', 0)} QLUT; "
          f"weights {q8.report['const_bytes'] / fp.report['const_bytes']:.2f}x fp32; PTQ {t_ptq:.1f} s")
    for label, _ in sessions:
        print(f"  {label}: CER {100 * errs[label] / total:.2f} %  median {1e3 * np.median(times[label]):.2f} ms")
    print(f"  int8 text equal to fp32 text on {100 * same / a.lines:.1f} % of lines; "
          f"CER difference {100 * (errs['int8'] - errs['fp32']) / total:+.2f} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
