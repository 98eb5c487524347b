"""Ops suite, creation and conversion: constructors, arange/eye, counter-based random numbers (same seed, same
bits; Threefry checked against a NumPy implementation), *_like, properties, tolist/item, devices."""

import numpy as np
import pytest

from compiler import Tensor, dtypes
from compiler.random import threefry_reference
from tests.support.ops import assert_close


@pytest.mark.parametrize("data,dtype,expect", [
    ([[1.0, 2.0], [3.0, 4.0]], None, "float32"), ([1, 2, 3], None, "int32"), ([True, False], None, "bool"),
    (np.arange(6, dtype=np.int16).reshape(2, 3), None, "int16"), (np.ones(3, np.float64), None, "float64"),
    ([1.5, 2.5], "float16", "float16"), ([1.0, 3.0], dtypes.bfloat16, "bfloat16"), (np.uint8(7), None, "uint8"),
    (2.5, None, "float32"), (3, "int64", "int64"), ([1, 2], np.float64, "float64"),
])
def test_constructor(backend, data, dtype, expect):
    t = Tensor(data, dtype=dtype)
    assert t.dtype == getattr(dtypes, expect)
    ref = np.asarray(data).astype(t.dtype.np)
    assert_close(t.numpy(), ref, expect)
    assert t.shape == ref.shape and t.ndim == ref.ndim and t.numel() == ref.size


@pytest.mark.parametrize("make,ref", [
    (lambda: Tensor.zeros(2, 3), np.zeros((2, 3), np.float32)),
    (lambda: Tensor.ones((4,), dtype=dtypes.int8), np.ones(4, np.int8)),
    (lambda: Tensor.full((2, 2), 7, dtype=dtypes.uint16), np.full((2, 2), 7, np.uint16)),
    (lambda: Tensor.full((3,), 1.5), np.full(3, 1.5, np.float32)),
    (lambda: Tensor.arange(5), np.arange(5, dtype=np.int32)),
    (lambda: Tensor.arange(2, 11, 3), np.arange(2, 11, 3, dtype=np.int32)),
    (lambda: Tensor.arange(5, 0, -2), np.arange(5, 0, -2, dtype=np.int32)),
    (lambda: Tensor.arange(0, 1, 0.25), np.arange(0, 1, 0.25, dtype=np.float32)),
    (lambda: Tensor.arange(4, dtype=dtypes.float64), np.arange(4, dtype=np.float64)),
    (lambda: Tensor.eye(3), np.eye(3, dtype=np.float32)),
    (lambda: Tensor.eye(2, 4, dtype=dtypes.int32), np.eye(2, 4, dtype=np.int32)),
    (lambda: Tensor([[1, 2]]).zeros_like(), np.zeros((1, 2), np.int32)),
    (lambda: Tensor([1.0, 2.0]).ones_like(), np.ones(2, np.float32)),
    (lambda: Tensor([1.0]).full_like(3, dtype=dtypes.int64), np.full(1, 3, np.int64)),
    (lambda: Tensor.zeros(0, 4), np.zeros((0, 4), np.float32)),
    (lambda: Tensor.arange(0), np.arange(0, dtype=np.int32)),
])
def test_creation(backend, make, ref):
    t = make()
    assert t.dtype.np == ref.dtype
    assert_close(t.numpy(), ref, t.dtype.name)


def test_empty_has_shape_and_dtype(backend):
    t = Tensor.empty(3, 2, dtype=dtypes.int16)
    assert t.shape == (3, 2) and t.dtype == dtypes.int16 and t.numpy().shape == (3, 2)


def test_random_same_seed_same_bits(backend):
    Tensor.manual_seed(42)
    a = Tensor.rand(4, 8).numpy()
    b = Tensor.randn(16).numpy()
    c = Tensor.randint(5, low=-3, high=9).numpy()
    Tensor.manual_seed(42)
    assert Tensor.rand(4, 8).numpy().tobytes() == a.tobytes()
    assert Tensor.randn(16).numpy().tobytes() == b.tobytes()
    assert Tensor.randint(5, low=-3, high=9).numpy().tobytes() == c.tobytes()
    assert Tensor.rand(4, 8).numpy().tobytes() != a.tobytes()  # the counter moved on
    Tensor.manual_seed(43)
    assert Tensor.rand(4, 8).numpy().tobytes() != a.tobytes()


