"""GC 11.0.0 registers a userspace driver programs to bring up compute (gc_11_0_0_offset.h / _sh_mask.h): GRBM
selection and resets, the MEC (RS64 firmware start, pipe resets, doorbell range), the hardware queue descriptor
(HQD) registers a compute queue is activated with, RLC safe mode and clock gating, shader memory apertures, the
scratch registers, and the SDMA engines (on gfx11 the SDMA v6 registers live in the GC register space). The
per-queue HQD registers (CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, 56 dwords) mirror dwords 0x80.. of the v11 compute
MQD (simgpu.hw.mqd) one to one: a driver loads them from its MQD image.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Field, Layout
from simgpu.hw.mmio import Reg, family, name_registers

# ---- GRBM --------------------------------------------------------------------------------------------------
GRBM_GFX_CNTL = Reg("GC", 1, 0x900, Layout(pipeid=Field(0, 2), meid=Field(2, 2), vmid=Field(4, 4),
                                           queueid=Field(8, 3)))  # which HQD / VMID the banked registers show
GRBM_CNTL = Reg("GC", 0, 0xDA0, Layout(read_timeout=Field(0, 8)))
GRBM_SOFT_RESET = Reg("GC", 0, 0xDA8, Layout(soft_reset_cp=Field(0), soft_reset_cpc=Field(18),
                                             soft_reset_sdma0=Field(23), soft_reset_sdma1=Field(24)))
SCRATCH_REG6 = Reg("GC", 1, 0x2046)  # SCRATCH_REG6/7: kept across a driver's sessions (gfx11 has only these two)
SCRATCH_REG7 = Reg("GC", 1, 0x2047)
GRBM_SCRATCH_REG_I_ = family("GC", 0, 0xDE0, 1, 8)

# ---- CP / MEC -----------------------------------------------------------------------------------------------
CP_STAT = Reg("GC", 0, 0xF40, Layout(cp_busy=Field(31)))
CP_RB_WPTR_POLL_CNTL = Reg("GC", 0, 0xF62, Layout(poll_frequency=Field(0, 16), idle_poll_count=Field(16, 16)))
CP_INT_CNTL = Reg("GC", 0, 0x1DE9)
CP_MEC_DOORBELL_RANGE_LOWER = Reg("GC", 0, 0x1DFC, Layout(doorbell_range_lower=Field(2, 10)))  # dword offset
CP_MEC_DOORBELL_RANGE_UPPER = Reg("GC", 0, 0x1DFD, Layout(doorbell_range_upper=Field(2, 10)))
CP_MEC_RS64_PRGRM_CNTR_START = Reg("GC", 1, 0x2900)  # per pipe (GRBM_GFX_CNTL): ucode start address >> 2
CP_MEC_RS64_PRGRM_CNTR_START_HI = Reg("GC", 1, 0x2938)
CP_MEC_RS64_CNTL = Reg("GC", 1, 0x2904, Layout(mec_invalidate_icache=Field(4), mec_pipe0_reset=Field(16),
                                               mec_pipe1_reset=Field(17), mec_pipe2_reset=Field(18),
                                               mec_pipe3_reset=Field(19), mec_pipe0_active=Field(26),
                                               mec_pipe1_active=Field(27), mec_pipe2_active=Field(28),
                                               mec_pipe3_active=Field(29), mec_halt=Field(30), mec_step=Field(31)),
                       reset=1 << 30)  # halted until a driver starts it
SPI_COMPUTE_QUEUE_RESET = Reg("GC", 0, 0x1F73, Layout(reset=Field(0)))

# ---- the HQD (banked by GRBM_GFX_CNTL me/pipe/queue) ---------------------------------------------------------
HQD_FIRST = 0x1FA9  # CP_MQD_BASE_ADDR: MQD dword 0x80
CP_MQD_BASE_ADDR = Reg("GC", 0, 0x1FA9, Layout(base_addr=Field(2, 30)))  # byte address bits 31:2
CP_MQD_BASE_ADDR_HI = Reg("GC", 0, 0x1FAA, Layout(base_addr_hi=Field(0, 16)))
CP_HQD_ACTIVE = Reg("GC", 0, 0x1FAB, Layout(active=Field(0), busy_gate=Field(1)))
CP_HQD_VMID = Reg("GC", 0, 0x1FAC, Layout(vmid=Field(0, 4), ib_vmid=Field(8, 4)))
CP_HQD_PERSISTENT_STATE = Reg("GC", 0, 0x1FAD, Layout(preload_req=Field(0), preload_size=Field(8, 10)))
CP_HQD_PIPE_PRIORITY = Reg("GC", 0, 0x1FAE)
CP_HQD_QUEUE_PRIORITY = Reg("GC", 0, 0x1FAF)
CP_HQD_QUANTUM = Reg("GC", 0, 0x1FB0)
CP_HQD_PQ_BASE = Reg("GC", 0, 0x1FB1)  # ring address >> 8
CP_HQD_PQ_BASE_HI = Reg("GC", 0, 0x1FB2, Layout(addr_hi=Field(0, 8)))
CP_HQD_PQ_RPTR = Reg("GC", 0, 0x1FB3)
CP_HQD_PQ_RPTR_REPORT_ADDR = Reg("GC", 0, 0x1FB4, Layout(rptr_report_addr=Field(2, 30)))
CP_HQD_PQ_RPTR_REPORT_ADDR_HI = Reg("GC", 0, 0x1FB5, Layout(rptr_report_addr_hi=Field(0, 16)))
CP_HQD_PQ_WPTR_POLL_ADDR = Reg("GC", 0, 0x1FB6, Layout(wptr_addr=Field(3, 29)))
CP_HQD_PQ_WPTR_POLL_ADDR_HI = Reg("GC", 0, 0x1FB7, Layout(wptr_addr_hi=Field(0, 16)))
CP_HQD_PQ_DOORBELL_CONTROL = Reg("GC", 0, 0x1FB8, Layout(doorbell_offset=Field(2, 26), doorbell_en=Field(30)))
CP_HQD_PQ_CONTROL = Reg("GC", 0, 0x1FBA, Layout(queue_size=Field(0, 6), rptr_block_size=Field(8, 6),
                                                queue_full_en=Field(14), slot_based_wptr=Field(18, 2),
                                                no_update_rptr=Field(27), unord_dispatch=Field(28),
                                                priv_state=Field(30), kmd_queue=Field(31)))
CP_HQD_IB_BASE_ADDR = Reg("GC", 0, 0x1FBB)
CP_HQD_IB_BASE_ADDR_HI = Reg("GC", 0, 0x1FBC)
CP_HQD_IB_RPTR = Reg("GC", 0, 0x1FBD)
CP_HQD_IB_CONTROL = Reg("GC", 0, 0x1FBE, Layout(ib_size=Field(0, 20), min_ib_avail_size=Field(20, 2)))
CP_HQD_IQ_TIMER = Reg("GC", 0, 0x1FBF)
CP_HQD_IQ_RPTR = Reg("GC", 0, 0x1FC0)
CP_HQD_DEQUEUE_REQUEST = Reg("GC", 0, 0x1FC1, Layout(dequeue_req=Field(0, 4)))
CP_HQD_DMA_OFFLOAD = Reg("GC", 0, 0x1FC2)
CP_HQD_SEMA_CMD = Reg("GC", 0, 0x1FC3)
CP_HQD_MSG_TYPE = Reg("GC", 0, 0x1FC4)
CP_HQD_ATOMIC0_PREOP_LO = Reg("GC", 0, 0x1FC5)
CP_HQD_ATOMIC0_PREOP_HI = Reg("GC", 0, 0x1FC6)
CP_HQD_ATOMIC1_PREOP_LO = Reg("GC", 0, 0x1FC7)
CP_HQD_ATOMIC1_PREOP_HI = Reg("GC", 0, 0x1FC8)
CP_HQD_HQ_STATUS0 = Reg("GC", 0, 0x1FC9)
CP_HQD_HQ_CONTROL0 = Reg("GC", 0, 0x1FCA)
CP_MQD_CONTROL = Reg("GC", 0, 0x1FCB, Layout(vmid=Field(0, 4), priv_state=Field(8)))
CP_HQD_HQ_STATUS1 = Reg("GC", 0, 0x1FCC)
CP_HQD_HQ_CONTROL1 = Reg("GC", 0, 0x1FCD)
CP_HQD_EOP_BASE_ADDR = Reg("GC", 0, 0x1FCE)  # EOP buffer address >> 8
CP_HQD_EOP_BASE_ADDR_HI = Reg("GC", 0, 0x1FCF)
CP_HQD_EOP_CONTROL = Reg("GC", 0, 0x1FD0, Layout(eop_size=Field(0, 6)))
CP_HQD_EOP_RPTR = Reg("GC", 0, 0x1FD1)
CP_HQD_EOP_WPTR = Reg("GC", 0, 0x1FD2)
CP_HQD_EOP_EVENTS = Reg("GC", 0, 0x1FD3)
CP_HQD_CTX_SAVE_BASE_ADDR_LO = Reg("GC", 0, 0x1FD4)
CP_HQD_CTX_SAVE_BASE_ADDR_HI = Reg("GC", 0, 0x1FD5)
CP_HQD_CTX_SAVE_CONTROL = Reg("GC", 0, 0x1FD6)
CP_HQD_CNTL_STACK_OFFSET = Reg("GC", 0, 0x1FD7)
CP_HQD_CNTL_STACK_SIZE = Reg("GC", 0, 0x1FD8)
CP_HQD_WG_STATE_OFFSET = Reg("GC", 0, 0x1FD9)
CP_HQD_CTX_SAVE_SIZE = Reg("GC", 0, 0x1FDA)
CP_HQD_GDS_RESOURCE_STATE = Reg("GC", 0, 0x1FDB)
CP_HQD_ERROR = Reg("GC", 0, 0x1FDC)
CP_HQD_EOP_WPTR_MEM = Reg("GC", 0, 0x1FDD)
CP_HQD_AQL_CONTROL = Reg("GC", 0, 0x1FDE, Layout(control0=Field(0, 15), control0_en=Field(15)))
CP_HQD_PQ_WPTR_LO = Reg("GC", 0, 0x1FDF)
CP_HQD_PQ_WPTR_HI = Reg("GC", 0, 0x1FE0)
HQD_LAST = 0x1FE0  # CP_HQD_PQ_WPTR_HI: MQD dword 0xB7
CP_HQD_DEQUEUE_STATUS = Reg("GC", 0, 0x1FE8)

# ---- RLC and clock gating ---------------------------------------------------------------------------------------
RLC_SAFE_MODE = Reg("GC", 1, 0x980, Layout(cmd=Field(0), message=Field(1, 4)))
RLC_SPM_MC_CNTL = Reg("GC", 1, 0x982)
RLC_CNTL = Reg("GC", 1, 0x4C00, Layout(rlc_enable_f32=Field(0)))
RLC_CGTT_MGCG_OVERRIDE = Reg("GC", 1, 0x4C48)
RLC_CGCG_CGLS_CTRL = Reg("GC", 1, 0x4C49, Layout(cgcg_en=Field(0), cgls_en=Field(1)))
RLC_SRM_CNTL = Reg("GC", 1, 0x4C80, Layout(srm_enable=Field(0), auto_incr_addr=Field(1)))
RLC_RLCS_BOOTLOAD_STATUS = Reg("GC", 1, 0x4E82, Layout(gfx_init_done=Field(0), bootload_complete=Field(31)))

# ---- shader memory apertures (banked by GRBM_GFX_CNTL vmid) ------------------------------------------------------
SH_MEM_BASES = Reg("GC", 1, 0x9E3, Layout(private_base=Field(0, 16), shared_base=Field(16, 16)))
SH_MEM_CONFIG = Reg("GC", 1, 0x9E4, Layout(address_mode=Field(0), alignment_mode=Field(2, 2),
                                           initial_inst_prefetch=Field(14, 2)))
TCP_CNTL = Reg("GC", 1, 0x19A2)

# ---- SDMA v6 engines: SDMA0 at 0x000, SDMA1 at 0x600 (segment 0); F32 control in segment 1 ------------------------
SDMA_ENGINES = 2
SDMA_STRIDE = 0x600
SDMA_CNTL = Layout(trap_enable=Field(0))
SDMA_F32_CNTL = Layout(halt=Field(0), th0_reset=Field(9), th0_enable=Field(10), th1_reset=Field(13),
                       th1_enable=Field(14))
SDMA_RB_CNTL = Layout(rb_enable=Field(0), rb_size=Field(1, 5), wptr_poll_enable=Field(8),
                      f32_wptr_poll_enable=Field(11), rptr_writeback_enable=Field(12),
                      rptr_writeback_timer=Field(16, 5), rb_priv=Field(23),
                      rb_vmid=Field(24, 4))
SDMA_IB_CNTL = Layout(ib_enable=Field(0))
SDMA_DOORBELL = Layout(enable=Field(28), captured=Field(30))
SDMA_DOORBELL_OFFSET = Layout(offset=Field(2, 26))  # dword offset of the queue's doorbell in the doorbell BAR

SDMA_I__CNTL = family("GC", 0, 0x1C, SDMA_STRIDE, SDMA_ENGINES, SDMA_CNTL)
SDMA_I__WATCHDOG_CNTL = family("GC", 0, 0x2E, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__UTCL1_CNTL = family("GC", 0, 0x3C, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__UTCL1_PAGE = family("GC", 0, 0x3F, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__RLC_CGCG_CTRL = family("GC", 0, 0x5C, SDMA_STRIDE, SDMA_ENGINES)
# F32 (the SDMA microcontroller) is halted until a driver starts it.
SDMA_I__F32_CNTL = family("GC", 1, 0x589A, 0x20, SDMA_ENGINES, SDMA_F32_CNTL, reset=1)

# Queue 0 of each engine (the ring the driver uses; queues 1..7 of the header are not modelled).
_Q0 = 0x80
SDMA_I__QUEUE0_RB_CNTL = family("GC", 0, _Q0 + 0x00, SDMA_STRIDE, SDMA_ENGINES, SDMA_RB_CNTL)
SDMA_I__QUEUE0_RB_BASE = family("GC", 0, _Q0 + 0x01, SDMA_STRIDE, SDMA_ENGINES)  # ring address >> 8
SDMA_I__QUEUE0_RB_BASE_HI = family("GC", 0, _Q0 + 0x02, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_RPTR = family("GC", 0, _Q0 + 0x03, SDMA_STRIDE, SDMA_ENGINES)  # bytes
SDMA_I__QUEUE0_RB_RPTR_HI = family("GC", 0, _Q0 + 0x04, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_WPTR = family("GC", 0, _Q0 + 0x05, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_WPTR_HI = family("GC", 0, _Q0 + 0x06, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_RPTR_ADDR_HI = family("GC", 0, _Q0 + 0x08, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_RPTR_ADDR_LO = family("GC", 0, _Q0 + 0x09, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_IB_CNTL = family("GC", 0, _Q0 + 0x0A, SDMA_STRIDE, SDMA_ENGINES, SDMA_IB_CNTL)
SDMA_I__QUEUE0_CONTEXT_STATUS = family("GC", 0, _Q0 + 0x11, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_DOORBELL = family("GC", 0, _Q0 + 0x12, SDMA_STRIDE, SDMA_ENGINES, SDMA_DOORBELL)
SDMA_I__QUEUE0_DOORBELL_OFFSET = family("GC", 0, _Q0 + 0x2B, SDMA_STRIDE, SDMA_ENGINES, SDMA_DOORBELL_OFFSET)
SDMA_I__QUEUE0_RB_WPTR_POLL_ADDR_HI = family("GC", 0, _Q0 + 0x32, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_WPTR_POLL_ADDR_LO = family("GC", 0, _Q0 + 0x33, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_RB_AQL_CNTL = family("GC", 0, _Q0 + 0x34, SDMA_STRIDE, SDMA_ENGINES)
SDMA_I__QUEUE0_MINOR_PTR_UPDATE = family("GC", 0, _Q0 + 0x35, SDMA_STRIDE, SDMA_ENGINES)

REGISTERS = name_registers(globals())
