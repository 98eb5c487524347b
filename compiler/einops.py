"""einops-style formulas for Tensor.rearrange: "b (h w) c -> b h w c" is a reshape into named axes, a permute
into the right side's order and a reshape that merges the right side's groups (views only, no kernel)."""

from __future__ import annotations

import math
import re
from typing import TypeVar

from compiler.dtypes import dtypes, promote

TensorT = TypeVar("TensorT")  # a Tensor: einops builds with the class of what it is given

_TOKEN = re.compile(r"\.\.\.|…|\(|\)|[^\s()]+")


def _parse(side: str, formula: str) -> list[list[str]]:
    """One side of a formula as groups of axis names (a bare name is a group of one; "()" and "1" are empty)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for tok in _TOKEN.findall(side):
        tok = "..." if tok == "…" else tok
        if tok == "(":
            if current is not None:
                raise ValueError(f"rearrange: nested parentheses in {formula!r}")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced parentheses in {formula!r}")
            groups.append(current)
            current = None
        elif tok == "1":
            if current is None:  # an axis of length 1; inside a group it changes nothing
                groups.append([])
        else:
            if tok != "..." and not (tok.isidentifier() and not tok.startswith("_") and not tok.endswith("_")):
                raise ValueError(f"rearrange: invalid axis name {tok!r} in {formula!r}")
            if current is None:
                groups.append([tok])
            else:
                current.append(tok)
    if current is not None:
        raise ValueError(f"rearrange: unbalanced parentheses in {formula!r}")
    return groups


def _expand_ellipsis(groups: list[list[str]], names: list[str]) -> list[list[str]]:
    """"..." replaced by the given axis names: separate groups where it stands alone, merged inside a group."""
    out = []
    for g in groups:
        if g == ["..."]:
            out.extend([n] for n in names)
        else:
            out.append([n for name in g for n in (names if name == "..." else [name])])
    return out


def rearrange(x: TensorT, formula: str, **sizes: int) -> TensorT:
    """x rearranged by an einops formula; sizes name the lengths of axes a group split cannot infer."""
    if formula.count("->") != 1:
        raise ValueError(f'rearrange: need exactly one "->" in {formula!r}')
    left, right = (_parse(s, formula) for s in formula.split("->"))
    lnames = [n for g in left for n in g]
    rnames = [n for g in right for n in g]
    if len(set(lnames)) != len(lnames) or sorted(lnames) != sorted(rnames):
        raise ValueError(f"rearrange: both sides must name the same distinct axes in {formula!r}")
    for name in sizes:
        if name not in lnames:
            raise ValueError(f"rearrange: axis {name!r} is not in {formula!r}")
    if "..." in lnames:
        if any("..." in g and len(g) > 1 for g in left):
            raise ValueError(f"rearrange: '...' cannot be inside parentheses on the left of {formula!r}")
        k = x.ndim - (len(left) - 1)
        if k < 0:
            raise ValueError(f"rearrange: {formula!r} needs more than the {x.ndim} dimensions of shape {x.shape}")
        ell = [f"...{i}" for i in range(k)]
        left, right = _expand_ellipsis(left, ell), _expand_ellipsis(right, ell)
        lnames = [n for g in left for n in g]
        rnames = [n for g in right for n in g]
    if len(left) != x.ndim:
        raise ValueError(f"rearrange: the left of {formula!r} has {len(left)} dimensions, the tensor {x.ndim}")
    size: dict[str, int] = {}
    for g, dim in zip(left, x.shape, strict=True):
        unknown = [n for n in g if n not in sizes]
        known = math.prod(sizes[n] for n in g if n in sizes)
        if len(unknown) > 1:
            raise ValueError(f"rearrange: cannot infer the sizes of {unknown} in {formula!r}")
        if (known * dim == 0 and dim != 0) or (unknown and (known == 0 or dim % known)) or \
                (not unknown and known != dim):
            raise ValueError(f"rearrange: sizes of {g} do not divide dimension {dim} in {formula!r}")
        size.update({n: sizes[n] for n in g if n in sizes})
        if unknown:
            size[unknown[0]] = dim // known
    x = x.reshape(tuple(size[n] for n in lnames))
    x = x.permute(tuple(lnames.index(n) for n in rnames))
    return x.reshape(tuple(math.prod(size[n] for n in g) for g in right))


def einsum(formula: str, *operands: TensorT | list[TensorT] | tuple[TensorT, ...], dtype=None) -> TensorT:
    """Einstein summation ("ij,jk->ik"; "..." broadcasts; a letter repeated in one operand takes a diagonal;
    without "->" the output is the letters used once, sorted)."""
    xs = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], list | tuple) else list(operands)
    formula = formula.replace(" ", "")
    lhs, arrow, rhs = formula.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(xs):
        raise ValueError(f"einsum: {formula!r} names {len(inputs)} operands, {len(xs)} given")
    if "..." in formula:
        spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in formula]
        counts = [x.ndim - (len(s) - 3) if "..." in s else 0 for s, x in zip(inputs, xs, strict=True)]
        width = max(counts)
        ell = "".join(spare[:width])
        inputs = [s.replace("...", ell[width - k:]) for s, k in zip(inputs, counts, strict=True)]
        if arrow:
            rhs = rhs.replace("...", ell)
        else:
            once = "".join(sorted(c for c in lhs if lhs.count(c) == 1 and c.isalpha()))
            rhs, arrow = ell + once, "->"
    if not arrow:
        joined = "".join(inputs)
        rhs = "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    for k, (s, x) in enumerate(zip(inputs, xs, strict=True)):
        if len(s) != x.ndim:
            raise ValueError(f"einsum: operand {k} has {x.ndim} dimensions, {s!r} names {len(s)}")
        while len(set(s)) != len(s):                                      # a repeated letter: its diagonal
            c = next(c for c in s if s.count(c) > 1)
            i, j = s.index(c), s.index(c, s.index(c) + 1)
            x = x.diagonal(0, i, j)
            s = "".join(ch for n, ch in enumerate(s) if n not in (i, j)) + c
        inputs[k], xs[k] = s, x
    size: dict[str, int] = {}
    for s, x in zip(inputs, xs, strict=True):
        for c, n in zip(s, x.shape, strict=True):
            if size.get(c, n) not in (n, 1) and n != 1:
                raise ValueError(f"einsum: letter {c!r} has sizes {size[c]} and {n}")
            size[c] = max(size.get(c, n), n)
    if any(c not in size for c in rhs) or len(set(rhs)) != len(rhs):
        raise ValueError(f"einsum: the output {rhs!r} must name distinct letters of the inputs")
    alpha = sorted(size)
    dt = xs[0].dtype
    for x in xs[1:]:
        dt = promote(dt, x.dtype)
    out = None
    for s, x in zip(inputs, xs, strict=True):
        x = x.cast(dt).permute(tuple(s.index(c) for c in sorted(s))) if s else x.cast(dt)
        x = x.reshape(tuple(size[c] if c in s else 1 for c in alpha))
        out = x if out is None else out * x
    out = out._broadcast_to(tuple(size[c] for c in alpha))
    summed = tuple(i for i, c in enumerate(alpha) if c not in rhs)
    acc = dtypes.from_any(dtype) if dtype is not None else dt
    out = out.sum(summed, dtype=acc) if summed else out.cast(acc)
    kept = [c for c in alpha if c in rhs]
    return out.permute(tuple(kept.index(c) for c in rhs)) if rhs else out
