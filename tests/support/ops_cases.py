"""The ops suite's cases as data both libraries can run: each case names an entry of an ops-suite table (module,
table, key), the inputs it gets (seeded from the case's id, so every process builds the same arrays) and whether
its gradients are compared too. tools/gen_tinygrad_ops.py runs them on tinygrad's CPU device and commits the
results; tests/compiler/test_ops_vs_tinygrad.py runs them on ours and compares.

A table entry's function looks `Tensor` up in its module's globals when called, so the oracle runs the same
lambda against tinygrad by binding that module's `Tensor` to tinygrad's (`bind_tensor`).
"""

from __future__ import annotations

import contextlib
import importlib
import zlib
from dataclasses import dataclass

import numpy as np

MODULES = {
    "elementwise": "tests.compiler.test_ops_elementwise",
    "reduce": "tests.compiler.test_ops_reduce",
    "movement": "tests.compiler.test_ops_movement",
    "grad": "tests.compiler.test_ops_grad",
    "composite": "tests.compiler.test_ops_composite",
}

# the dtypes the oracle compares per table: tinygrad's CPU device has no bfloat16 numpy() and the other floats
# would repeat what float32 shows
UNARY_DTYPES = ("float32", "float16")
INT_DTYPES = ("int32", "int8", "uint32")


@dataclass(frozen=True)
class Case:
    """One call of a table entry on given inputs (the tables' layouts differ; `arity` inputs of `dtype`)."""

    id: str
    module: str
    table: str
    key: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    low: float
    high: float
    grad: bool = False
    tol: tuple[float, float] | None = None

    def inputs(self) -> list[np.ndarray]:
        """The case's input arrays, the same in every process (seeded from the id)."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        out = []
        for shape in self.shapes:
            dt = np.dtype(self.dtype)
            if dt.kind in "iu":
                info = np.iinfo(dt)
                lo, hi = max(int(self.low), int(info.min)), min(int(self.high), int(info.max))
                out.append(rng.integers(lo, hi, size=shape, endpoint=True).astype(dt))
            else:
                out.append(rng.uniform(self.low, self.high, size=shape).astype(dt))
        if self.table == "BINARY" and self.key in ("div", "floordiv", "mod") and len(out) == 2:
            b = out[1]
            b[b == 0] = 3
            if dt.kind == "f" and self.key != "div":  # exact quotients: away from the rounding edges of // and %
                out[0], out[1] = np.trunc(out[0]), np.trunc(b) + (np.trunc(b) == 0)
        return out

    def function(self):
        """The table entry's function (the tensor-side lambda)."""
        mod = module(self.module)
        if self.table == "REDUCE_AXES":  # test_ops_reduce parametrizes method names and axes, not a table
            name, axis = self.key.split(":")
            return lambda t: getattr(t, name)(axis=_axis(axis))
        if self.table == "INDEX":  # test_ops_movement's index expressions, made tensors when called
            return lambda t: t[mod._resolve(mod.INDEX[self.key])]
        entry = getattr(mod, self.table)[self.key]
        return entry[0] if isinstance(entry, tuple) else entry

    def signature(self) -> int:
        """A checksum of the case's inputs: committed results belong to these inputs only."""
        return zlib.crc32(b"".join(a.tobytes() for a in self.inputs()) + repr(self).encode())


def _axis(text: str):
    return None if text == "None" else tuple(int(x) for x in text.split(",")) if "," in text else int(text)


def module(name: str):
    """The ops-suite module a case's table lives in."""
    return importlib.import_module(MODULES[name])


@contextlib.contextmanager
def bind_tensor(tensor_cls):
    """Every ops-suite module's `Tensor` is tensor_cls inside the block (the tables' lambdas look it up)."""
    mods = [module(n) for n in MODULES]
    saved = [m.Tensor for m in mods]
    try:
        for m in mods:
            m.Tensor = tensor_cls
        yield
    finally:
        for m, t in zip(mods, saved, strict=True):
            m.Tensor = t


