"""Channel-blocked activations: the tensors between depthwise and pointwise convolutions in layout C8
(plan_format.h "Tensor layouts": [N][C/8][H][W][8]), where a pixel's 8 channels are one AVX2 vector or two
NEON q registers. The depthwise convolution then vectorises across channels at any map size, and the 1x1
convolution reads its GEMM operand in place, with no im2col packing.

Runs after kernel selection and block fusion (pipeline.compile_graph), on the ops they made:
  1. Candidates. A depthwise conv (DEPTHWISE or DW_C8) becomes BLOCKED_DW, a 1x1 stride-1 unpadded groups-1
     conv (PACKED or POINTWISE) BLOCKED_PW, another groups-1 conv (PACKED, POINTWISE or DIRECT; Winograd
     layers keep their variant) BLOCKED_CONV, which reads its input in either layout, when its output can be C8 (a static f32 [N,C,H,W] arena tensor
     with C a multiple of 8, not a plan input, output or state, not viewed by a reshape) and its input and
     residual are static f32 [N,C,H,W] with C a multiple of 8 (a plain one gets a C8 copy). An element-wise
     op (UNARY, BINARY) on such operands follows a C8 input (a BINARY operand of one value per channel, per
     image or a scalar is broadcast as it is, in its own layout), and so do CONCAT and SPLIT
     along the channels (their chunks are whole C8 blocks), MAXPOOL and AVGPOOL, and GLOBAL_AVGPOOL (whose
     [N,C,1,1] output stays plain: a region's exit without a reorder), and RESIZE where TABLE runs (nearest or
     linear over H and W), and PAD (channel pads of whole blocks).
  2. Regions. The C8 ops joined by C8 tensors form regions; each edge to a plain op (or from one) costs a
     REORDER, a pass over the tensor. A region is kept when its convs' time saved (the measured rates of RATE:
     plain variant against C8 kernel) exceeds its reorders' time (REORDER_GBS).
  3. Rewrite. The kept convs take the BLOCKED variants with their weights repacked from the plain filter, and
     a REORDER is inserted before the first op that needs the other layout of a tensor (one per tensor and
     direction).
Graphs with IF / ELSE branches are left plain. Plan inputs and outputs are always plain."""
from __future__ import annotations

import numpy as np

from ..._cdef import K
from ..graph import Graph, Op, Tensor
from ..ops.linear import pack_gemm_b
from ..ops.resize import table_scratch

BLK = K.EP_LAYOUT_BLOCK
C8 = K.EP_LAYOUT_C8
DW_FROM = (K.EP_CONV2D_VARIANT_DEPTHWISE, K.EP_CONV2D_VARIANT_DW_C8)
PW_FROM = (K.EP_CONV2D_VARIANT_PACKED, K.EP_CONV2D_VARIANT_POINTWISE)
CONV_FROM = (K.EP_CONV2D_VARIANT_PACKED, K.EP_CONV2D_VARIANT_POINTWISE, K.EP_CONV2D_VARIANT_DIRECT)


def _plain_weights(graph: Graph, t: Tensor):
    """The OIHW float32 filter that kernel selection packed into t (or t itself when it is unpacked)."""
    for old, new in graph.repacked.values():
        if new is t:
            t = old
            break
    s = t.storage()
    if s.data is None or np.dtype(s.dtype) != np.float32 or len(t.shape) != 4:
        return None
    return np.asarray(s.data, np.float32).reshape(t.shape)


def _conv_kind(graph: Graph, op: Op):
    """"dw", "pw" or "conv" (dense, groups 1: BLOCKED_CONV) when op can write a C8 output (with its plain
    filter), else None. Winograd layers keep their variant."""
    if op.kind != "conv2d" or len(op.inputs[0].shape) != 4:
        return None
    p = op.params
    c, m = int(op.inputs[0].shape[1]), int(op.outputs[0].shape[1])
    g = int(p.get("groups", 1))
    if op.variant in DW_FROM and g == c == m:
        kind = "dw"
    elif (op.variant in PW_FROM and g == 1 and tuple(p["kernel"]) == (1, 1) and tuple(p["stride"]) == (1, 1)
          and not any(p["pads"])):
        kind = "pw"
    elif op.variant in CONV_FROM and g == 1:
        kind = "conv"
    else:
        return None
    if np.dtype(op.inputs[1].dtype) != np.float32 or _plain_weights(graph, op.inputs[1]) is None:
        return None
    return kind


