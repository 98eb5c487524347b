"""gfx942's thread trace, programmed through gfx9's SQ_THREAD_TRACE_* registers as tinygrad programs them
(simgpu.hw.sqtt_gfx9_pm4), is parsed by a decoder this project did not write, tinygrad's CDNA decoder
(renderer/amd/sqtt.py from PyPI, fed the stream with the 8-byte header tinygrad's ops_amd puts in front of a gfx9
blob), and the traced wave's instruction sequence recovered from its INST tokens and the code object (decoded by
tinygrad's amd_decode for gfx942: JUMP follows the branch, NEXT falls through, the immediate SOPP instructions write
no token) equals the one the simulator executed, on clang-19's gfx942 OpenCL corpus (tests/data/opencl/
corpus_gfx942.so, `python -m tools.gen_opencl_corpus --arch gfx942`). Our reader (simgpu.hw.sqtt_gfx9.decode) agrees
with tinygrad's token for token and time for time."""

import json
import struct

import numpy as np
import pytest

from simgpu.gpu import GPU
from simgpu.hw import sqtt_gfx9 as tt
from simgpu.hw import sqtt_gfx9_pm4 as pp
from simgpu.hw.sqtt_gfx9 import InstType, Tok
from simgpu.isa.codec import decode
from simgpu.profile.classify_gfx9 import inst_type
from tests import DATA
from tests.support.gpu_harness import VM, Recorder, Ring, aql_launch, pm4_launch

CORPUS = DATA / "opencl" / "corpus_gfx942.so"
MFMA = DATA / "opencl" / "mfma_gfx942.so"
BUFFER = 1 << 20
SES = 4  # XCC 0's: the XCC whose CP runs the queue
# name -> (arguments, grid, block)
CASES = {
    "collatz": (lambda rng: [np.zeros(256, np.int32), rng.integers(1, 300, 256).astype(np.uint32)], (2,), (128,)),
    "saxpy": (lambda rng: [np.zeros(512, np.float32), rng.random(512, np.float32), 0x40200000, 500], (2,), (256,)),
    "group_sum": (lambda rng: [np.zeros(2, np.int32), rng.integers(-9, 9, 512).astype(np.int32)], (2,), (256,)),
    "matmul": (lambda rng: [np.zeros((16, 16), np.float32), rng.random((16, 16), np.float32),
                        rng.random((16, 16), np.float32), 16], (1, 2), (16, 8)),
}


def tinygrad_sqtt():
    try:
        from tinygrad.renderer.amd import sqtt as tg
        from tinygrad.viz.serve import amd_decode
    except ImportError as e:
        pytest.skip(f"tinygrad is not installed ({e}); pip install -e '.[test]'")
    return tg, amd_decode


def tinygrad_blob(data: bytes, se: int) -> bytes:
    """What tinygrad's ops_amd hands its decoder for a gfx9 SE: its 8-byte header, then the buffer's bytes."""
    return struct.pack("<Q", 0x11 | (4 << 13) | (0xF << 16) | (se << 24)) + data


def corpus_bench(name: str, make, code: bytes | None = None, arch: str = "gfx942"):
    """A gfx9 GPU with a PM4 and an AQL ring, a corpus kernel loaded and its arguments uploaded (`make`'s, from a
    fixed seed): (gpu, vm, pm4 ring, aql ring, kernel, argument values). For the trace and counter tests."""
    gpu = GPU(vram_size=1 << 28, arch=arch)
    vm = VM(gpu)
    pm4, aql = Ring(vm, "pm4", size=1 << 16), Ring(vm, "aql", size=1 << 16)
    k = vm.load(code or CORPUS.read_bytes())[name]
    vas = [vm.upload(a) if isinstance(a, np.ndarray) else a for a in make(np.random.default_rng(3))]
    return gpu, vm, pm4, aql, k, vas


def launch_on(queue: str, pm4: Ring, aql: Ring, vm: VM, k, vas, grid, block) -> None:
    """One launch of k on the PM4 ring or as an AQL packet."""
    if queue == "pm4":
        pm4.submit(pm4_launch(vm, k, vas, grid, block))
    else:
        aql.submit(aql_launch(vm, k, vas, grid, block))


