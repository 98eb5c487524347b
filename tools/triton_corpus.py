"""The committed Triton corpus (tests/data/triton/): what a launch spec says and how its inputs are made.

Numpy only, so the corpus test runs without Triton and the generator (tools/gen_triton_corpus.py, run where Triton
is installed) makes the same inputs: each buffer's initial contents are a recipe (a generator and a seed), not
stored bytes, and the spec records the SHA-256 of what the recipe gave the generator, so a numpy whose random
streams changed is reported as such rather than as a wrong result. The numpy references the live test and the
generator share are here too.

A spec (<case>.json) holds:
  kernel, hsaco            the kernel's name and its code object's file (next to the spec)
  grid, block, shared      workgroups, work-items per workgroup (num_warps * 32) and dynamic LDS (metadata.shared)
  num_warps, metadata      Triton's options and the metadata facts the test checks (scratch sizes, ...)
  args                     in order: {"buffer": name, "dtype", "shape", "init": recipe, "sha256"} |
                           {"scalar": value, "dtype"} | {"scratch": bytes} (Triton's trailing scratch pointers)
  outputs                  name -> {"view": how to read the bytes, "rtol", "atol"} (exact when both are 0)
and <case>.npz the reference output of each buffer in `outputs`, computed by numpy in the generator.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "triton"

# Storage dtypes of formats numpy lacks: the bits are kept as unsigned integers of the same width.
STORAGE = {"bfloat16": "uint16", "float8e5": "uint8", "float8e4nv": "uint8"}


def storage_dtype(dtype: str) -> np.dtype:
    return np.dtype(STORAGE.get(dtype, dtype))


def make_input(arg: dict) -> np.ndarray:
    """A buffer's initial contents from its recipe (`arg["init"]`), with the storage dtype."""
    recipe, shape, dtype = arg["init"], tuple(arg["shape"]), arg["dtype"]
    rng = np.random.default_rng(recipe.get("seed", 0))
    gen = recipe["gen"]
    if gen == "normal":
        values = rng.standard_normal(shape) * recipe.get("scale", 1.0)
    elif gen == "uniform":
        values = rng.uniform(recipe["low"], recipe["high"], shape)
    elif gen == "integers":
        values = rng.integers(recipe["low"], recipe["high"], shape, dtype=np.int64)
    elif gen == "permutation":
        values = rng.permutation(int(np.prod(shape))).reshape(shape) + recipe.get("offset", 0)
    elif gen == "full":
        values = np.full(shape, recipe["value"])
    else:
        raise ValueError(f"unknown input generator {gen!r}")
    values = np.asarray(values)
    if "head" in recipe:  # hand-picked special values at the start (ties, subnormals, saturation)
        flat = values.reshape(-1).astype(np.float64 if values.dtype.kind == "f" else values.dtype)
        flat[:len(recipe["head"])] = recipe["head"]
        values = flat.reshape(shape)
    return encode(values, dtype)


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Numbers -> the bits of `dtype` (bf16 and fp8 by truncation of f32/f16, which gives exact values of them)."""
    if dtype == "bfloat16":
        return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype == "float8e5":  # e5m2 is the top byte of an f16
        return (np.asarray(values, np.float16).view(np.uint16) >> 8).astype(np.uint8)
    if dtype == "float8e4nv":
        return e4m3_encode(np.asarray(values, np.float64))
    return np.asarray(values).astype(dtype)


def decode(bits: np.ndarray, view: str) -> np.ndarray:
    """Stored bits -> numbers (float32 for bf16 and fp8; the array itself otherwise)."""
    if view == "bfloat16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if view == "float8e5":
        return (bits.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    if view == "float8e4nv":
        return E4M3[bits.astype(np.int64)]
    return bits


def _e4m3_values() -> np.ndarray:
    """All 256 fp8 e4m3fn (OCP "E4M3", Triton's float8e4nv) codes: bias 7, no infinities, S.1111.111 is NaN."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp, man = (codes >> 3) & 0xF, codes & 7
    mag = np.where(exp == 0, man / 8 * 2.0 ** -6, (1 + man / 8) * 2.0 ** (exp - 7))
    mag = np.where((codes & 0x7F) == 0x7F, np.nan, mag)
    return (sign * mag).astype(np.float32)


E4M3 = _e4m3_values()


def e4m3_encode(values: np.ndarray) -> np.ndarray:
    """The e4m3 code nearest each value (inputs are chosen representable, so this is exact for them)."""
    finite = np.where(np.isnan(E4M3), np.inf, E4M3.astype(np.float64))
    return np.abs(values.reshape(-1)[:, None] - finite[None, :]).argmin(axis=1).astype(np.uint8).reshape(values.shape)


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def bf16_round(x: np.ndarray) -> np.ndarray:
    """f32 -> bf16 bits, rounding to nearest even (NaN kept a NaN)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), rounded)


def round_to_e5m2(x: np.ndarray) -> np.ndarray:
    """Nearest finite fp8e5m2 value (so saturating), ties to even. e5m2 is the top byte of an f16, so its 256 codes
    enumerate easily. (Rounding via f16 first would double-round: 0.28128743 must give 0.3125, not 0.25 via the
    f16 tie 0.28125.)"""
    codes = np.arange(256, dtype=np.uint16)
    values = (codes << 8).view(np.float16).astype(np.float64)
    finite = np.isfinite(values)
    codes, values = codes[finite], values[finite]
    dist = np.abs(x.astype(np.float64)[:, None] - values[None, :])
    # Primary key the distance, secondary the code's low bit: exact ties go to the even code.
    order = np.lexsort(((codes & 1)[None, :].repeat(len(x), 0), dist), axis=1)[:, 0]
    return values[order].astype(np.float32)


def int_ops_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Triton's // and % truncate toward zero (C semantics), unlike numpy's floor division."""
    x64, y64 = x.astype(np.int64), y.astype(np.int64)
    safe = np.where(y64 == 0, 1, y64)
    q = np.where(y64 == 0, -1, np.trunc(x64 / safe).astype(np.int64))
    r = np.where(y64 == 0, 0, x64 - np.trunc(x64 / safe).astype(np.int64) * safe)
    mixed = ((x64 << 3) ^ (y64 >> 2)) + np.minimum(x64, y64) * q + r
    return mixed.astype(np.int32)  # wraps like the kernel's i32 arithmetic


def philox_ref(seed: int, offsets: np.ndarray) -> np.ndarray:
    """triton.language.random.randint: 10 rounds of Philox-4x32 on (offset, 0, 0, 0), key (seed lo, seed hi)."""
    mask32, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    c0 = offsets.astype(np.uint64)
    c1, c2, c3 = np.zeros_like(c0), np.zeros_like(c0), np.zeros_like(c0)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32 & 0xFFFFFFFF)
    a, b = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(10):
        hi_b, lo_b, hi_a, lo_a = (b * c2) >> shift, (b * c2) & mask32, (a * c0) >> shift, (a * c0) & mask32
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask32, (k1 + np.uint64(0xBB67AE85)) & mask32
    return c0.astype(np.uint32).view(np.int32)


def data_dir(arch: str = "gfx1100") -> Path:
    """Where the corpus of `arch` is committed: gfx1100's in DATA itself, every other architecture's in DATA/<arch>."""
    return DATA if arch == "gfx1100" else DATA / arch


def load_specs(arch: str = "gfx1100") -> list[dict]:
    """Every committed case's spec for `arch`, by name, with its reference outputs under "reference"."""
    specs = []
    for path in sorted(data_dir(arch).glob("*.json")):
        spec = json.loads(path.read_text())
        with np.load(path.with_suffix(".npz")) as ref:
            spec["reference"] = {name: ref[name] for name in ref.files}
        spec["name"] = path.stem
        specs.append(spec)
    return specs
