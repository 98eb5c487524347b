"""The x86 backend's multi-instruction arithmetic against exact oracles: the emulated fused multiply-add (MULACC)
is one correct rounding of the exact a*b+c (Python fractions), including the ties that rounding through
float64 can create; float16 rounding and conversions agree with numpy bit for bit over whole ranges; the
transcendental polynomials keep the accuracy docs/compiler.md states."""

from fractions import Fraction

import numpy as np
import pytest

from compiler.backend.x86.backend import X86Backend
from compiler.dtypes import PtrDType, dtypes
from compiler.ir.linearize import linearize
from compiler.ir.lower import Geometry
from compiler.ir.ops import Ops, UOp
from runtime.cpu import CPUDevice

# precision p, smallest normal exponent, largest finite value
FORMATS = {"float32": (24, -126, float(np.finfo(np.float32).max)),
           "float64": (53, -1022, float(np.finfo(np.float64).max)),
           "float16": (11, -14, 65504.0), "bfloat16": (8, -126, 3.3895313892515355e38)}


def round_exact(x: Fraction, dt: str) -> float:
    """x rounded to nearest even in format dt (subnormals and overflow to inf included), as a float."""
    p, emin, top = FORMATS[dt]
    if x == 0:
        return 0.0
    sign, x = (-1 if x < 0 else 1), abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    unit = Fraction(2) ** (max(e, emin) - p + 1)
    q = x / unit
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2):
        n += 1
    r = n * unit
    if r > Fraction(top):
        return sign * float("inf")
    return sign * float(r)


def _run_mulacc(dt: str, a, b, c) -> np.ndarray:
    """out[i] = MULACC(a[i], b[i], c[i]) in dt, compiled by the x86 backend and run on a CPU device."""
    n = len(a)
    t = getattr(dtypes, dt)
    params = [UOp(Ops.PARAM, PtrDType(t, "global", n), (), i) for i in range(4)]
    lid = UOp(Ops.SPECIAL, dtypes.int32, (), ("local", 0, n))
    v = UOp(Ops.MULACC, t, tuple(UOp(Ops.LOAD, t, (p, lid)) for p in params[1:]))
    sink = UOp(Ops.SINK, dtypes.int32, (UOp(Ops.STORE, dtypes.int32, (params[0], lid, v)),), "mulacc")
    code = X86Backend().compile(linearize(sink, Geometry("mulacc", (1, 1, 1), (n, 1, 1))))
    dev = CPUDevice()
    store = np.uint16 if dt == "bfloat16" else np.dtype(dt)
    bufs = [dev.alloc(n * t.itemsize) for _ in range(4)]
    for buf, arr in zip(bufs[1:], (a, b, c), strict=True):
        arr = np.asarray(arr, np.float32 if dt == "bfloat16" else dt)
        buf.copyin((arr.view(np.uint32) >> 16).astype(np.uint16) if dt == "bfloat16" else arr)
    dev.launch(dev.load(code), bufs)
    out = bufs[0].copyout(np.empty(n, store))
    return (out.astype(np.uint32) << 16).view(np.float32) if dt == "bfloat16" else out


def _ties(dt: str) -> list[tuple[float, float, float]]:
    """a*b = 1 + 2^-h1 + 2^-h2 + half an ulp exactly (h1 + h2 = p), plus a c far below: rounding the sum to float64
    lands on the float32 midpoint (for float64 itself the sum is the case Dekker's product must get right)."""
    p = FORMATS[dt][0]
    a, b = 1 + 2.0 ** -(p // 2), 1 + 2.0 ** -(p - p // 2)
    cases = []
    for tiny in (2.0 ** -70, -(2.0 ** -70), 0.0):
        cases.append((a, b, tiny))
        cases.append((-a, b, -tiny))
    return cases


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "float64"])
def test_mulacc_is_one_correct_rounding(dt):
    rng = np.random.default_rng(11)
    n = 64
    scale = {"float16": 4.0, "bfloat16": 1e3, "float32": 1e3, "float64": 1e6}[dt]
    host = np.float32 if dt == "bfloat16" else np.dtype(dt)

    def rounded(v):
        return np.array([round_exact(Fraction(float(x)), dt) for x in v], dtype=np.float64)

    a, b = rounded(rng.uniform(-scale, scale, n)), rounded(rng.uniform(-scale, scale, n))
    c = rounded(rng.uniform(-scale, scale, n) * scale)
    if dt in ("float32", "float64"):
        ties = _ties(dt)
        k = len(ties)
        a[:k], b[:k], c[:k] = zip(*ties, strict=True)
    got = _run_mulacc(dt, a.astype(host), b.astype(host), c.astype(host)).astype(np.float64)
    want = np.array([round_exact(Fraction(x) * Fraction(y) + Fraction(z), dt) for x, y, z in zip(a, b, c,
                                                                                               strict=True)])
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(a[i], b[i], c[i], got[i], want[i]) for i in bad[:5]]


