"""gfx9's loads into LDS (global_load_lds_*, MUBUF's lds bit: simgpu/shader/memory/gfx950.py) and gfx950's transposing
LDS reads (ds_read_b64_tr_b4/b8/b16, ds_read_b96_tr_b6: simgpu/shader/lds/gfx950.py): LLVM 22's (llvmlite) code for
tests/data/kernels/cdna4_lds.ll (PYTHONPATH=$PWD python -m tools.gen_cdna4_kernels), compiled at test time, on the
engine and through the runtime over PM4 and AQL, against numpy references of the definitions; the loads gfx942 (CDNA3)
has too (1, 2 and 4 bytes) also compiled for gfx942 and run on it.

LDS DMA (CDNA3/CDNA4 ISA): a lane's data lands at M0[17:2]*4 + INST.OFFSET + ThreadID * 4 (* 16 for dwordx3/x4),
M0 being the intrinsic's LDS pointer and INST.OFFSET its immediate offset, which also moves the global address; lanes
off in EXEC write nothing. A narrower load fills its whole slot (Triton's AMD backend: 8/16-bit loads "get extended
to 32 bit", 96-bit ones to 128): the value zero- (ubyte, ushort) or sign-extended (sbyte, sshort) to 32 bits,
dwordx3's fourth dword 0 -- this model's reading of "extended" (memory/gfx950.py's doc). The signed forms, which no
intrinsic selects, run as the unsigned kernels' code with the load's word replaced by the signed form's (both words
from LLVM 22's assembler, tools/llvm22.py: skipped without it).

Transposing reads: the reference builds each group of 16 lanes' K x M tile from what its lanes read (lane s holds
block s % (16/E) of E consecutive M at K = s / (16/E)) and gives lane m of the group column m, K = 0 .. E-1 -- the
reading lds/gfx950.py's doc states (confirmed by Triton's compiled dots for b16, b8 and b4; b6 by analogy).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from compiler.llvm import compile_asm, compile_ir
from simgpu.fault import HardwareFault
from simgpu.testbed import Testbed
from tests import DATA
from tests.simgpu.shader import test_corpus_opencl_gfx1201 as stack
from tests.support import tiers
from tools import llvm22
from tools.gen_cdna4_kernels import DMA, LDS_BASE, LDS_WORDS, SKIP, TRANSPOSE, lds

SOURCE = DATA / "kernels" / "cdna4_lds.ll"
ARCH = "gfx950"
WHERE = ["engine", "pm4", "aql"]
U8, U32 = np.uint8, np.uint32


GFX942 = {f"cdna4_lds_{d[0]}" for d in DMA if d[2] <= 4}  # the kernels gfx942 (CDNA3) has the instructions of


@cache
def source(arch: str) -> str:
    """cdna4_lds.ll for gfx950; for gfx942 its kernels of the loads gfx942 has (1, 2 and 4 bytes)."""
    text = SOURCE.read_text()
    if arch == ARCH:
        return text
    kernels = re.findall(r"^define amdgpu_kernel void @(\w+)\(.*?^}\n", text, re.S | re.M)
    for name in set(kernels) - GFX942:
        text = re.sub(rf"^define amdgpu_kernel void @{name}\(.*?^}}\n", "", text, flags=re.S | re.M)
    return text


@cache
def code_object(arch: str = ARCH) -> bytes:
    return compile_ir(source(arch), mcpu=arch)


@cache
def listing(arch: str = ARCH) -> str:
    return compile_asm(source(arch), mcpu=arch)


def body(kernel: str, arch: str = ARCH) -> str:
    """The kernel's instructions in LLVM's listing."""
    return re.search(rf"^{kernel}:\n(.*?)s_endpgm", listing(arch), re.S | re.M).group(1)


def run(where: str, kernel: str, args: list, blob: bytes | None = None, arch: str = ARCH) -> list[np.ndarray]:
    blob = blob or code_object(arch)
    if where == "engine":
        tb = tiers.testbed("interpreter", arch=arch)
        k = tb.load(blob)[kernel]
        bufs = [tb.upload(a) for a in args]
        tb.launch(k, bufs, (1,), (64,))
        return [tb.download(b, a.dtype, a.size) for a, b in zip(args, bufs, strict=True)]
    out, _gpu, _buffers = stack.launch(where, "interpreter", kernel, args, (1,), (64,), arch, blob)
    return out


@cache
def signed_object(kernel: str, unsigned: str, signed: str, arch: str = ARCH) -> bytes:
    """The code object with `kernel`'s `unsigned` load (its one line in the listing) made the `signed` form: the word
    LLVM 22's assembler gives the line, replaced by the one it gives the line with the signed mnemonic."""
    if llvm22.codegen_library() is None:
        pytest.skip("needs Triton 3.9's libtriton_amd_codegen.so (tools/llvm22.py) to encode the signed forms")
    line = re.search(rf"^\s*({unsigned}\b.*)$", body(kernel, arch), re.M).group(1).strip()
    asm = llvm22.assembler(arch)
    old, new = asm.encode(line), asm.encode(line.replace(unsigned, signed, 1))
    blob = code_object(arch)
    assert old and new and blob.count(old) == 1, (line, old, new)
    return blob.replace(old, new)


