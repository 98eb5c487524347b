"""State dicts and the safetensors format, tinygrad 0.14's `nn.state` names: get_state_dict, get_parameters,
load_state_dict, safe_save, safe_load, safe_load_metadata.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON ({name: {dtype, shape,
data_offsets: [begin, end]}}, plus an optional "__metadata__" of strings), then the data; offsets count from the
end of the header. A file is input from anywhere: its header size is bounded, and every dtype, shape and offset is
checked (the tensors must tile the data exactly, in order, as the format requires) before any byte is read as a
tensor; a bad file raises SafetensorsError naming the tensor and the byte offset, never anything else.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
from collections import OrderedDict
from typing import Any

import numpy as np

from compiler.dtypes import DType, dtypes
from compiler.tensor import Tensor

# the reference implementation's bound on the header (100 MB); a longer header is rejected before it is read
MAX_HEADER = 100_000_000

SAFE_DTYPES: dict[str, DType] = {
    "BOOL": dtypes.bool, "I8": dtypes.int8, "U8": dtypes.uint8, "I16": dtypes.int16, "U16": dtypes.uint16,
    "I32": dtypes.int32, "U32": dtypes.uint32, "I64": dtypes.int64, "U64": dtypes.uint64, "F16": dtypes.float16,
    "BF16": dtypes.bfloat16, "F32": dtypes.float32, "F64": dtypes.float64}
_SAFE_NAMES = {v.name: k for k, v in SAFE_DTYPES.items()}
# tinygrad's names for the two tables (no fp8 entries: a tensor here cannot hold fp8, docs/compiler.md)
safe_dtypes = SAFE_DTYPES
inverse_safe_dtypes: dict[DType, str] = {v: k for k, v in SAFE_DTYPES.items()}


class SafetensorsError(ValueError):
    """A safetensors file that breaks the format (the message names the tensor and the byte offset)."""


# ---- state dicts -----------------------------------------------------------------------------------------------
def get_state_dict(obj, prefix: str = "", tensor_type=Tensor) -> dict[str, Tensor]:
    """Every tensor reachable from obj's attributes, lists, tuples and dicts, named by its path ('l1.weight')."""
    if isinstance(obj, tensor_type):
        return {prefix.strip("."): obj}
    if hasattr(obj, "_asdict"):                    # a namedtuple
        return get_state_dict(obj._asdict(), prefix, tensor_type)
    if isinstance(obj, OrderedDict):
        return get_state_dict(dict(obj), prefix, tensor_type)
    if hasattr(obj, "__dict__"):
        return get_state_dict(obj.__dict__, prefix, tensor_type)
    out: dict[str, Tensor] = {}
    if isinstance(obj, list | tuple):
        for i, x in enumerate(obj):
            out.update(get_state_dict(x, f"{prefix}{i}.", tensor_type))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(get_state_dict(v, f"{prefix}{k}.", tensor_type))
    return out


def get_parameters(obj) -> list[Tensor]:
    """The tensors of get_state_dict(obj), in its order."""
    return list(get_state_dict(obj).values())


def load_state_dict(model, state_dict: dict[str, Tensor], strict: bool = True, verbose: bool = True,
                    consume: bool = False, realize: bool = True) -> list[Tensor]:
    """Replace the values of model's tensors with state_dict's (same names and shapes; () and (1,) interchange);
    strict=False skips names the dict lacks, consume deletes loaded entries from it. Returns the loaded tensors."""
    ours = get_state_dict(model)
    if strict and (missing := sorted(ours.keys() - state_dict.keys())):
        raise KeyError(f"load_state_dict: the state dict has no {missing}")
    loaded = []
    for k, v in ours.items():
        if k not in state_dict:
            continue
        src = state_dict[k]
        if v.shape != src.shape:
            if {v.shape, src.shape} != {(), (1,)}:
                raise ValueError(f"load_state_dict: {k} has shape {v.shape} in the model, {src.shape} in the "
                                 "state dict")
            src = src.reshape(v.shape)
        v.lazydata = src.to(v.device).lazydata
        loaded.append(v)
        if consume:
            del state_dict[k]
    if realize and loaded:
        Tensor.realize_all(*loaded)
    if verbose:
        print(f"loaded {len(loaded)} tensors ({sum(t.numel() * t.dtype.itemsize for t in loaded)} bytes)")
    return loaded


# ---- safetensors -------------------------------------------------------------------------------------------------
def _read_bytes(fn) -> bytes:
    if isinstance(fn, Tensor):
        if fn.ndim != 1 or fn.dtype != dtypes.uint8:
            raise TypeError(f"a safetensors tensor must be 1-D uint8, not {fn.shape} {fn.dtype.name}")
        return fn.numpy().tobytes()
    if isinstance(fn, bytes | bytearray | memoryview):
        return bytes(fn)
    return pathlib.Path(fn).read_bytes()


