"""The sysfs a client reads before it opens a GPU: the KFD topology and, per render node, amdgpu's IP discovery
tree (/sys/class/drm/renderD<minor>/device/ip_discovery), consistent with each other and with AMDGPU_INFO."""

from mockgpu import MockOS
from runtime.os import TOPOLOGY
from simgpu.hw import regs

GC, SDMA0, SDMA1, NBIF = 11, 42, 43, 108  # amdgpu's hw_id numbers (soc15_hw_ip.h)


def _props(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split() for line in text.splitlines())}


def _ip_versions(m: MockOS, minor: int) -> dict[int, list[tuple[int, int, int]]]:
    """What tinygrad's KFD interface reads: every numeric hw_id under die/0 and each instance's version."""
    base = f"/sys/class/drm/renderD{minor}/device/ip_discovery/die/0"
    out = {}
    for hw in m.listdir(base):
        if hw.isnumeric():
            out[int(hw)] = [tuple(int(m.read_text(f"{base}/{hw}/{inst}/{part}"))
                                  for part in ("major", "minor", "revision")) for inst in m.listdir(f"{base}/{hw}")]
    return out


def test_ip_discovery_of_every_render_node_matches_the_topology():
    m = MockOS(devices=2, vram_size=1 << 30)
    for node in (1, 2):
        p = _props(m.read_text(f"{TOPOLOGY}/nodes/{node}/properties"))
        ips = _ip_versions(m, p["drm_render_minor"])
        target = p["gfx_target_version"]
        assert ips[GC] == [(target // 10000, target // 100 % 100, target % 100)] == [(11, 0, 0)]
        assert sum(hw in ips for hw in (SDMA0, SDMA1)) == p["num_sdma_engines"] and ips[SDMA0] == [(6, 0, 0)]
        assert ips[NBIF] == [(4, 3, 0)]
        die = f"/sys/class/drm/renderD{p['drm_render_minor']}/device/ip_discovery/die/0"
        assert int(m.read_text(f"{die}/num_ips")) == sum(len(v) for v in ips.values())
        assert m.read_text(f"{die}/GC/0/hw_id") == f"{GC}\n"  # amdgpu also links each block by name
        assert m.exists(f"/sys/class/drm/renderD{p['drm_render_minor']}/device")


def test_nbif_base_addresses_place_the_hdp_flush_registers_the_simulator_models():
    m = MockOS(devices=1, vram_size=1 << 30)
    bases = [int(x, 16) for x in m.read_text(f"/sys/class/drm/renderD128/device/ip_discovery/die/0/{NBIF}/0/base_addr")
             .split()]
    # NBIO 4.3: BIF_BX_PF0_GPU_HDP_FLUSH_REQ/DONE are registers 0x106/0x107 of base segment 2 (SOC15_REG_OFFSET)
    hdp = (regs.BIF_BX_PF0_GPU_HDP_FLUSH_REQ, regs.BIF_BX_PF0_GPU_HDP_FLUSH_DONE)
    assert (bases[2] + 0x106, bases[2] + 0x107) == hdp