def test_file_is_what_the_generator_writes():
    assert SOURCE.read_text() == lds(), "regenerate: PYTHONPATH=$PWD python -m tools.gen_cdna4_kernels"


# ---------------------------------------------------------------------------------------------- LDS DMA

MNEMONIC = {("global", 1): "global_load_lds_ubyte", ("global", 2): "global_load_lds_ushort",
            ("global", 4): "global_load_lds_dword", ("global", 12): "global_load_lds_dwordx3",
            ("global", 16): "global_load_lds_dwordx4", ("buffer", 1): "buffer_load_ubyte",
            ("buffer", 2): "buffer_load_ushort", ("buffer", 4): "buffer_load_dword",
            ("buffer", 12): "buffer_load_dwordx3", ("buffer", 16): "buffer_load_dwordx4"}


def mnemonic(form: str, size: int) -> str:
    return MNEMONIC["global" if form == "global" else "buffer", size]


def dma_reference(src: np.ndarray, fill: np.ndarray, size: int, offset: int, signed: bool) -> np.ndarray:
    """The LDS array after the DMA, as dwords: lane l's `size` bytes from src at l * size + offset to LDS_BASE +
    offset + l * slot (slot 4, or 16 for 12 and 16 bytes), extended to the slot (module doc)."""
    image = fill.view(U8).copy()
    slot = 16 if size > 4 else 4
    for lane in range(64):
        if lane % SKIP[0] == SKIP[1]:
            continue
        data = src[lane * size + offset: lane * size + offset + size]
        width = slot if size != 4 else 4
        value = int.from_bytes(data.tobytes(), "little", signed=signed)
        data = np.frombuffer((value % (1 << 8 * width)).to_bytes(width, "little"), U8)
        at = LDS_BASE + offset + lane * slot
        image[at: at + len(data)] = data
    return image.view(U32)


SIGNED = {"ubyte": "sbyte", "ushort": "sshort"}
CASES = [(*d, False, ARCH) for d in DMA] + [(*d, True, ARCH) for d in DMA if d[2] < 4]
CASES += [(*d, signed, "gfx942") for d in DMA if d[2] <= 4 for signed in (False, True)[:1 + (d[2] < 4)]]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("name,form,size,offset,signed,arch", CASES,
                         ids=[f"{c[5]}_{c[0]}" + ("_signed" if c[4] else "") for c in CASES])
def test_lds_dma(name, form, size, offset, signed, arch, where):
    kernel = f"cdna4_lds_{name}"
    inst = mnemonic(form, size)
    assert re.search(rf"\b{inst}\b.*" + ("lds" if inst.startswith("buffer") else ""), body(kernel, arch)), \
        f"LLVM no longer emits {inst} for {kernel} ({arch})"
    blob = None
    if signed:
        kind = inst.rsplit("_", 1)[1]
        blob = signed_object(kernel, inst, inst.replace(kind, SIGNED[kind]), arch)
    rng = np.random.default_rng(size * 100 + offset)
    src = rng.integers(0, 256, 64 * 16 + 64, dtype=U8)
    src[::3] |= 0x80  # negative bytes and shorts for the signed forms
    fill = rng.integers(0, 1 << 32, LDS_WORDS, dtype=U32)
    out = run(where, kernel, [src, fill, np.zeros(LDS_WORDS, U32)], blob, arch)[-1]
    assert np.array_equal(out, dma_reference(src, fill, size, offset, signed))


# ---------------------------------------------------------------------------------------------- transposing reads

