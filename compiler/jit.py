"""TinyJit: capture the kernels a function launches once, then replay them with new inputs (tinygrad's contract).

    @TinyJit
    def step(x, y):
        ...                      # forward, backward, opt.step(): anything that realizes, or nothing
        return loss

The first call runs the function as usual. The second runs it again while recording every step the schedules
take (compiler.realize.recording): those kernels, per device one runtime graph (runtime.graph on the GPU, the
CPU device's graph on CPU). Later calls do not run the function: they check the inputs, swap their buffers in
and submit the graphs; no scheduling, lowering, compiling or allocating happens. Returned tensors (a Tensor,
or Tensors in a list, tuple or dict) are realized at the end of every call; a replay returns the same objects,
whose buffers it overwrote, as tinygrad's does.

Inputs are the Tensor arguments (positional, keyword, and one level inside list/tuple/dict arguments); they are
realized first and must keep the shape, dtype, device and view they had at the capture (JitError otherwise,
naming the argument). Everything else the function reads (weights, Python numbers) is what it was at the capture.

State. A step changes tensors through assign() (an optimizer's parameters and state, tinygrad's way). assign here
gives the tensor a new buffer rather than writing the old one, so the JIT keeps two buffers per assigned tensor
and alternates: a replay reads the tensor's current buffer, writes the other one and rebinds the tensor to it.
State kept by rebinding a Python name (`self.m = self.m * b + g`) would make a replay read the capture's values
again (tinygrad's JIT does so silently): a capture whose step read a value from before the call that nothing
outside the JIT refers to afterwards raises JitError instead; update such state with assign(). The capture's
buffers, intermediates included, stay allocated for the JIT's life (reset() releases them).
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Any

from compiler import device as devices
from compiler.lazy import LazyBuffer
from compiler.realize import Step, recording
from compiler.tensor import ASSIGN_OBSERVERS, Tensor
from compiler.views import ShapeTracker


class JitError(Exception):
    """A TinyJit call that cannot replay (inputs differ from the capture) or a function it cannot capture."""


_capturing: list[TinyJit] = []


def _input_tensors(args: tuple, kwargs: dict) -> list[tuple[str, Tensor]]:
    """(name, tensor) of every Tensor argument, and of Tensors one level inside list/tuple/dict arguments."""
    named = [(f"argument {i}", a) for i, a in enumerate(args)] + \
        [(f"argument {k!r}", v) for k, v in sorted(kwargs.items())]
    out = [(n, t) for n, t in named if isinstance(t, Tensor)]
    for n, x in named:
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list | tuple) else ()
        out += [(f"{n}[{k!r}]", t) for k, t in items if isinstance(t, Tensor) and not any(t is y for _, y in out)]
    return out


def _check_returns(ret) -> None:
    """JitError when the return value holds anything but Tensors (in tuples, lists, dicts) or None: a replay does
    not run the function, so any other value would be the capture's."""
    if ret is None or isinstance(ret, Tensor):
        return
    if isinstance(ret, tuple | list | dict):
        for item in ret.values() if isinstance(ret, dict) else ret:
            _check_returns(item)
        return
    raise JitError(f"a TinyJit function returned a {type(ret).__name__}: only Tensors (in tuples, lists, dicts) "
                   "are returned again by a replay")


def _returned_tensors(ret) -> list[Tensor]:
    """The Tensors a call returns: ret itself, or those in a returned list, tuple or dict."""
    if isinstance(ret, Tensor):
        return [ret]
    items = ret.values() if isinstance(ret, dict) else ret if isinstance(ret, list | tuple) else ()
    return [t for t in items if isinstance(t, Tensor)]


@dataclass(frozen=True)
class _Spec:
    """What a replay requires of an input: the capture's shape, dtype, device and view of its buffer."""

    shape: tuple[int, ...]
    dtype: Any
    device: str
    st: ShapeTracker
    nbytes: int

    @staticmethod
    def of(t: Tensor) -> _Spec:
        lb = t.lazydata
        return _Spec(lb.shape, lb.dtype, lb.device, lb.st, lb.base.buffer.nbytes)

    def mismatch(self, other: _Spec) -> str | None:
        """What differs from other (for the error), or None."""
        for what in ("shape", "dtype", "device"):
            mine, theirs = getattr(self, what), getattr(other, what)
            if mine != theirs:
                return f"{what} {getattr(theirs, 'name', theirs)} differs from the captured " \
                    f"{getattr(mine, 'name', mine)}"
        if self.st != other.st or self.nbytes != other.nbytes:
            return "its view of its buffer differs from the captured one (pass a contiguous tensor)"
        return None


