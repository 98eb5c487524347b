"""The x86-64 encoder against two decoders nobody here wrote: every instruction form the backend can emit, with
operands drawn by hypothesis, decodes back identically with capstone (mnemonic, registers, memory operand
fields, immediates, branch targets), and LLVM's assembler (`llvm-mc-19 -show-encoding`) encodes the same text
to the same bytes; programs of branches to labels assemble to llvm-mc's object code byte for byte (the same
rel8/rel32 choices)."""

import random
import re
import subprocess

import capstone
import pytest
from capstone import x86 as csx86
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.backend.x86.encode import FORMS, EncodeError, assemble, encode
from compiler.backend.x86.isa import Imm, Inst, Label, Mem, Reg, Rel, gpr, xmm
from tests.support.llvm import llvm_tool_or_skip

ALL_FORMS = [f for forms in FORMS.values() for f in forms]
_IMPLICIT = {"al": gpr(0, 1), "ax": gpr(0, 2), "eax": gpr(0, 4), "rax": gpr(0, 8), "cl": gpr(1, 1)}
_DISPS = (0, 1, -1, 0x7F, -0x80, 0x80, -0x81, 0x7FFFFFFF, -0x80000000)


def _mem(rng: random.Random, size: int) -> Mem:
    base = gpr(rng.randrange(16)) if rng.random() < 0.85 else None
    index = gpr(rng.choice([n for n in range(16) if n != 4])) if rng.random() < 0.5 else None
    disp = rng.choice(_DISPS) if rng.random() < 0.5 else rng.randint(-(1 << 31), (1 << 31) - 1)
    return Mem(size, base, index, rng.choice((1, 2, 4, 8)) if index is not None else 1, disp)


def _imm(rng: random.Random, bits: int) -> Imm:
    edge = [0, 1, -1, (1 << (bits - 1)) - 1, -(1 << (bits - 1))]
    return Imm(rng.choice(edge) if rng.random() < 0.3 else rng.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1))


def operand(rng: random.Random, tok: str):
    """A random operand matching a signature token (compiler.backend.x86.encode's notation)."""
    if tok in _IMPLICIT:
        return _IMPLICIT[tok]
    if tok == "one":
        return Imm(1)
    if tok == "u8":
        return Imm(rng.randrange(256))
    if tok[0] == "i":
        return _imm(rng, int(tok[1:]))
    if tok in ("rel8", "rel32"):
        return Rel(_imm(rng, 8 if tok == "rel8" else 32).value, 1 if tok == "rel8" else 4)
    if tok == "x":
        return xmm(rng.randrange(16))
    if tok == "m":
        return _mem(rng, 8)
    kind, bits = re.fullmatch(r"(rm|xm|r|m)(\d+)", tok).groups()
    size = int(bits) // 8
    if kind == "m" or (kind in ("rm", "xm") and rng.random() < 0.5):
        return _mem(rng, size)
    return xmm(rng.randrange(16)) if kind == "xm" else gpr(rng.randrange(16), size)


def instance(rng: random.Random, form) -> Inst:
    """A random instruction of one form."""
    return Inst(form.mnemonic, tuple(operand(rng, t) for t in form.sig))


_MD = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
_MD.detail = True


def _mask(v: int, size: int) -> int:
    return v & ((1 << (8 * size)) - 1)


def decoded_like(inst: Inst, code: bytes) -> None:
    """capstone decodes code as exactly one instruction equal to inst (module docstring)."""
    got = list(_MD.disasm(code, 0))
    assert len(got) == 1 and got[0].size == len(code), f"{inst.text()}: {code.hex()} decodes as {got}"
    d = got[0]
    assert d.mnemonic == inst.mnemonic, f"{inst.text()}: {code.hex()} is {d.mnemonic} {d.op_str}"
    ops = [o for o in inst.ops]
    cops = list(d.operands)
    assert len(cops) == len(ops), f"{inst.text()}: {d.mnemonic} {d.op_str}"
    size = next((o.size for o in ops if isinstance(o, (Reg, Mem)) and not (isinstance(o, Reg) and o.kind == "x")), 8)
    for o, c in zip(ops, cops, strict=True):
        if isinstance(o, Reg):
            assert c.type == csx86.X86_OP_REG and d.reg_name(c.reg) == o.name, f"{inst.text()}: {d.op_str}"
        elif isinstance(o, Mem):
            assert c.type == csx86.X86_OP_MEM, f"{inst.text()}: {d.op_str}"
            m = c.mem
            assert (d.reg_name(m.base) if m.base else None) == (o.base.name if o.base else None), d.op_str
            assert (d.reg_name(m.index) if m.index else None) == (o.index.name if o.index else None), d.op_str
            assert m.disp == o.disp and (o.index is None or m.scale == o.scale), f"{inst.text()}: {d.op_str}"
            if inst.mnemonic != "lea":
                assert c.size == o.size, f"{inst.text()}: {d.op_str}"
        elif isinstance(o, Imm):
            assert c.type == csx86.X86_OP_IMM and _mask(c.imm, size) == _mask(o.value, size), \
                f"{inst.text()}: {d.op_str}"
        elif isinstance(o, Rel):
            target = _mask(len(code) + o.disp, 8)
            assert c.type == csx86.X86_OP_IMM and _mask(c.imm, 8) == target, f"{inst.text()}: {d.op_str}"


