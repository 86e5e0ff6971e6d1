"""Fused inverted-residual blocks: expand 1x1 conv -> depthwise conv -> project 1x1 conv (+ residual), the
MobileNetV2 / EfficientNet / YOLO-backbone block, become one INVRES op (plan_format.h, ep_invres_params).

Runs after kernel selection (passes/select.py), on the ops it made: the two 1x1 convolutions with variant
PACKED (their weights already packed as INVRES reads them) and the depthwise one with variant DEPTHWISE. The
expand stage is optional (MobileNetV2's first block has none). The fused op computes a band of output rows
at a time through all three stages in its scratch, so the expanded tensors (the largest of these networks:
4.8 MB at MobileNetV2's 112x112 stage) never reach the arena, and on the board they stay in L2.

A block is fused when its expanded tensor is at least the target's block budget (block_bytes, the L2 share
of one core): smaller ones already stay in cache between the three ops, and their maps are too small to cut
into bands for several threads. The band height is chosen by choose_band; the op's scratch holds one slot
per thread (the target's threads), so the scratch, not the expanded tensor, is what the arena holds. The fused op
equals the three ops bit for bit (kernels/invres_tmpl.h), so fusion changes no output."""
from __future__ import annotations

from ..._cdef import K
from ..graph import Graph, Op

MR, NR = K.EP_PACK_MR, K.EP_PACK_NR


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def slot_bytes(c: int, h: int, w: int, ce: int, ow: int, p: dict, band: int, expand: bool) -> int:
    """One scratch slot of INVRES (runtime_c/kernels/invres_common.h, which the shape function checks)."""
    (kh, kw), (sh, sw), (dh, dw) = p["kernel"], p["stride"], p["dilation"]
    rp = (band - 1) * sh + (kh - 1) * dh + 1
    rr = min(rp, h)
    pw = _ceil(ow, 16) * 16 + (kw - 1) * dw // sw
    floats = (ce * rr * w + c * NR if expand else 0) + rp * sw * pw + ce * _ceil(band * ow, NR) * NR
    return 4 * floats


def _pointwise(op: Op) -> bool:
    p = op.params
    return (op.kind == "conv2d" and op.variant == K.EP_CONV2D_VARIANT_PACKED and tuple(p["kernel"]) == (1, 1)
            and tuple(p["stride"]) == (1, 1) and not any(p["pads"]) and int(p.get("groups", 1)) == 1)


def _residual(op: Op):
    return op.inputs[3] if len(op.inputs) > 3 else None


def _static(*ts) -> bool:
    return all(t is not None and len(t.shape) == 4 and not any(t.dim_sym) for t in ts)


def _acts(*ops) -> dict:
    return {"act": [int(o.params.get("act", 0)) if o else 0 for o in ops],
            "act_alpha": [float(o.params.get("act_alpha", 0.0)) if o else 0.0 for o in ops],
            "act_beta": [float(o.params.get("act_beta", 0.0)) if o else 0.0 for o in ops]}


# Per band, every channel's padded rows are refilled (the rows of the band plus the kernel's halo) and each
# GEMM starts its tiles over: a band of at least this many output pixels keeps that overhead small (on one
# AVX2 core, a 56x56 block with 144 expanded channels runs at 1.36x the three separate ops with 1-row bands,
# 1.06x with 2, 0.97x with 4 and 0.91x with 8).
BAND_PIXELS = 256


def choose_band(c, h, w, ce, oh, ow, p, expand, budget: int, threads: int) -> int:
    """The smallest band of at least BAND_PIXELS output pixels, at most ceil(OH / threads) rows (every thread
    gets bands), made smaller while its slot passes the budget."""
    band = min(_ceil(BAND_PIXELS, ow), _ceil(oh, max(1, threads)))
    while band > 1 and slot_bytes(c, h, w, ce, ow, p, band, expand) > budget:
        band -= 1
    return max(1, band)


def fuse_blocks(graph: Graph, tg) -> Graph:
    """Replaces each fusable (expand) -> depthwise -> project chain of graph by one INVRES op."""
    if not tg.packed or not tg.blocks or tg.block_bytes <= 0:
        return graph
    users: dict = {}
    for op in graph.ops:
        for t in op.inputs:
            if t is not None:
                users.setdefault(id(t), []).append(op)
    viewed = {id(t.view_of) for t in graph.tensors if t.view_of is not None}

    def private(t) -> bool:   # t feeds exactly one op and nothing else sees it
        return (len(users.get(id(t), ())) == 1 and id(t) not in viewed and not t.is_output and not t.is_input
                and not t.is_state and t.view_of is None)

    producer = {id(o): op for op in graph.ops for o in op.outputs}
    drop, fused = set(), {}
    for prj in graph.ops:
        if not _pointwise(prj) or prj.inputs[1] is None:
            continue
        d = prj.inputs[0]
        dw = producer.get(id(d))
        if (dw is None or dw.kind != "conv2d" or dw.variant not in (K.EP_CONV2D_VARIANT_DEPTHWISE, K.EP_CONV2D_VARIANT_DW_C8) or _residual(dw) is not None
                or not private(d) or id(dw) in drop):
            continue
        e = dw.inputs[0]
        exp = producer.get(id(e))
        if exp is not None and not (_pointwise(exp) and _residual(exp) is None and private(e) and id(exp) not in drop
                                    and id(exp) not in fused):
            exp = None
        x = exp.inputs[0] if exp else e
        y = prj.outputs[0]
        if not _static(x, e, d, y):
            continue
        n, c, h, w = (int(v) for v in x.shape)
        ce = int(e.shape[1])
        oh, ow = (int(v) for v in y.shape[2:])
        if ce * h * w * 4 * n < tg.block_bytes:
            continue
        band = choose_band(c, h, w, ce, oh, ow, dw.params, exp is not None, tg.block_bytes, tg.threads)
        slot = slot_bytes(c, h, w, ce, ow, dw.params, band, exp is not None)
        slots = max(1, min(tg.threads, n * _ceil(oh, band)))
        p = dw.params
        params = {"kernel": list(p["kernel"]), "stride": list(p["stride"]), "dilation": list(p["dilation"]),
                  "pads": list(p["pads"]), "band": band}
        params.update(_acts(exp, dw, prj))
        ins = [x, exp.inputs[1] if exp else None, (exp.inputs[2] if len(exp.inputs) > 2 else None) if exp else None,
               dw.inputs[1], dw.inputs[2] if len(dw.inputs) > 2 else None,
               prj.inputs[1], prj.inputs[2] if len(prj.inputs) > 2 else None, _residual(prj)]
        while len(ins) > 6 and ins[-1] is None:
            ins.pop()
        names = [o.name for o in (exp, dw, prj) if o is not None and o.name]
        fused[id(prj)] = Op("invres", ins, [y], params, name="+".join(names), scratch=slot * slots)
        drop.update(id(o) for o in (exp, dw) if o is not None)
        gone = [t for t in (e if exp else None, d) if t is not None]
        graph.tensors = [t for t in graph.tensors if all(t is not g for g in gone)]
        stages = ("expand+" if exp else "") + "depthwise+project" + ("+residual" if _residual(prj) is not None else "")
        graph.fused.append(f"inverted-residual block ({stages})")
    if fused:
        graph.ops = [fused.get(id(op), op) for op in graph.ops if id(op) not in drop]
    return graph
