"""compiler.nn.state: state dicts (names as tinygrad's, load_state_dict's strict/consume/shape rules) and
safetensors files checked against the `safetensors` package (files we write, it reads; files it writes, we read,
every dtype), and against hostile files: truncated, oversized headers, bad JSON, bad dtypes, shapes and offsets
each give a SafetensorsError naming the tensor and byte offset; a hypothesis fuzz of mutated files never raises
anything else."""

import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Tensor, dtypes, nn
from compiler.nn.state import (
    MAX_HEADER,
    SafetensorsError,
    get_parameters,
    get_state_dict,
    load_state_dict,
    safe_load,
    safe_load_metadata,
    safe_save,
)

safetensors = pytest.importorskip("safetensors", minversion="0.8")  # 0.8: TensorSpec writes bfloat16 without torch
safetensors_numpy = pytest.importorskip("safetensors.numpy")

ARRAYS = {
    "f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7, "f64": np.array([1e300, -2.5]),
    "f16": np.array([[0.5, -65504.0]], np.float16), "i8": np.array([-128, 127], np.int8),
    "u8": np.arange(5, dtype=np.uint8), "i16": np.array([-3], np.int16), "u16": np.array([65535], np.uint16),
    "i32": np.array([[-(2**31)]], np.int32), "u32": np.array([2**32 - 1], np.uint32),
    "i64": np.array([-(2**63), 2**62], np.int64), "u64": np.array([2**64 - 1], np.uint64),
    "bool": np.array([True, False, True]), "scalar": np.array(3.25, np.float32), "empty": np.zeros((0, 3), np.float32),
}


class Net:
    def __init__(self):
        self.l1 = nn.Linear(4, 5)
        self.blocks = [nn.LayerNorm(5), {"bn": nn.BatchNorm(5)}]


def test_state_dict_names_follow_attributes_lists_and_dicts():
    net = Net()
    sd = get_state_dict(net)
    assert list(sd) == ["l1.weight", "l1.bias", "blocks.0.weight", "blocks.0.bias", "blocks.1.bn.weight",
                        "blocks.1.bn.bias", "blocks.1.bn.num_batches_tracked", "blocks.1.bn.running_mean",
                        "blocks.1.bn.running_var"]
    assert get_parameters(net) == list(sd.values())
    assert list(get_state_dict(net.l1, prefix="x.")) == ["x.weight", "x.bias"]


def test_load_state_dict_rules():
    net = Net()
    sd = {k: Tensor(np.full(v.shape, 2.0, np.float32)) for k, v in get_state_dict(net).items()}
    loaded = load_state_dict(net, dict(sd), verbose=False)
    assert len(loaded) == 9 and net.l1.weight.numpy().tolist() == [[2.0] * 4] * 5
    w = net.l1.weight
    partial = {"l1.weight": Tensor(np.zeros((5, 4), np.float32))}
    with pytest.raises(KeyError, match="l1.bias"):
        load_state_dict(net, partial, verbose=False)
    assert load_state_dict(net, partial, strict=False, verbose=False, consume=True) == [w] and partial == {}
    assert net.l1.weight is w and w.numpy().max() == 0       # the model's tensor object stays, its values change
    with pytest.raises(ValueError, match="l1.bias"):
        load_state_dict(net, sd | {"l1.bias": Tensor.ones(4)}, verbose=False)
    bn = nn.BatchNorm(2)
    load_state_dict(bn, {k: v for k, v in get_state_dict(bn).items()} | {"num_batches_tracked": Tensor([7])},
                    verbose=False)                           # (1,) loads into () as tinygrad allows
    assert bn.num_batches_tracked.shape == () and bn.num_batches_tracked.item() == 7


BF16 = np.array([1.5, -2.0, 3e38, -0.0], np.float32)


def _bf16_bits() -> np.ndarray:
    return Tensor(BF16).cast(dtypes.bfloat16).bitcast(dtypes.uint16).numpy()


def test_files_we_write_safetensors_reads(tmp_path):
    fn = tmp_path / "ours.safetensors"
    # built flat and reshaped: Tensor() of a 0-d array has shape (1,) (np.ascontiguousarray in its constructor)
    tensors = {k: Tensor(v.reshape(-1)).reshape(v.shape) for k, v in ARRAYS.items()}
    tensors["bf16"] = Tensor(BF16).cast(dtypes.bfloat16)
    safe_save(tensors, fn, metadata={"format": "pt", "who": "simgpu"})
    theirs = safetensors_numpy.load(_without_bf16(fn.read_bytes()))
    for k, v in ARRAYS.items():
        assert theirs[k].dtype == v.dtype and theirs[k].shape == v.shape and np.array_equal(theirs[k], v), k
    raw = dict(safetensors.deserialize(fn.read_bytes()))      # numpy has no bfloat16: compare the bits
    assert raw["bf16"]["dtype"] == "BF16" and np.array_equal(np.frombuffer(raw["bf16"]["data"], "<u2"), _bf16_bits())
    with safetensors.safe_open(fn, "np") as f:
        assert f.metadata() == {"format": "pt", "who": "simgpu"}


def _without_bf16(raw: bytes) -> bytes:
    """The file re-serialized by safetensors without its bfloat16 tensor (safetensors.numpy cannot load one)."""
    kept = {k: v for k, v in safetensors.deserialize(raw) if v["dtype"] != "BF16"}
    return safetensors_numpy.save({k: np.frombuffer(bytes(v["data"]), _NP[v["dtype"]]).reshape(v["shape"])
                                   for k, v in kept.items()})