def traced_run(name: str, queue: str = "pm4", code: bytes | None = None, case=None, arch: str = "gfx942"):
    """Run a kernel under the thread trace: (each SE's trace bytes, code object, load base, the kernel's entry,
    wave 0's executed PCs)."""
    co = code or CORPUS.read_bytes()
    make, grid, block = case or CASES[name]
    gpu, vm, pm4, aql, k, vas = corpus_bench(name, make, co, arch)
    bufs = [vm.alloc(BUFFER) for _ in range(SES)]
    wptrs = vm.alloc(64)
    pm4.submit(pp.sqtt_start([(b, BUFFER) for b in bufs]), pp.sqtt_userdata(0x1234, 0x5678))
    launch_on(queue, pm4, aql, vm, k, vas, grid, block)
    pm4.submit(pp.sqtt_stop(SES, wptrs))
    assert pm4.q.error is None and aql.q.error is None
    data = [vm.read(b, pp.trace_bytes(w)) for b, w in zip(bufs, vm.u32(wptrs, SES), strict=True)]
    rec = Recorder()
    gpu.engine.observer = rec
    pm4.submit(pm4_launch(vm, k, vas, grid, block))
    gpu.engine.observer = None
    return data, co, k.base, k.code_address - k.base, rec.pcs


# The instruction an INST token's class stands for, judged from tinygrad's own decoding of the code object (_32 / _64:
# the encoding's size, as the gfx950 golden below shows).
def _fits(op: str, inst) -> bool:
    fmt, name, word = type(inst).__name__, getattr(inst, "op_name", ""), inst.size() == 4
    return {
        "SMEM_RD": fmt.startswith("SMEM") and "STORE" not in name,
        "SALU_32": fmt.startswith("SOP") and word, "SALU_64": fmt.startswith("SOP") and not word,
        "VALU_32": fmt.startswith("VOP") and word, "VALU_64": fmt.startswith("VOP") and not word and "MFMA" not in name,
        "VALU_MAI": "MFMA" in name,
        "LDS": fmt.startswith("DS"), "FLAT_RD": "LOAD" in name and fmt.startswith(("FLAT", "GLOBAL", "SCRATCH")),
        "FLAT_WR": "LOAD" not in name and fmt.startswith(("FLAT", "GLOBAL", "SCRATCH")),
        "JUMP": "BRANCH" in name, "NEXT": "CBRANCH" in name, "OTHER_MSG": name.startswith(("S_ENDPGM", "S_SENDMSG")),
    }.get(op, False)


def _untraced(inst) -> bool:
    name = getattr(inst, "op_name", "")
    return type(inst).__name__.startswith("SOPP") and not name.startswith(("S_BRANCH", "S_CBRANCH", "S_ENDPGM",
                                                                           "S_SENDMSG"))


def recover(tg, amd_decode, blob: bytes, co: bytes, entry: int) -> list[int]:
    """The PCs wave 0 on CU 0 / SIMD 0 ran, from its INST tokens and the code object (what map_insts does for
    gfx11, for CDNA's tokens)."""
    pc_map = amd_decode(co, "gfx942")
    pcs, pc, started = [], entry, False
    for p in tg.decode(blob):
        if isinstance(p, tg.CDNA_WAVESTART) and (p.cu, p.simd, p.wave) == (0, 0, 0):
            started = True
        if not (started and isinstance(p, tg.CDNA_INST) and (p.simd, p.wave) == (0, 0)):
            continue
        while _untraced(inst := pc_map[pc]):
            pcs.append(pc)
            pc += inst.size()
        assert _fits(p.op.name, inst), f"{p.op.name} token for {inst} at {pc:#x}"
        pcs.append(pc)
        if p.op.name == "OTHER_MSG" and getattr(inst, "op_name", "") == "S_ENDPGM":
            break
        if p.op.name == "JUMP":
            x = inst.simm16 & 0xFFFF
            pc += inst.size() + (x - 0x10000 if x & 0x8000 else x) * 4
        else:
            pc += inst.size()
    return pcs


@pytest.mark.parametrize("name", list(CASES))
def test_tinygrad_decodes_the_executed_instruction_sequence(name):
    tg, amd_decode = tinygrad_sqtt()
    data, co, base, entry, executed = traced_run(name)
    got = recover(tg, amd_decode, tinygrad_blob(data[0], 0), co, entry)
    assert len(got) > 10
    assert got == [pc - base for pc in executed]


def test_an_aql_dispatch_is_traced_the_same_way():
    tg, amd_decode = tinygrad_sqtt()
    data, co, base, entry, executed = traced_run("collatz", queue="aql")
    assert recover(tg, amd_decode, tinygrad_blob(data[0], 0), co, entry) == [pc - base for pc in executed]


def test_a_gfx950_traces_the_same_way():
    """gfx950 (CDNA4) has gfx942's thread trace: the same registers and token stream (the gfx942 corpus runs there)."""
    tg, amd_decode = tinygrad_sqtt()
    data, co, base, entry, executed = traced_run("collatz", arch="gfx950")
    assert recover(tg, amd_decode, tinygrad_blob(data[0], 0), co, entry) == [pc - base for pc in executed]


