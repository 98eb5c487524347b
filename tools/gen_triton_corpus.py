#!/usr/bin/env python3
"""Compile the Triton corpus for each architecture Triton targets that simgpu simulates (gfx1100, gfx1201, gfx942,
gfx950) and write it under tests/data/triton/ (gfx1100's in the directory itself, the others' in <arch>/): per case a
code object (<case>.hsaco), its launch spec (<case>.json) and numpy's reference outputs (<case>.npz), the same kernels,
inputs and references for every architecture. tests/runtime/test_triton_corpus.py runs them through the runtime
without Triton.

Run from the repository root, with Triton in a venv of its own (the project's venv stays as CI has it):

    python3 -m venv /tmp/trivenv && /tmp/trivenv/bin/pip install triton==3.9.0 numpy
    PYTHONPATH=$PWD /tmp/trivenv/bin/python -m tools.gen_triton_corpus [--arch gfx1100|gfx1201|gfx942|gfx950] [case ...]

Compiling needs no GPU and no torch: naming the target (GPUTarget("hip", "gfx942", 64)) keeps Triton from asking
a driver for the current device. The references are numpy's, never the simulator's. What differs per architecture is
in the case, not the kernel: `isa` names what each architecture's code must contain, `scratch` where it must spill,
`archs` the architectures a case is built for (gfx942's 512 registers a lane hold what spills elsewhere). The code
objects embed the path of tools/ (debug info): rebuilding from another checkout changes only those bytes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # 3.9's default, said explicitly to silence its warning

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

from tools import triton_kernels as K  # noqa: E402
from tools.triton_corpus import (  # noqa: E402  # noqa: E402
    bf16_round,
    data_dir,
    decode,
    digest,
    int_ops_ref,
    make_input,
    philox_ref,
    round_to_e5m2,
    storage_dtype,
)

# Each architecture Triton's AMD backend targets that simgpu simulates, with its wave size (gfx9: wave64 only).
TARGETS = {"gfx1100": GPUTarget("hip", "gfx1100", 32), "gfx1201": GPUTarget("hip", "gfx1201", 32),
           "gfx942": GPUTarget("hip", "gfx942", 64), "gfx950": GPUTarget("hip", "gfx950", 64)}
# Triton's pointer type for each buffer dtype.
POINTER = {"float32": "*fp32", "float16": "*fp16", "bfloat16": "*bf16", "int32": "*i32", "int8": "*i8",
           "uint8": "*u8", "int16": "*i16", "uint32": "*u32", "int64": "*i64", "float64": "*fp64", "float8e5": "*fp8e5",
           "float8e4nv": "*fp8e4nv"}
SCALAR = {"int32": "i32", "float32": "fp32", "int64": "i64"}


@dataclass
class Buf:
    """A buffer argument. init None means zeros; `out` marks it compared after the launch, read as `view`."""

    dtype: str
    shape: tuple
    init: dict | None = None
    out: bool = False
    rtol: float = 0.0
    atol: float = 0.0


@dataclass
class Scalar:
    value: float | int
    dtype: str = "int32"


@dataclass
class Case:
    name: str
    fn: object
    args: dict  # runtime parameter name -> Buf | Scalar, in the kernel's parameter order
    grid: tuple
    ref: Callable[[dict], dict]  # inputs by parameter name (numbers) -> outputs by name (numbers)
    constexprs: dict = field(default_factory=dict)
    num_warps: int = 4
    isa: dict = field(default_factory=dict)  # per architecture: instructions its code must contain (what the case
    #                                          is there to exercise)
    scratch: tuple = ()  # the architectures on which the kernel must spill to scratch (private segment)
    archs: tuple = ()  # the architectures it is built for (all when empty)


def everywhere(*insns: str) -> dict:
    """A case's `isa` when every architecture's code has the same instructions."""
    return {arch: insns for arch in TARGETS}


def isa_of(case, arch: str) -> tuple:
    """What `arch`'s code of a case must contain: its own entry, or for gfx950 (CDNA4, gfx942's successor) gfx942's
    when the case names none for gfx950."""
    if arch == "gfx950" and arch not in case.isa:
        return case.isa.get("gfx942", ())
    return case.isa.get(arch, ())


def normal(seed, scale=1.0, **kw):
    return {"gen": "normal", "seed": seed, "scale": scale, **kw}


def ints(seed, low, high):
    return {"gen": "integers", "seed": seed, "low": low, "high": high}


def f32(shape, seed, scale=1.0, **kw):
    return Buf("float32", shape, normal(seed, scale), **kw)


def out(dtype, shape, rtol=0.0, atol=0.0, init=None):
    return Buf(dtype, shape, init, out=True, rtol=rtol, atol=atol)


def cdiv(a, b):
    return -(-a // b)


# ------------------------------------------------------------------------------------------------ references


def _f32(x):
    return np.asarray(x, np.float32)


def _elementwise(op, dtype, n, block=256):
    """Cases of x op y for n elements (odd n: the masked tail)."""
    def ref(a):
        if dtype == "bfloat16":
            return {"out_ptr": decode(bf16_round(op(_f32(a["x_ptr"]), _f32(a["y_ptr"]))), "bfloat16")}
        with np.errstate(over="ignore"):
            return {"out_ptr": op(a["x_ptr"], a["y_ptr"])}
    init = ints(1, -1000, 1000) if dtype == "int32" else normal(1)
    init2 = ints(2, -1000, 1000) if dtype == "int32" else normal(2)
    return dict(args={"x_ptr": Buf(dtype, (n,), init), "y_ptr": Buf(dtype, (n,), init2),
                      "out_ptr": out(dtype, (n,)), "n": Scalar(n)},
                grid=(cdiv(n, block),), ref=ref, constexprs={"BLOCK": block})


def _matmul(m, n, k, tile, bk, warps, ins="float16", outs="float32", seed=0):
    def ref(a):
        c = _f32(a["a_ptr"]).astype(np.float64) @ _f32(a["b_ptr"]).astype(np.float64)
        return {"c_ptr": c.astype(outs)}
    tol = (1e-4, 1e-4) if outs == "float32" else (2e-3, 2e-3)
    return dict(args={"a_ptr": Buf(ins, (m, k), normal(seed)), "b_ptr": Buf(ins, (k, n), normal(seed + 1)),
                      "c_ptr": out(outs, (m, n), *tol), "M": Scalar(m), "N": Scalar(n), "K": Scalar(k),
                      "stride_am": Scalar(k), "stride_bk": Scalar(n), "stride_cm": Scalar(n)},
                grid=(cdiv(m, tile), cdiv(n, tile)), ref=ref, constexprs={"BM": tile, "BN": tile, "BK": bk},
                num_warps=warps)


def _cast(src, dst, n=300, init=None):
    def ref(a):
        x = a["x_ptr"]
        if dst == "bfloat16":
            return {"out_ptr": decode(bf16_round(_f32(x)), "bfloat16")}
        if dst in ("int32", "int8") and x.dtype.kind == "f":
            return {"out_ptr": np.trunc(x.astype(np.float64)).astype(dst)}  # fptosi truncates toward zero
        return {"out_ptr": x.astype(np.float64).astype(dst) if dst != "float16" else x.astype(np.float16)}
    init = init or (ints(3, -20000, 20000) if src.startswith("int") else normal(3, 300.0))
    return dict(args={"x_ptr": Buf(src, (n,), init), "out_ptr": out(dst, (n,)), "n": Scalar(n)},
                grid=(cdiv(n, 128),), ref=ref, constexprs={"BLOCK": 128})


def _softmax_ref(a):
    x = a["in_ptr"]
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return {"out_ptr": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}


def _softmax(rows, cols):
    return dict(args={"out_ptr": out("float32", (rows, cols), 1e-5, 1e-7), "in_ptr": f32((rows, cols), cols, 4.0),
                      "row_stride": Scalar(cols), "n_cols": Scalar(cols)},
                grid=(rows,), ref=_softmax_ref, constexprs={"BLOCK": triton.next_power_of_2(cols)})


def _layernorm_ref(a):
    x = a["x_ptr"].astype(np.float64)
    y = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + a["eps"])
    return {"out_ptr": y.astype(np.float32)}


def _layernorm_affine_ref(a):
    x = a["x_ptr"].astype(np.float64)
    mean, var = x.mean(axis=1), x.var(axis=1)
    rstd = 1 / np.sqrt(var + a["eps"])
    y = (x - mean[:, None]) * rstd[:, None] * a["w_ptr"] + a["b_ptr"]
    return {"out_ptr": y.astype(np.float16), "mean_ptr": mean.astype(np.float32), "rstd_ptr": rstd.astype(np.float32)}


def _rmsnorm_ref(a):
    x = a["x_ptr"].astype(np.float64)
    return {"out_ptr": (x / np.sqrt((x * x).mean(axis=1, keepdims=True) + a["eps"]) * a["w_ptr"]).astype(np.float32)}


def _flash_ref(a):
    q, k, v = (_f32(a[p]).astype(np.float64) for p in ("q_ptr", "k_ptr", "v_ptr"))
    s = q @ k.T * a["scale"]
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return {"o_ptr": ((p / p.sum(axis=1, keepdims=True)) @ v).astype(np.float16)}


def _row_reduce_ref(a):
    x = a["x_ptr"]
    return {"sum_ptr": x.astype(np.float64).sum(axis=1).astype(np.float32), "max_ptr": x.max(axis=1),
            "argmax_ptr": x.argmax(axis=1).astype(np.int32)}


def _int64_ref(a):
    x = a["x_ptr"]
    q = x >> 7
    with np.errstate(over="ignore"):  # the multiply wraps, as in the kernel
        y = x * np.int64(-7046029254386353131) + np.sign(q) * (np.abs(q) // 3)  # // truncates toward zero
    return {"out_ptr": y, "f_ptr": x.astype(np.float64) * 1.5 / 7.0}


def _math_f16_ref(a):
    x = a["x_ptr"].astype(np.float64)
    y = np.sqrt(np.abs(x)) + np.sin(x) * np.cos(x) + np.log(np.abs(x) + 1) + np.exp2(x) / (x * x + 1)
    return {"out_ptr": y.astype(np.float32)}


def _math_f32_ref(a):
    x = a["x_ptr"].astype(np.float64)
    y = np.where(x > 0, np.log(np.maximum(x, 0) + 1), np.exp(np.minimum(x, 0))) + np.sqrt(np.abs(x)) * np.sin(x)
    return {"out_ptr": y.astype(np.float32)}


def _linear_recurrence_ref(a):
    h, out_ = 0.0, []
    for at, bt in zip(a["a_ptr"].astype(np.float64), a["b_ptr"].astype(np.float64), strict=True):
        h = at * h + bt
        out_.append(h)
    return {"out_ptr": np.array(out_, np.float32)}


def _contended_ref(a):
    x = a["x_ptr"]
    return {"max_ptr": np.array([x[i::4].max() for i in range(4)], x.dtype),
            "count_ptr": np.array([len(x[i::8]) for i in range(8)], np.int32)}


def _minmax_ref(a, block=128):
    x = a["x_ptr"]
    n = len(x)
    progs = cdiv(n, block)
    blocks = [np.concatenate([x[p * block:(p + 1) * block], np.zeros(max(0, (p + 1) * block - n), x.dtype)])
              for p in range(progs)]
    mins = np.full(3, 1 << 30, np.int32)
    maxs = np.full(3, -(1 << 30), np.int32)
    for p, b in enumerate(blocks):
        mins[p % 3], maxs[p % 3] = min(mins[p % 3], b.min()), max(maxs[p % 3], b.max())
    return {"min_ptr": mins, "max_ptr": maxs, "xchg_ptr": np.array([b.sum() for b in blocks], np.int32)}


def _spill_ref(a):
    x = a["x_ptr"].astype(np.float64)
    y = np.exp(x * 0.5)
    return {"out_ptr": (y / y.sum(axis=1, keepdims=True) + x).astype(np.float32)}


# ------------------------------------------------------------------------------------------------ the cases


def cases() -> list[Case]:
    c = []

    def add(name, fn, **kw):
        c.append(Case(name, fn, **kw))

    # Element-wise, in each dtype; odd sizes exercise the masked tail.
    add("vadd_f32", K.add_kernel, **_elementwise(np.add, "float32", 1001))
    add("vadd_f16", K.add_kernel, **_elementwise(np.add, "float16", 777))
    add("vadd_bf16", K.add_kernel, **_elementwise(np.add, "bfloat16", 513))
    add("vadd_i32", K.add_kernel, **_elementwise(np.add, "int32", 300))
    add("vmul_f32", K.mul_kernel, **_elementwise(np.multiply, "float32", 999))
    add("vmul_f16", K.mul_kernel, **_elementwise(np.multiply, "float16", 257))
    add("vmul_bf16", K.mul_kernel, **_elementwise(np.multiply, "bfloat16", 300))
    add("vmul_i32", K.mul_kernel, **_elementwise(np.multiply, "int32", 1000, block=512))
    n = 700
    add("fma_f32", K.fma_kernel, args={"x_ptr": f32((n,), 4), "y_ptr": f32((n,), 5), "z_ptr": f32((n,), 6),
                                       "out_ptr": out("float32", (n,)), "n": Scalar(n)},
        grid=(cdiv(n, 256),), constexprs={"BLOCK": 256}, isa=everywhere("v_fmac_f32"),
        ref=lambda a: {"out_ptr": (a["x_ptr"].astype(np.float64) * a["y_ptr"] + a["z_ptr"]).astype(np.float32)})
    add("fma_f16", K.fma_kernel,
        args={p: Buf("float16", (n,), normal(i)) for i, p in enumerate(("x_ptr", "y_ptr", "z_ptr"))}
        | {"out_ptr": out("float16", (n,)), "n": Scalar(n)},
        grid=(cdiv(n, 256),), constexprs={"BLOCK": 256},
        ref=lambda a: {"out_ptr": (a["x_ptr"].astype(np.float64) * a["y_ptr"] + a["z_ptr"]).astype(np.float16)})
    add("fma_bf16", K.fma_kernel,
        args={p: Buf("bfloat16", (n,), normal(i)) for i, p in enumerate(("x_ptr", "y_ptr", "z_ptr"))}
        | {"out_ptr": out("bfloat16", (n,)), "n": Scalar(n)},
        grid=(cdiv(n, 256),), constexprs={"BLOCK": 256},
        ref=lambda a: {"out_ptr": decode(bf16_round(_f32(a["x_ptr"].astype(np.float64) * a["y_ptr"] + a["z_ptr"])),
                                         "bfloat16")})
    n = 1234
    add("saxpy_f32", K.saxpy_kernel, args={"y_ptr": Buf("float32", (n,), normal(7), out=True, rtol=0, atol=0),
                                           "x_ptr": f32((n,), 8), "a": Scalar(2.5, "float32"), "n": Scalar(n)},
        grid=(cdiv(n, 128),), constexprs={"BLOCK": 128}, num_warps=1,
        ref=lambda a: {"y_ptr": (a["x_ptr"].astype(np.float64) * 2.5 + a["y_ptr"]).astype(np.float32)})
    n = 333
    add("masked_fill_f32", K.masked_fill_kernel,
        args={"x_ptr": f32((n,), 9), "out_ptr": out("float32", (cdiv(n, 64) * 64,)), "n": Scalar(n)},
        grid=(cdiv(n, 64),), constexprs={"BLOCK": 64}, num_warps=2,
        ref=lambda a: {"out_ptr": np.concatenate([a["x_ptr"] * 2, np.full(384 - 333, -14.0, np.float32)])})
    add("int_ops_where", K.int_ops_kernel,
        args={"x_ptr": Buf("int32", (777,), ints(10, -(1 << 20), 1 << 20)),
              "y_ptr": Buf("int32", (777,), ints(11, -50, 50)),
              "out_ptr": out("int32", (777,)), "n": Scalar(777)},
        grid=(cdiv(777, 256),), constexprs={"BLOCK": 256},
        ref=lambda a: {"out_ptr": int_ops_ref(a["x_ptr"], a["y_ptr"])})

    # Conversions.
    add("cast_f32_f16", K.cast_kernel, **_cast("float32", "float16"))
    add("cast_f32_bf16", K.cast_kernel, **_cast("float32", "bfloat16"))
    add("cast_f32_i32", K.cast_kernel, **_cast("float32", "int32"))
    add("cast_i32_f32", K.cast_kernel, **_cast("int32", "float32", init=ints(3, -(1 << 30), 1 << 30)))
    add("cast_f16_f32", K.cast_kernel, **_cast("float16", "float32", init=normal(3, 100.0)))
    add("cast_i8_f32", K.cast_kernel, **_cast("int8", "float32", init=ints(3, -128, 128)))
    add("cast_bf16_f16", K.cast_kernel, **_cast("bfloat16", "float16", init=normal(3, 10.0)))
    add("cast_i32_i64", K.cast_kernel, **_cast("int32", "int64", init=ints(3, -(1 << 31), 1 << 31)))

    # Math.
    n = 1000
    add("math_f16_bf16", K.math_kernel,
        args={"x_ptr": Buf("float16", (n,), normal(1, 3.0)), "out_ptr": out("bfloat16", (n,), 1e-2, 1e-2),
              "n": Scalar(n)}, grid=(cdiv(n, 256),), constexprs={"BLOCK": 256}, ref=_math_f16_ref)
    add("math_f32_where", K.math_f32_kernel,
        args={"x_ptr": f32((n,), 2, 5.0), "out_ptr": out("float32", (n,), 1e-5, 1e-5), "n": Scalar(n)},
        grid=(cdiv(n, 256),), constexprs={"BLOCK": 256}, ref=_math_f32_ref)
    n = 4096
    add("f16_of_f32_products", K.f16_product_kernel,
        args={"a_ptr": Buf("float16", (n,), normal(13)), "b_ptr": f32((n,), 14), "out_ptr": out("float16", (n,)),
              "n": Scalar(n)}, grid=(cdiv(n, 256),), constexprs={"BLOCK": 256}, isa=everywhere("v_fma_mixlo_f16"),
        ref=lambda a: {"out_ptr": (a["a_ptr"].astype(np.float32) * a["b_ptr"]).astype(np.float16)})
    add("philox_randint", K.randint_kernel,
        args={"out_ptr": out("int32", (300,)), "seed": Scalar(42), "n": Scalar(300)},
        grid=(3,), constexprs={"BLOCK": 128}, ref=lambda a: {"out_ptr": philox_ref(42, np.arange(300))})
    add("int64_f64", K.int64_kernel,
        args={"x_ptr": Buf("int64", (200,), ints(5, -(2**62), 2**62)), "out_ptr": out("int64", (200,)),
              "f_ptr": out("float64", (200,)), "n": Scalar(200)},
        grid=(2,), constexprs={"BLOCK": 128}, ref=_int64_ref)
    add("fp8e5_roundtrip", K.fp8_roundtrip_kernel,
        args={"x_ptr": Buf("float32", (256,), normal(3, 100.0, head=[0.28125, 0.34375, -0.28128743, 3e-5, 57344.0,
                                                                      6e4, -1e6])),
              "out_ptr": out("float32", (256,))},
        grid=(1,), constexprs={"BLOCK": 256}, ref=lambda a: {"out_ptr": round_to_e5m2(a["x_ptr"])})

    # Reductions, normalisations, scans.
    add("softmax_4x100", K.softmax_kernel, **_softmax(4, 100))
    add("softmax_3x781", K.softmax_kernel, **_softmax(3, 781))
    add("layernorm_f32", K.layernorm_kernel,
        args={"x_ptr": f32((3, 1000), 2), "out_ptr": out("float32", (3, 1000), 1e-5, 1e-5), "n_cols": Scalar(1000),
              "eps": Scalar(1e-5, "float32")},
        grid=(3,), constexprs={"BLOCK": 1024}, num_warps=8, ref=_layernorm_ref)
    add("layernorm_affine_f16", K.layernorm_affine_kernel,
        args={"x_ptr": Buf("float16", (5, 300), normal(20, 2.0)), "w_ptr": f32((300,), 21),
              "b_ptr": f32((300,), 22), "out_ptr": out("float16", (5, 300), 2e-3, 2e-3),
              "mean_ptr": out("float32", (5,), 1e-5, 1e-6), "rstd_ptr": out("float32", (5,), 1e-5, 1e-6),
              "n_cols": Scalar(300), "eps": Scalar(1e-5, "float32")},
        grid=(5,), constexprs={"BLOCK": 512}, ref=_layernorm_affine_ref)
    add("rmsnorm_f32", K.rmsnorm_kernel,
        args={"x_ptr": f32((6, 200), 23), "w_ptr": f32((200,), 24), "out_ptr": out("float32", (6, 200), 1e-5, 1e-5),
              "n_cols": Scalar(200), "eps": Scalar(1e-6, "float32")},
        grid=(6,), constexprs={"BLOCK": 256}, num_warps=2, ref=_rmsnorm_ref)
    add("row_sum_max_argmax", K.row_reduce_kernel,
        args={"x_ptr": f32((7, 333), 25), "sum_ptr": out("float32", (7,), 1e-5, 1e-4),
              "max_ptr": out("float32", (7,)), "argmax_ptr": out("int32", (7,)), "n_cols": Scalar(333)},
        grid=(7,), constexprs={"BLOCK": 512}, ref=_row_reduce_ref)
    add("col_sum_64x32", K.col_sum_kernel,
        args={"x_ptr": f32((64, 32), 26), "out_ptr": out("float32", (32,), 1e-5, 1e-5)},
        grid=(1,), constexprs={"ROWS": 64, "COLS": 32}, num_warps=8,
        ref=lambda a: {"out_ptr": a["x_ptr"].astype(np.float64).sum(axis=0).astype(np.float32)})
    add("argmax_sort", K.argmax_sort_kernel,
        args={"x_ptr": Buf("int32", (5, 256), {"gen": "permutation", "seed": 2, "offset": -600}),
              "idx_ptr": out("int32", (5,)), "sorted_ptr": out("int32", (5, 256))},
        grid=(5,), constexprs={"BLOCK": 256},
        ref=lambda a: {"idx_ptr": a["x_ptr"].argmax(axis=1).astype(np.int32),
                       "sorted_ptr": np.sort(a["x_ptr"], axis=1)})
    add("histogram_16", K.histogram_kernel,
        args={"x_ptr": Buf("int32", (512,), ints(3, 0, 16)), "out_ptr": out("int32", (16,))},
        grid=(1,), constexprs={"BLOCK": 512, "BINS": 16},
        ref=lambda a: {"out_ptr": np.bincount(a["x_ptr"], minlength=16).astype(np.int32)})
    add("cumsum_i32", K.cumsum_kernel,
        args={"x_ptr": Buf("int32", (1000,), ints(1000, -100, 100)), "out_ptr": out("int32", (1000,)),
              "n": Scalar(1000)},
        grid=(4,), constexprs={"BLOCK": 256},
        ref=lambda a: {"out_ptr": np.concatenate([np.cumsum(a["x_ptr"][i:i + 256]) for i in range(0, 1000, 256)])
                       .astype(np.int32)})
    add("cumsum_f32_axis1", K.cumsum_2d_kernel,
        args={"x_ptr": f32((16, 64), 27), "out_ptr": out("float32", (16, 64), 1e-5, 1e-5)},
        grid=(1,), constexprs={"ROWS": 16, "COLS": 64, "AXIS": 1},
        ref=lambda a: {"out_ptr": np.cumsum(a["x_ptr"].astype(np.float64), axis=1).astype(np.float32)})
    add("cumsum_i32_axis0", K.cumsum_2d_kernel,
        args={"x_ptr": Buf("int32", (64, 16), ints(28, -1000, 1000)), "out_ptr": out("int32", (64, 16))},
        grid=(1,), constexprs={"ROWS": 64, "COLS": 16, "AXIS": 0},
        ref=lambda a: {"out_ptr": np.cumsum(a["x_ptr"], axis=0).astype(np.int32)})
    add("scan_running_max", K.scan_max_kernel,
        args={"x_ptr": Buf("int32", (3, 128), ints(29, -10**6, 10**6)), "out_ptr": out("int32", (3, 128))},
        grid=(3,), constexprs={"BLOCK": 128}, num_warps=2,
        ref=lambda a: {"out_ptr": np.maximum.accumulate(a["x_ptr"], axis=1)})
    add("scan_linear_recurrence", K.linear_recurrence_kernel,
        args={"a_ptr": Buf("float32", (256,), {"gen": "uniform", "seed": 30, "low": 0.5, "high": 1.0}),
              "b_ptr": f32((256,), 31), "out_ptr": out("float32", (256,), 1e-5, 1e-5)},
        grid=(1,), constexprs={"BLOCK": 256}, ref=_linear_recurrence_ref)

    # Data movement.
    add("transpose_f32", K.transpose_kernel,
        args={"x_ptr": f32((70, 45), 32), "out_ptr": out("float32", (45, 70)), "M": Scalar(70), "N": Scalar(45)},
        grid=(cdiv(70, 32), cdiv(45, 32)), constexprs={"BM": 32, "BN": 32},
        ref=lambda a: {"out_ptr": np.ascontiguousarray(a["x_ptr"].T)})
    add("transpose_f16", K.transpose_kernel,
        args={"x_ptr": Buf("float16", (64, 128), normal(33)), "out_ptr": out("float16", (128, 64)),
              "M": Scalar(64), "N": Scalar(128)},
        grid=(1, 2), constexprs={"BM": 64, "BN": 64}, num_warps=8,
        ref=lambda a: {"out_ptr": np.ascontiguousarray(a["x_ptr"].T)})
    add("gather_f32", K.gather_kernel,
        args={"x_ptr": f32((500,), 34), "idx_ptr": Buf("int32", (999,), ints(35, 0, 500)),
              "out_ptr": out("float32", (999,)), "n": Scalar(999)},
        grid=(cdiv(999, 256),), constexprs={"BLOCK": 256}, ref=lambda a: {"out_ptr": a["x_ptr"][a["idx_ptr"]]})

    # Atomics.
    add("atomic_sum_f32", K.atomic_sum_kernel,
        args={"x_ptr": f32((3000,), 3000), "out_ptr": out("float32", (1,), 1e-5, 1e-4), "n": Scalar(3000)},
        grid=(cdiv(3000, 512),), constexprs={"BLOCK": 512},
        ref=lambda a: {"out_ptr": np.array([a["x_ptr"].astype(np.float64).sum()], np.float32)})
    add("atomic_sum_i32", K.atomic_sum_kernel,
        args={"x_ptr": Buf("int32", (3000,), ints(3000, -1000, 1000)), "out_ptr": out("int32", (1,)),
              "n": Scalar(3000)},
        grid=(cdiv(3000, 512),), constexprs={"BLOCK": 512},
        ref=lambda a: {"out_ptr": np.array([a["x_ptr"].sum()], np.int32)})
    for dt, name in (("float32", "f32"), ("int32", "i32")):
        add(f"atomic_max_contended_{name}", K.contended_atomics_kernel,
            args={"x_ptr": Buf(dt, (1001,), normal(4, 100.0)),
                  "max_ptr": out(dt, (4,), init={"gen": "full", "value": -(10**9)}),
                  "count_ptr": out("int32", (8,)), "n": Scalar(1001)},
            grid=(cdiv(1001, 256),), constexprs={"BLOCK": 256}, ref=_contended_ref)
    # 384 slots, three whole blocks: tl.atomic_cas takes no mask, so every lane of the grid swaps its slot (300
    # slots let lanes 300-383 swap past the buffer, which memcheck reported)
    add("atomic_cas_i32", K.atomic_cas_kernel,
        args={"slot_ptr": Buf("int32", (384,), ints(36, 0, 2), out=True),
              "expect_ptr": Buf("int32", (384,), ints(37, 0, 2)), "old_ptr": out("int32", (384,)), "n": Scalar(384)},
        grid=(cdiv(384, 128),), constexprs={"BLOCK": 128},
        ref=lambda a: {"slot_ptr": np.where(a["slot_ptr"] == a["expect_ptr"], np.arange(384) + 1000,
                                            a["slot_ptr"]).astype(np.int32),
                       "old_ptr": a["slot_ptr"]})
    add("atomic_min_max_xchg_i32", K.atomic_minmax_xchg_kernel,
        args={"x_ptr": Buf("int32", (1000,), ints(38, -10**5, 10**5)),
              "min_ptr": out("int32", (3,), init={"gen": "full", "value": 1 << 30}),
              "max_ptr": out("int32", (3,), init={"gen": "full", "value": -(1 << 30)}),
              "xchg_ptr": out("int32", (8,), init={"gen": "full", "value": 7}), "n": Scalar(1000)},
        grid=(8,), constexprs={"BLOCK": 128}, ref=_minmax_ref)
    add("scatter_add_i32", K.scatter_add_kernel,
        args={"idx_ptr": Buf("int32", (2000,), ints(39, 0, 50)), "val_ptr": Buf("int32", (2000,), ints(40, -9, 10)),
              "out_ptr": out("int32", (50,)), "n": Scalar(2000)},
        grid=(cdiv(2000, 256),), constexprs={"BLOCK": 256},
        ref=lambda a: {"out_ptr": np.bincount(a["idx_ptr"], a["val_ptr"], minlength=50).astype(np.int32)})

    # Dots (WMMA on gfx1100) in several block sizes and warp counts.
    add("matmul_f16_64_t32_w4", K.matmul_kernel, **_matmul(64, 64, 64, 32, 32, 4))
    add("matmul_f16_70x33x96_t32_w4", K.matmul_kernel, **_matmul(70, 33, 96, 32, 32, 4, seed=2))
    add("matmul_f16_130x70x200_t64_w8", K.matmul_kernel, **_matmul(130, 70, 200, 64, 32, 8, seed=4))
    add("matmul_f16_48x40x64_t16_w1", K.matmul_kernel, **_matmul(48, 40, 64, 16, 16, 1, seed=6))
    add("matmul_f16_out_f16_t128_w8", K.matmul_kernel, **_matmul(130, 140, 96, 128, 32, 8, outs="float16", seed=12))
    add("matmul_f32_40x36x50_t32_w4", K.matmul_kernel, **_matmul(40, 36, 50, 32, 16, 4, ins="float32", seed=8))
    add("matmul_f32_32_t16_w1", K.matmul_kernel, **_matmul(32, 32, 32, 16, 16, 1, ins="float32", seed=10))
    add("matmul_bias_relu_f16", K.matmul_bias_relu_kernel,
        args={"a_ptr": Buf("float16", (50, 64), normal(41)), "b_ptr": Buf("float16", (64, 60), normal(42)),
              "bias_ptr": f32((60,), 43), "c_ptr": out("float32", (50, 60), 1e-4, 1e-4),
              "M": Scalar(50), "N": Scalar(60), "K": Scalar(64)},
        grid=(cdiv(50, 32), cdiv(60, 32)), constexprs={"BM": 32, "BN": 32, "BK": 32},
        ref=lambda a: {"c_ptr": np.maximum(_f32(a["a_ptr"]).astype(np.float64) @ _f32(a["b_ptr"]) + a["bias_ptr"],
                                           0).astype(np.float32)})
    # gfx950 (CDNA4) runs these dots on its MFMAs with twice gfx942's K
    for ins, outs, wmma, mfma, mfma4 in (
            ("float16", "float16", "v_wmma_f32_16x16x16_f16", "v_mfma_f32_32x32x8_f16", "v_mfma_f32_32x32x16_f16"),
            ("bfloat16", "float32", "v_wmma_f32_16x16x16_bf16", "v_mfma_f32_32x32x8_bf16", "v_mfma_f32_32x32x16_bf16"),
            ("int8", "int32", "v_wmma_i32_16x16x16_iu8", "v_mfma_i32_32x32x16_i8", "v_mfma_i32_32x32x32_i8")):
        init = ints(7, -128, 128) if ins == "int8" else normal(7)
        tol = {"float16": (2e-2, 2e-2), "float32": (1e-4, 1e-4)}.get(outs, (0.0, 0.0))
        add(f"dot_{ins}_{outs}", K.dot_tile_kernel,
            args={"a_ptr": Buf(ins, (32, 32), init), "b_ptr": Buf(ins, (32, 32), {**init, "seed": 8}),
                  "c_ptr": out(outs, (32, 32), *tol)},
            grid=(1,), constexprs={"M": 32, "N": 32, "K": 32, "OUT": getattr(tl, {"float16": "float16",
                                   "float32": "float32", "int32": "int32"}[outs])},
            isa={"gfx1100": (wmma,), "gfx1201": (wmma,), "gfx942": (mfma,), "gfx950": (mfma4,)},
            ref=lambda a, outs=outs: {"c_ptr": (a["a_ptr"].astype(np.float64) @ a["b_ptr"]).astype(outs)})
    for fp8 in ("float8e5", "float8e4nv"):
        add(f"dot_{fp8}_f32", K.fp8_dot_kernel,
            args={"a_ptr": Buf(fp8, (32, 32), normal(44, 2.0)), "b_ptr": Buf(fp8, (32, 32), normal(45, 2.0)),
                  "c_ptr": out("float32", (32, 32), 1e-5, 1e-5)},
            # gfx1100 has no fp8 WMMA: Triton 3.9 converts to f16 in software and uses the f16 WMMA; gfx942's fp8 is
            # FNUZ, not these OCP formats: f16 again, and its MFMA; gfx1201 and gfx950 (whose fp8 is OCP's) multiply
            # them natively.
            grid=(1,), constexprs={"M": 32, "N": 32, "K": 32},
            isa={"gfx1100": ("v_wmma_f32_16x16x16_f16",), "gfx942": ("v_mfma_f32_32x32x8_f16",),
                 "gfx1201": ("v_wmma_f32_16x16x16_bf8_bf8" if fp8 == "float8e5" else "v_wmma_f32_16x16x16_fp8_fp8",),
                 "gfx950": ("v_mfma_f32_32x32x16_bf8_bf8" if fp8 == "float8e5" else "v_mfma_f32_32x32x16_fp8_fp8",)},
            ref=lambda a: {"c_ptr": (a["a_ptr"].astype(np.float64) @ a["b_ptr"]).astype(np.float32)})
    # gfx950's microscaled dots (tl.dot_scaled): v_mfma_scale_f32_*_f8f6f4, the E8M0 scales one byte of a VGPR (op_sel)
    for af, bf in (("e4m3", "e2m1"), ("e2m1", "e5m2"), ("e5m2", "e4m3")):
        k = 128
        ka, kb = (k // 2 if af == "e2m1" else k), (k // 2 if bf == "e2m1" else k)
        add(f"dot_scaled_{af}_{bf}", K.dot_scaled_kernel,
            args={"a_ptr": Buf("uint8", (32, ka), MX_CODES[af] | {"seed": 62}),
                  "as_ptr": Buf("uint8", (32, k // 32), ints(63, 126, 129)),
                  "b_ptr": Buf("uint8", (kb, 32), MX_CODES[bf] | {"seed": 64}),
                  "bs_ptr": Buf("uint8", (32, k // 32), ints(65, 126, 129)), "c_ptr": out("float32", (32, 32))},
            grid=(1,), constexprs={"M": 32, "N": 32, "K": k, "AF": af, "BF": bf}, archs=("gfx950",),
            isa={"gfx950": ("v_mfma_scale_f32_32x32x64_f8f6f4", "op_sel:[1,1,0]")},
            ref=lambda a, af=af, bf=bf: {"c_ptr": _dot_scaled_ref(a, af, bf)})
    # e2m1 operands packed along M and N (not K): gfx950 reads them from LDS with ds_read_b64_tr_b4
    for mn, mfma in ((32, "v_mfma_scale_f32_32x32x64_f8f6f4"), (16, "v_mfma_scale_f32_16x16x128_f8f6f4")):
        k = 128
        add(f"dot_scaled_e2m1_mn_{mn}", K.dot_scaled_mn_kernel,
            args={"a_ptr": Buf("uint8", (mn // 2, k), MX_CODES["e2m1"] | {"seed": 66}),
                  "as_ptr": Buf("uint8", (mn, k // 32), ints(67, 126, 129)),
                  "b_ptr": Buf("uint8", (k, mn // 2), MX_CODES["e2m1"] | {"seed": 68}),
                  "bs_ptr": Buf("uint8", (mn, k // 32), ints(69, 126, 129)), "c_ptr": out("float32", (mn, mn))},
            grid=(1,), constexprs={"M": mn, "N": mn, "K": k}, archs=("gfx950",),
            isa={"gfx950": (mfma, "ds_read_b64_tr_b4")}, ref=_dot_scaled_mn_ref)
    add("flash_attention_f16", K.flash_attention_kernel,
        args={"q_ptr": Buf("float16", (100, 64), normal(46)), "k_ptr": Buf("float16", (100, 64), normal(47)),
              "v_ptr": Buf("float16", (100, 64), normal(48)), "o_ptr": out("float16", (100, 64), 2e-2, 2e-3),
              "seq": Scalar(100), "scale": Scalar(0.125, "float32")},
        grid=(2,), constexprs={"D": 64, "BM": 64, "BN": 64}, ref=_flash_ref,
        isa={"gfx1100": ("v_mov_b16_e64",), "gfx1201": ("v_wmma_f32_16x16x16_f16", "v_mov_b16"),
             "gfx942": ("v_mfma_f32_32x32x8_f16",), "gfx950": ("v_mfma_f32_32x32x16_f16", "v_permlane32_swap_b32")})
    add("spill_32x256", K.spill_kernel,
        args={"x_ptr": f32((32, 256), 49), "out_ptr": out("float32", (32, 256), 1e-5, 1e-6)},
        grid=(1,), constexprs={"ROWS": 32, "COLS": 256}, num_warps=1, scratch=("gfx1100", "gfx1201"), ref=_spill_ref)
    # gfx942's (and gfx950's) wave64 holds that tile in 128 VGPRs a lane; twice the rows overflow its 512 (VGPRs and
    # AccVGPRs): LLVM spills to AccVGPRs (v_accvgpr_write/read) and to scratch.
    add("spill_64x256_wave64", K.spill_kernel,
        args={"x_ptr": f32((64, 256), 49), "out_ptr": out("float32", (64, 256), 1e-5, 1e-6)},
        grid=(1,), constexprs={"ROWS": 64, "COLS": 256}, num_warps=1, scratch=("gfx942", "gfx950"),
        archs=("gfx942", "gfx950"),
        isa={"gfx942": ("v_accvgpr_write_b32",)}, ref=_spill_ref)
    # More of what Triton generates: ocml, lane shuffles, unsigned arithmetic, 64-bit atomics, pipelining.
    n = 500
    add("libdevice_tanh_erf_pow", K.libdevice_kernel,
        args={"x_ptr": f32((n,), 50, 2.0), "y_ptr": f32((n,), 51), "out_ptr": out("float32", (n,), 1e-5, 1e-5),
              "n": Scalar(n)},
        grid=(cdiv(n, 128),), constexprs={"BLOCK": 128}, ref=_libdevice_ref)
    add("interleave_flip", K.interleave_flip_kernel,
        args={"a_ptr": Buf("int32", (128,), ints(52, -1000, 1000)), "b_ptr": Buf("int32", (128,), ints(53, 0, 9)),
              "out_ptr": out("int32", (256,)), "flip_ptr": out("int32", (128,))},
        grid=(1,), constexprs={"BLOCK": 128},
        ref=lambda a: {"out_ptr": np.stack([a["a_ptr"], a["b_ptr"]], axis=1).reshape(-1),
                       "flip_ptr": a["a_ptr"][::-1]})
    add("unsigned_umulhi_div", K.unsigned_ops_kernel,
        args={"x_ptr": Buf("uint32", (256,), ints(54, 0, 1 << 32)),
              "y_ptr": Buf("uint32", (256,), ints(55, 0, 1 << 32)),
              "hi_ptr": out("uint32", (256,)), "q_ptr": out("uint32", (256,))},
        grid=(1,), constexprs={"BLOCK": 256}, ref=_unsigned_ref)
    add("atomic_add_i64", K.atomic_add_i64_kernel,
        args={"x_ptr": Buf("int64", (1000,), ints(56, -(1 << 40), 1 << 40)), "out_ptr": out("int64", (4,)),
              "n": Scalar(1000)},
        grid=(cdiv(1000, 256),), constexprs={"BLOCK": 256},
        ref=lambda a: {"out_ptr": np.array([a["x_ptr"][i::4].sum() for i in range(4)], np.int64)})
    add("sort_descending_f32", K.sort_descending_kernel,
        args={"x_ptr": f32((4, 128), 57), "out_ptr": out("float32", (4, 128))},
        grid=(4,), constexprs={"BLOCK": 128}, ref=lambda a: {"out_ptr": -np.sort(-a["x_ptr"], axis=1)})
    add("matmul_bf16_3_stages", K.matmul_bf16_pipelined_kernel,
        args={"a_ptr": Buf("bfloat16", (64, 160), normal(58)), "b_ptr": Buf("bfloat16", (160, 48), normal(59)),
              "c_ptr": out("float32", (64, 48), 1e-4, 1e-4), "M": Scalar(64), "N": Scalar(48), "K": Scalar(160)},
        grid=(2, 2), constexprs={"BM": 32, "BN": 32, "BK": 32, "STAGES": 3},
        isa={"gfx1100": ("v_wmma_f32_16x16x16_bf16",), "gfx1201": ("v_wmma_f32_16x16x16_bf16",),
             "gfx942": ("v_mfma_f32_32x32x8_bf16",), "gfx950": ("v_mfma_f32_32x32x16_bf16",)},
        ref=lambda a: {"c_ptr": (a["a_ptr"].astype(np.float64) @ a["b_ptr"]).astype(np.float32)})
    # Rounding and special values that must match numpy bit for bit.
    n = 1000
    add("ieee_div_sqrt_f32", K.ieee_div_sqrt_kernel,
        args={"x_ptr": f32((n,), 60, 1e3), "y_ptr": f32((n,), 61, 1e-3), "div_ptr": out("float32", (n,)),
              "sqrt_ptr": out("float32", (n,)), "n": Scalar(n)},
        grid=(cdiv(n, 256),), constexprs={"BLOCK": 256},
        ref=lambda a: {"div_ptr": a["x_ptr"] / a["y_ptr"], "sqrt_ptr": np.sqrt(np.abs(a["x_ptr"]))})
    nan_x = normal(62, head=[float("nan"), 1.0, float("nan"), -0.0, 0.0])
    nan_y = normal(63, head=[2.0, float("nan"), float("nan"), 0.0, -0.0])
    add("nan_max_clamp_f32", K.nan_minmax_kernel,
        args={"x_ptr": Buf("float32", (128,), nan_x), "y_ptr": Buf("float32", (128,), nan_y),
              "max_ptr": out("float32", (128,)), "maxnan_ptr": out("float32", (128,)),
              "clamp_ptr": out("float32", (128,))},
        grid=(1,), constexprs={"BLOCK": 128}, ref=_nan_ref,
        isa={"gfx1100": ("v_med3_f32",), "gfx1201": ("v_med3_num_f32",), "gfx942": ("v_med3_f32",)})
    add("small_int_i16_u8", K.small_int_kernel,
        args={"a_ptr": Buf("int16", (256,), ints(64, -(1 << 15), 1 << 15)),
              "b_ptr": Buf("int16", (256,), ints(65, -(1 << 15), 1 << 15)),
              "out16_ptr": out("int16", (256,)), "out8_ptr": out("uint8", (256,))},
        grid=(1,), constexprs={"BLOCK": 256}, ref=_small_int_ref)
    add("reduce_xor_i32", K.reduce_custom_kernel,
        args={"x_ptr": Buf("int32", (16, 64), ints(66, -(1 << 31), 1 << 31)), "out_ptr": out("int32", (16,))},
        grid=(1,), constexprs={"ROWS": 16, "COLS": 64},
        ref=lambda a: {"out_ptr": np.bitwise_xor.reduce(a["x_ptr"], axis=1)})
    add("register_gather_f32", K.register_gather_kernel,
        args={"x_ptr": f32((128,), 67), "idx_ptr": Buf("int32", (128,), ints(68, 0, 128)),
              "out_ptr": out("float32", (128,))},
        grid=(1,), constexprs={"BLOCK": 128}, ref=lambda a: {"out_ptr": a["x_ptr"][a["idx_ptr"]]})
    add("f64_div_sqrt", K.f64_div_sqrt_kernel,
        args={"x_ptr": Buf("float64", (300,), normal(69, 1e5)), "y_ptr": Buf("float64", (300,), normal(70)),
              "out_ptr": out("float64", (300,)), "n": Scalar(300)},
        grid=(cdiv(300, 128),), constexprs={"BLOCK": 128},
        ref=lambda a: {"out_ptr": a["x_ptr"] / a["y_ptr"] + np.sqrt(np.abs(a["x_ptr"]))})
    return c


def _nan_ref(a):
    x, y = a["x_ptr"], a["y_ptr"]
    # Triton lowers tl.clamp to llvm.amdgcn.fmed3, so a NaN gets what V_MED3_F32 gives it: min3 of the operands,
    # in which a quiet NaN yields the other operand (MODE.IEEE): the lower bound. (np.clip would keep the NaN.)
    clamp = np.where(np.isnan(y), np.float32(-0.5), np.clip(y, -0.5, 0.5))
    return {"max_ptr": np.fmax(x, y), "maxnan_ptr": np.maximum(x, y), "clamp_ptr": clamp}


def _small_int_ref(a):
    x, y = a["a_ptr"].astype(np.int64), a["b_ptr"].astype(np.int64)
    ua, ub = x & 0xFF, y & 0xFF
    return {"out16_ptr": (x * y + (x >> 3)).astype(np.int16), "out8_ptr": ((ua + ub) ^ (ub >> 1)).astype(np.uint8)}


# uint8 codes of each tl.dot_scaled format whose products and every partial sum of a 128-long dot with scales 2^-1 ..
# 2^1 are exact in f32 (so any accumulation order gives numpy's exact product): e4m3 2^-1 .. 3.75, e5m2 2^-2 .. 3.5
# (positive), e2m1 every code (two per byte)
MX_CODES = {"e4m3": ints(0, 0x30, 0x48), "e5m2": ints(0, 0x34, 0x44), "e2m1": ints(0, 0, 256)}
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def _mx_values(codes: np.ndarray, fmt: str, axis: int) -> np.ndarray:
    """The values of tl.dot_scaled operand codes: e2m1 unpacked along `axis` (low nibble first), fp8 decoded."""
    if fmt == "e2m1":
        lo, hi = E2M1[codes & 0xF], E2M1[codes >> 4]
        return np.stack([lo, hi], axis=axis + 1).reshape(*[2 * n if i == axis else n for i, n in
                                                          enumerate(codes.shape)])
    return decode(codes, "float8e4nv" if fmt == "e4m3" else "float8e5").astype(np.float64)


def _dot_scaled_ref(a, af: str, bf: str) -> np.ndarray:
    """sum_k A[i][k] 2^(sa[i][k/32] - 127) B[k][j] 2^(sb[j][k/32] - 127), exact, as f32."""
    x = _mx_values(a["a_ptr"], af, 1) * np.repeat(np.exp2(a["as_ptr"].astype(np.float64) - 127), 32, axis=1)
    y = _mx_values(a["b_ptr"], bf, 0) * np.repeat(np.exp2(a["bs_ptr"].astype(np.float64) - 127), 32, axis=1).T
    return (x @ y).astype(np.float32)


def _dot_scaled_mn_ref(a) -> dict:
    """_dot_scaled_ref of e2m1 operands packed along M (A) and N (B)."""
    x = _mx_values(a["a_ptr"], "e2m1", 0) * np.repeat(np.exp2(a["as_ptr"].astype(np.float64) - 127), 32, axis=1)
    y = _mx_values(a["b_ptr"], "e2m1", 1) * np.repeat(np.exp2(a["bs_ptr"].astype(np.float64) - 127), 32, axis=1).T
    return {"c_ptr": (x @ y).astype(np.float32)}


def _libdevice_ref(a):
    x, y = a["x_ptr"].astype(np.float64), a["y_ptr"].astype(np.float64)
    erf = np.vectorize(math.erf)(y)
    return {"out_ptr": (np.tanh(x) + erf + (np.abs(x) + 0.5) ** y).astype(np.float32)}


def _unsigned_ref(a):
    x, y = a["x_ptr"].astype(np.uint64), a["y_ptr"].astype(np.uint64)
    q = (x // 7 + x % 1000 + x // (y | np.uint64(1))) & np.uint64(0xFFFFFFFF)
    return {"hi_ptr": ((x * y) >> np.uint64(32)).astype(np.uint32), "q_ptr": q.astype(np.uint32)}


# ------------------------------------------------------------------------------------------------ writing


def compile_case(case: Case, arch: str = "gfx1100"):
    params = [p for p in case.fn.params if not p.is_constexpr]
    names = [p.name for p in params]
    if names != list(case.args):
        raise SystemExit(f"{case.name}: arguments {list(case.args)} are not the kernel's parameters {names}")
    sig = {n: POINTER[a.dtype] if isinstance(a, Buf) else SCALAR[a.dtype] for n, a in case.args.items()}
    sig.update({n: "constexpr" for n in case.constexprs})
    src = triton.compiler.ASTSource(fn=case.fn, signature=sig, constexprs=dict(case.constexprs))
    return triton.compile(src, target=TARGETS[arch], options={"num_warps": case.num_warps})


def _asm_fact(asm: str, key: str) -> int:
    m = re.search(rf"\.{key}:?\s+(\d+)", asm)  # a directive (.amdhsa_...) or a metadata YAML key
    return int(m.group(1)) if m else 0


def write_case(case: Case, arch: str = "gfx1100") -> dict:
    compiled = compile_case(case, arch)
    meta, asm = compiled.metadata, compiled.asm["amdgcn"]
    for insn in isa_of(case, arch):
        if insn not in asm:
            raise SystemExit(f"{case.name}: {insn} is not in the compiled code (what the case exists to exercise)")
    scratch = _asm_fact(asm, "amdhsa_private_segment_fixed_size")
    if arch in case.scratch and not scratch:
        raise SystemExit(f"{case.name}: meant to spill, but the kernel uses no scratch")
    inputs, args = {}, []
    for name, a in case.args.items():
        if isinstance(a, Scalar):
            args.append({"name": name, "scalar": a.value, "dtype": a.dtype})
            inputs[name] = a.value
            continue
        spec = {"name": name, "buffer": name, "dtype": a.dtype, "shape": list(a.shape),
                "init": a.init or {"gen": "full", "value": 0}}
        bits = make_input(spec)
        spec["sha256"] = digest(bits)
        inputs[name] = decode(bits, a.dtype) if a.dtype in ("bfloat16", "float8e5", "float8e4nv") else bits
        args.append(spec)
    programs = int(np.prod(case.grid))
    for kind in ("global_scratch_size", "profile_scratch_size"):
        args.append({"name": kind, "scratch": getattr(meta, kind) * programs})
    expected = case.ref(inputs)
    outputs = {}
    for name, a in case.args.items():
        if isinstance(a, Buf) and a.out:
            view = a.dtype if a.dtype in ("bfloat16", "float8e5", "float8e4nv") else ""
            ref = np.asarray(expected[name])
            want = np.float32 if view else storage_dtype(a.dtype)
            if ref.shape != tuple(a.shape) or (ref.dtype != want and not (view and ref.dtype.kind == "f")):
                raise SystemExit(f"{case.name}: reference {name} is {ref.dtype}{ref.shape}, "
                                 f"the buffer {a.dtype}{tuple(a.shape)}")
            expected[name] = ref.astype(want)
            outputs[name] = {"view": view, "rtol": a.rtol, "atol": a.atol}
    missing = set(expected) - set(outputs)
    if missing:
        raise SystemExit(f"{case.name}: reference for {sorted(missing)}, which are not outputs")
    spec = {"kernel": meta.name, "hsaco": f"{case.name}.hsaco", "grid": list(case.grid) + [1] * (3 - len(case.grid)),
            "block": [case.num_warps * meta.warp_size, 1, 1], "shared": meta.shared, "num_warps": case.num_warps,
            "constexprs": {k: str(v) for k, v in case.constexprs.items()},
            "metadata": {"private_segment_fixed_size": scratch, "isa": list(isa_of(case, arch)),
                         "spills": arch in case.scratch,
                         "vgpr_spill_count": _asm_fact(asm, "vgpr_spill_count"),
                         "triton_version": triton.__version__},
            "args": args, "outputs": outputs}
    out_dir = data_dir(arch)
    (out_dir / f"{case.name}.hsaco").write_bytes(compiled.asm["hsaco"])
    (out_dir / f"{case.name}.json").write_text(json.dumps(spec, indent=1) + "\n")
    np.savez_compressed(out_dir / f"{case.name}.npz", **{k: expected[k] for k in outputs})
    return spec


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", choices=(*TARGETS, "all"), default="all")
    ap.add_argument("cases", nargs="*", help="only these cases (default: every case, the old files removed first)")
    args = ap.parse_args(argv)
    all_cases = cases()
    names = [c.name for c in all_cases]
    if len(set(names)) != len(names):
        raise SystemExit("two cases share a name")
    for arch in TARGETS if args.arch == "all" else (args.arch,):
        write_arch(arch, all_cases, set(args.cases))
    return 0


def write_arch(arch: str, all_cases: list[Case], wanted: set[str]) -> None:
    out_dir = data_dir(arch)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not wanted:
        for old in out_dir.glob("*"):
            if old.suffix in (".hsaco", ".json", ".npz"):
                old.unlink()
    for case in all_cases:
        if (wanted and case.name not in wanted) or (case.archs and arch not in case.archs):
            continue
        spec = write_case(case, arch)
        print(f"{arch} {case.name}: {spec['kernel']} grid {spec['grid']} block {spec['block'][0]} "
              f"shared {spec['shared']} scratch {spec['metadata']['private_segment_fixed_size']}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