class _State:
    """An assigned tensor's two buffers (module docstring), the realized bases of its value before and after the
    capture; a replay reads the tensor's current buffer and writes the other base's."""

    def __init__(self, tensor: Tensor, old: LazyBuffer, new: LazyBuffer, written: set):
        name = f"a tensor of shape {tensor.shape} assigned in the step"
        if not old.realized:
            raise JitError(f"{name} had no value before the call (realize it before the first call)")
        if old.base.buffer in written:
            raise JitError(f"{name} replaced a value computed in the same call (realize it before the call)")
        if new.base.buffer not in written or old.st != new.st or old.base.buffer.nbytes != new.base.buffer.nbytes:
            raise JitError(f"{name} is not given a buffer of its own by the step (assign a computed value)")
        self.tensor, self.st, self.dtype = tensor, new.st, new.dtype
        self.read, self.write = old.base.buffer, new.base.buffer  # the capture's buffers
        self.bases = (old.base, new.base)

    def swap(self) -> tuple[dict, LazyBuffer]:
        """The buffers of this replay ({captured read: current, captured write: the other}) and the tensor's next
        value."""
        cur = self.tensor.lazydata
        if not cur.realized or cur.st != self.st or cur.dtype != self.dtype or \
                cur.base.buffer.nbytes != self.write.nbytes:
            raise JitError(f"a tensor of shape {self.tensor.shape} that the step assigns no longer holds a buffer "
                           "like the captured one (reset() the JIT to capture again)")
        target = self.bases[1] if cur.base is not self.bases[1] else self.bases[0]
        view = target if self.st == target.st else LazyBuffer(target.device, self.st, self.dtype, base=target)
        return {self.read: cur.base.buffer, self.write: target.buffer}, view


class _Copy:
    """A recorded copy between buffers (dst, src), run again with the swapped buffers."""

    def __init__(self, device: devices.DeviceAdapter, dst, src):
        self.device, self.dst, self.src = device, dst, src

    def run(self, swap: dict) -> None:
        dst, src = swap.get(self.dst, self.dst), swap.get(self.src, self.src)
        self.device.transfer(dst, src, dst.nbytes)


class CapturedJit:
    """What a capture recorded: the graphs and copies to run, the inputs' specs, the assigned tensors' states and
    the returned value; it holds the realized nodes of every buffer the steps used."""

    def __init__(self, ret, names: list[str], inputs: list[Tensor], steps: list[Step], assigned: dict):
        self.ret, self.names = ret, names
        self.specs = [_Spec.of(t) for t in inputs]
        self.input_buffers = [t.lazydata.base.buffer for t in inputs]
        captured_inputs = set(self.input_buffers)
        written = {b for s in steps if s.kind != "copyin" for b in s.buffers[:len(s.item.outs)]}
        self.states = [_State(t, old, t.lazydata, written) for t, old in assigned.values()]
        # The nodes behind every buffer a step used keep them allocated (a realized node frees its buffer when it
        # is collected), but not the inputs': a replay always has its own.
        self._hold = [n for s in steps for n in (*s.item.outs, *s.item.inputs)
                      if n.buffer not in captured_inputs] + [b for st in self.states for b in st.bases]
        states = {id(b) for st in self.states for b in st.bases}
        self._read_before = list({id(n): n for s in steps for n in s.item.inputs
                                  if n.buffer not in written and n.buffer not in captured_inputs and
                                  id(n) not in states}.values())
        self.segments: list = []
        self.kernels = 0
        batch: list[tuple] = []
        dev = None
        for s in steps:
            if s.kind == "kernel" and (not batch or s.device is dev):
                batch.append((s.program, s.buffers))
                dev = s.device
                continue
            if batch:
                self.segments.append(dev.graph(batch))
                self.kernels += len(batch)
                batch = []
            if s.kind == "kernel":
                batch, dev = [(s.program, s.buffers)], s.device
            elif s.kind == "copy":
                self.segments.append(_Copy(s.device, s.buffers[0], s.buffers[1]))
        if batch:
            self.segments.append(dev.graph(batch))
            self.kernels += len(batch)
        if not self.kernels:
            raise JitError("the function launched no kernel: nothing to capture")
        weakref.finalize(self, _release, [g for g in self.segments if isinstance(g, devices.Graph)])

    def replaced_state(self) -> int:
        """How many values from before the call the step read and then dropped: nothing outside the JIT refers to
        them after the capture (call it once the capture's steps are gone). That is state kept by rebinding a
        Python name (`self.m = self.m * b + g`): a replay would read the capture's value again."""
        held = Counter(id(n) for n in self._hold)
        # references: the hold list's, _read_before's, the loop variable's and getrefcount's argument
        dropped = sum(1 for n in self._read_before if sys.getrefcount(n) <= held[id(n)] + 3)
        self._read_before = []
        return dropped

    def check(self, names: list[str], inputs: list[Tensor]) -> None:
        """JitError naming the first input that differs from the capture's."""
        if names != self.names:
            raise JitError(f"TinyJit was captured with Tensor inputs {self.names}, called with {names}")
        for name, t, spec in zip(names, inputs, self.specs, strict=True):
            why = spec.mismatch(_Spec.of(t))
            if why is not None:
                raise JitError(f"TinyJit input {name}: {why}; a replay needs the captured shapes and dtypes "
                               "(reset() captures again)")

    def __call__(self, inputs: list[Tensor]):
        swap = dict(zip(self.input_buffers, (t.lazydata.base.buffer for t in inputs), strict=True))
        rebind = []
        for st in self.states:
            pairs, value = st.swap()
            swap.update(pairs)
            rebind.append((st.tensor, value))
        for seg in self.segments:
            seg.run(swap)
        for t, value in rebind:
            t.lazydata = value
        return self.ret