def test_random_bits_are_threefry(backend):
    """rand's bits in NumPy: the device key (low word of SHA-256 of the device's index 0, the seed), a chunk key
    hashed from the counter (0, 0), then counters i and i + 50 as the two words of each of 50 pairs; the top 23
    bits of each word are the mantissa of a float32 in [1, 2), minus 1."""
    import hashlib
    Tensor.manual_seed(7)
    ours = Tensor.rand(100).numpy()
    key = (int.from_bytes(hashlib.sha256(bytes(4)).digest(), "big") & 0xFFFFFFFF, 7)
    k0, k1 = threefry_reference(key, np.zeros(1, np.uint32), np.zeros(1, np.uint32))
    i = np.arange(50, dtype=np.uint32)
    y0, y1 = threefry_reference((int(k0[0]), int(k1[0])), i, i + 50)
    words = np.concatenate([y0, y1])
    want = ((words >> 9) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    np.testing.assert_array_equal(ours, want)


def test_threefry_known_answer():
    """Random123's published known-answer vector for threefry2x32_20 (counter and key of all ones)."""
    x0, x1 = threefry_reference((0xFFFFFFFF, 0xFFFFFFFF), np.array([0xFFFFFFFF], np.uint32),
                                np.array([0xFFFFFFFF], np.uint32))
    assert (int(x0[0]), int(x1[0])) == (0x1CB996FC, 0xBB002BE7)


def test_random_distributions(backend):
    Tensor.manual_seed(1)
    u = Tensor.rand(4096).numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    n = Tensor.randn(4096).numpy()
    assert abs(n.mean()) < 0.06 and abs(n.std() - 1) < 0.05
    r = Tensor.randint(2000, high=10).numpy()
    assert r.dtype == np.int32 and set(np.unique(r)) == set(range(10))
    like = Tensor.ones(3, 3, dtype=dtypes.float16).rand_like()
    assert like.dtype == dtypes.float16 and like.shape == (3, 3)
    assert Tensor.zeros(5).randn_like().shape == (5,)


def test_tolist_item_and_conversions(backend):
    t = Tensor([[1, 2], [3, 4]])
    assert t.tolist() == [[1, 2], [3, 4]]
    assert t[1, 0].item() == 3 and int(t[0, 1]) == 2 and float(Tensor([2.5])) == 2.5
    assert bool(Tensor([1]))
    with pytest.raises(ValueError, match="one element"):
        t.item()
    assert len(t) == 2 and t.size() == (2, 2) and t.size(-1) == 2
    assert "int32" in repr(t)


def test_bfloat16_round_trip(backend):
    x = np.array([1.0, 1.00390625, 3.14159, -2.5e-3, 65504.0], np.float32)
    t = Tensor(x, dtype=dtypes.bfloat16)
    from compiler.dtypes import from_bf16_bits, to_bf16_bits
    np.testing.assert_array_equal(t.numpy(), from_bf16_bits(to_bf16_bits(x)))
    np.testing.assert_array_equal((t * 2).numpy(), from_bf16_bits(to_bf16_bits(from_bf16_bits(to_bf16_bits(x)) * 2)))


@pytest.mark.parametrize("call,error,names", [
    (lambda: Tensor([[1, 2], [3]]), TypeError, "data"), (lambda: Tensor(["a"]), TypeError, "data"),
    (lambda: Tensor.zeros(-1), ValueError, "shape"), (lambda: Tensor.zeros(2.5), TypeError, "shape"),
    (lambda: Tensor([1], dtype="complex64"), TypeError, "dtype"),
    (lambda: Tensor(300, dtype=dtypes.int8), OverflowError, "data 300 does not fit in dtype int8"),
    (lambda: Tensor.arange(0, 4, 0), ValueError, "step"), (lambda: Tensor([1], device="TPU"), ValueError, "device"),
    (lambda: Tensor.randint(3, low=5, high=5), ValueError, "low must be below high"),
    (lambda: Tensor([1.0]).bitcast(dtypes.int16), TypeError, "bitcast: dtype int16"),
])
def test_bad_input_raises_before_running(call, error, names):
    """Before anything runs, naming the argument."""
    with pytest.raises(error, match=names):
        call()


@pytest.fixture
def two_devices():
    """AMD:0 and AMD:1 of one simulated machine (a MockOS of two GPUs), for this test only."""
    import os

    from compiler import device
    if os.environ.get("MOCKGPU", "") in ("", "0"):
        pytest.skip("needs the simulator's two-GPU machine")
    import runtime
    from mockgpu import MockOS
    machine = MockOS(devices=2, vram_size=1 << 28)
    saved = dict(device._OPEN)
    for i in range(2):
        device.attach(f"AMD:{i}", device.DeviceAdapter(f"AMD:{i}", rt=runtime.Device(f"AMD:{i}", os=machine)))
    try:
        yield
    finally:
        device._OPEN.clear()
        device._OPEN.update(saved)


def test_to_another_device(backend, two_devices):
    a = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device="AMD:0")
    b = (a * 2).to("AMD:1")
    assert b.device == "AMD:1" and a.device == "AMD:0"
    assert_close((b + 1).numpy(), np.arange(6).reshape(2, 3) * 2 + 1, "float32")
    assert a.to("amd:0") is a
    with pytest.raises(ValueError, match="different devices"):
        a + b


def test_a_tensor_moves_between_the_cpu_device_and_the_gpu_both_ways(backend):
    """CPU -> AMD and AMD -> CPU go through host memory (the runtime buffers of two kinds cannot copy into each
    other: this raised AttributeError)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    on_gpu = (Tensor(x, device="CPU") + 1).to("AMD")
    assert on_gpu.device.upper().startswith("AMD")
    back = (on_gpu * 2).to("CPU")
    assert back.device.upper().startswith("CPU")
    assert_close((back - 3).numpy(), (x + 1) * 2 - 3, "float32")


def test_zero_dimensional_numpy_array_stays_zero_dimensional(backend):
    """Tensor(np.array(3.25)) is a 0-d tensor like Tensor(3.25) (np.ascontiguousarray made it shape (1,))."""
    t = Tensor(np.array(3.25, np.float32))
    assert t.shape == () and t.item() == 3.25
    assert Tensor(np.array(7)).shape == ()