def cases() -> list[Case]:
    """Every case of the tables the oracle covers, in a fixed order."""
    out: list[Case] = []
    ew = module("elementwise")
    for key, (_, _, (lo, hi), tol) in sorted(ew.UNARY.items()):
        out += [Case(f"unary-{key}-{dt}", "elementwise", "UNARY", key, ((3, 5),), dt, lo, hi, tol=tol)
                for dt in UNARY_DTYPES]
    for key in sorted(ew.INT_UNARY):
        out += [Case(f"int_unary-{key}-{dt}", "elementwise", "INT_UNARY", key, ((3, 5),), dt, -100, 100)
                for dt in INT_DTYPES]
    for key in sorted(ew.BINARY):
        out += [Case(f"binary-{key}-{dt}", "elementwise", "BINARY", key, ((3, 5), (3, 5)), dt, -50, 50)
                for dt in ("float32", "int32")]
    for key in sorted(ew.COMPARE):
        out += [Case(f"compare-{key}-{dt}", "elementwise", "COMPARE", key, ((3, 5), (3, 5)), dt, 0, 4)
                for dt in ("float32", "int32")]
    for key in sorted(ew.BITWISE):
        hi = 33 if key in ("shl", "shr") else 1000  # shift counts past the width: tinygrad's rule
        out += [Case(f"bitwise-{key}-int32", "elementwise", "BITWISE", key, ((3, 5), (3, 5)), "int32",
                     0 if key in ("shl", "shr") else -1000, hi if key in ("shl", "shr") else 1000)]
    rd = module("reduce")
    for name in ("sum", "max", "min", "mean", "prod", "var", "std"):
        for axis in rd.AXES:
            key = f"{name}:{','.join(map(str, axis)) if isinstance(axis, tuple) else axis}"
            hi = 1.5 if name == "prod" else 3
            out.append(Case(f"reduce-{key}", "reduce", "REDUCE_AXES", key, (rd.SHAPE,), "float32", 0.5, hi))
    for name in ("argmax", "argmin", "cumsum"):
        for axis in (None, 0, 2) if name != "cumsum" else (0, -1):
            out.append(Case(f"reduce-{name}:{axis}", "reduce", "REDUCE_AXES", f"{name}:{axis}", (rd.SHAPE,),
                            "float32", -3, 3))
    for name in ("sum", "max", "min", "prod"):
        out.append(Case(f"reduce-int-{name}:1", "reduce", "REDUCE_AXES", f"{name}:1", (rd.SHAPE,), "int32", -4, 4))
    mv = module("movement")
    out += [Case(f"move-{key}", "movement", "MOVES", key, ((2, 3, 4),), "float32", -8, 8) for key in sorted(mv.MOVES)]
    cp = module("composite")
    out += [Case(f"pool-{key}", "composite", "POOLS", key, ((2, 3, 6, 7),), "float32", -3, 3)
            for key in sorted(cp.POOLS)]
    out += [Case(f"signature-{key}", "composite", "SIGNATURES", key, cp.SIGNATURE_SHAPES[key], "float32", -2, 2)
            for key in sorted(cp.SIGNATURES)]
    out += [Case(f"index-{key}", "movement", "INDEX", key, ((2, 3, 4),), "float32", -8, 8) for key in sorted(mv.INDEX)]
    gr = module("grad")
    for key, (_, _, rng) in sorted(gr.UNARY.items()):
        lo, hi = rng or (-2, 2)
        out.append(Case(f"grad-unary-{key}", "grad", "UNARY", key, ((3, 4),), "float32", lo, hi, grad=True))
    for key in sorted(gr.BINARY):
        out.append(Case(f"grad-binary-{key}", "grad", "BINARY", key, ((3, 4), (1, 4)), "float32", 0.5, 2, grad=True))
    for key in sorted(gr.REDUCE):
        lo = 0.5 if key == "prod" else -2
        out.append(Case(f"grad-reduce-{key}", "grad", "REDUCE", key, ((3, 5),), "float32", lo, 2, grad=True))
    for key in sorted(gr.MOVEMENT):
        out.append(Case(f"grad-move-{key}", "grad", "MOVEMENT", key, ((2, 3, 4),), "float32", -2, 2, grad=True))
    for key, (_, _, shapes) in sorted(gr.COMPOSITE.items()):
        out.append(Case(f"grad-composite-{key}", "grad", "COMPOSITE", key, tuple(map(tuple, shapes)), "float32",
                        -2, 2, grad=True))
    return out


def run(case: Case, tensor_cls, dtypes_ns) -> dict[str, np.ndarray]:
    """The case's output (and, for a grad case, each input's gradient of sum(out * w)) computed with tensor_cls."""
    arrays = case.inputs()
    ts = [tensor_cls(a, dtype=getattr(dtypes_ns, case.dtype)) for a in arrays]
    for t in ts:
        t.requires_grad = case.grad or None  # tinygrad's constructor takes no requires_grad keyword
    with bind_tensor(tensor_cls):
        out = case.function()(*ts)
        res = {"out": out.numpy()}
        if case.grad:
            w = np.random.default_rng(7).uniform(0.5, 1.5, size=out.shape).astype(np.float32)
            (out * tensor_cls(w)).sum().backward()
            for i, t in enumerate(ts):
                res[f"grad{i}"] = t.grad.numpy()
    return res
