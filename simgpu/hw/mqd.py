"""The gfx11 compute memory queue descriptor (struct v11_compute_mqd, amdgpu's v11_structs.h): 512 dwords that
describe a compute queue. Dwords 0x80..0xB7 are the HQD register image, in register order from CP_MQD_BASE_ADDR
(simgpu.hw.soc21.gc): a driver writes the MQD to memory, then loads those registers from it (or has the CP do so)
and sets CP_HQD_ACTIVE. `MQD_HEADER` is what amdgpu puts in dword 0.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Record

MQD_DWORDS = 512
MQD_SIZE = 4 * MQD_DWORDS
MQD_HEADER = 0xC0310800
HQD_DWORD = 0x80  # first dword of the register image (cp_mqd_base_addr_lo)

# Register image, dword 0x80 on; None is a dword without a register (the reserved hole at CP_HQD_PQ_BASE + 8).
HQD_FIELDS = (
    "cp_mqd_base_addr_lo", "cp_mqd_base_addr_hi", "cp_hqd_active", "cp_hqd_vmid", "cp_hqd_persistent_state",
    "cp_hqd_pipe_priority", "cp_hqd_queue_priority", "cp_hqd_quantum", "cp_hqd_pq_base_lo", "cp_hqd_pq_base_hi",
    "cp_hqd_pq_rptr", "cp_hqd_pq_rptr_report_addr_lo", "cp_hqd_pq_rptr_report_addr_hi",
    "cp_hqd_pq_wptr_poll_addr_lo", "cp_hqd_pq_wptr_poll_addr_hi", "cp_hqd_pq_doorbell_control", None,
    "cp_hqd_pq_control", "cp_hqd_ib_base_addr_lo", "cp_hqd_ib_base_addr_hi", "cp_hqd_ib_rptr", "cp_hqd_ib_control",
    "cp_hqd_iq_timer", "cp_hqd_iq_rptr", "cp_hqd_dequeue_request", "cp_hqd_dma_offload", "cp_hqd_sema_cmd",
    "cp_hqd_msg_type", "cp_hqd_atomic0_preop_lo", "cp_hqd_atomic0_preop_hi", "cp_hqd_atomic1_preop_lo",
    "cp_hqd_atomic1_preop_hi", "cp_hqd_hq_status0", "cp_hqd_hq_control0", "cp_mqd_control", "cp_hqd_hq_status1",
    "cp_hqd_hq_control1", "cp_hqd_eop_base_addr_lo", "cp_hqd_eop_base_addr_hi", "cp_hqd_eop_control",
    "cp_hqd_eop_rptr", "cp_hqd_eop_wptr", "cp_hqd_eop_done_events", "cp_hqd_ctx_save_base_addr_lo",
    "cp_hqd_ctx_save_base_addr_hi", "cp_hqd_ctx_save_control", "cp_hqd_cntl_stack_offset", "cp_hqd_cntl_stack_size",
    "cp_hqd_wg_state_offset", "cp_hqd_ctx_save_size", "cp_hqd_gds_resource_state", "cp_hqd_error",
    "cp_hqd_eop_wptr_mem", "cp_hqd_aql_control", "cp_hqd_pq_wptr_lo", "cp_hqd_pq_wptr_hi")
HQD_DWORDS = len(HQD_FIELDS)  # 56: CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI

# Dwords before the image that a compute driver fills (v11_compute_mqd member names).
_PREFIX = {0: "header", 23: "compute_static_thread_mgmt_se0", 24: "compute_static_thread_mgmt_se1",
           26: "compute_static_thread_mgmt_se2", 27: "compute_static_thread_mgmt_se3",
           44: "compute_static_thread_mgmt_se4", 45: "compute_static_thread_mgmt_se5",
           46: "compute_static_thread_mgmt_se6", 47: "compute_static_thread_mgmt_se7"}


def _layout() -> tuple:
    parts: list[tuple] = []
    for dw in range(MQD_DWORDS):
        name = _PREFIX.get(dw)
        if HQD_DWORD <= dw < HQD_DWORD + HQD_DWORDS:
            name = HQD_FIELDS[dw - HQD_DWORD]
        parts.append((name, "I"))
    return tuple(parts)


class ComputeMQD(Record):
    """struct v11_compute_mqd (the dwords this simulator and its drivers use are named; the rest are zeros)."""

    LAYOUT = _layout()


# struct v9_mqd (v9_structs.h, GC 9.4.3): the same register image at dword 0x80, and before it the multi-XCC fields
# an AQL queue spread over several XCCs sets (which XCC this MQD is for; the stride between the XCCs' MQDs).
_V9_PREFIX = _PREFIX | {39: "compute_current_logic_xcc_id", 41: "compute_tg_chunk_size"}
_V9_SUFFIX = {226: "cp_mqd_stride_size"}


def _v9_layout() -> tuple:
    parts = list(_layout())
    for dw, name in (_V9_PREFIX | _V9_SUFFIX).items():
        parts[dw] = (name, "I")
    return tuple(parts)


class V9MQD(Record):
    """struct v9_mqd (the named dwords are the ones drivers fill; the register image is ComputeMQD's)."""

    LAYOUT = _v9_layout()


def hqd_image(mqd: bytes) -> list[int]:
    """The HQD register values an MQD holds, in register order from CP_MQD_BASE_ADDR."""
    start = 4 * HQD_DWORD
    return [int.from_bytes(mqd[start + 4 * i:start + 4 * i + 4], "little") for i in range(HQD_DWORDS)]