BITS = {"tr4.b64": 4, "tr8.b64": 8, "tr16.b64": 16, "tr6.b96": 6}


def elements(lane_bytes: np.ndarray, bits: int) -> np.ndarray:
    """[64, nbytes] -> [64, E]: element e at bits [bits*e, bits*e + bits) of the lane's little-endian bytes."""
    out = []
    for row in lane_bytes:
        word = int.from_bytes(row.tobytes(), "little")
        out.append([(word >> (bits * e)) & ((1 << bits) - 1) for e in range(len(row) * 8 // bits)])
    return np.array(out, np.int64)


def transpose_reference(reads: np.ndarray) -> np.ndarray:
    """[64, E] elements each lane read -> [64, E] elements each lane receives (module doc)."""
    e = reads.shape[1]
    per_k = 16 // e  # blocks of E consecutive M a K row spans
    out = np.zeros_like(reads)
    for g in range(0, 64, 16):
        tile = np.zeros((e, 16), np.int64)  # [K, M]
        for s in range(16):
            block, k = s % per_k, s // per_k
            tile[k, block * e:(block + 1) * e] = reads[g + s]
        out[g:g + 16] = tile.T
    return out


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("intr,dwords", TRANSPOSE, ids=[t[0] for t in TRANSPOSE])
def test_transposing_read(intr, dwords, where):
    kernel = f"cdna4_lds_{intr.replace('.', '_')}"
    bits, nbytes = BITS[intr], 4 * dwords
    inst = f"ds_read_b{8 * nbytes}_tr_b{bits}"
    assert inst in body(kernel), f"LLVM no longer emits {inst} for {kernel}"
    stride = 8 if dwords == 2 else 16  # a <3 x i32> takes 16 bytes in memory
    rng = np.random.default_rng(bits)
    src = rng.integers(0, 256, 64 * stride, dtype=U8)
    perm = rng.permutation(64)
    addr = (perm * stride).astype(U32)  # lane l reads what lane perm[l] wrote
    out = run(where, kernel, [src, addr, np.zeros(64 * stride, U8)])[-1]
    lanes = src.reshape(64, stride)[perm, :nbytes]
    want = transpose_reference(elements(lanes, bits))
    assert np.array_equal(elements(out.reshape(64, stride)[:, :nbytes], bits), want)


# ---------------------------------------------------------------------------------------------- sanitizers

@pytest.mark.parametrize("name", ["global_1", "global_12", "raw_2", "struct_16"])
def test_lds_dma_under_the_sanitizers(name):
    """Every sanitizer on: the DMA's global read and LDS write are seen (sanitize.footprint) and the kernel, which
    fills the LDS array, DMAs into it and reads it all back, draws no finding and the same LDS image."""
    form, size, offset = next((f, s, o) for n, f, s, o in DMA if n == name)
    tb = Testbed(vram_size=1 << 28, arch=ARCH, sanitize="all")
    rng = np.random.default_rng(7)
    src, fill = rng.integers(0, 256, 64 * 16 + 64, dtype=U8), rng.integers(0, 1 << 32, LDS_WORDS, dtype=U32)
    bufs = [tb.upload(a) for a in (src, fill, np.zeros(LDS_WORDS, U32))]
    tb.launch(tb.load(code_object())[f"cdna4_lds_{name}"], bufs, (1,), (64,))
    assert not list(tb.sanitizer.findings)
    assert np.array_equal(tb.download(bufs[2], U32, LDS_WORDS), dma_reference(src, fill, size, offset, False))


@pytest.mark.parametrize("name, inst", [("global_16", "global_load_lds_dwordx4"), ("raw_16", "buffer_load_dwordx4")])
def test_memcheck_sees_a_dma_read_past_its_buffer(name, inst):
    """The DMA's global side is a read memcheck checks: a 256-byte source, which lanes 16 on read past."""
    tb = Testbed(vram_size=1 << 28, arch=ARCH, sanitize="all")
    bufs = [tb.upload(a) for a in (np.zeros(256, U8), np.zeros(LDS_WORDS, U32), np.zeros(LDS_WORDS, U32))]
    with pytest.raises(HardwareFault) as e:
        tb.launch(tb.load(code_object())[f"cdna4_lds_{name}"], bufs, (1,), (64,))
    assert e.value.kind == "memcheck" and "out-of-bounds read" in str(e.value) and inst in str(e.value)
