"""The MMIO register file a driver sees through BAR5: every declared register (simgpu.hw.soc21) at its address.

A block that models a register installs a read and/or write handler for it; every other declared register is
storage (reads give its reset value until written, then what was written). A read of an address no header names
raises `MMIOError` naming the block and segment it falls in; a write there is kept (the last value and a count) and
listed by `describe()`, so an unknown driver's traffic is visible rather than lost.
"""

from __future__ import annotations

from collections.abc import Callable

from simgpu.hw.mmio import Reg, RegisterMap

ReadHandler = Callable[[], int]
WriteHandler = Callable[[int], None]


class MMIOError(Exception):
    """A register access the device rejects (an unknown register read, a bring-up mistake): names the register."""


class RegisterFile:
    """Register values, handlers, and the log of what no header names."""

    def __init__(self, regmap: RegisterMap):
        self.map = regmap
        self.values: dict[int, int] = {}
        self.resets: dict[int, int] = {}  # this part's reset values where they differ from the declaration
        self._read: dict[int, ReadHandler] = {}
        self._write: dict[int, WriteHandler] = {}
        self.unknown_writes: dict[int, tuple[int, int]] = {}  # address -> (last value, count)
        self.touched: set[int] = set()  # declared registers a driver accessed (for "what is not modelled")
        self.consulted: set[int] = set()  # registers a block read when it acted (a ring base, a context's range)

    # ---- set-up by the blocks ----------------------------------------------------------------------------------
    def addr(self, reg: Reg | str, inst: int = 0) -> int:
        """The absolute dword address of a register (or its name), of one instance of a banked block."""
        return self.map.address(reg if isinstance(reg, str) else reg.name, inst)

    def has(self, reg: Reg | str) -> bool:
        """Whether this part declares the register (a SOC21 name another part renamed counts)."""
        return (reg if isinstance(reg, str) else reg.name) in self.map.by_name

    def declared(self, reg: Reg | str) -> Reg:
        """This part's declaration of a register (its fields may differ from another part's)."""
        return self.map.by_name[reg if isinstance(reg, str) else reg.name]

    def on_read(self, reg: Reg | str, fn: ReadHandler, inst: int = 0) -> None:
        """Model reads of a register (of one instance of a banked block)."""
        self._read[self.addr(reg, inst)] = fn

    def on_write(self, reg: Reg | str, fn: WriteHandler, inst: int = 0) -> None:
        """Model writes of a register (the value is stored first, so the handler may read it back)."""
        self._write[self.addr(reg, inst)] = fn

    def instances(self, reg: Reg | str) -> range:
        """The instances of the register's block (range(1) for an unbanked one)."""
        block = self.declared(reg).block
        return range(max(1, len(self.map.instances.get(block, ()))))

    def modelled(self, address: int) -> bool:
        """Whether a block gives the register at `address` behaviour."""
        return address in self._read or address in self._write

    # ---- values --------------------------------------------------------------------------------------------------
    def get(self, reg: Reg | str, inst: int = 0) -> int:
        """The stored value of a declared register (no handler runs): what a block reads when it acts."""
        a = self.addr(reg, inst)
        self.consulted.add(a)
        return self.values.get(a, self.map.at(a).reset)

    def set(self, reg: Reg | str, value: int, inst: int = 0) -> None:
        """Store a value (no handler runs): what the hardware itself updates."""
        self.values[self.addr(reg, inst)] = value & 0xFFFFFFFF

    def set_reset(self, reg: Reg | str, value: int, inst: int = 0) -> None:
        """This device's reset value of a register (e.g. one that depends on its VRAM size); applied now."""
        a = self.addr(reg, inst)
        self.resets[a] = self.values[a] = value & 0xFFFFFFFF

    def reset(self) -> None:
        """Every register back to its reset value."""
        self.values = dict(self.resets)

    # ---- the bus ----------------------------------------------------------------------------------------------------
    def read(self, address: int) -> int:
        """A driver's read of the register at a dword address."""
        reg = self.map.at(address)
        if reg is None:
            raise MMIOError(f"read of an unknown register: {self.map.describe(address)} (no amdgpu header this device "
                            "models names it)")
        self.touched.add(address)
        fn = self._read.get(address)
        return fn() & 0xFFFFFFFF if fn is not None else self.values.get(address, reg.reset)

    def peek(self, address: int) -> int:
        """What a read would give, with no side effect and no error (0 for an unknown register)."""
        reg = self.map.at(address)
        if reg is None:
            return self.unknown_writes.get(address, (0, 0))[0]
        fn = self._read.get(address)
        return fn() & 0xFFFFFFFF if fn is not None else self.values.get(address, reg.reset)

    def write(self, address: int, value: int) -> None:
        """A driver's write of the register at a dword address."""
        value &= 0xFFFFFFFF
        reg = self.map.at(address)
        if reg is None:
            _, count = self.unknown_writes.get(address, (0, 0))
            self.unknown_writes[address] = (value, count + 1)
            return
        self.touched.add(address)
        self.values[address] = value
        fn = self._write.get(address)
        if fn is not None:
            fn(value)

    def describe(self) -> list[str]:
        """Lines about writes to registers no header names, and declared registers touched but not modelled."""
        lines = [f"unknown register written: {self.map.describe(a)} = {v:#010x} ({n} write{'s' * (n > 1)})"
                 for a, (v, n) in sorted(self.unknown_writes.items())]
        storage = self.unmodelled_touched()
        if storage:
            lines.append(f"registers kept as plain storage (not modelled): {', '.join(storage)}")
        return lines

    def unmodelled_touched(self) -> list[str]:
        """Names of the declared registers a driver accessed that no block models or reads: plain storage."""
        return sorted({self.map.at(a).name for a in self.touched if not self.modelled(a) and a not in self.consulted})