def _release(graphs: list) -> None:
    for g in graphs:
        devices.release_later(g)


class TinyJit:
    """Capture a function's kernels on its second call and replay them on later calls (module docstring)."""

    def __init__(self, fxn):
        self.fxn = fxn
        self.cnt = 0
        self.captured: CapturedJit | None = None
        functools.update_wrapper(self, fxn)

    def reset(self) -> None:
        """Forget the capture (its buffers are released): the next call runs the function, the one after captures."""
        self.cnt, self.captured = 0, None

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        named = _input_tensors(args, kwargs)
        names, inputs = [n for n, _ in named], [t for _, t in named]
        pending = [t for t in inputs if not t.lazydata.realized]
        if pending:
            Tensor.realize_all(*pending)
        bases = [t.lazydata.base for t in inputs]
        if len({id(b) for b in bases}) != len(bases):
            raise JitError("two TinyJit inputs share a buffer (pass each tensor once, or a copy)")
        if self.cnt >= 2:
            self.captured.check(names, inputs)
            ret = self.captured(inputs)
        elif self.cnt == 1:
            ret = self._capture(names, inputs, args, kwargs)
        else:
            ret, _ = self._run(args, kwargs)
        self.cnt += 1
        return ret

    def _run(self, args, kwargs):
        """Call the function, following its assigns; realize what it returns and assigns. (ret, assigned)."""
        assigned: dict[int, tuple[Tensor, LazyBuffer]] = {}

        def observe(t: Tensor, old: LazyBuffer) -> None:
            assigned.setdefault(id(t), (t, old))

        ASSIGN_OBSERVERS.append(observe)
        try:
            ret = self.fxn(*args, **kwargs)
        finally:
            ASSIGN_OBSERVERS.remove(observe)
        todo = _returned_tensors(ret) + [t for t, _ in assigned.values()]
        if todo:
            Tensor.realize_all(*todo)
        return ret, assigned

    def _capture(self, names, inputs, args, kwargs):
        if _capturing:
            raise JitError("a TinyJit inside another TinyJit's capture is not supported")
        _capturing.append(self)
        try:
            with recording() as steps:
                ret, assigned = self._run(args, kwargs)
        finally:
            _capturing.clear()
        _check_returns(ret)
        captured = CapturedJit(ret, names, inputs, steps, assigned)
        steps.clear()
        if captured.replaced_state():
            raise JitError("the step read values from before the call and replaced them without assign() (state in "
                           "a Python name, e.g. `self.m = self.m * b1 + g`): a replay would read the captured values "
                           "again; update state with assign()")
        self.captured = captured
        return ret
