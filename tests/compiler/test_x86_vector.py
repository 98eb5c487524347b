"""The x86 backend's SSE packed code (compiler.backend.x86.vector): kernels whose work-items along local x touch
elements at an affine index (consecutive: movups; any other stride: gathered and scattered lanes) run four
work-items per pass, and give the scalar code's results bit for bit (the same IEEE operation per lane;
NaN-propagating max/min; exact int32/uint32 conversions) with inf, NaN, -0 and subnormal inputs, in chosen and in
random (hypothesis) programs, and NumPy's where NumPy computes the same operation exactly. SIMGPU_X86_VECTOR=0 is
the scalar reference, in the same process; SIMGPU_DEBUG=3 says which kernels vectorized and why the others did
not."""

import os

import numpy as np
import pytest

from compiler import Tensor, dtypes
from compiler import backend as backends

N = 4096  # 16 workgroups of 256: local x a multiple of 4
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39, 0.5, -2.5, 1e30, -1e30, 3.0, 16777217.0, -7.75]


def _floats(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).uniform(-8, 8, N).astype(np.float32)
    v[:len(SPECIAL)] = SPECIAL
    v[len(SPECIAL):2 * len(SPECIAL)] = SPECIAL[::-1]
    return v


def _ints(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).integers(-(1 << 31), 1 << 31, N, dtype=np.int64).astype(np.int32)
    v[:6] = [0, 1, -1, -(1 << 31), (1 << 31) - 1, 7]
    return v


FLOAT_PROGRAMS = {
    "relu": lambda x, y: (x * 3 + 1).relu(),
    "arith": lambda x, y: (x + y) * (x - y) / (y + 0.5),
    "sqrt_neg": lambda x, y: -(x.abs().sqrt()),
    "maximum": lambda x, y: x.maximum(y),
    "minimum": lambda x, y: y.minimum(x),
    "where_cmp": lambda x, y: (x < y).where(x, y * 2) + (x == y).float() + (x != y).float() * 3,
    "bool_logic": lambda x, y: (((x < 1) & (y > -1)) | ((x > 2) ^ (y < 0))).where(x, -y) +
    ((x < y) == (y < 0)).float() + ((x < y) != (y < 0)).float() * 2,
    "trunc_cast": lambda x, y: x.trunc() + (x * 100).cast(dtypes.int32).cast(dtypes.float32),
    "transpose": lambda x, y: (x.reshape(64, 64).T * 2 + y.reshape(64, 64)).reshape(N),  # gathered loads
    "flip": lambda x, y: x.flip(0) - y,  # a stride of -1
    "arange": lambda x, y: x + Tensor.arange(N, device="CPU").float() * 0.25,
}
def _u32(t: Tensor) -> Tensor:
    return t.bitcast(dtypes.uint32)


INT_PROGRAMS = {  # (the program on Tensors, the same on NumPy arrays)
    "add_mul": (lambda a, b: a * b + (a - b), lambda a, b: a * b + (a - b)),
    "bits": (lambda a, b: (a & b) ^ (a | 7) ^ ~b, lambda a, b: (a & b) ^ (a | 7) ^ ~b),
    "shifts": (lambda a, b: (a << 3) + (a >> 5) + (a.bitcast(dtypes.uint32) >> 7).bitcast(dtypes.int32),
               lambda a, b: (a << 3) + (a >> 5) + (a.view(np.uint32) >> 7).view(np.int32)),
    "minmax": (lambda a, b: a.maximum(b) - a.minimum(b ^ 5) + _u32(a).maximum(_u32(b)).bitcast(dtypes.int32),
               lambda a, b: np.maximum(a, b) - np.minimum(a, b ^ 5) +
               np.maximum(a.view(np.uint32), b.view(np.uint32)).view(np.int32)),
    "to_float": (lambda a, b: a.cast(dtypes.float32).bitcast(dtypes.int32) ^
                 _u32(b).cast(dtypes.float32).bitcast(dtypes.int32),
                 lambda a, b: a.astype(np.float32).view(np.int32) ^
                 b.view(np.uint32).astype(np.float32).view(np.int32)),
    "cmp": (lambda a, b: (a < b).where(a, -b) + (a == 7).cast(dtypes.int32),
            lambda a, b: np.where(a < b, a, -b) + (a == 7).astype(np.int32)),
}


def _run(program, inputs, monkeypatch, capfd, vector: bool):
    monkeypatch.setenv("SIMGPU_X86_VECTOR", "1" if vector else "0")
    monkeypatch.setenv("SIMGPU_DEBUG", "3")
    capfd.readouterr()
    out = program(*(Tensor(a, device="CPU") for a in inputs)).numpy()
    return out, capfd.readouterr().err


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.fixture(autouse=True)
def _x86(monkeypatch):
    monkeypatch.setenv("SIMGPU_CACHE", "0")  # compile here, so SIMGPU_DEBUG=3 prints each kernel
    with backends.using("x86"):
        yield


