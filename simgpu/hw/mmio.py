"""MMIO registers of the SOC21 blocks, declared once: name, IP block, base segment, dword offset, fields, reset value.

The amdgpu register headers (asic_reg/<ip>/<ip>_<version>_offset.h) give each register as a dword offset plus a
BASE_IDX: the index of one of the base addresses the IP discovery table lists for that IP block. The register's
address in the MMIO aperture (BAR5, dword units) is that base plus the offset: `Reg.address(bases)`. Fields come
from the matching _sh_mask.h, as `simgpu.hw.bits.Layout`s; only the fields something here reads or writes by name
are declared (the hardware keeps every bit written regardless).

A register module declares its registers as module-level `Reg`s (or lists of them, for numbered families such as
the 16 VM contexts) and calls `name_registers(globals())`, which gives each its name from the variable.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Field, Layout

_NO_FIELDS = Layout()


class Reg:
    """One register: `offset` dwords above base segment `segment` of IP block `block`."""

    __slots__ = ("name", "block", "segment", "offset", "fields", "reset")

    def __init__(self, block: str, segment: int, offset: int, fields: Layout | None = None, reset: int = 0,
                 name: str = ""):
        self.block, self.segment, self.offset = block, segment, offset
        self.fields = fields or _NO_FIELDS
        self.reset, self.name = reset & 0xFFFFFFFF, name

    def __repr__(self) -> str:
        return f"Reg({self.name or '?'}: {self.block} seg{self.segment} + {self.offset:#x})"

    def address(self, bases: dict[str, tuple[int, ...]]) -> int:
        """The absolute dword address, given each block's base addresses (from the IP discovery table)."""
        segs = bases[self.block]
        if self.segment >= len(segs):
            raise ValueError(f"{self.name}: {self.block} has {len(segs)} base segments, not {self.segment + 1}")
        return segs[self.segment] + self.offset

    def field(self, name: str) -> Field:
        """One of the declared fields."""
        return self.fields.fields[name]

    def pack(self, **values: int) -> int:
        """A value with the given fields set, the others 0."""
        return self.fields.pack(**values)

    def get(self, value: int, name: str) -> int:
        """Field `name` of a value of this register."""
        return self.fields.fields[name].get(value)


def family(block: str, segment: int, first: int, stride: int, count: int, fields: Layout | None = None,
           reset: int = 0, name: str = "") -> list[Reg]:
    """`count` registers `stride` dwords apart (instance i at first + i * stride); `name` is a format with {i}."""
    return [Reg(block, segment, first + i * stride, fields, reset, name.format(i=i) if name else "")
            for i in range(count)]


def name_registers(namespace: dict) -> dict[str, Reg]:
    """Name every Reg of a register module after its variable (lists: "{PREFIX}{i}{SUFFIX}" from an "{i}" in the
    variable's name written as "_I_" -- or given when the family was built); returns name -> Reg."""
    out: dict[str, Reg] = {}
    for var, value in list(namespace.items()):
        if isinstance(value, Reg):
            value.name = value.name or var
            out[value.name] = value
        elif isinstance(value, list) and value and all(isinstance(r, Reg) for r in value):
            for i, r in enumerate(value):
                r.name = r.name or var.replace("_I_", str(i), 1)
                out[r.name] = r
    return out


class RegisterMap:
    """Every declared register of a part at its absolute address: lookups both ways.

    A block with several instances (MI300X: eight GC XCCs, sixteen SDMA engines, four MMHUBs) is banked: `instances`
    gives each instance's base addresses (instance 0's are `bases`), and every register of that block is also at
    each further instance's address -- the same declaration, its own value in the register file."""

    def __init__(self, registers: dict[str, Reg], bases: dict[str, tuple[int, ...]],
                 instances: dict[str, tuple[tuple[int, ...], ...]] | None = None):
        self.bases = bases
        self.instances = instances or {}
        self.by_name: dict[str, Reg] = {}
        self.by_address: dict[int, Reg] = {}
        self.instance_at: dict[int, int] = {}  # address -> instance, for the instances above 0
        for name, reg in registers.items():
            addr = reg.address(bases)
            other = self.by_address.get(addr)
            if other is not None and other.name != name:  # aliases (two header names, one register): keep the first
                self.by_name[name] = other
                continue
            self.by_name[name], self.by_address[addr] = reg, reg
        for reg in {id(r): r for r in self.by_name.values()}.values():
            for inst in range(1, len(self.instances.get(reg.block, ()))):
                addr = self.address(reg.name, inst)
                if addr in self.by_address:
                    raise ValueError(f"{reg.name} of {reg.block} instance {inst} at dword {addr:#x} is also "
                                     f"{self.by_address[addr].name}")
                self.by_address[addr], self.instance_at[addr] = reg, inst

    def __getitem__(self, name: str) -> int:
        """The absolute dword address of a register by name."""
        return self.by_name[name].address(self.bases)

    def address(self, name: str, inst: int = 0) -> int:
        """The absolute dword address of a register of one instance of its block."""
        reg = self.by_name[name]
        if inst == 0:
            return reg.address(self.bases)
        segs = self.instances.get(reg.block, ())
        if not 0 <= inst < len(segs):
            raise ValueError(f"{name}: {reg.block} has {max(len(segs), 1)} instance(s), not {inst + 1}")
        return segs[inst][reg.segment] + reg.offset

    def at(self, address: int) -> Reg | None:
        """The register at an absolute dword address, or None."""
        return self.by_address.get(address)

    def describe(self, address: int) -> str:
        """The register's name (with its instance above 0), or which block and segment an unknown address lies in."""
        reg = self.by_address.get(address)
        if reg is not None:
            inst = self.instance_at.get(address)
            return reg.name if inst is None else f"{reg.name} ({reg.block} instance {inst})"
        best = None
        spaces = [(block, segs) for block, segs in self.bases.items()]
        spaces += [(f"{block} instance {i}", segs) for block, insts in self.instances.items()
                   for i, segs in enumerate(insts) if i]
        for block, segs in spaces:
            for seg, base in enumerate(segs):
                if base <= address and (best is None or address - base < best[2]):
                    best = (block, seg, address - base)
        return f"dword {address:#x}" + (f" ({best[0]} segment {best[1]} + {best[2]:#x})" if best else "")
