"""`Sample`: one LLVM IR kernel for gfx1100 with its inputs, launch shape and numpy reference; and the
template that writes elementwise kernels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from compiler.llvm import compile_ir

HEADER = """target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
"""

LLVM_TYPES = {np.float16: "half", np.float32: "float", np.float64: "double", np.int8: "i8", np.uint8: "i8",
              np.int16: "i16", np.uint16: "i16", np.int32: "i32", np.uint32: "i32", np.int64: "i64",
              np.uint64: "i64"}


@dataclass
class Sample:
    """A kernel: IR, inputs, launch shape and the numpy reference of what it leaves in its buffers."""

    name: str
    ir: str
    inputs: Callable[[np.random.Generator], list]  # arrays (buffers) and scalars, in argument order
    reference: Callable[[list], dict[int, np.ndarray]]  # argument index -> expected final buffer contents
    grid: tuple[int, ...] = (4,)  # workgroups
    block: tuple[int, ...] = (64,)  # work-items per workgroup
    shared: int = 0  # dynamic LDS bytes
    rtol: float = 0.0  # 0 with atol 0: bit-exact
    atol: float = 0.0
    tags: set[str] = field(default_factory=set)

    def code_object(self) -> bytes:
        """The kernel compiled by llvmlite (compiler.llvm.compile_ir), once per process."""
        return _compiled(self.ir)

    def mismatch(self, args: list, after: list) -> str | None:
        """Why a run's final arguments (`after`, from inputs `args`) differ from the reference, or None."""
        for idx, expected in self.reference(args).items():
            got = np.asarray(after[idx])
            why = _compare(got, np.asarray(expected), self.rtol, self.atol)
            if why:
                return f"{self.name}: argument {idx}: {why}"
        return None


@cache
def _compiled(ir: str) -> bytes:
    return compile_ir(ir)


def _compare(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> str | None:
    """Bit-exact (NaNs alike) when rtol and atol are 0, else |got - expected| <= atol + rtol * |expected|."""
    if got.size != expected.size:
        return f"{got.size} elements, expected {expected.size}"
    got = got.reshape(expected.shape)
    if not rtol and not atol:
        if got.tobytes() == np.ascontiguousarray(expected).tobytes() or np.array_equal(got, expected, equal_nan=True):
            return None
        bad = ~((got == expected) | (_isnan(got) & _isnan(expected)))
    else:
        bad = ~np.isclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
        if not bad.any():
            return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {bad.size} elements differ (rtol {rtol}, atol {atol}); first at {first}: "
            f"got {got[first]!r}, expected {expected[first]!r}")


def _isnan(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)


OUT_IN = "ptr addrspace(1) %out, ptr addrspace(1) %in"


def kernel(name: str, body: str, *, params: str = OUT_IN, block: int = 64, load: str | None = None,
           decls: str = "") -> str:
    """A module of one kernel `name(params)`. Its entry block computes the work-item's global index
    %i = %gid * block + %tid and, when `load` names a type, loads %x = %in[%i]; `body` (IR lines) follows."""
    lines = [f"define amdgpu_kernel void @{name}({params}) {{", "entry:",
             "  %tid = call i32 @llvm.amdgcn.workitem.id.x()", "  %gid = call i32 @llvm.amdgcn.workgroup.id.x()",
             f"  %base = mul i32 %gid, {block}", "  %i = add i32 %base, %tid"]
    if load:
        lines += [f"  %p = getelementptr {load}, ptr addrspace(1) %in, i32 %i",
                  f"  %x = load {load}, ptr addrspace(1) %p"]
    return f"{HEADER}{decls}\n" + "\n".join(lines) + "\n" + body.strip("\n") + "\n}\n"


def elementwise(name: str, in_types: list, out_type, body: str, ref: Callable, n: int = 256,
                gen: Callable | None = None, rtol: float = 0.0, atol: float = 0.0, decls: str = "",
                tags: set[str] | None = None, block: int = 64) -> Sample:
    """out[i] = f(in0[i], in1[i], ...) where `body` computes %r from %x0, %x1, ... in LLVM IR."""
    params = ", ".join(["ptr addrspace(1) %out"] + [f"ptr addrspace(1) %in{i}" for i in range(len(in_types))])
    loads = "\n".join(
        f"  %p{i} = getelementptr {LLVM_TYPES[t]}, ptr addrspace(1) %in{i}, i32 %i\n"
        f"  %x{i} = load {LLVM_TYPES[t]}, ptr addrspace(1) %p{i}" for i, t in enumerate(in_types))
    ot = LLVM_TYPES[out_type]
    ir = kernel(name, f"""{loads}
{body}
  %po = getelementptr {ot}, ptr addrspace(1) %out, i32 %i
  store {ot} %r, ptr addrspace(1) %po
  ret void""", params=params, block=block, decls=decls)

    def inputs(rng):
        arrays = [(gen or default_gen)(rng, t, n) for t in in_types]
        return [np.zeros(n, out_type)] + arrays

    def reference(args):
        with np.errstate(all="ignore"):
            return {0: np.asarray(ref(*args[1:])).astype(out_type)}

    return Sample(name, ir, inputs, reference, grid=(n // block,), block=(block,), rtol=rtol, atol=atol,
                  tags=tags or {"elementwise"})


def default_gen(rng: np.random.Generator, t, n: int) -> np.ndarray:
    """Floats: normal with sigma 10; integers: uniform over the whole range of the type."""
    t = np.dtype(t)
    if t.kind == "f":
        return (rng.standard_normal(n) * 10).astype(t)
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