@pytest.mark.parametrize("name", FLOAT_PROGRAMS)
def test_float_programs_vectorize_and_match_the_scalar_code_bit_for_bit(name, monkeypatch, capfd):
    inputs = (_floats(1), _floats(2))
    vec, listing = _run(FLOAT_PROGRAMS[name], inputs, monkeypatch, capfd, True)
    scalar, scalar_listing = _run(FLOAT_PROGRAMS[name], inputs, monkeypatch, capfd, False)
    assert "4 work-items per pass (SSE packed)" in listing and "xmmword ptr" in listing, listing[-3000:]
    assert "SSE packed" not in scalar_listing and "scalar: SIMGPU_X86_VECTOR=0" in scalar_listing
    assert _same_bits(vec, scalar), np.flatnonzero(vec.view(np.uint32) != scalar.view(np.uint32))[:10]


@pytest.mark.parametrize("name", INT_PROGRAMS)
def test_int_programs_vectorize_and_match_numpy(name, monkeypatch, capfd):
    inputs = (_ints(3), _ints(4))
    program, reference = INT_PROGRAMS[name]
    vec, listing = _run(program, inputs, monkeypatch, capfd, True)
    assert "4 work-items per pass (SSE packed)" in listing, listing[-3000:]
    with np.errstate(over="ignore"):
        want = reference(*inputs)
    np.testing.assert_array_equal(vec, want)


def test_exact_float_ops_match_numpy():
    x, y = _floats(5), _floats(6)
    with backends.using("x86"), np.errstate(all="ignore"):
        got = ((Tensor(x, device="CPU") + Tensor(y, device="CPU")) * Tensor(x, device="CPU")).numpy()
        want = (x + y) * x
    assert _same_bits(got, want)


def test_kernels_that_cannot_vectorize_say_why(monkeypatch, capfd):
    monkeypatch.setenv("SIMGPU_DEBUG", "3")
    x = _floats(9)
    Tensor(x, device="CPU").exp().numpy()  # the exp2 polynomial's fused multiply-adds
    assert "scalar: no packed form of MULACC float32" in capfd.readouterr().err
    y = x[::-1].copy()
    got = ((Tensor(x, device="CPU") < Tensor(y, device="CPU")) < (Tensor(y, device="CPU") < 0)).float().numpy()
    assert np.array_equal(got, ((x < y) < (y < 0)).astype(np.float32))  # True is a -1 mask: no signed compare
    assert "scalar: no packed form of CMPLT bool (bool, bool)" in capfd.readouterr().err


def test_vector_kernels_are_deterministic(monkeypatch, capfd):
    x, y = _floats(7), _floats(8)
    runs = [_run(FLOAT_PROGRAMS["where_cmp"], (x, y), monkeypatch, capfd, True)[0].tobytes() for _ in range(2)]
    assert runs[0] == runs[1]


# ---- random programs: packed and scalar code agree bit for bit ------------------------------------------------
def _expr(kind: str, depth: int):
    """A hypothesis strategy of expression trees of one kind: 'f' float32, 'i' int32, 'b' bool."""
    from hypothesis import strategies as st
    leaves = {"f": st.sampled_from([("x",), ("y",), ("cf", 0.5), ("cf", -3.0)]),
              "i": st.sampled_from([("a",), ("b",), ("ci", 3), ("ci", -7)]),
              "b": st.sampled_from([("cmp", "<", ("x",), ("y",)), ("cmp", "==", ("a",), ("ci", 3))])}[kind]
    if depth == 0:
        return leaves
    f, i, b = (_expr(k, depth - 1) for k in "fib")
    nodes = {
        "f": [st.tuples(st.sampled_from(["+", "-", "*", "/", "max", "min"]), f, f),
              st.tuples(st.sampled_from(["neg", "sqrt", "trunc"]), f), st.tuples(st.just("where"), b, f, f),
              st.tuples(st.sampled_from(["i2f", "u2f"]), i), st.tuples(st.just("b2f"), b)],
        "i": [st.tuples(st.sampled_from(["+", "-", "*", "&", "|", "^", "max", "min", "umax"]), i, i),
              st.tuples(st.sampled_from(["neg", "~", "<<3", ">>5", "u>>7"]), i), st.tuples(st.just("where"), b, i, i),
              st.tuples(st.just("f2i"), f), st.tuples(st.just("b2i"), b)],
        "b": [st.tuples(st.just("cmp"), st.sampled_from(["<", "==", "!="]), f, f),
              st.tuples(st.just("cmp"), st.sampled_from(["<", "==", "!="]), i, i),
              st.tuples(st.sampled_from(["&", "|", "^"]), b, b), st.tuples(st.just("not"), b)],
    }[kind]
    return st.one_of(leaves, *nodes)


