"""`simgpu trace show`: an strace-like listing of a trace, with decoded ioctls and filters."""

from __future__ import annotations

import errno as _errno
import sys

from traces.decode import fields, format_fields, ioctl_name
from traces.format import TraceError, TraceReader
from traces.rings import GPUView
from traces.shadow import PAGE


def _pages(writes: list) -> int:
    return sum(-(-len(data) // PAGE) for _, _, data in writes)


def _err(rec: dict) -> str:
    e = rec.get("errno")
    return f" = -1 {_errno.errorcode.get(e, e)}" if e is not None else ""


def _mem(rec: dict) -> str:
    parts = [f"{k}: {_pages(rec[k])} page(s)" for k, what in (("w", "w"), ("g", "g")) if rec.get(k) and what]
    return f"  [{', '.join(parts)}]" if parts else ""


def format_record(rec: dict, verbose: bool = False) -> str:
    """One line (or a few, verbose) describing a record."""
    t = rec["t"]
    if t == "ioctl":
        req = rec["req"]
        s = f"ioctl({rec['fd']}, {ioctl_name(req)}, {format_fields(fields(req, rec['in']))})"
        s += _err(rec) or f" = {rec.get('ret', 0)} -> {format_fields(fields(req, rec.get('out', b'')))}"
        user = [f"{k}: " + ", ".join(f"{a:#x}+{len(d)}" for a, d in rec[k]) for k in ("u", "uw") if rec.get(k)]
        s += f"  [user memory {'; '.join(user)}]" if user else ""
    elif t == "open":
        s = f"open({rec['path']!r}, {rec['flags']:#o})" + (_err(rec) or f" = {rec.get('fd')}")
    elif t == "close":
        s = f"close({rec['fd']})" + (_err(rec) or " = 0")
    elif t == "mmap":
        s = (f"mmap(fd={rec['fd']}, length={rec['length']:#x}, prot={rec['prot']}, flags={rec['flags']:#x}, "
             f"offset={rec['offset']:#x})" + (_err(rec) or f" = {rec['result']:#x} (mapping {rec['id']})"))
    elif t == "munmap":
        s = f"munmap(mapping {rec['id']})" + (_err(rec) or " = 0")
    elif t == "mmio":
        s = f"mmio_write(mapping {rec['id']}, offset={rec['offset']:#x}, value={rec['value']:#x}, size={rec['size']})"
        s += _err(rec)
    elif t == "mmio_read":
        s = f"mmio_read(mapping {rec['id']}, offset={rec['offset']:#x}, size={rec['size']})" + \
            (_err(rec) or f" = {rec.get('value', 0):#x}")
    elif t == "pread":
        s = f"pread(fd={rec['fd']}, length={rec['length']}, offset={rec['offset']:#x})" + \
            (_err(rec) or f" = {len(rec.get('data', b''))} bytes")
    elif t == "pwrite":
        s = f"pwrite(fd={rec['fd']}, {bytes(rec['data'][:16])!r}, offset={rec['offset']:#x})" + \
            (_err(rec) or f" = {rec.get('ret')}")
    elif t == "read_text":
        text = rec.get("text") or ""
        s = f"read_text({rec['path']!r})" + (_err(rec) or f" = {text[:60]!r}{'...' if len(text) > 60 else ''}")
    elif t == "listdir":
        s = f"listdir({rec['path']!r})" + (_err(rec) or f" = {rec.get('entries')}")
    elif t == "note" and rec.get("what") == "buffer":
        s = f"note(buffer {rec.get('name', '')}: va={rec.get('va', 0):#x} nbytes={rec.get('nbytes')})"
    elif t == "note":
        kernels = ", ".join(f"{name}@{entry:#x}" for name, _, entry in rec.get("kernels", []))
        s = f"note({rec.get('what')}: base={rec.get('base', 0):#x} kernels=[{kernels}])"
    elif t == "progress":
        s = f"progress({'all queues' if rec.get('poll_all') else 'waiting queues'})" + \
            (_err(rec) or f" = {'moved' if rec.get('moved') else 'idle'}")
    elif t == "sanitize":
        found = rec.get("findings") or []
        s = f"sanitize({rec['gpu_id']}, {rec.get('checks')!r})" + (_err(rec) or f" = on {rec.get('on')}, "
                                                                     f"{len(found)} finding(s)")
        for f in found:
            s += f"\n    {f['check']} {f['severity']}: {f['what']} in {f['kernel']} at pc {f['pc']:#x}: {f['message']}"
    elif t == "report":
        first = (rec.get("text") or "").partition("\n")[0]
        s = f"device_report({rec['gpu_id']})" + (_err(rec) or f" = fault {rec.get('fault') or '-'}: {first[:60]!r}")
    else:
        s = f"exists({rec['path']!r})" + (_err(rec) or f" = {rec.get('result')}")
    s += _mem(rec)
    for gpu_id, slot, value in rec.get("doorbells", []):  # a client's store the call found in the page itself
        s += f"  [doorbell store acted on: gpu {gpu_id} slot {slot} = {value:#x}]"
    for n, gpu_id, kind, va, data, runs in rec.get("reads", []):  # the host's stores the GPU read mid-call
        where = "" if kind == "doorbells" else f" at {va:#x} = {data.hex()}"
        s += f"  [GPU read {n}: gpu {gpu_id} {kind}{where}, {sum(len(d) for _, _, d in runs):#x} bytes stored before]"
    if verbose:
        for k in ("w", "g"):
            for mid, first, data in rec.get(k, []):
                s += f"\n    {k} mapping {mid} offset {first * PAGE:#x} +{len(data):#x}"
    return s


def parse_range(text: str | None) -> tuple[int, int]:
    """'A:B' or 'A-B' (either side optional) or 'N' -> [start, stop); ValueError for anything else."""
    if not text:
        return 0, 1 << 62
    sep = ":" if ":" in text else "-" if "-" in text else None
    if sep is None:
        return int(text), int(text) + 1
    a, b = text.split(sep, 1)
    start, stop = int(a or 0), int(b) if b else 1 << 62
    if start < 0 or stop < start:
        raise ValueError(f"empty or negative record range {text!r}")
    return start, stop


def _packet_lines(view: GPUView, queue, packets) -> list[str]:
    out = []
    for p in packets:
        name = view.kernel_name(p.code) if p.kind == "dispatch" else None
        out.append(f"         {queue.fmt} queue {queue.qid}: {p.text}" + (f" kernel={name}" if name else ""))
        lines = view.disassemble_first(p.code) if p.code is not None else None
        for line in lines or ():
            out.append(f"             {line}")
    return out


def show(path, kinds: set[str] | None = None, rng: tuple[int, int] = (0, 1 << 62), verbose: bool = False,
         out=None, packets: bool = True) -> None:
    """Print the header and the selected records (with the packets each doorbell write submitted)."""
    out = out or sys.stdout
    view = GPUView() if packets else None
    with TraceReader(path) as r:
        h = r.header
        print(f"# simgpu trace v{h.get('format')} simgpu {h.get('simgpu')} os {h.get('os')} arch {h.get('arch')} "
              f"devices {h.get('devices')}", file=out)
        for number, _, rec in r:
            if number >= rng[1]:
                break
            # Every record feeds the memory/queue state, even those outside the range or filter.
            queue, pk = view.step(rec) if view is not None else (None, [])
            if number >= rng[0] and (not kinds or rec["t"] in kinds):
                print(f"{number:6d} {format_record(rec, verbose)}", file=out)
                if queue is not None:
                    for line in _packet_lines(view, queue, pk):
                        print(line, file=out)


def show_main(path: str, kinds: set[str] | None, rng: tuple[int, int] | None, verbose: bool = False,
              out=None, packets: bool = True) -> int:
    """CLI entry: 0, or 2 for an unreadable trace (after printing what could be read)."""
    out = out or sys.stdout
    try:
        show(path, kinds, rng or parse_range(None), verbose, out, packets)
    except TraceError as e:
        print(f"simgpu trace show: {path}: {e}", file=sys.stderr)
        return 2
    return 0