def test_mfma_issues_are_valu_mai():
    """An MFMA kernel of clang-19's gfx942 corpus (tests/data/opencl/mfma_gfx942.so): v_mfma_* is VALU_MAI."""
    tg, amd_decode = tinygrad_sqtt()
    case = (lambda rng: [np.zeros(1024, np.float32) for _ in range(4)], (1,), (64,))
    data, co, base, entry, executed = traced_run("f32_16x16x4_f32", code=MFMA.read_bytes(), case=case)
    ops = [p.op.name for p in tg.decode(tinygrad_blob(data[0], 0)) if isinstance(p, tg.CDNA_INST)]
    assert "VALU_MAI" in ops
    assert recover(tg, amd_decode, tinygrad_blob(data[0], 0), co, entry) == [pc - base for pc in executed]


def test_our_reader_agrees_with_tinygrads_token_for_token():
    tg, _ = tinygrad_sqtt()
    data, *_ = traced_run("collatz")
    for se, stream in enumerate(data):
        ours = [(p.tok.name, p.time) for p in tt.decode(stream)]
        theirs = [(type(p).__name__.removeprefix("CDNA_"), p._time) for p in tg.decode(tinygrad_blob(stream, se))
                  if type(p).__name__ != "LAYOUT_HEADER" and p._raw & 0xFFFF]  # (the zero padding words)
        names = {"WAVESTART": "WAVE_START", "WAVEEND": "WAVE_END"}
        assert ours == [(names.get(n, n), t) for n, t in theirs]
    first = {p.tok for p in tt.decode(data[0])}
    assert {Tok.TIMESTAMP, Tok.REG, Tok.REG_CS, Tok.WAVE_START, Tok.WAVE_END, Tok.INST, Tok.ISSUE} <= first


def test_each_inst_token_follows_an_issue_token_of_its_slot():
    """As in the gfx950 traces tinygrad publishes: one ISSUE per INST on the traced CU, the issuing slot's state 2."""
    data, *_ = traced_run("group_sum")
    packets = tt.decode(data[0])
    pairs = [(a, b) for a, b in zip(packets, packets[1:], strict=False) if b.tok == Tok.INST]
    assert pairs and all(a.tok == Tok.ISSUE and a.fields["simd"] == b.fields["simd"] and a.time == b.time
                         and a.fields[f"inst{b.fields['wave']}"] == 2 for a, b in pairs)
    assert sum(p.tok == Tok.ISSUE for p in packets) == len(pairs)


def test_waves_carry_their_cu_simd_and_slot():
    data, *_ = traced_run("group_sum")  # 2 workgroups of 4 waves: workgroup g on SE g, CU 0, SIMDs 0..3
    for se in range(SES):
        packets = tt.decode(data[se])
        starts = [(p.fields["cu"], p.fields["simd"], p.fields["wave"]) for p in packets if p.tok == Tok.WAVE_START]
        assert all(p.fields["count"] == 64 for p in packets if p.tok == Tok.WAVE_START)  # work-items in the wave
        ends = [(p.fields["cu"], p.fields["simd"], p.fields["wave"]) for p in packets if p.tok == Tok.WAVE_END]
        assert starts == ([(0, s, 0) for s in range(4)] if se < 2 else [])
        assert sorted(ends) == sorted(starts)


def test_user_data_and_sh_writes_are_reg_tokens():
    data, *_ = traced_run("saxpy")
    packets = tt.decode(data[0])
    user = [(p.fields["addr"], p.fields["data"]) for p in packets if p.tok == Tok.REG]
    assert user == [(tt.SQ_THREAD_TRACE_USERDATA_0 + 2, 0x1234), (tt.SQ_THREAD_TRACE_USERDATA_0 + 3, 0x5678)]
    cs = {p.fields["addr"]: p.fields["data"] for p in packets if p.tok == Tok.REG_CS}
    assert cs[0x07] == 256  # COMPUTE_NUM_THREAD_X (0x2E07)


def test_an_aql_dispatch_writes_the_packet_processors_registers_as_reg_cs_priv():
    data, co, base, entry, _ = traced_run("saxpy", queue="aql")
    priv = [(p.fields["addr"], p.fields["data"]) for p in tt.decode(data[0]) if p.tok == Tok.REG_CS_PRIV]
    addrs = [a for a, _ in priv]
    assert addrs[:3] == [0x07, 0x08, 0x09] and addrs[-1] == 0x00  # NUM_THREAD_X/Y/Z first, DISPATCH_INITIATOR last
    got = dict(priv)
    assert (got[0x07], got[0x08], got[0x09]) == (256, 1, 1)
    counts = [p.fields["count"] for p in tt.decode(data[0]) if p.tok == Tok.WAVE_START]
    assert counts == [64] * 4
    assert (got[0x0D] << 32 | got[0x0C]) << 8 == base + entry  # COMPUTE_PGM_HI/LO: the kernel's entry >> 8
    assert got[0x00] & 1  # COMPUTE_SHADER_EN
    assert not any(p.tok == Tok.REG_CS_PRIV for p in tt.decode(traced_run("saxpy")[0][0]))  # PM4: the queue's own