def _build(e, env):
    """The Tensor program of an expression tree (env: the inputs x, y float32 and a, b int32)."""
    op, *args = e
    if op in env:
        return env[op]
    if op == "cf":
        return Tensor.full((N,), args[0], dtype=dtypes.float32, device="CPU")
    if op == "ci":
        return Tensor.full((N,), args[0], dtype=dtypes.int32, device="CPU")
    if op == "cmp":
        p, q = (_build(a, env) for a in args[1:])
        return {"<": p < q, "==": p == q, "!=": p != q}[args[0]]
    v = [_build(a, env) for a in args]
    u32 = dtypes.uint32
    unary = {"neg": lambda: -v[0], "sqrt": lambda: v[0].sqrt(), "trunc": lambda: v[0].trunc(), "~": lambda: ~v[0],
             "<<3": lambda: v[0] << 3, ">>5": lambda: v[0] >> 5, "not": lambda: v[0].logical_not(),
             "u>>7": lambda: (v[0].bitcast(u32) >> 7).bitcast(dtypes.int32),
             "i2f": lambda: v[0].cast(dtypes.float32), "u2f": lambda: v[0].bitcast(u32).cast(dtypes.float32),
             "b2f": lambda: v[0].float(), "f2i": lambda: v[0].cast(dtypes.int32),
             "b2i": lambda: v[0].cast(dtypes.int32)}
    if op in unary:
        return unary[op]()
    if op == "where":
        return v[0].where(v[1], v[2])
    p, q = v
    return {"+": lambda: p + q, "-": lambda: p - q, "*": lambda: p * q, "/": lambda: p / q, "&": lambda: p & q,
            "|": lambda: p | q, "^": lambda: p ^ q, "max": lambda: p.maximum(q), "min": lambda: p.minimum(q),
            "umax": lambda: p.bitcast(u32).maximum(q.bitcast(u32)).bitcast(dtypes.int32)}[op]()


def _program_strategy():
    from hypothesis import strategies as st
    return st.one_of(_expr("f", 3), _expr("i", 3))


def test_random_programs_give_the_scalar_codes_bits():
    """Random elementwise expression trees over float32, int32 and bool (hypothesis): the packed kernel and the
    scalar one (SIMGPU_X86_VECTOR=0) write the same bytes."""
    from hypothesis import given, settings

    inputs = {"x": _floats(21), "y": _floats(22)[::-1].copy(), "a": _ints(23), "b": _ints(24) >> 3}

    @settings(max_examples=60, derandomize=True, deadline=None)
    @given(_program_strategy())
    def check(e):
        outs = []
        for vector in ("1", "0"):
            os.environ["SIMGPU_X86_VECTOR"] = vector
            env = {k: Tensor(v, device="CPU") for k, v in inputs.items()}
            outs.append(_build(e, env).numpy().tobytes())
        assert outs[0] == outs[1], e

    old = os.environ.get("SIMGPU_X86_VECTOR")
    try:
        check()
    finally:
        if old is None:
            os.environ.pop("SIMGPU_X86_VECTOR", None)
        else:
            os.environ["SIMGPU_X86_VECTOR"] = old


@pytest.mark.parametrize("step", [3, -2, 4096])
def test_strided_loads_and_stores_gather_and_scatter_lanes(step):
    """out[i * step + base] = in[i * step + base] * 2 for 64 work-items (four per pass): movss per lane at
    displacements step * 4 apart, the lanes packed (unpcklps) and spread (pshufd), in work-item order."""
    from compiler.backend.x86.backend import X86Backend
    from compiler.dtypes import PtrDType
    from compiler.ir.linearize import linearize
    from compiler.ir.lower import Geometry
    from compiler.ir.ops import Ops, UOp
    from runtime.cpu import CPUDevice, read_image

    n, f32 = 64, dtypes.float32
    size = abs(step) * (n - 1) + 1
    base = size - 1 if step < 0 else 0
    params = [UOp(Ops.PARAM, PtrDType(f32, "global", size), (), i) for i in range(2)]
    lid = UOp(Ops.SPECIAL, dtypes.int32, (), ("local", 0, n))
    idx = lid * UOp.const(dtypes.int32, step) + UOp.const(dtypes.int32, base)
    value = UOp(Ops.LOAD, f32, (params[1], idx)) * UOp.const(f32, 2.0)
    sink = UOp(Ops.SINK, dtypes.int32, (UOp(Ops.STORE, dtypes.int32, (params[0], idx, value)),), "strided")
    code = X86Backend().compile(linearize(sink, Geometry("strided", (1, 1, 1), (n, 1, 1))))
    assert read_image(code).meta["lanes"] == 4
    dev = CPUDevice()
    out, src = dev.alloc(4 * size), dev.alloc(4 * size)
    data = np.random.default_rng(5).standard_normal(size).astype(np.float32)
    out.copyin(np.full(size, -1.0, np.float32))
    src.copyin(data)
    dev.launch(dev.load(code), [out, src])
    want = np.full(size, -1.0, np.float32)
    touched = base + step * np.arange(n)
    want[touched] = data[touched] * 2
    assert np.array_equal(out.copyout(np.empty(size, np.float32)), want)
