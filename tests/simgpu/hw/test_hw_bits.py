"""The bit-field declarations of simgpu.hw (and the kernel descriptor's): no two fields of a word overlap,
every Layout packs and unpacks the same values, every Record round-trips its bytes (reserved bytes as
zeros), and a Record's field offsets agree with the C structures they copy."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.hw import aql, gmc, pm4, regs, sdma
from simgpu.hw.bits import Layout, Record
from simgpu.isa import kdescriptor

LAYOUTS = {f"{m.__name__}.{n}": v for m in (aql, gmc, pm4, regs, sdma, kdescriptor) for n, v in vars(m).items()
           if isinstance(v, Layout)}
RECORDS = sorted(Record.__subclasses__(), key=lambda r: r.__name__)  # the AQL packets, amd_signal_t, the descriptor


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_fields_of_a_word_do_not_overlap(name):
    taken = 0
    for field in LAYOUTS[name].fields.values():
        assert not taken & field.bits(-1), f"{name}: field at bit {field.lo} overlaps another"
        taken |= field.bits(-1)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_layout_packs_and_unpacks_the_same_values(name, data):
    layout = LAYOUTS[name]
    values = {n: data.draw(st.integers(0, f.mask)) for n, f in layout.fields.items()}
    word = layout.pack(**values)
    assert layout.unpack(word) == values
    assert all(getattr(layout, n).get(word) == v for n, v in values.items())


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_record_round_trips_its_bytes_with_reserved_bytes_zero(record, data):
    # every Record subclass imported in this process (AQL packets, and the SOC21 records other tests import)
    raw = data.draw(st.binary(min_size=record.SIZE, max_size=record.SIZE))
    again = record.unpack(raw).pack()
    assert record.unpack(again) == record.unpack(raw)
    at = 0
    for name, fmt, *_ in record.LAYOUT:  # a field's bytes come back; a reserved part's are zero
        size = struct.calcsize("<" + fmt)
        assert again[at:at + size] == (raw[at:at + size] if name else bytes(size)), name
        at += size


def test_every_record_is_checked():
    assert {r.__name__ for r in RECORDS} >= {"KernelDispatchPacket", "BarrierPacket", "VendorPM4IBPacket", "Signal",
                                             "KernelDescriptor"}


def test_record_offsets_are_the_c_structures():
    # hsa_kernel_dispatch_packet_t, amd_signal_t and the kernel descriptor, from hsa.h, amd_hsa_signal.h and
    # AMDGPUUsage's table
    assert [aql.KernelDispatchPacket.offset(n) for n in ("setup", "workgroup_size", "grid_size", "private_segment_size",
            "group_segment_size", "kernel_object", "kernarg_address", "completion_signal")] == [2, 4, 12, 24, 28, 32,
                                                                                                40, 56]
    assert [aql.Signal.offset(n) for n in ("value", "event_mailbox_ptr", "event_id", "start_ts", "end_ts",
                                           "queue_ptr")] == [8, 16, 24, 32, 40, 48]
    kd = kdescriptor.KernelDescriptor
    assert [kd.offset(n) for n in ("kernarg_size", "kernel_code_entry_byte_offset", "compute_pgm_rsrc3",
                                   "compute_pgm_rsrc1", "compute_pgm_rsrc2", "kernel_code_properties",
                                   "kernarg_preload")] == [8, 16, 44, 48, 52, 56, 58]