def test_the_tie_cases_need_the_error_term():
    """Without the exact error, float64 rounding would give the even neighbour in half of the tie cases."""
    a, b, c = zip(*_ties("float32"), strict=True)
    naive = [float(np.float32(np.float64(x) * y + z)) for x, y, z in zip(a, b, c, strict=True)]
    exact = [round_exact(Fraction(x) * Fraction(y) + Fraction(z), "float32") for x, y, z in zip(a, b, c, strict=True)]
    assert naive != exact
    assert list(_run_mulacc("float32", np.float32(a), np.float32(b), np.float32(c))) == exact


def _on_cpu(fn):
    from compiler import backend as backends
    from compiler import device as devices
    old = devices.DEFAULT
    devices.DEFAULT = "CPU"
    try:
        with backends.using("x86"):
            return fn()
    finally:
        devices.DEFAULT = old


def test_float16_conversions_match_numpy_over_every_pattern():
    """All 65536 float16 patterns widen to float32 exactly; float32 values around every float16 (midpoints,
    subnormals, overflow) round to nearest even as numpy rounds them."""
    from compiler import Tensor
    from compiler.dtypes import from_bf16_bits, to_bf16_bits
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    rng = np.random.default_rng(12)
    wide = halves.astype(np.float32)
    fin = np.isfinite(wide)
    mid = (wide[fin][:-1].astype(np.float64) + wide[fin][1:]) / 2  # midpoints of neighbours (sorted by bits)
    probes = np.concatenate([wide, mid.astype(np.float32), np.nextafter(mid.astype(np.float32), np.float32(np.inf)),
                             rng.standard_normal(4096).astype(np.float32) * np.float32(2.0) ** rng.integers(
                                 -30, 20, 4096).astype(np.float32),
                             np.float32([65519.0, 65520.0, 1e-8, -1e-8, 2.0 ** -25, 3 * 2.0 ** -26])])

    def program():
        up = Tensor(halves, dtype=dtypes.float16).cast(dtypes.float32).numpy()
        down = Tensor(probes).cast(dtypes.float16).numpy()
        bf = Tensor(probes).cast(dtypes.bfloat16).numpy()
        return up, down, bf
    up, down, bf = _on_cpu(program)
    nan = np.isnan(wide)
    assert np.array_equal(up.view(np.uint32)[~nan], wide.view(np.uint32)[~nan]) and np.isnan(up[nan]).all()
    with np.errstate(over="ignore"):
        ref = probes.astype(np.float16)
    assert np.array_equal(np.isnan(down), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(down.view(np.uint16)[ok], ref.view(np.uint16)[ok])
    ref_bf = from_bf16_bits(to_bf16_bits(probes))
    assert np.array_equal(np.isnan(bf), np.isnan(ref_bf))
    ok = ~np.isnan(ref_bf)
    assert np.array_equal(bf.view(np.uint32)[ok], ref_bf.view(np.uint32)[ok])


# docs/compiler.md, "Transcendentals": the bound each function keeps on the CPU device (ulp of the result's
# format, or absolute), over the range it was measured on; NumPy in float64 is the reference.
ACCURACY = {
    ("float32", "exp2"): ((-120, 120), 1.0, "ulp"), ("float32", "log2"): ((1e-30, 1e30), 3.5, "ulp"),
    ("float32", "sin"): ((-10, 10), 8e-8, "abs"), ("float32", "sin_far"): ((-1e5, 1e5), 2.5e-7, "abs"),
    ("float64", "exp2"): ((-120, 120), 1.5, "ulp"), ("float64", "log2"): ((1e-30, 1e30), 3.5, "ulp"),
    ("float64", "sin"): ((-10, 10), 2.5, "ulp"),
}


@pytest.mark.parametrize("dt, fn", list(ACCURACY))
def test_transcendentals_keep_the_documented_accuracy(dt, fn):
    from compiler import Tensor
    (lo, hi), bound, unit = ACCURACY[(dt, fn)]
    rng = np.random.default_rng(13)
    x = np.geomspace(lo, hi, 4096) if fn == "log2" else rng.uniform(lo, hi, 4096)
    x = x.astype(dt)
    name = fn.removesuffix("_far")
    got = _on_cpu(lambda: getattr(Tensor(x, dtype=getattr(dtypes, dt)), name)().numpy()).astype(np.float64)
    ref = getattr(np, name)(x.astype(np.float64))
    err = np.abs(got - ref)
    if unit == "ulp":
        err = err / np.spacing(np.abs(ref).astype(dt)).astype(np.float64)
    assert err.max() <= bound, (dt, fn, float(err.max()), float(x[np.argmax(err)]))