def test_every_form_decodes_back_with_capstone():
    rng = random.Random(17)
    for form in ALL_FORMS:
        for _ in range(8):
            inst = instance(rng, form)
            decoded_like(inst, encode(inst))


@settings(max_examples=600, derandomize=True, deadline=None)
@given(st.sampled_from(ALL_FORMS), st.randoms(use_true_random=False))
def test_drawn_operands_decode_back_with_capstone(form, rng):
    inst = instance(rng, form)
    decoded_like(inst, encode(inst))


def _llvm_encodings(lines: list[str]) -> list[bytes]:
    mc = llvm_tool_or_skip("llvm-mc")
    src = ".intel_syntax noprefix\n" + "\n".join(lines) + "\n"
    out = subprocess.run([mc, "-triple=x86_64", "-show-encoding", "-output-asm-variant=1"], input=src,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[:2000]
    enc = [bytes(int(b, 16) for b in m.group(1).split(",")) for m in re.finditer(r"encoding: \[([^\]]*)\]",
                                                                                   out.stdout)]
    assert len(enc) == len(lines), out.stdout[-2000:]
    return enc


@pytest.mark.llvm
@settings(max_examples=4, derandomize=True, deadline=None)
@given(st.integers(0, 1 << 32))
def test_every_form_encodes_as_llvm_mc_does(seed):
    """Every form but branches, 8 instances each with operands drawn from a hypothesis seed, in one llvm-mc run per
    example."""
    rng = random.Random(seed)
    insts = [instance(rng, f) for f in ALL_FORMS if f.openc != "D" for _ in range(8)]
    for inst, ref in zip(insts, _llvm_encodings([i.text() for i in insts]), strict=True):
        assert encode(inst) == ref, f"{inst.text()}: ours {encode(inst).hex()} llvm-mc {ref.hex()}"


def _llvm_text(lines: list[str]) -> bytes:
    """The .text llvm-mc-19 assembles from Intel-syntax lines (labels resolved and branches relaxed by LLVM)."""
    import io
    import tempfile

    from elftools.elf.elffile import ELFFile
    mc = llvm_tool_or_skip("llvm-mc")
    with tempfile.NamedTemporaryFile(suffix=".o") as obj:
        out = subprocess.run([mc, "-triple=x86_64", "-filetype=obj", "-o", obj.name],
                             input=".intel_syntax noprefix\n" + "\n".join(lines) + "\n", capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[:2000]
        return ELFFile(io.BytesIO(open(obj.name, "rb").read())).get_section_by_name(".text").data()


_BRANCHES = sorted({f.mnemonic for f in ALL_FORMS if f.openc == "D"})


@pytest.mark.llvm
@settings(max_examples=6, derandomize=True, deadline=None)
@given(st.integers(0, 1 << 32))
def test_branches_to_labels_assemble_as_llvm_mc_does(seed):
    """The branch forms (jcc, jmp, call to labels) in programs with labels before and after them at drawn
    distances around the rel8 limit: our assembler's bytes (shortest displacement that reaches) are llvm-mc's."""
    rng = random.Random(seed)
    body = [Inst("add", (gpr(3, 4), Imm(1)))] * rng.choice((1, 30, 40, 42, 43, 44, 60))  # 3 bytes each
    labels = ["a", "b", "c"]
    items: list = ["a", *body]
    for _ in range(6):
        items.append(Inst(rng.choice(_BRANCHES), (Label(rng.choice(labels)),)))
        items += body[:rng.randrange(len(body) + 1)]
    items += ["b", *body, "c", Inst("ret")]
    text = [f"{it}:" if isinstance(it, str) else it.text() for it in items]
    assert assemble(items).code == _llvm_text(text)


def test_branches_take_the_shortest_displacement_that_reaches():
    body = [Inst("add", (gpr(3, 4), Imm(1)))] * 40
    a = assemble(["top", *body, Inst("jne", (Label("top"),)), Inst("jmp", (Label("end"),)), "end", Inst("ret")])
    assert a.labels == {"top": 0, "end": 3 * 40 + 2 + 2}
    far = assemble(["top", *body * 2, Inst("jne", (Label("top"),)), Inst("ret")])
    assert far.code[240:242] == b"\x0f\x85" and int.from_bytes(far.code[242:246], "little", signed=True) == -246


@pytest.mark.parametrize("inst, why", [
    (Inst("mov", (gpr(0, 4), gpr(1, 8))), "no form"),
    (Inst("mov", (gpr(0), Mem(8, gpr(1), gpr(4)))), "cannot index"),
    (Inst("addss", (xmm(0), Mem(4, gpr(0), gpr(1), 3))), "scale"),
    (Inst("frobnicate", ()), "unknown mnemonic"),
    (Inst("jmp", (Label("nowhere"),)), "unresolved"),
])
def test_bad_instructions_are_encode_errors(inst, why):
    with pytest.raises(EncodeError, match=why):
        encode(inst)