def _parse(raw: bytes) -> tuple[int, dict[str, Any]]:
    """(offset of the data, the validated header) of a safetensors file's bytes."""
    if len(raw) < 8:
        raise SafetensorsError(f"file of {len(raw)} bytes: shorter than the 8-byte header length at byte 0")
    n = int.from_bytes(raw[:8], "little")
    if n > MAX_HEADER:
        raise SafetensorsError(f"header length {n} at byte 0 exceeds the limit of {MAX_HEADER} bytes")
    if 8 + n > len(raw):
        raise SafetensorsError(f"header length {n} at byte 0 runs past the end of the file ({len(raw)} bytes)")
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:  # RecursionError: nesting too deep
        raise SafetensorsError(f"header at byte 8 is not UTF-8 JSON: {str(e)[:200]}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"header at byte 8 is a JSON {type(header).__name__}, not an object")
    meta = header.get("__metadata__")
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise SafetensorsError("__metadata__ in the header at byte 8 must map strings to strings")
    data_len = len(raw) - 8 - n
    entries = sorted(((k, _check_entry(k, v, data_len, 8 + n)) for k, v in header.items() if k != "__metadata__"),
                     key=lambda kv: kv[1])
    end = 0
    for name, (begin, stop) in entries:
        if begin != end:
            what = "overlaps the previous tensor" if begin < end else f"leaves a hole after byte {8 + n + end}"
            raise SafetensorsError(f"tensor {_short(name)!r}: data at byte {8 + n + begin} {what}")
        end = stop
    if end != data_len:
        raise SafetensorsError(f"the data ends at byte {8 + n + end} but the file has {len(raw)} bytes")
    return 8 + n, header


def _short(key: str) -> str:
    """A tensor's name for a message: short whatever the file holds."""
    return key if len(key) <= 100 else key[:100] + "..."


def _check_entry(key: str, e, data_len: int, base: int) -> tuple[int, int]:
    """The (begin, end) of one header entry after checking its dtype, shape and offsets."""
    name = _short(key)
    if not isinstance(e, dict) or set(e) - {"dtype", "shape", "data_offsets"} or len(e) != 3:
        raise SafetensorsError(f"tensor {name!r}: header entry must be {{dtype, shape, data_offsets}}, got {e!r:.200}")
    dt, shape, offs = e["dtype"], e["shape"], e["data_offsets"]
    if not isinstance(dt, str) or dt not in SAFE_DTYPES:
        raise SafetensorsError(f"tensor {name!r}: dtype {dt!r:.50} is not one of {sorted(SAFE_DTYPES)}")

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0
    if not isinstance(shape, list) or not all(is_int(s) for s in shape) or len(shape) > 64:
        raise SafetensorsError(f"tensor {name!r}: shape {shape!r:.200} is not a list of non-negative ints")
    if not isinstance(offs, list) or len(offs) != 2 or not all(is_int(o) for o in offs) or offs[0] > offs[1]:
        raise SafetensorsError(f"tensor {name!r}: data_offsets {offs!r:.200} are not [begin, end] with begin <= end")
    begin, end = offs
    if end > data_len:
        raise SafetensorsError(f"tensor {name!r}: data [{base + begin}, {base + end}) runs past the end of the "
                               f"file ({base + data_len} bytes)")
    size = math.prod(shape) * SAFE_DTYPES[dt].itemsize
    if size != end - begin:
        raise SafetensorsError(f"tensor {name!r}: shape {shape} of {dt} needs {size} bytes, data at byte "
                               f"{base + begin} has {end - begin}")
    return begin, end


def _tensor(raw: bytes, start: int, e: dict) -> Tensor:
    dt = SAFE_DTYPES[e["dtype"]]
    a, b = e["data_offsets"]
    storage = dt.storage.newbyteorder("<")
    flat = np.frombuffer(raw, storage, (b - a) // dt.itemsize, start + a).astype(dt.storage)
    if dt == dtypes.bool and flat.size and flat.view(np.uint8).max() > 1:
        raise SafetensorsError(f"bool data at byte {start + a} holds a byte other than 0 or 1")
    # built flat (bfloat16 arrives as its uint16 bits) and reshaped to the header's shape
    t = Tensor(flat).bitcast(dtypes.bfloat16) if dt == dtypes.bfloat16 else Tensor(flat)
    return t.reshape(tuple(e["shape"]))


def safe_load_metadata(t) -> tuple[Tensor, int, dict[str, Any]]:
    """(the file's bytes as a uint8 tensor, offset of the data, the validated header) of a safetensors file t (a
    path, its bytes, or a uint8 tensor; tinygrad's parameter name)."""
    raw = _read_bytes(t)
    start, header = _parse(raw)
    return Tensor(np.frombuffer(raw, np.uint8)), start, header


def safe_load(fn) -> dict[str, Tensor]:
    """The tensors of a safetensors file (a path, its bytes, or a uint8 tensor), by name."""
    raw = _read_bytes(fn)
    start, header = _parse(raw)
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        try:
            out[name] = _tensor(raw, start, e)
        except SafetensorsError as err:
            raise SafetensorsError(f"tensor {_short(name)!r}: {err}") from None
    return out


def safe_save(tensors: dict[str, Tensor], fn, metadata: dict[str, Any] | None = None) -> None:
    """Write tensors (and string metadata) as a safetensors file."""
    header: dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safe_save: metadata must map strings to strings (the format's rule)")
        header["__metadata__"] = metadata
    blobs, offset = [], 0
    for name, t in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"safe_save: tensor name {name!r} is not allowed")
        if t.dtype.name not in _SAFE_NAMES:
            raise TypeError(f"safe_save: tensor {name!r} has dtype {t.dtype.name}, which safetensors cannot hold")
        data = (t.bitcast(dtypes.uint16) if t.dtype == dtypes.bfloat16 else t).numpy()
        blob = np.ascontiguousarray(data, data.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _SAFE_NAMES[t.dtype.name], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)            # the data starts 8-byte aligned
    tmp = f"{os.fspath(fn)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, fn)