def test_trace_is_the_virtual_clock_and_runs_are_identical():
    first, second = traced_run("collatz"), traced_run("collatz")
    assert first[0] == second[0]
    times = [p.time for p in tt.decode(first[0][0])]
    assert times == sorted(times) and times[-1] > 0


def test_a_full_buffer_stops_the_trace_and_says_so():
    gpu = GPU(vram_size=1 << 28, arch="gfx942")
    vm = VM(gpu)
    pm4 = Ring(vm, "pm4", size=1 << 16)
    k = vm.load(CORPUS.read_bytes())["collatz"]
    make, grid, block = CASES["collatz"]
    vas = [vm.upload(a) if isinstance(a, np.ndarray) else a for a in make(np.random.default_rng(3))]
    buf, wptrs = vm.alloc(4096), vm.alloc(64)
    pm4.submit(pp.sqtt_start([(buf, 4096)]))
    pm4.submit(pm4_launch(vm, k, vas, grid, block))
    pm4.submit(pp.sqtt_stop(1, wptrs))
    assert pp.trace_bytes(vm.u32(wptrs)[0]) == 4096
    status = gpu.perfmon.traces[0].read(tt.SQ_THREAD_TRACE_STATUS)
    assert tt.TT_STATUS.full.get(status) and gpu.perfmon.traces[0].dropped > 0
    tt.decode(vm.read(buf, 4096))  # what was written is still a valid stream


def test_a_stream_that_is_not_gfx9s_is_refused_by_name():
    with pytest.raises(ValueError, match="anchor TIMESTAMP"):
        tt.decode(bytes([0x0A, 0x00]))
    with pytest.raises(ValueError, match="ends inside"):
        tt.decode(bytes([0x01, 0, 0, 0]))


def test_instruction_classes_are_those_a_real_cdna_gpu_writes():
    """Every instruction of tinygrad's published gfx950 traces (tests/data/sqtt/gfx950_inst_types.json, from
    `python -m tools.gen_sqtt_cdna_golden <tinygrad>/extra/sqtt/examples/gfx950`): the INST_TYPE the hardware wrote is
    the one we write (a branch: JUMP taken, NEXT not; which one the run decides)."""
    golden = json.loads((DATA / "sqtt" / "gfx950_inst_types.json").read_text())
    assert len(golden["rows"]) >= 40
    for row in golden["rows"]:
        inst = decode(bytes.fromhex(row["bytes"]), arch=golden["arch"])
        want = InstType[row["inst_type"]]
        got = inst_type(inst)
        assert inst.mnemonic == row["mnemonic"]
        assert got == want or (got == InstType.JUMP and want == InstType.NEXT), (row, got)


def test_wave_start_counts_the_waves_work_items():
    """WAVE_START's COUNT is the wave's work-items (gfx950 traces: 1, 3 and 16 for workgroups of 1, 3 and 16)."""
    case = (lambda rng: [np.zeros(512, np.float32), rng.random(512, np.float32), 0x40200000, 500], (1,), (100,))
    data, *_ = traced_run("saxpy", case=case)
    counts = [(p.fields["simd"], p.fields["count"]) for p in tt.decode(data[0]) if p.tok == Tok.WAVE_START]
    assert counts == [(0, 64), (1, 36)]


def test_tinygrads_viz_timeline_shows_the_traced_waves_instructions():
    """tinygrad's VIZ builds its per-wave timeline (viz.serve.sqtt_timeline, through map_insts) from the trace: wave 0's
    row holds one range per INST token of the wave on CU 0 / SIMD 0, in order, then its WAVE_END."""
    tg, _ = tinygrad_sqtt()
    sqtt_timeline = pytest.importorskip("tinygrad.viz.serve").sqtt_timeline
    data, co, *_ = traced_run("saxpy", queue="aql")
    blob = tinygrad_blob(data[0], 0)
    rows = [e.name.display_name for e in sqtt_timeline(blob, co, "gfx942")
            if type(e).__name__ == "ProfileRangeEvent" and e.device == "WAVE:0"]
    ops = [p.op.name for p in tg.decode(blob) if isinstance(p, tg.CDNA_INST) and (p.simd, p.wave) == (0, 0)]
    assert len(ops) > 10 and rows == [*ops, "CDNA_WAVEEND"]