def _pack(kind: str, w: np.ndarray, x_c8: bool) -> np.ndarray:
    m, cg, kh, kw = w.shape
    if kind == "dw":   # [C/8][KH*KW][8]
        return np.ascontiguousarray(w.reshape(m // BLK, BLK, kh * kw).transpose(0, 2, 1))
    if kind == "conv" and x_c8:   # W^T rows in (c/8, kh, kw, c%8) order
        w = w.reshape(m, cg // BLK, BLK, kh, kw).transpose(0, 1, 3, 4, 2)
    return pack_gemm_b(np.ascontiguousarray(w.reshape(m, cg * kh * kw).T))   # W^T as GEMM-B strips


# Rates on one AVX2 core of the variants a C8 conv replaces and of the C8 kernels (GFLOP/s, the MobileNetV2 and
# YOLO-style layers of docs/kernels.md "The channel-blocked layout C8"), and of REORDER (GB/s read + written).
RATE = {"dw": (17.0, 48.0), "pw": (65.0, 88.0), "conv": (62.0, 83.0)}
REORDER_GBS = 60.0
REORDER_OP_S = 4e-6   # a reorder's fixed cost (dispatch, tails, small maps), seconds


def _flops(op: Op) -> float:
    y, x = op.outputs[0], op.inputs[0]
    kh, kw = op.params["kernel"]
    cg = int(x.shape[1]) // int(op.params.get("groups", 1))
    return 2.0 * float(np.prod(y.shape)) * cg * kh * kw


def _region_gain(ops, kind, producer, consumers) -> float:
    """Seconds a region saves in C8: its convs' time at the plain rates less at the C8 rates, less the
    reorders at its edges (a tensor entering that a C8 op reads, a C8 tensor an outside op reads)."""
    ids = {id(o) for o in ops}
    gain, edges = 0.0, {}
    for op in ops:
        k = kind[id(op)]
        if k in RATE:
            plain, c8 = RATE[k]
            gain += _flops(op) * (1.0 / plain - 1.0 / c8) * 1e-9
        ins = [op.inputs[0], op.inputs[3] if len(op.inputs) > 3 else None] if k in RATE else op.inputs
        for i, t in enumerate(ins):
            if t is None or (k == "conv" and i == 0) or (k == "ew" and _broadcast(t, op.outputs[0])):
                continue   # BLOCKED_CONV reads a plain input as it is; a broadcast operand is read as it is
            src = producer.get(id(t))
            if (src is None or id(src) not in ids) and _spatial(t) > 1:
                edges[(id(t), 1)] = t.nbytes
        if k != "gap":
            for t in op.outputs:
                if any(id(c) not in ids for c in consumers.get(id(t), ())) and _spatial(t) > 1:
                    edges[(id(t), 0)] = t.nbytes
    return gain - sum(REORDER_OP_S + 2.0 * b / (REORDER_GBS * 1e9) for b in edges.values())


def _broadcast(t, y) -> bool:
    """t is a BINARY operand the runtime broadcasts over a C8 output y's pixels as it is (plan_format.h): one
    value per (n, c), per n, or a scalar, static f32, of rank <= 4 (its layout stays what it is)."""
    if (len(y.shape) != 4 or tuple(t.shape) == tuple(y.shape) or len(t.shape) > 4 or any(t.dim_sym)
            or np.dtype(t.dtype) != np.float32):
        return False
    d = (1,) * (4 - len(t.shape)) + tuple(int(v) for v in t.shape)
    return d[2] == d[3] == 1 and d[1] in (1, int(y.shape[1])) and d[0] in (1, int(y.shape[0]))


def _c8_pad(op) -> bool:
    """PAD on C8 (plan 1.14): channel pads (and crops) of whole blocks, none in a mode other than constant, no
    pad-to-multiple bits."""
    mode, pads = int(op.params.get("mode", 0)), [int(v) for v in op.params["pads"]]
    return (mode & ~K.EP_PAD_MODE_MASK) == 0 and pads[1] % BLK == 0 and pads[5] % BLK == 0 and (
        mode == K.EP_PAD_CONSTANT or (pads[1] == 0 and pads[5] == 0))


def _spatial(t) -> int:   # a [N,C,1,1] tensor needs no reorder (the same bytes in both layouts)
    return int(t.shape[2]) * int(t.shape[3])


def assign_layouts(graph: Graph, tg) -> Graph:
    if not getattr(tg, "blocked", False) or any(op.kind in ("if", "else") for op in graph.ops):
        return graph
    viewed = {id(t.view_of) for t in graph.tensors if t.view_of is not None}

    def reorderable(t) -> bool:   # a C8 copy can be made of it
        return (t is not None and len(t.shape) == 4 and np.dtype(t.dtype) == np.float32 and not any(t.dim_sym)
                and int(t.shape[1]) % BLK == 0 and not t.is_const)

    def can_c8(t) -> bool:        # it can itself be C8
        return (reorderable(t) and t.view_of is None and id(t) not in viewed
                and not (t.is_input or t.is_output or t.is_state))

    # 1. candidates, in op order: the convs, and the element-wise ops that follow a C8 input
    kind, c8 = {}, set()      # id(op) -> "dw" / "pw" / "ew"; ids of the tensors that would be C8
    for op in graph.ops:
        k = _conv_kind(graph, op)
        acts = [] if k is None else ([op.inputs[0]] if k != "conv" else []) + op.outputs[:1] + (
            [op.inputs[3]] if len(op.inputs) > 3 and op.inputs[3] is not None else [])
        if k is not None and can_c8(op.outputs[0]) and all(reorderable(t) for t in acts):
            kind[id(op)] = k
            c8.add(id(op.outputs[0]))
        elif not op.outputs:
            continue
        elif op.kind in ("unary", "binary") and len(op.outputs) == 1:
            y = op.outputs[0]
            full = [t for t in op.inputs if t is not None and not _broadcast(t, y)]
            if (can_c8(y) and all(reorderable(t) and tuple(t.shape) == tuple(y.shape) for t in full)
                    and (op.kind == "binary" or len(full) == len(op.inputs))
                    and any(id(t) in c8 for t in full)):
                kind[id(op)] = "ew"
                c8.add(id(y))
        elif (op.kind in ("maxpool", "avgpool") and len(op.outputs) == 1 and op.variant == K.EP_VARIANT_DEFAULT
              and can_c8(op.outputs[0]) and reorderable(op.inputs[0]) and id(op.inputs[0]) in c8):
            kind[id(op)] = "pool"
            c8.add(id(op.outputs[0]))
        elif (op.kind == "resize" and op.variant == K.EP_RESIZE_VARIANT_TABLE and len(op.inputs) == 1
              and len(op.outputs) == 1 and can_c8(op.outputs[0]) and reorderable(op.inputs[0])
              and id(op.inputs[0]) in c8):
            kind[id(op)] = "resize"   # TABLE's conditions hold: N and C kept
            c8.add(id(op.outputs[0]))
        elif (op.kind == "pad" and len(op.outputs) == 1 and can_c8(op.outputs[0]) and reorderable(op.inputs[0])
              and id(op.inputs[0]) in c8 and _c8_pad(op)):
            kind[id(op)] = "pad"
            c8.add(id(op.outputs[0]))
        elif (op.kind == "global_avgpool" and op.variant == K.EP_VARIANT_DEFAULT and reorderable(op.inputs[0])
              and id(op.inputs[0]) in c8):
            kind[id(op)] = "gap"   # a region's exit: its [N,C,1,1] output stays plain
        elif op.kind in ("concat", "split") and int(op.params.get("axis", -1)) == 1:
            if (all(can_c8(t) for t in op.outputs) and all(reorderable(t) for t in op.inputs)
                    and any(id(t) in c8 for t in op.inputs)):
                kind[id(op)] = "chunk"
                c8.update(id(t) for t in op.outputs)

    # 2. regions: union-find over the candidates joined by a tensor one produces and another reads
    parent = {i: i for i in kind}

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    producer = {id(t): op for op in graph.ops for t in op.outputs}
    for op in graph.ops:
        if id(op) not in kind:
            continue
        for t in op.inputs:
            src = producer.get(id(t)) if t is not None else None
            if src is not None and id(src) in kind:
                parent[find(id(op))] = find(id(src))
    members: dict = {}
    for op in graph.ops:
        if id(op) in kind:
            members.setdefault(find(id(op)), []).append(op)
    consumers: dict = {}
    for op in graph.ops:
        for t in op.inputs:
            if t is not None:
                consumers.setdefault(id(t), []).append(op)
    keep = set()
    for ops in members.values():
        if _region_gain(ops, kind, producer, consumers) > 0:
            keep.update(id(o) for o in ops)
    if not keep:
        return graph

    # an element-wise op kept only if one of its C8 inputs comes from a kept op (regions are whole, so this
    # holds); the C8 tensors are the kept ops' outputs
    blocked = {id(t) for o in graph.ops if id(o) in keep and kind[id(o)] != "gap" for t in o.outputs}
    for op in graph.ops:
        if id(op) not in keep:
            continue
        k = kind[id(op)]
        if k in ("dw", "pw", "conv"):
            w = _plain_weights(graph, op.inputs[1])
            x_c8 = k != "conv" or id(op.inputs[0]) in blocked
            op.variant = {"dw": K.EP_CONV2D_VARIANT_BLOCKED_DW, "pw": K.EP_CONV2D_VARIANT_BLOCKED_PW,
                          "conv": K.EP_CONV2D_VARIANT_BLOCKED_CONV}[k]
            graph.replace_const(op, 1, lambda w=w, k=k, x_c8=x_c8: _pack(k, w, x_c8),
                                "c8" + k + ("" if x_c8 else "-plain"))
            op.scratch = 0
        elif k == "resize":
            op.variant = K.EP_RESIZE_VARIANT_C8
            n, c = int(op.inputs[0].shape[0]), int(op.inputs[0].shape[1])
            op.scratch = table_scratch(op, n * c // BLK, tg.threads, BLK)   # TABLE's, 8-float pixels
        elif k in ("pool", "gap"):
            op.variant = {"maxpool": K.EP_MAXPOOL_VARIANT_C8, "avgpool": K.EP_AVGPOOL_VARIANT_C8,
                          "global_avgpool": K.EP_GLOBAL_AVGPOOL_VARIANT_C8}[op.kind]
            op.scratch = 0
        for t in op.outputs:
            if id(t) in blocked:
                t.layout = C8

    # 3. reorders before the first op that needs a tensor in the other layout
    made: dict = {}
    ops = []
    n_reorders = 0
    for op in graph.ops:
        wants_c8 = id(op) in keep
        for i, t in enumerate(op.inputs):
            if t is None:
                continue
            if op.kind == "conv2d" and wants_c8 and (i in (1, 2) or (i == 0 and kind[id(op)] == "conv")):
                continue   # weights and bias stay plain; BLOCKED_CONV reads X as it is
            if wants_c8 and kind[id(op)] == "ew" and _broadcast(t, op.outputs[0]):
                continue   # a per-channel or scalar operand, read as it is
            is_c8 = id(t) in blocked
            if is_c8 == wants_c8:
                continue
            key = (id(t), wants_c8)
            if key not in made:
                # a [N,C,1,1] tensor has the same bytes in both layouts: a view, no op
                flat = int(t.shape[2]) * int(t.shape[3]) == 1
                other = Tensor(f"{t.name}:{'c8' if wants_c8 else 'plain'}", t.dtype, tuple(t.shape),
                               view_of=t if flat else None)
                if wants_c8:
                    other.layout = C8
                graph.tensors.append(other)
                if not flat:
                    ops.append(Op("reorder", [t], [other], {"reserved": [0, 0]}, name=t.name))
                    n_reorders += 1
                made[key] = other
            op.inputs[i] = made[key]
        ops.append(op)
    graph.ops[:] = ops
    n = {k: sum(1 for o in graph.ops if id(o) in keep and kind[id(o)] == k)
         for k in ("dw", "pw", "conv", "ew", "chunk", "pool", "gap", "resize", "pad")}
    graph.fused.append(f"layout C8: {n['dw']} depthwise, {n['pw']} pointwise and {n['conv']} dense convs, "
                       f"{n['ew']} element-wise ops, {n['chunk']} concat / split, {n['pool'] + n['gap']} pooling, "
                       f"{n['resize']} resizes, {n['pad']} pads, {n_reorders} reorders")
    return graph


def fuse_prelu(graph: Graph) -> Graph:
    """A PReLU (BINARY PRELU) that alone reads the output of a BLOCKED_PW or BLOCKED_CONV without an activation,
    its slopes a constant of one value per channel, becomes that convolution's epilogue EP_CONV_ACT_PRELU with
    the slopes as its input 4 (plan 1.14); one slope for every channel becomes LEAKY_RELU. The element-wise pass
    over the tensor is saved (MediaPipe's face, iris and palm models follow most convolutions with one)."""
    readers = graph.readers()
    dead, fused = set(), 0
    for conv in graph.ops:
        if (conv.kind != "conv2d" or conv.variant not in (K.EP_CONV2D_VARIANT_BLOCKED_PW,
                                                           K.EP_CONV2D_VARIANT_BLOCKED_CONV)
                or int(conv.params.get("act", 0)) != K.EP_ACT_NONE):
            continue
        y = conv.outputs[0]
        users = readers.get(id(y), [])
        if len(users) != 1 or y.is_output or y.view_of is not None:
            continue
        pr = users[0][0]
        if (pr.kind != "binary" or int(pr.params.get("kind", -1)) != K.EP_BIN_PRELU or pr.inputs[0] is not y
                or int(pr.params.get("act", 0)) != K.EP_ACT_NONE or len(pr.inputs) != 2
                or pr.outputs[0].layout != y.layout or tuple(pr.outputs[0].shape) != tuple(y.shape)):
            continue
        s = pr.inputs[1]
        m = int(y.shape[1])
        data = s.storage().data if s is not None and s.is_const else None
        if data is None or np.dtype(s.dtype) != np.float32:
            continue
        shp = (1,) * (4 - len(s.shape)) + tuple(int(d) for d in s.shape)
        if len(shp) != 4 or shp[0] != 1 or shp[2] != 1 or shp[3] != 1 or shp[1] not in (1, m):
            continue
        slopes = np.asarray(data, np.float32).reshape(-1)
        if slopes.size == 1:
            conv.params["act"] = K.EP_ACT_LEAKY_RELU
            conv.params["act_alpha"] = float(slopes[0])
        else:
            st = Tensor(f"{pr.name}:slopes", np.dtype(np.float32), (m,), data=np.ascontiguousarray(slopes))
            graph.tensors.append(st)
            conv.params["act"] = K.EP_CONV_ACT_PRELU
            conv.inputs = list(conv.inputs) + [None] * (4 - len(conv.inputs)) + [st]
        conv.outputs = [pr.outputs[0]]
        dead.add(id(pr))
        fused += 1
    if fused:
        graph.ops[:] = [o for o in graph.ops if id(o) not in dead]
        graph.fused.append(f"C8 convolution + PReLU x{fused}")
    return graph


def nhwc_stems(graph: Graph) -> Graph:
    """A Transpose [N,H,W,C] -> [N,C,H,W] (perm 0,3,1,2) of at most 8 channels whose readers are all C8 stems
    (BLOCKED_CONV on a plain X) goes away: its output becomes a view of its input in layout NHWC (plan 1.14: the
    same bytes, a channels-last image as a TFLite model takes it) and the stems read that, their W^T rows repacked
    in (kh, kw, c) order. A TFLite model's image then enters the first convolution with no pass over it."""
    readers = graph.readers()
    dead, n = set(), 0
    for tr in graph.ops:
        if tr.kind != "transpose" or [int(v) for v in tr.params.get("perm", [])][:4] != [0, 3, 1, 2]:
            continue
        x, y = tr.inputs[0], tr.outputs[0]
        if (len(x.shape) != 4 or np.dtype(x.dtype) != np.float32 or any(x.dim_sym) or x.layout != K.EP_LAYOUT_PLAIN
                or not 1 <= int(x.shape[3]) <= BLK or x.is_const or y.is_output or y.is_state
                or any(t.view_of is y for t in graph.tensors)):
            continue
        uses = readers.get(id(y), [])
        if not uses or any(op.kind != "conv2d" or op.variant != K.EP_CONV2D_VARIANT_BLOCKED_CONV or i != 0
                           or _plain_weights(graph, op.inputs[1]) is None for op, i in uses):
            continue
        for op, _ in uses:   # W^T rows in (kh, kw, c) order
            w = _plain_weights(graph, op.inputs[1])
            graph.replace_const(op, 1, lambda w=w: pack_gemm_b(np.ascontiguousarray(
                w.transpose(0, 2, 3, 1).reshape(w.shape[0], -1).T)), "c8conv-nhwc")
        y.view_of, y.layout = x, K.EP_LAYOUT_NHWC
        dead.add(id(tr))
        n += 1
    if n:
        graph.ops[:] = [o for o in graph.ops if id(o) not in dead]
        graph.fused.append(f"NHWC stem x{n}")
    return graph
