"""Calibration inputs made from images or wav files and a preprocessing recipe (docs/quantization.md,
"Calibration inputs").

A folder of images (.png .jpg .jpeg .bmp .ppm .pgm .webp) or of wavs (.wav) becomes one sample per file for
a model with one tensor input, preprocessed by the folder's ``preprocess.toml`` (or a recipe given by the
caller). Every key is optional; the defaults come from the model input's shape and dtype:

    [image]
    size = [224, 224]      # [H, W]: default the input's spatial dims
    resize = "stretch"     # "stretch" to size, "crop" (shorter side to size, then the centre),
                           # or "letterbox" (longer side to size, padded with `pad`)
    pad = 114              # letterbox fill, 0..255
    color = "RGB"          # "RGB", "BGR" or "L" (grey)
    layout = "NCHW"        # or "NHWC": default from where the input has its 1 or 3 channels
    scale = 0.00392156862745098   # pixel * scale, then (x - mean) / std; default 1/255 for a float input
    mean = [0.0, 0.0, 0.0]
    std = [1.0, 1.0, 1.0]

    [audio]
    rate = 16000           # the model's sample rate: a wav at another rate is resampled (scipy's
                           # polyphase resampler), or refused when scipy is absent
    length = 16000         # samples: a longer wav is cut, a shorter one padded with zeros;
                           # default the input's last dim
    scale = 1.0            # PCM in [-1, 1) * scale (32768 feeds int16-valued floats)

Images are read with Pillow, wavs (8/16/24/32-bit PCM, channels averaged) with the standard library."""
from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".webp")
AUDIO_SUFFIXES = (".wav",)
RECIPE = "preprocess.toml"

_IMAGE_KEYS = {"size", "resize", "pad", "color", "layout", "scale", "mean", "std"}
_AUDIO_KEYS = {"rate", "length", "scale"}


class MediaError(ValueError):
    """A calibration image, wav or recipe that cannot be used (the message names the file and what to do)."""


def media_files(folder: Path) -> tuple:
    """(kind, files): kind "image" or "audio" when the folder holds only one of them, else (None, [])."""
    files = sorted(p for p in folder.iterdir() if p.is_file())
    images = [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]
    audio = [p for p in files if p.suffix.lower() in AUDIO_SUFFIXES]
    if images and audio:
        raise MediaError(f"calibration folder '{folder}' mixes images and wavs: give one kind per folder")
    if images:
        return "image", images
    if audio:
        return "audio", audio
    return None, []


def load_recipe(folder: Path, recipe) -> dict:
    """The recipe: a dict given by the caller, a path to a TOML file, or the folder's preprocess.toml ({})."""
    if isinstance(recipe, dict):
        return recipe
    path = Path(recipe) if recipe is not None else folder / RECIPE
    if not path.is_file():
        if recipe is not None:
            raise MediaError(f"preprocessing recipe '{path}' does not exist")
        return {}
    from ..boards import _load_toml
    try:
        return _load_toml(path)
    except Exception as e:  # noqa: BLE001 - tomllib's or the fallback parser's error for a malformed file
        raise MediaError(f"preprocessing recipe '{path}' is not valid TOML ({e})") from None


def _section(recipe: dict, kind: str, keys: set, where: str) -> dict:
    sec = recipe.get(kind, {})
    if not isinstance(sec, dict):
        raise MediaError(f"{where}: [{kind}] must be a table")
    unknown = sorted(set(sec) - keys)
    if unknown:
        raise MediaError(f"{where}: [{kind}] has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(keys))}")
    return sec


