"""The BAR trap's x86-64 move decoder (mockgpu/csrc/x86mov.c) against capstone's decoding of the same bytes: every
MOV form it accepts (mov r/m <-> r of 1/2/4/8 bytes, mov r/m, imm, movzx, movsx, movsxd, with 66/REX prefixes and
every ModRM/SIB/displacement shape) gives capstone's length, access width, direction, register and immediate; bytes
capstone decodes as anything else, or as a register-only move, are refused."""

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

capstone = pytest.importorskip("capstone")
from capstone import x86 as cx  # noqa: E402

from mockgpu.native import BuildError, build_x86mov  # noqa: E402

REGS64 = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", *(f"r{i}" for i in range(8, 16))]


class Mov(ctypes.Structure):
    _fields_ = [("length", ctypes.c_int), ("width", ctypes.c_int), ("store", ctypes.c_int), ("reg", ctypes.c_int),
                ("high8", ctypes.c_int), ("dest_width", ctypes.c_int), ("extend", ctypes.c_int),
                ("imm", ctypes.c_uint64)]


@pytest.fixture(scope="module")
def lib():
    try:
        so = ctypes.CDLL(str(build_x86mov()))
    except BuildError as e:
        pytest.skip(str(e))
    so.x86_decode_mov.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(Mov))
    so.x86_load_into.argtypes = (ctypes.POINTER(Mov), ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64))
    so.x86_store_value.restype = ctypes.c_uint64
    so.x86_store_value.argtypes = (ctypes.POINTER(Mov), ctypes.POINTER(ctypes.c_uint64))
    return so


@pytest.fixture(scope="module")
def cs():
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    return md


def decode(lib, code: bytes) -> Mov | None:
    m = Mov()
    return m if lib.x86_decode_mov(code, len(code), ctypes.byref(m)) == 0 else None


def reg_name(m: Mov, size: int) -> str:
    """The register capstone would name for our (reg, high8) at `size` bytes."""
    if m.high8:
        return "acdb"[m.reg - 4] + "h"
    base = REGS64[m.reg]
    if size == 8:
        return base
    if m.reg >= 8:
        return base + {4: "d", 2: "w", 1: "b"}[size]
    legacy = {4: "e" + base[1:], 2: base[1:], 1: {"rax": "al", "rcx": "cl", "rdx": "dl", "rbx": "bl", "rsp": "spl",
                                                  "rbp": "bpl", "rsi": "sil", "rdi": "dil"}[base]}
    return legacy[size]


def check_against_capstone(lib, cs, code: bytes) -> bool:
    """Our decoding of `code` agrees with capstone's; True when we accepted it."""
    m = decode(lib, code)
    insns = list(cs.disasm(code, 0x1000, count=1))
    if m is None:
        return False
    assert insns, f"{code.hex()}: accepted, capstone decodes nothing"
    i = insns[0]
    assert i.mnemonic in ("mov", "movzx", "movsx", "movsxd"), f"{code.hex()}: {i.mnemonic} {i.op_str}"
    assert m.length == i.size, f"{code.hex()}: {m.length} bytes, capstone {i.size} ({i.mnemonic} {i.op_str})"
    dst, src = i.operands
    mem, other = (dst, src) if m.store else (src, dst)
    assert mem.type == cx.X86_OP_MEM and mem.size == m.width, f"{code.hex()}: {i.mnemonic} {i.op_str}"
    if m.reg < 0:
        assert other.type == cx.X86_OP_IMM and other.imm & ((1 << 8 * m.width) - 1) == m.imm, i.op_str
    else:
        size = m.width if m.store else m.dest_width
        assert other.type == cx.X86_OP_REG and i.reg_name(other.reg) == reg_name(m, size), i.op_str
        assert other.size == size
    assert m.extend == {"movzx": 1, "movsx": 2, "movsxd": 2}.get(i.mnemonic, 0)
    return True


modrm_mem = st.builds(lambda mod, reg, rm: bytes([mod << 6 | reg << 3 | rm]), st.integers(0, 2), st.integers(0, 7),
                      st.integers(0, 7))


