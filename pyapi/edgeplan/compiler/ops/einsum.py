"""Einsum → transpose / reduce / gather / matmul on views. The equation is first made explicit: an
ellipsis ('...') becomes fresh letters for the dims it covers (right-aligned across operands, broadcast
where one side has 1, as numpy), a repeated letter in one operand takes that operand's diagonal (a gather on
the flattened pair of axes), and an equation without '->' gets numpy's implicit output (the letters seen
once, sorted; the ellipsis dims first). One operand is a transpose and sums; two are a batched matrix
product (batch letters, contracted letters, each side's free letters), as attention exports use
("bhqd,bhkd->bhqk", "bij,bjk->bik"); more operands contract left to right, each step summing the letters
that no later operand or the output needs."""
from __future__ import annotations

import string

import numpy as np

from ..._cdef import K
from ..lowering import NodeError
from ._util import prod
from .linear import matmul


def parse(eq: str, ranks: list):
    """(terms, output term) with every ellipsis replaced by fresh letters (uppercase ones the equation
    does not use), given each operand's rank."""
    e = eq.replace(" ", "")
    lhs, arrow, rhs = e.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise NodeError(f"Einsum '{eq}' names {len(terms)} operands, the node has {len(ranks)}")
    fresh = [c for c in reversed(string.ascii_uppercase) if c not in e]
    ell = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell = max(ell, r - len(t.replace("...", "")))
    if ell > len(fresh):
        raise NodeError(f"Einsum '{eq}': the ellipsis covers {ell} dims")
    letters = "".join(reversed(fresh[:ell]))   # the ellipsis dims, outermost first

    def expand(t, r):
        if t.count("...") > 1 or "." in t.replace("...", ""):
            raise NodeError(f"Einsum '{eq}': bad term '{t}'")
        if "..." not in t:
            return t
        k = r - len(t.replace("...", ""))
        if k < 0:
            raise NodeError(f"Einsum '{eq}': term '{t}' has more letters than its operand's rank {r}")
        return t.replace("...", letters[ell - k:])
    terms = [expand(t, r) for t, r in zip(terms, ranks)]
    for t in terms:
        if not all(c.isalpha() for c in t):
            raise NodeError(f"Einsum '{eq}': bad term '{t}'")
    if arrow:
        if "..." in rhs:
            rhs = rhs.replace("...", letters)
        if not all(c.isalpha() for c in rhs) or len(set(rhs)) != len(rhs):
            raise NodeError(f"Einsum '{eq}': bad output term '{rhs}'")
    else:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = letters + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in letters))
    if any(c not in "".join(terms) for c in rhs):
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


def diagonal(ctx, t, term, name):
    """Takes the diagonal of every letter repeated in term: the two axes moved last, flattened, and the
    indices k·(d+1) gathered. Returns (tensor, term without repeats)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i, j = [k for k, x in enumerate(term) if x == c][:2]
        d = t.shape[i]
        if t.shape[j] != d:
            raise NodeError(f"letter '{c}' is {d} and {t.shape[j]} in one operand")
        rest = [k for k in range(len(term)) if k not in (i, j)]
        moved = transpose(ctx, t, rest + [i, j], name + "/dt")
        flat = ctx.view(moved, [t.shape[k] for k in rest] + [d * d])
        idx = ctx.const(name + "/diag_idx", np.arange(d, dtype=np.int64) * (d + 1))
        y = ctx.tmp(name + "/diag", [t.shape[k] for k in rest] + [d], t.dtype)
        ctx.emit("gather", [flat, idx], [y], {"axis": len(rest)})
        t, term = y, "".join(term[k] for k in rest) + c
    return t, term


def broadcast_to(ctx, t, term, size, name):
    """Expands t's dims of extent 1 that are larger elsewhere in the equation (numpy broadcasting of
    the ellipsis dims)."""
    shape = [size[c] for c in term]
    if list(t.shape) == shape:
        return t
    y = ctx.tmp(name, shape, t.dtype)
    ctx.emit("expand", [t], [y], {})
    return y


def contract(ctx, A, ta, B, tb, keep, size, name):
    """A (term ta) times B (term tb), summed over the letters not in keep: (tensor, term)."""
    A, ta = reduce_sum(ctx, A, ta, keep + tb, name + "/suma")
    B, tb = reduce_sum(ctx, B, tb, keep + ta, name + "/sumb")
    batch = [c for c in ta if c in tb and c in keep]
    contr = [c for c in ta if c in tb and c not in keep]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]
    nb, M, Kd, N = prod(size[c] for c in batch), prod(size[c] for c in fa), prod(size[c] for c in contr), \
        prod(size[c] for c in fb)
    a = transpose(ctx, A, [ta.index(c) for c in batch + fa + contr], name + "/at")
    b = transpose(ctx, B, [tb.index(c) for c in batch + contr + fb], name + "/bt")
    y = matmul(ctx, ctx.view(a, (nb, M, Kd)), ctx.view(b, (nb, Kd, N)), name + "/mm")
    order = batch + fa + fb
    return ctx.view(y, [size[c] for c in order]), "".join(order)


def lower_einsum(ctx, n):
    eq = str(n.attrs.get("equation", ""))
    ops = [ctx.tensor(i) for i in n.inputs if i]
    if not ops:
        raise NodeError(f"Einsum '{eq}' without operands")
    ctx.need_f32(*ops)
    try:
        terms, out = parse(eq, [len(t.shape) for t in ops])
    except NodeError as e:
        raise NodeError(str(e) if str(e).startswith("Einsum") else f"Einsum '{eq}': {e}") from None
    name = n.outputs[0]
    size = {}
    for t, term in zip(ops, terms):
        if len(t.shape) != len(term) or len(term) > 8:
            raise NodeError(f"Einsum '{eq}': operand '{t.name}' {t.shape} does not match '{term}'")
        for c, d in zip(term, t.shape):
            if size.get(c, 1) == 1:
                size[c] = d
            elif d not in (1, size[c]):
                raise NodeError(f"Einsum '{eq}': letter '{c}' is {size[c]} and {d}")
    work = []
    for k, (t, term) in enumerate(zip(ops, terms)):
        try:
            t, term = diagonal(ctx, t, term, f"{name}/{k}")
        except NodeError as e:
            raise NodeError(f"Einsum '{eq}': {e}") from None
        work.append((broadcast_to(ctx, t, term, size, f"{name}/{k}/bc"), term))
    out_shape = [size[c] for c in out]
    t, term = work[0]
    for k in range(1, len(work)):
        later = out + "".join(tt for _, tt in work[k + 1:])
        t, term = contract(ctx, t, term, work[k][0], work[k][1], later, size, f"{name}/c{k}")
    t, term = reduce_sum(ctx, t, term, out, name + "/sum")
    y = transpose(ctx, t, [term.index(c) for c in out], name + "/t")
    ctx.view_output(n, 0, y, out_shape)


LOWER = {("", "Einsum"): lower_einsum}