def _number(v, what: str, where: str, lo=None, hi=None) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
        raise MediaError(f"{where}: {what} must be a finite number, got {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise MediaError(f"{where}: {what} = {v} is outside [{lo}, {hi}]")
    return float(v)


def _vector(v, n: int, what: str, where: str) -> np.ndarray:
    vals = v if isinstance(v, list) else [v]
    vals = [_number(x, what, where) for x in vals]
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise MediaError(f"{where}: {what} has {len(vals)} values, the input has {n} channel(s)")
    return np.asarray(vals, np.float32)


def _image_layout(shape: tuple, sec: dict, where: str) -> tuple:
    """(layout, channels, H, W) of an image input [N, C, H, W] or [N, H, W, C] (N = 1)."""
    if len(shape) != 4 or shape[0] not in (1, -1):
        raise MediaError(f"{where}: an image calibration folder needs a model input [1, C, H, W] or [1, H, W, C]; "
                         f"this input is {list(shape)}: give .npy files instead")
    layout = sec.get("layout")
    if layout is None:
        layout = "NCHW" if shape[1] in (1, 3) else "NHWC" if shape[3] in (1, 3) else None
        if layout is None:
            raise MediaError(f"{where}: cannot tell the channel axis of input {list(shape)}: set [image] layout")
    if layout not in ("NCHW", "NHWC"):
        raise MediaError(f"{where}: [image] layout must be \"NCHW\" or \"NHWC\", got {layout!r}")
    c, h, w = (shape[1], shape[2], shape[3]) if layout == "NCHW" else (shape[3], shape[1], shape[2])
    return layout, c, h, w


def _image(path: Path, shape: tuple, dtype, sec: dict, where: str) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError:
        raise MediaError("image calibration folders need Pillow: pip install Pillow (or give .npy files)") from None
    layout, c, h, w = _image_layout(shape, sec, where)
    size = sec.get("size", [h, w])
    if not (isinstance(size, list) and len(size) == 2 and all(isinstance(x, int) and 0 < x <= 16384 for x in size)):
        raise MediaError(f"{where}: [image] size must be [H, W] of whole numbers in 1..16384, got {size!r}")
    if (h > 0 and size[0] != h) or (w > 0 and size[1] != w):
        raise MediaError(f"{where}: [image] size {size} differs from the input's [H, W] = [{h}, {w}]")
    color = sec.get("color", "RGB" if c in (3, -1) else "L")
    if color not in ("RGB", "BGR", "L"):
        raise MediaError(f"{where}: [image] color must be \"RGB\", \"BGR\" or \"L\", got {color!r}")
    if (color == "L") != (c == 1):
        raise MediaError(f"{where}: [image] color {color} does not fit the input's {c} channel(s)")
    mode = sec.get("resize", "stretch")
    if mode not in ("stretch", "crop", "letterbox"):
        raise MediaError(f"{where}: [image] resize must be \"stretch\", \"crop\" or \"letterbox\", got {mode!r}")
    try:
        with Image.open(path) as im:
            im = im.convert("L" if color == "L" else "RGB")
            im.load()
    except Exception as e:  # noqa: BLE001 - Pillow's errors for a file that is not an image it reads
        raise MediaError(f"calibration image '{path}': cannot read it ({e})") from None
    th, tw = size
    if mode == "stretch":
        im = im.resize((tw, th), Image.BILINEAR)
    else:
        r = (max if mode == "crop" else min)(tw / im.width, th / im.height)
        nw, nh = max(1, round(im.width * r)), max(1, round(im.height * r))
        im = im.resize((nw, nh), Image.BILINEAR)
        if mode == "crop":
            x0, y0 = (nw - tw) // 2, (nh - th) // 2
            im = im.crop((x0, y0, x0 + tw, y0 + th))
        else:
            pad = int(_number(sec.get("pad", 114), "[image] pad", where, 0, 255))
            canvas = Image.new(im.mode, (tw, th), (pad,) * (1 if im.mode == "L" else 3))
            canvas.paste(im, ((tw - nw) // 2, (th - nh) // 2))
            im = canvas
    a = np.asarray(im, np.float32)
    if a.ndim == 2:
        a = a[:, :, None]
    if color == "BGR":
        a = a[:, :, ::-1]
    ch = a.shape[2]
    is_float = np.dtype(dtype).kind == "f"
    scale = _number(sec.get("scale", 1.0 / 255.0 if is_float else 1.0), "[image] scale", where)
    mean = _vector(sec.get("mean", 0.0), ch, "[image] mean", where)
    std = _vector(sec.get("std", 1.0), ch, "[image] std", where)
    if np.any(std == 0):
        raise MediaError(f"{where}: [image] std has a zero")
    a = (a * np.float32(scale) - mean) / std
    if layout == "NCHW":
        a = a.transpose(2, 0, 1)
    a = a[None]
    if not is_float:
        info = np.iinfo(dtype)
        a = np.clip(np.rint(a), info.min, info.max)
    return np.ascontiguousarray(a.astype(dtype))


def read_wav(path: Path) -> tuple:
    """(float32 mono samples in [-1, 1), rate) of a PCM wav."""
    try:
        with wave.open(str(path), "rb") as w:
            width, n_ch, rate, n = w.getsampwidth(), w.getnchannels(), w.getframerate(), w.getnframes()
            raw = w.readframes(n)
    except (wave.Error, EOFError, OSError) as e:
        raise MediaError(f"calibration wav '{path}': cannot read it as PCM wav ({e})") from None
    if width not in (1, 2, 3, 4) or n_ch < 1 or rate <= 0:
        raise MediaError(f"calibration wav '{path}': {8 * width}-bit, {n_ch} channel(s) at {rate} Hz is not a PCM "
                         "format it reads (8/16/24/32-bit)")
    frames = len(raw) // (width * n_ch)
    if frames == 0:
        raise MediaError(f"calibration wav '{path}' has no samples")
    b = np.frombuffer(raw[:frames * width * n_ch], np.uint8).reshape(frames * n_ch, width)
    if width == 1:
        x = (b[:, 0].astype(np.float32) - 128.0) / 128.0
    else:
        v = np.zeros(len(b), np.int64)
        for k in range(width):
            v |= b[:, k].astype(np.int64) << (8 * k)
        bits = 8 * width
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
        x = (v / float(1 << (bits - 1))).astype(np.float32)
    return x.reshape(frames, n_ch).mean(axis=1, dtype=np.float32), rate


def _audio(path: Path, shape: tuple, dtype, sec: dict, where: str) -> np.ndarray:
    if np.dtype(dtype).kind != "f":
        raise MediaError(f"{where}: a wav calibration folder needs a float input, this one is {np.dtype(dtype).name}")
    if not shape or any(d not in (1, -1) for d in shape[:-1]):
        raise MediaError(f"{where}: a wav calibration folder needs an input of samples [..., N] with leading dims "
                         f"1; this input is {list(shape)}: give .npy files instead")
    x, rate = read_wav(path)
    want = sec.get("rate")
    if want is not None:
        want = int(_number(want, "[audio] rate", where, 1000, 384000))
        if want != rate:
            try:
                from scipy.signal import resample_poly
            except ImportError:
                raise MediaError(f"calibration wav '{path}' is at {rate} Hz, the recipe says {want} Hz: install "
                                 "scipy to resample, or give wavs at the model's rate") from None
            g = np.gcd(int(rate), want)
            x = resample_poly(x.astype(np.float64), want // g, int(rate) // g).astype(np.float32)
    n = sec.get("length", shape[-1] if shape[-1] > 0 else None)
    if n is None:
        raise MediaError(f"{where}: the input's length is variable: set [audio] length (samples)")
    n = int(_number(n, "[audio] length", where, 1, 1 << 28))
    if shape[-1] > 0 and n != shape[-1]:
        raise MediaError(f"{where}: [audio] length {n} differs from the input's {shape[-1]} samples")
    x = x[:n] if len(x) >= n else np.concatenate([x, np.zeros(n - len(x), np.float32)])
    x = x * np.float32(_number(sec.get("scale", 1.0), "[audio] scale", where))
    out_shape = tuple(1 for _ in shape[:-1]) + (n,)
    return x.reshape(out_shape).astype(dtype)


def load_media(folder, inputs: dict, recipe=None, progress=None) -> tuple:
    """(samples, file names) from a folder of images or wavs, or None when it holds neither. inputs:
    {name: (shape, dtype)} of the model; progress(iterable, what) wraps the loop (a progress bar)."""
    folder = Path(folder)
    kind, files = media_files(folder)
    if kind is None:
        return None
    if len(inputs) != 1:
        raise MediaError(f"calibration folder '{folder}' holds {kind} files, which feed a model with one input; "
                         f"this model takes {sorted(inputs)}: give .npz files with arrays named by them")
    r = load_recipe(folder, recipe)
    where = f"preprocessing recipe of '{folder}'"
    unknown = sorted(set(r) - {"image", "audio"})
    if unknown:
        raise MediaError(f"{where}: unknown table(s) {', '.join(unknown)}; known: [image], [audio]")
    sec = _section(r, kind, _IMAGE_KEYS if kind == "image" else _AUDIO_KEYS, where)
    name, (shape, dtype) = next(iter(inputs.items()))
    make = _image if kind == "image" else _audio
    it = files if progress is None else progress(files, f"reading {kind}s")
    return [{name: make(p, tuple(shape), dtype, sec, where)} for p in it], [str(p) for p in files]