_NP = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I8": "i1", "U8": "u1", "I16": "<i2", "U16": "<u2", "I32": "<i4",
       "U32": "<u4", "I64": "<i8", "U64": "<u8", "BOOL": "?"}


def test_files_safetensors_writes_we_read(tmp_path):
    fn = tmp_path / "theirs.safetensors"
    safetensors_numpy.save_file(ARRAYS, fn, metadata={"k": "v"})
    ours = safe_load(fn)
    assert set(ours) == set(ARRAYS)
    for k, v in ARRAYS.items():
        assert ours[k].shape == v.shape and ours[k].dtype == dtypes.from_any(v.dtype), k
        assert np.array_equal(ours[k].numpy(), v), k
    _, start, header = safe_load_metadata(fn)
    assert header["__metadata__"] == {"k": "v"} and start % 8 == 0
    assert safe_load(fn.read_bytes())["f32"].numpy().tolist() == ARRAYS["f32"].tolist()
    bits = _bf16_bits()
    spec = safetensors.TensorSpec(dtype="bfloat16", shape=list(bits.shape), data_ptr=bits.ctypes.data,
                                  data_len=bits.nbytes)
    bf = safe_load(bytes(safetensors.serialize({"b": spec}, None)))["b"]
    assert bf.dtype == dtypes.bfloat16 and np.array_equal(bf.bitcast(dtypes.uint16).numpy(), bits)


def test_a_model_round_trips_through_a_file(tmp_path):
    a, b = Net(), Net()
    Tensor.realize_all(*get_parameters(a))
    safe_save(get_state_dict(a), tmp_path / "net.safetensors")
    load_state_dict(b, safe_load(tmp_path / "net.safetensors"), verbose=False)
    for (ka, va), (kb, vb) in zip(get_state_dict(a).items(), get_state_dict(b).items(), strict=True):
        assert ka == kb and np.array_equal(va.numpy(), vb.numpy())


def _file(header: dict | bytes, data: bytes = b"", length: int | None = None) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "b": {"dtype": "I16", "shape": [1, 2], "data_offsets": [8, 12]}}


@pytest.mark.parametrize("raw, match", [
    (b"\x01\x02", "shorter than the 8-byte header length at byte 0"),
    (_file(GOOD, b"\0" * 12, length=MAX_HEADER + 1), "exceeds the limit"),
    (_file(GOOD, b"\0" * 12, length=10_000), "runs past the end of the file"),
    (_file(b"\xff\xfe{}"), "not UTF-8 JSON"),
    (_file(b"[1, 2]"), "not an object"),
    (_file(b"[" * 100_000), "not UTF-8 JSON"),
    (_file({"__metadata__": {"a": 1}}), "__metadata__"),
    (_file({"a": {"dtype": "F7", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8), "tensor 'a': dtype 'F7'"),
    (_file({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\0" * 8), "tensor 'a': shape"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\0" * 8), "tensor 'a': data_offsets"),
    (_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8), "needs 12 bytes"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4), "runs past the end"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "x": 1}}, b"\0" * 8), "header entry"),
    (_file(GOOD | {"c": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}}, b"\0" * 12), "overlaps"),
    (_file(GOOD, b"\0" * 16), "the data ends at byte"),
    (_file({"a": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}}, b"\0" * 4), "leaves a hole"),
    (_file({"a": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\0\x07"), "tensor 'a': bool data"),
])
def test_hostile_files_are_clear_errors(raw, match):
    with pytest.raises(SafetensorsError, match=match):
        safe_load(raw)


def test_offsets_in_messages_are_file_offsets():
    raw = _file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8)
    with pytest.raises(SafetensorsError, match=f"byte {len(raw) - 8}"):
        safe_load(raw)


def test_save_rejects_what_the_format_cannot_hold(tmp_path):
    with pytest.raises(TypeError, match="metadata"):
        safe_save({"a": Tensor.ones(1)}, tmp_path / "x", metadata={"n": 1})
    with pytest.raises(ValueError, match="__metadata__"):
        safe_save({"__metadata__": Tensor.ones(1)}, tmp_path / "x")


def _valid_file() -> bytes:
    return _file(GOOD, np.array([1.0, 2.0], np.float32).tobytes() + np.array([3, 4], np.int16).tobytes())


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(0, 200))
def test_fuzzed_files_load_or_raise_safetensors_error(edits, cut):
    """Byte flips and truncations of a valid file: each loads or raises SafetensorsError, never another exception,
    and the safetensors package agrees (refuses what we refuse, reads the same tensors where we load)."""
    raw = bytearray(_valid_file())
    for pos, val in edits:
        raw[pos % len(raw)] = val
    raw = bytes(raw[:len(raw) - cut % 24])
    try:
        ours = {k: v.numpy() for k, v in safe_load(raw).items()}
    except SafetensorsError:
        with pytest.raises(Exception):  # noqa: B017 - the package's own error types differ by version
            safetensors_numpy.load(raw)
        return
    theirs = safetensors_numpy.load(raw)
    assert set(ours) == set(theirs)
    for k in ours:
        assert np.array_equal(ours[k], theirs[k], equal_nan=True)


def test_safe_dtype_tables_are_tinygrads_without_fp8():
    """safe_dtypes / inverse_safe_dtypes: tinygrad's keys and element sizes, less the fp8 types we cannot hold."""
    tg_state = pytest.importorskip("tinygrad.nn.state")
    from compiler.nn import state
    assert set(state.safe_dtypes) == {k for k in tg_state.safe_dtypes if not k.startswith("F8")}
    for key, dt in state.safe_dtypes.items():
        assert dt.itemsize == tg_state.safe_dtypes[key].itemsize, key
        assert state.inverse_safe_dtypes[dt] == key