@st.composite
def mov_forms(draw):
    """A MOV form the decoder is meant to accept, with random prefixes, operands and addressing."""
    prefix = draw(st.sampled_from([b"", b"\x66"]))
    rex = draw(st.sampled_from([b""] + [bytes([0x40 | x]) for x in range(16)]))
    op = draw(st.sampled_from([b"\x88", b"\x89", b"\x8a", b"\x8b", b"\xc6", b"\xc7", b"\x0f\xb6", b"\x0f\xb7",
                               b"\x0f\xbe", b"\x0f\xbf", b"\x63"]))
    mod, reg, rm = draw(st.integers(0, 2)), draw(st.integers(0, 7)), draw(st.integers(0, 7))
    if op in (b"\xc6", b"\xc7"):
        reg = 0
    tail = bytes([mod << 6 | reg << 3 | rm])
    if rm == 4:
        tail += bytes([draw(st.integers(0, 255))])
    tail += draw(st.binary(min_size=12, max_size=12))  # displacement, immediate and trailing bytes
    return prefix + rex + op + tail


@settings(max_examples=3000, deadline=None)
@given(mov_forms())
def test_mov_forms_match_capstone(lib, cs, code):
    accepted = check_against_capstone(lib, cs, code)
    op = code.lstrip(b"\x66")
    op = op[1:] if op[0] & 0xF0 == 0x40 else op
    rexw = code[len(code) - len(op) - 1] & 0xF8 == 0x48 if len(code) > len(op) else False
    refused_ok = op[0] == 0x63 and not rexw or op[:2] in (b"\x0f\xb7", b"\x0f\xbf") and b"\x66" in code[:1]
    assert accepted or refused_ok, f"{code.hex()} refused"


@settings(max_examples=5000, deadline=None)
@given(st.binary(min_size=1, max_size=15))
def test_arbitrary_bytes_are_refused_unless_capstone_agrees(lib, cs, code):
    check_against_capstone(lib, cs, code)


@pytest.mark.parametrize("code", [
    "f3a4",          # rep movsb (memcpy)
    "0f1106",        # movups [rsi], xmm0
    "660f7e06",      # movd [rsi], xmm0
    "f00fb10e",      # lock cmpxchg [rsi], ecx
    "648b06",        # mov eax, fs:[rsi]
    "89c8",          # mov eax, ecx: no memory operand
    "a1efbeadde00000000",  # movabs eax, [moffs64]
    "8906"[:2],      # truncated
])
def test_other_instructions_are_refused(lib, code):
    assert decode(lib, bytes.fromhex(code)) is None


def regs(values):
    return (ctypes.c_uint64 * 16)(*values)


@pytest.mark.parametrize("code,loaded,reg,expect", [
    ("8b06", 0x89ABCDEF, 0, 0x89ABCDEF),                       # mov eax: upper half cleared
    ("488b06", 0x0123456789ABCDEF, 0, 0x0123456789ABCDEF),     # mov rax
    ("668b06", 0xBEEF, 0, 0x1111111111_11BEEF),               # mov ax: upper 48 bits kept
    ("8a26", 0x5A, 0, 0x1111111111115A11),                     # mov ah
    ("0fb606", 0xF0, 0, 0xF0),                                 # movzx eax, byte
    ("480fbe06", 0xF0, 0, 0xFFFFFFFFFFFFFFF0),                 # movsx rax, byte
    ("486306", 0x80000000, 0, 0xFFFFFFFF80000000),             # movsxd rax, dword
    ("448b06", 0x12345678, 8, 0x12345678),                     # mov r8d
])
def test_loads_write_the_destination_as_the_cpu_does(lib, code, loaded, reg, expect):
    m = decode(lib, bytes.fromhex(code))
    r = regs([0x1111111111111111] * 16)
    lib.x86_load_into(ctypes.byref(m), loaded, r)
    assert r[reg] == expect
    assert all(r[i] == 0x1111111111111111 for i in range(16) if i != reg)


@pytest.mark.parametrize("code,value", [
    ("8906", 0x76543210), ("48890e", 0xFEDCBA9876543210), ("882e", 0x32),  # mov [rsi], eax | rcx | ch
    ("c70678563412", 0x12345678), ("48c706ffffffff", 0xFFFFFFFFFFFFFFFF), ("66c7063412", 0x1234),
])
def test_stores_take_the_source_as_the_cpu_does(lib, code, value):
    m = decode(lib, bytes.fromhex(code))
    r = regs([0xFEDCBA9876543210, 0xFEDCBA9876543210] + [0] * 14)
    assert lib.x86_store_value(ctypes.byref(m), r) == value
