"""Einsum → transpose / reduce / matmul on views: one operand (transpose, sums) or two (batched
matrix product: batch letters, contracted letters, each side's free letters), as attention exports
use ("bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bij,bjk->bik", "ij->ji"). Ellipses, repeated letters
in one operand (diagonals) and three or more operands are rejected with the equation named."""
from __future__ import annotations


from ..._cdef import K
from ..lowering import NodeError
from ._util import prod
from .linear import matmul


def parse(eq: str, n_ops: int):
    e = eq.replace(" ", "")
    if "." in e:
        raise NodeError(f"Einsum '{eq}': ellipsis ('...') is unsupported")
    lhs, arrow, rhs = e.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_ops:
        raise NodeError(f"Einsum '{eq}' names {len(terms)} operands, the node has {n_ops}")
    for t in terms + [rhs]:
        if not all(c.isalpha() for c in t):
            raise NodeError(f"Einsum '{eq}': bad term '{t}'")
        if len(set(t)) != len(t):
            raise NodeError(f"Einsum '{eq}': repeated letter in '{t}' (diagonals) is unsupported")
    if not arrow:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in counts.items() if k == 1))
    if any(c not in lhs for c in rhs):
        raise NodeError(f"Einsum '{eq}': output letter not in any operand")
    return terms, rhs


def transpose(ctx, t, perm, name):
    perm = list(perm)
    if perm == sorted(perm):
        return t
    shape = [t.shape[p] for p in perm]
    moved = [p for p in perm if t.shape[p] != 1]
    if moved == sorted(moved):
        return ctx.view(t, shape)
    y = ctx.tmp(name, shape, t.dtype)
    ctx.emit("transpose", [t], [y], {"perm": perm + list(range(len(perm), 8))})
    return y


def reduce_sum(ctx, t, term, keep, name):
    """Sums t over the letters of term not in keep; returns (tensor, remaining term)."""
    drop = [i for i, c in enumerate(term) if c not in keep]
    if not drop:
        return t, term
    shape = [d for i, d in enumerate(t.shape) if i not in drop]
    y = ctx.tmp(name, shape)
    ctx.emit("reduce", [t], [y], {"kind": K.EP_REDUCE_SUM, "axes_mask": sum(1 << i for i in drop), "keepdims": 0})
    return y, "".join(c for i, c in enumerate(term) if i not in drop)


def lower_einsum(ctx, n):
    eq = str(n.attrs.get("equation", ""))
    ops = [ctx.tensor(i) for i in n.inputs if i]
    if len(ops) not in (1, 2):
        raise NodeError(f"Einsum '{eq}' with {len(ops)} operands is unsupported (1 or 2)")
    ctx.need_f32(*ops)
    terms, out = parse(eq, len(ops))
    size = {}
    for t, term in zip(ops, terms):
        if len(t.shape) != len(term) or len(term) > 8:
            raise NodeError(f"Einsum '{eq}': operand '{t.name}' {t.shape} does not match '{term}'")
        for c, d in zip(term, t.shape):
            if size.setdefault(c, d) != d:
                raise NodeError(f"Einsum '{eq}': letter '{c}' is {size[c]} and {d}")
    name = n.outputs[0]
    out_shape = [size[c] for c in out]
    if len(ops) == 1:
        t, term = reduce_sum(ctx, ops[0], terms[0], out, name + "/sum")
        y = transpose(ctx, t, [term.index(c) for c in out], name + "/t")
        ctx.view_output(n, 0, y, out_shape)
        return
    (A, B), (ta, tb) = ops, terms
    A, ta = reduce_sum(ctx, A, ta, out + tb, name + "/suma")
    B, tb = reduce_sum(ctx, B, tb, out + ta, name + "/sumb")
    batch = [c for c in ta if c in tb and c in out]
    contr = [c for c in ta if c in tb and c not in out]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]
    nb, M, Kd, N = prod(size[c] for c in batch), prod(size[c] for c in fa), prod(size[c] for c in contr), \
        prod(size[c] for c in fb)
    a = transpose(ctx, A, [ta.index(c) for c in batch + fa + contr], name + "/at")
    b = transpose(ctx, B, [tb.index(c) for c in batch + contr + fb], name + "/bt")
    a3 = ctx.view(a, (nb, M, Kd))
    b3 = ctx.view(b, (nb, Kd, N))
    y = matmul(ctx, a3, b3, name + "/mm")
    order = batch + fa + fb
    y = ctx.view(y, [size[c] for c in order])
    y = transpose(ctx, y, [order.index(c) for c in out], name + "/yt")
    ctx.view_output(n, 0, y, out_shape)


LOWER = {("", "Einsum"): lower_einsum}
