"""A small builder of LLVM IR text: fresh SSA names, typed instructions, vector shapes of a wave.

The translator writes IR as text (llvmlite parses it): building strings is several times faster in
Python than llvmlite.ir's object graph, and compile time is part of the JIT's budget. A `Builder` holds
the lines of one function; values are their IR spelling (`%t12`, `7`, `splat (i32 7)`), so constants
and SSA names mix freely.
"""

from __future__ import annotations

RARE = 0  # metadata id of the branch weights `br_rare` uses (declared by lower.RARE_WEIGHTS)


class Builder:
    """Instructions of one function, appended to the current block."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.lines: list[str] = []
        self._n = 0
        self.decls: set[str] = set()  # intrinsic declarations the function needs

    # ---- types of the wave's values ----------------------------------------------------------------
    @property
    def v32(self) -> str:
        """One 32-bit VGPR of the wave."""
        return f"<{self.lanes} x i32>"

    @property
    def v64(self) -> str:
        return f"<{self.lanes} x i64>"

    @property
    def vmask(self) -> str:
        return f"<{self.lanes} x i1>"

    @property
    def mask_int(self) -> str:
        """The integer holding a lane mask (EXEC, VCC): i32 in wave32, i64 in wave64."""
        return "i32" if self.lanes == 32 else "i64"

    def vec(self, elem: str) -> str:
        return f"<{self.lanes} x {elem}>"

    # ---- emission ------------------------------------------------------------------------------------
    def fresh(self, hint: str = "t") -> str:
        self._n += 1
        return f"%{hint}{self._n}"

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def raw(self, text: str) -> None:
        self.lines.append("  " + text)

    def op(self, text: str, hint: str = "t") -> str:
        """`%new = text`; returns %new."""
        name = self.fresh(hint)
        self.lines.append(f"  {name} = {text}")
        return name

    def br_rare(self, cond: str, rare: str, usual: str) -> None:
        """Branch to `rare` when i1 `cond` (weighted so LLVM keeps spills and code for it off the hot path)."""
        self.lines.append(f"  br i1 {cond}, label %{rare}, label %{usual}, !prof !{RARE}")

    def declare(self, decl: str) -> None:
        self.decls.add(decl)

    def call(self, ret: str, fn: str, args: list[tuple[str, str]], decl: str | None = None) -> str:
        """A call to `fn` (an intrinsic when `decl` is given) with (type, value) arguments."""
        if decl:
            self.declare(decl)
        text = f"call {ret} {fn}({', '.join(f'{t} {v}' for t, v in args)})"
        if ret == "void":
            self.raw(text)
            return ""
        return self.op(text)

    # ---- common shapes -------------------------------------------------------------------------------
    def splat(self, elem: str, value) -> str:
        """A constant vector of `value` in every lane."""
        return f"splat ({elem} {value})"

    def broadcast(self, elem: str, scalar: str) -> str:
        """A vector of a run-time scalar in every lane."""
        vt = self.vec(elem)
        one = self.op(f"insertelement {vt} poison, {elem} {scalar}, i64 0")
        return self.op(f"shufflevector {vt} {one}, {vt} poison, <{self.lanes} x i32> zeroinitializer")

    def lane_mask(self, mask_scalar: str) -> str:
        """The <lanes x i1> vector of a lane-mask integer (bit i = lane i)."""
        return self.op(f"bitcast {self.mask_int} {mask_scalar} to {self.vmask}")

    def mask_bits(self, mask_vec: str) -> str:
        return self.op(f"bitcast {self.vmask} {mask_vec} to {self.mask_int}")

    def mask_any(self, mask_vec: str) -> str:
        """i1: some lane of the mask is set."""
        return self.op(f"icmp ne {self.mask_int} {self.mask_bits(mask_vec)}, 0")

    def text(self) -> str:
        return "\n".join(self.lines)
