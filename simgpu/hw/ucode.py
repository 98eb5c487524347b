"""Firmware containers of amdgpu (drivers/gpu/drm/amd/amdgpu/amdgpu_ucode.h): the common firmware header and the
versioned headers of the files a gfx1100 and a gfx1201 need, their checks, and a synthetic set with valid headers.

Every file starts with `common_firmware_header` (total size, header size, header version, IP version, ucode
version, payload size and offset, crc32); the versioned header that follows says where the parts are:

- psp_13_0_0_sos.bin: psp_firmware_header_v2_0 -- psp_fw_bin_desc[count] (fw_type, version, offset from
  ucode_array_offset_bytes, size): the sOS components (PSP_FW_TYPE_*);
- smu_13_0_0.bin: smc_firmware_header_v2_1 -- the SMU ucode at ucode_array_offset_bytes (ucode_size_bytes);
- sdma_6_0_0.bin: sdma_firmware_header_v2_0 -- context thread at ucode_array_offset_bytes (ctx_ucode_size_bytes),
  control thread at ctl_ucode_offset (ctl_ucode_size_bytes);
- gc_11_0_0_mec.bin: gfx_firmware_header_v2_0 -- RS64 code at ucode_array_offset_bytes (ucode_size_bytes), its
  stack at data_offset_bytes, the ucode start address;
- gc_11_0_0_imu.bin: imu_firmware_header_v1_0 -- IRAM then DRAM at ucode_array_offset_bytes;
- gc_11_0_0_rlc.bin: rlc_firmware_header_v2_3 -- RLC_G at ucode_array_offset_bytes; IRAM/DRAM (v2.2) and RLC P/V
  (v2.3) at their offsets (all offsets from the start of the file unless said).

gfx1201 (Navi 48) loads psp_14_0_3_sos.bin, smu_14_0_3.bin and gc_12_0_1_{mec,imu,rlc}.bin in the same containers,
gc_12_0_1_pfp.bin / _me.bin (the graphics RS64 engines, gfx_firmware_header_v2_0 like the MEC), and sdma_7_0_1.bin:
sdma_firmware_header_v3_0 -- one ucode (the SDMA 7 MCU's, loaded as SDMA_UCODE_TH0) at ucode_offset_bytes.

`check(name, data)` validates a file (sizes, offsets inside the file, header versions): `FirmwareError` names the
file, the header field and the byte offset. `synthetic_set()` builds every file with valid headers and
deterministic filler payloads (nothing in them is meant to execute). May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass

from simgpu.hw.bits import Record


class FirmwareError(ValueError):
    """A firmware file whose headers do not describe it: names the file, the field and the byte offset."""


class CommonHeader(Record):
    """struct common_firmware_header (32 bytes)."""

    LAYOUT = (("size_bytes", "I"), ("header_size_bytes", "I"), ("header_version_major", "H"),
              ("header_version_minor", "H"), ("ip_version_major", "H"), ("ip_version_minor", "H"),
              ("ucode_version", "I"), ("ucode_size_bytes", "I"), ("ucode_array_offset_bytes", "I"), ("crc32", "I"))


class PspBinDesc(Record):
    """struct psp_fw_bin_desc: one component of a PSP v2 container."""

    LAYOUT = (("fw_type", "I"), ("fw_version", "I"), ("offset_bytes", "I"), ("size_bytes", "I"))


class PspHeaderV2(Record):
    """struct psp_firmware_header_v2_0 without its descriptor array."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("psp_fw_bin_count", "I"))


class SmcHeaderV2_1(Record):  # noqa: N801 - amdgpu's name
    """struct smc_firmware_header_v2_1 (v1_0's ucode_start_addr, then the soft pptable list)."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("ucode_start_addr", "I"), ("pptable_count", "I"),
              ("pptable_entry_offset", "I"))


class SmcSoftPptableEntry(Record):
    """struct smc_soft_pptable_entry: one soft pptable of a smc v2.1 container (id, offset, size)."""

    LAYOUT = (("id", "I"), ("ppt_offset_bytes", "I"), ("ppt_size_bytes", "I"))


P2S_TABLE_ID = 0x50325358  # "P2S table" (smu_v13_0_6: the one pptable a GC 9.4.3 driver hands the PSP)


class SdmaHeaderV1(Record):
    """struct sdma_firmware_header_v1_0 (SDMA 4.x: one ucode with its jump table inside)."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("ucode_feature_version", "I"), ("ucode_change_version", "I"),
              ("jt_offset", "I"), ("jt_size", "I"))


class SdmaHeaderV2(Record):
    """struct sdma_firmware_header_v2_0."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("ucode_feature_version", "I"), ("ctx_ucode_size_bytes", "I"),
              ("ctx_jt_offset", "I"), ("ctx_jt_size", "I"), ("ctl_ucode_offset", "I"), ("ctl_ucode_size_bytes", "I"),
              ("ctl_jt_offset", "I"), ("ctl_jt_size", "I"))


class SdmaHeaderV3(Record):
    """struct sdma_firmware_header_v3_0 (SDMA 7)."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("ucode_feature_version", "I"), ("ucode_offset_bytes", "I"),
              ("ucode_size_bytes", "I"))


class GfxHeaderV1(Record):
    """struct gfx_firmware_header_v1_0 (gfx9's F32 MEC: code, then a jump table of jt_size dwords at dword jt_offset of
    the ucode)."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("ucode_feature_version", "I"), ("jt_offset", "I"),
              ("jt_size", "I"))


class GfxHeaderV2(Record):
    """struct gfx_firmware_header_v2_0 (RS64 engines: MEC, PFP, ME)."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("ucode_feature_version", "I"), ("ucode_size_bytes", "I"),
              ("ucode_offset_bytes", "I"), ("data_size_bytes", "I"), ("data_offset_bytes", "I"),
              ("ucode_start_addr_lo", "I"), ("ucode_start_addr_hi", "I"))


class ImuHeaderV1(Record):
    """struct imu_firmware_header_v1_0."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"), ("imu_iram_ucode_size_bytes", "I"),
              ("imu_iram_ucode_offset_bytes", "I"), ("imu_dram_ucode_size_bytes", "I"),
              ("imu_dram_ucode_offset_bytes", "I"))


_RLC_V2_0 = ("ucode_feature_version", "jt_offset", "jt_size", "save_and_restore_offset",
             "clear_state_descriptor_offset", "avail_scratch_ram_locations", "reg_restore_list_size",
             "reg_list_format_start",
             "reg_list_format_separate_start", "starting_offsets_start", "reg_list_format_size_bytes",
             "reg_list_format_array_offset_bytes", "reg_list_size_bytes", "reg_list_array_offset_bytes",
             "reg_list_format_separate_size_bytes", "reg_list_format_separate_array_offset_bytes",
             "reg_list_separate_size_bytes", "reg_list_separate_array_offset_bytes")
_RLC_V2_1 = ("reg_list_format_direct_reg_list_length", "save_restore_list_cntl_ucode_ver",
             "save_restore_list_cntl_feature_ver", "save_restore_list_cntl_size_bytes",
             "save_restore_list_cntl_offset_bytes", "save_restore_list_gpm_ucode_ver",
             "save_restore_list_gpm_feature_ver", "save_restore_list_gpm_size_bytes",
             "save_restore_list_gpm_offset_bytes", "save_restore_list_srm_ucode_ver",
             "save_restore_list_srm_feature_ver", "save_restore_list_srm_size_bytes",
             "save_restore_list_srm_offset_bytes")
_RLC_V2_2 = ("rlc_iram_ucode_size_bytes", "rlc_iram_ucode_offset_bytes", "rlc_dram_ucode_size_bytes",
             "rlc_dram_ucode_offset_bytes")
_RLC_V2_3 = ("rlcp_ucode_version", "rlcp_ucode_feature_version", "rlcp_ucode_size_bytes", "rlcp_ucode_offset_bytes",
             "rlcv_ucode_version", "rlcv_ucode_feature_version", "rlcv_ucode_size_bytes", "rlcv_ucode_offset_bytes")


class RlcHeaderV2_3(Record):  # noqa: N801 - amdgpu's name
    """struct rlc_firmware_header_v2_3 (which contains v2_0, v2_1 and v2_2)."""

    LAYOUT = (("header", f"{CommonHeader.SIZE}s"),) + tuple((n, "I") for n in
                                                          _RLC_V2_0 + _RLC_V2_1 + _RLC_V2_2 + _RLC_V2_3)


# enum psp_fw_type (amdgpu_ucode.h): components of the sOS container.
PSP_FW_TYPE = {"PSP_SOS": 1, "PSP_SYS_DRV": 2, "PSP_KDB": 3, "PSP_TOC": 4, "PSP_SPL": 5, "PSP_RL": 6, "PSP_SOC_DRV": 7,
               "PSP_INTF_DRV": 8, "PSP_DBG_DRV": 9, "PSP_RAS_DRV": 10, "PSP_IPKEYMGR_DRV": 11}

# The gfx1100 firmware files, by amdgpu's names, with their IP versions and expected header versions.
GFX1100_FILES = {
    "psp_13_0_0_sos.bin": ((13, 0), (2, 0)),
    "smu_13_0_0.bin": ((13, 0), (2, 1)),
    "sdma_6_0_0.bin": ((6, 0), (2, 0)),
    "gc_11_0_0_mec.bin": ((11, 0), (2, 0)),
    "gc_11_0_0_imu.bin": ((11, 0), (1, 0)),
    "gc_11_0_0_rlc.bin": ((11, 0), (2, 3)),
}
GFX1201_FILES = {
    "psp_14_0_3_sos.bin": ((14, 0), (2, 0)),
    "smu_14_0_3.bin": ((14, 0), (2, 1)),
    "sdma_7_0_1.bin": ((7, 0), (3, 0)),
    "gc_12_0_1_pfp.bin": ((12, 0), (2, 0)),
    "gc_12_0_1_me.bin": ((12, 0), (2, 0)),
    "gc_12_0_1_mec.bin": ((12, 0), (2, 0)),
    "gc_12_0_1_imu.bin": ((12, 0), (1, 0)),
    "gc_12_0_1_rlc.bin": ((12, 0), (2, 3)),
}
# gfx942 (MI300X): the PSP container carries the register list (PSP_RL), the SMC file only its P2S pptable (the SMU
# runs from the IFWI), SDMA 4.4.2 and the gfx9 MEC use v1 containers, the RLC v2.1 (its save/restore lists).
GFX942_FILES = {
    "psp_13_0_6_sos.bin": ((13, 0), (2, 0)),
    "smu_13_0_6.bin": ((13, 0), (2, 1)),
    "sdma_4_4_2.bin": ((4, 4), (1, 0)),
    "gc_9_4_3_mec.bin": ((9, 4), (1, 0)),
    "gc_9_4_3_rlc.bin": ((9, 4), (2, 1)),
}
# gfx950 (MI350X): the same containers at GC 9.5.0 / SDMA 4.4.4 / MP 13.0.12. No SMC file: SMU 13.0.12 runs from the
# IFWI and amdgpu hands the PSP no image of it (tinygrad 0.14 loads none for MP1 13.0.12 either).
GFX950_FILES = {
    "psp_13_0_12_sos.bin": ((13, 0), (2, 0)),
    "sdma_4_4_4.bin": ((4, 4), (1, 0)),
    "gc_9_5_0_mec.bin": ((9, 5), (1, 0)),
    "gc_9_5_0_rlc.bin": ((9, 5), (2, 1)),
}
FILES = GFX1100_FILES | GFX1201_FILES | GFX942_FILES | GFX950_FILES  # every file the modelled parts load


@dataclass
class Part:
    """One loadable piece of a firmware file: what it is and its bytes."""

    name: str  # e.g. "PSP_SOS", "SMU", "SDMA_TH0", "RS64_MEC", "RS64_MEC_STACK", "IMU_I", "RLC_G"
    data: bytes


def _common(name: str, data: bytes) -> CommonHeader:
    if len(data) < CommonHeader.SIZE:
        raise FirmwareError(f"{name}: {len(data)} bytes, shorter than the {CommonHeader.SIZE}-byte common header")
    h = CommonHeader.unpack(data)
    if h.size_bytes != len(data):
        raise FirmwareError(f"{name}: common header size_bytes (byte 0) is {h.size_bytes}, the file has {len(data)}")
    if not CommonHeader.SIZE <= h.header_size_bytes <= len(data):
        raise FirmwareError(f"{name}: header_size_bytes (byte 4) {h.header_size_bytes} is outside the file")
    if not h.header_size_bytes <= h.ucode_array_offset_bytes <= len(data):
        raise FirmwareError(f"{name}: ucode_array_offset_bytes (byte 24) {h.ucode_array_offset_bytes} is not after "
                            f"the {h.header_size_bytes}-byte header inside the file")
    if h.ucode_array_offset_bytes + h.ucode_size_bytes > len(data):
        raise FirmwareError(f"{name}: ucode_size_bytes (byte 20) {h.ucode_size_bytes} at offset "
                            f"{h.ucode_array_offset_bytes} runs past the end of the {len(data)}-byte file")
    return h


def _slice(name: str, data: bytes, field: str, offset: int, size: int) -> bytes:
    if size <= 0 or offset < 0 or offset + size > len(data):
        raise FirmwareError(f"{name}: {field}: {size} bytes at offset {offset} do not lie inside the {len(data)}-byte "
                            "file")
    return bytes(data[offset:offset + size])


def check(name: str, data: bytes) -> list[Part]:
    """Validate firmware file `name` (one of FILES) and return its loadable parts."""
    if name not in FILES:
        raise FirmwareError(f"{name}: not a gfx1100, gfx1201, gfx942 or gfx950 firmware file ({', '.join(FILES)})")
    h = _common(name, data)
    (ip_major, ip_minor), version = FILES[name]
    if (h.header_version_major, h.header_version_minor) != version:
        raise FirmwareError(f"{name}: header version {h.header_version_major}.{h.header_version_minor} (bytes 8-11), "
                            f"expected {version[0]}.{version[1]}")
    if (h.ip_version_major, h.ip_version_minor) != (ip_major, ip_minor):
        raise FirmwareError(f"{name}: IP version {h.ip_version_major}.{h.ip_version_minor} (bytes 12-15), expected "
                            f"{ip_major}.{ip_minor}")
    return _PARTS[_kind(name)](name, data, h)


def _kind(name: str) -> str:
    """psp, smu, sdma, or the GC engine (pfp, me, mec, imu, rlc) a file is for."""
    return name.rsplit("_", 1)[1][:-4] if name.startswith("gc_") else name.split("_")[0]


def _psp_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    hdr = PspHeaderV2.unpack(_slice(name, data, "psp_firmware_header_v2_0", 0, PspHeaderV2.SIZE))
    count = hdr.psp_fw_bin_count
    if not 0 < count <= 32 or PspHeaderV2.SIZE + count * PspBinDesc.SIZE > h.header_size_bytes:
        raise FirmwareError(f"{name}: psp_fw_bin_count (byte {PspHeaderV2.offset('psp_fw_bin_count')}) {count} does "
                            f"not fit the {h.header_size_bytes}-byte header")
    types = {v: k for k, v in PSP_FW_TYPE.items()}
    parts = []
    for i in range(count):
        at = PspHeaderV2.SIZE + i * PspBinDesc.SIZE
        d = PspBinDesc.unpack(data[at:])
        if d.fw_type not in types:
            raise FirmwareError(f"{name}: psp_fw_bin[{i}].fw_type (byte {at}) {d.fw_type} is no PSP firmware type")
        parts.append(Part(types[d.fw_type], _slice(name, data, f"psp_fw_bin[{i}] ({types[d.fw_type]})",
                                                   h.ucode_array_offset_bytes + d.offset_bytes, d.size_bytes)))
    return parts


def _smu_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    parts = [Part("SMU", _slice(name, data, "ucode", h.ucode_array_offset_bytes, h.ucode_size_bytes))]
    v = SmcHeaderV2_1.unpack(_slice(name, data, "smc_firmware_header_v2_1", 0, SmcHeaderV2_1.SIZE))
    if v.pptable_count > 32:
        raise FirmwareError(f"{name}: pptable_count (byte {SmcHeaderV2_1.offset('pptable_count')}) "
                            f"{v.pptable_count} is not a soft pptable list")
    for i in range(v.pptable_count):
        at = v.pptable_entry_offset + i * SmcSoftPptableEntry.SIZE
        e = SmcSoftPptableEntry.unpack(_slice(name, data, f"smc_soft_pptable_entry[{i}]", at, SmcSoftPptableEntry.SIZE))
        if e.id == P2S_TABLE_ID:
            parts.append(Part("P2S_TABLE", _slice(name, data, f"pptable {i} (P2S)", e.ppt_offset_bytes,
                                                  e.ppt_size_bytes)))
    return parts


def _sdma_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    if h.header_version_major == 1:  # SDMA 4.x: one ucode every engine runs
        return [Part("SDMA", _slice(name, data, "ucode", h.ucode_array_offset_bytes, h.ucode_size_bytes))]
    if h.header_version_major == 3:  # SDMA 7: one ucode
        v3 = SdmaHeaderV3.unpack(_slice(name, data, "sdma_firmware_header_v3_0", 0, SdmaHeaderV3.SIZE))
        return [Part("SDMA_UCODE_TH0", _slice(name, data, "ucode_offset_bytes/ucode_size_bytes", v3.ucode_offset_bytes,
                                              v3.ucode_size_bytes))]
    s = SdmaHeaderV2.unpack(_slice(name, data, "sdma_firmware_header_v2_0", 0, SdmaHeaderV2.SIZE))
    return [Part("SDMA_UCODE_TH0", _slice(name, data, "ctx_ucode_size_bytes", h.ucode_array_offset_bytes,
                                          s.ctx_ucode_size_bytes)),
            Part("SDMA_UCODE_TH1", _slice(name, data, "ctl_ucode_offset/ctl_ucode_size_bytes", s.ctl_ucode_offset,
                                          s.ctl_ucode_size_bytes))]


def _rs64_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    if h.header_version_major == 1:
        return _f32_parts(name, data, h)
    g = GfxHeaderV2.unpack(_slice(name, data, "gfx_firmware_header_v2_0", 0, GfxHeaderV2.SIZE))
    engine = _kind(name).upper()
    return [Part(f"RS64_{engine}", _slice(name, data, "ucode_size_bytes", h.ucode_array_offset_bytes,
                                          g.ucode_size_bytes)),
            Part(f"RS64_{engine}_P0_STACK", _slice(name, data, "data_offset_bytes/data_size_bytes",
                                                   g.data_offset_bytes, g.data_size_bytes))]


def _f32_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    """gfx9's MEC (gfx_firmware_header_v1_0): the code, then the jump table inside the ucode (CP_MEC / _ME1)."""
    g = GfxHeaderV1.unpack(_slice(name, data, "gfx_firmware_header_v1_0", 0, GfxHeaderV1.SIZE))
    if g.jt_size * 4 > h.ucode_size_bytes or g.jt_offset * 4 + g.jt_size * 4 > h.ucode_size_bytes:
        raise FirmwareError(f"{name}: jt_offset/jt_size (bytes {GfxHeaderV1.offset('jt_offset')}..) {g.jt_offset}/"
                            f"{g.jt_size} dwords do not lie inside the {h.ucode_size_bytes}-byte ucode")
    start = h.ucode_array_offset_bytes
    return [Part("CP_MEC", _slice(name, data, "ucode (without its jump table)", start,
                                  h.ucode_size_bytes - 4 * g.jt_size)),
            Part("CP_MEC_ME1", _slice(name, data, "jump table", start + 4 * g.jt_offset, 4 * g.jt_size))]


def _imu_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    m = ImuHeaderV1.unpack(_slice(name, data, "imu_firmware_header_v1_0", 0, ImuHeaderV1.SIZE))
    i = _slice(name, data, "imu_iram_ucode_size_bytes", h.ucode_array_offset_bytes, m.imu_iram_ucode_size_bytes)
    d = _slice(name, data, "imu_dram_ucode_size_bytes", h.ucode_array_offset_bytes + m.imu_iram_ucode_size_bytes,
               m.imu_dram_ucode_size_bytes)
    return [Part("IMU_I", i), Part("IMU_D", d)]


def _rlc_parts(name: str, data: bytes, h: CommonHeader) -> list[Part]:
    r = RlcHeaderV2_3.unpack(_slice(name, data, "rlc_firmware_header_v2_3", 0, RlcHeaderV2_3.SIZE))
    if h.header_version_minor == 1:  # gfx9: the save/restore lists, then RLC_G
        return [Part(f"RLC_RESTORE_LIST_{what}", _slice(name, data, f"save_restore_list_{field}",
                                                        getattr(r, f"save_restore_list_{field}_offset_bytes"),
                                                        getattr(r, f"save_restore_list_{field}_size_bytes")))
                for what, field in (("SRM_CNTL", "cntl"), ("GPM_MEM", "gpm"), ("SRM_MEM", "srm"))] + \
            [Part("RLC_G", _slice(name, data, "ucode", h.ucode_array_offset_bytes, h.ucode_size_bytes))]
    return [Part("RLC_IRAM", _slice(name, data, "rlc_iram_ucode", r.rlc_iram_ucode_offset_bytes,
                                    r.rlc_iram_ucode_size_bytes)),
            Part("RLC_DRAM_BOOT", _slice(name, data, "rlc_dram_ucode", r.rlc_dram_ucode_offset_bytes,
                                         r.rlc_dram_ucode_size_bytes)),
            Part("RLC_P", _slice(name, data, "rlcp_ucode", r.rlcp_ucode_offset_bytes, r.rlcp_ucode_size_bytes)),
            Part("RLC_V", _slice(name, data, "rlcv_ucode", r.rlcv_ucode_offset_bytes, r.rlcv_ucode_size_bytes)),
            Part("RLC_G", _slice(name, data, "ucode", h.ucode_array_offset_bytes, h.ucode_size_bytes))]


_PARTS = {"psp": _psp_parts, "smu": _smu_parts, "sdma": _sdma_parts, "mec": _rs64_parts, "pfp": _rs64_parts,
          "me": _rs64_parts, "imu": _imu_parts, "rlc": _rlc_parts}


def mec_start_address(data: bytes) -> int:
    """The RS64 MEC ucode start address a gc_11_0_0_mec.bin gives (CP_MEC_RS64_PRGRM_CNTR_START = it >> 2)."""
    g = GfxHeaderV2.unpack(data)
    return g.ucode_start_addr_lo | (g.ucode_start_addr_hi << 32)


# ---- a synthetic set ----------------------------------------------------------------------------------------
SYNTHETIC_UCODE_VERSION = 0x5157  # what a synthetic file reports as its ucode version ("simulated")
MEC_START = 0x3000  # the synthetic MEC's ucode start address


def _filler(tag: str, size: int) -> bytes:
    """Deterministic bytes standing in for a ucode payload."""
    out = b""
    block = hashlib.sha256(tag.encode()).digest()
    while len(out) < size:
        out += block
        block = hashlib.sha256(block).digest()
    return out[:size]


def _assemble(name: str, header_fields: bytes, payloads: list[bytes], ucode: int, hsize: int = 256) -> bytes:
    """The file: a `hsize`-byte header region holding `header_fields` (common header patched in) and the payloads
    at the offsets `payload_offsets(...)` gives; `ucode` indexes the payload the common header names."""
    (ip_major, ip_minor), (vmaj, vmin) = FILES[name]
    offsets = payload_offsets(payloads, hsize)
    body = bytearray(hsize) + b"".join(p.ljust(-(-len(p) // 256) * 256, b"\0") for p in payloads)
    body[:len(header_fields)] = header_fields
    common = CommonHeader(len(body), len(header_fields), vmaj, vmin, ip_major, ip_minor, SYNTHETIC_UCODE_VERSION,
                          len(payloads[ucode]), offsets[ucode], zlib.crc32(payloads[ucode])).pack()
    body[:CommonHeader.SIZE] = common
    return bytes(body)


def payload_offsets(payloads: list[bytes], hsize: int = 256) -> list[int]:
    """Where `_assemble` places each payload: after the header, each 256-byte aligned."""
    offsets, pos = [], hsize
    for p in payloads:
        offsets.append(pos)
        pos += -(-len(p) // 256) * 256
    return offsets


_SOS_COMPONENTS = ("PSP_KDB", "PSP_SPL", "PSP_SYS_DRV", "PSP_SOC_DRV", "PSP_INTF_DRV", "PSP_DBG_DRV", "PSP_RAS_DRV",
                   "PSP_SOS", "PSP_TOC")


def synthetic_set(size: int = 4096) -> dict[str, bytes]:
    """Every file of FILES (both parts' sets) with valid headers and `size`-byte filler payloads (deterministic)."""
    files = _synthetic_part(size, psp="psp_13_0_0_sos.bin", smu="smu_13_0_0.bin", gc="gc_11_0_0")
    files |= _synthetic_part(size, psp="psp_14_0_3_sos.bin", smu="smu_14_0_3.bin", gc="gc_12_0_1")
    files["sdma_6_0_0.bin"] = _synthetic_sdma_v2(size)
    mcu = _filler("sdma7:mcu", size)
    v3 = SdmaHeaderV3(bytes(CommonHeader.SIZE), 0, payload_offsets([mcu])[0], size)
    files["sdma_7_0_1.bin"] = _assemble("sdma_7_0_1.bin", v3.pack(), [mcu], 0)
    files |= _synthetic_gfx9(size, mp="13_0_6", sdma="4_4_2", gc="9_4_3", smu=True)
    files |= _synthetic_gfx9(size, mp="13_0_12", sdma="4_4_4", gc="9_5_0", smu=False)
    for name, data in files.items():
        check(name, data)
    return files


def _synthetic_gfx9(size: int, mp: str, sdma: str, gc: str, smu: bool) -> dict[str, bytes]:
    """An MI300-family part's files (MI300X: mp 13_0_6, sdma 4_4_2, gc 9_4_3; MI350X: 13_0_12, 4_4_4, 9_5_0): the
    v1 / v2.1 containers of gfx9, the sOS container with the register list, the SMC file (its P2S pptable) if
    `smu`. The filler tags keep MI300X's bytes as they were before MI350X's set existed."""
    blank, files = bytes(CommonHeader.SIZE), {}
    tag = {"13_0_6": "13.6"}.get(mp, mp.replace("_", "."))
    comps = ("PSP_KDB", "PSP_SYS_DRV", "PSP_SOC_DRV", "PSP_INTF_DRV", "PSP_DBG_DRV", "PSP_RAS_DRV", "PSP_SOS", "PSP_RL")
    blobs = [_filler(f"psp{tag}:{c}", size) for c in comps]
    offs = payload_offsets(blobs)
    descs = b"".join(PspBinDesc(PSP_FW_TYPE[c], SYNTHETIC_UCODE_VERSION, o - offs[0], len(p)).pack()
                     for c, o, p in zip(comps, offs, blobs, strict=True))
    psp = f"psp_{mp}_sos.bin"
    files[psp] = _assemble(psp, PspHeaderV2(blank, len(comps)).pack() + descs, blobs, 0)
    if smu:
        image, p2s = _filler(f"smu{tag}", size), _filler(f"smu{tag}:p2s", size)
        o = payload_offsets([image, p2s])
        entry_at = SmcHeaderV2_1.SIZE  # the entry list right after the versioned header
        hdr = SmcHeaderV2_1(blank, 0, 1, entry_at).pack() + SmcSoftPptableEntry(P2S_TABLE_ID, o[1], len(p2s)).pack()
        files[f"smu_{mp}.bin"] = _assemble(f"smu_{mp}.bin", hdr, [image, p2s], 0)
    dot = gc.replace("_", ".")
    files[f"sdma_{sdma}.bin"] = _assemble(f"sdma_{sdma}.bin", SdmaHeaderV1(blank, 0, 0, (size - 256) // 4, 64).pack(),
                                          [_filler(f"sdma{sdma.replace('_', '.')}", size)], 0)
    files[f"gc_{gc}_mec.bin"] = _assemble(f"gc_{gc}_mec.bin", GfxHeaderV1(blank, 0, (size - 256) // 4, 64).pack(),
                                          [_filler(f"mec{dot}", size)], 0)
    rlc = [_filler(f"rlc{dot}:{n}", size) for n in ("g", "cntl", "gpm", "srm")]
    o = payload_offsets(rlc)
    fields = dict.fromkeys(_RLC_V2_0 + _RLC_V2_1 + _RLC_V2_2 + _RLC_V2_3, 0)
    fields.update(save_restore_list_cntl_size_bytes=size, save_restore_list_cntl_offset_bytes=o[1],
                  save_restore_list_gpm_size_bytes=size, save_restore_list_gpm_offset_bytes=o[2],
                  save_restore_list_srm_size_bytes=size, save_restore_list_srm_offset_bytes=o[3])
    v2_1 = RlcHeaderV2_3(blank, **fields).pack()[:CommonHeader.SIZE + 4 * len(_RLC_V2_0 + _RLC_V2_1)]
    files[f"gc_{gc}_rlc.bin"] = _assemble(f"gc_{gc}_rlc.bin", v2_1, rlc, 0)
    return files


def _synthetic_part(size: int, psp: str, smu: str, gc: str) -> dict[str, bytes]:
    """The PSP, SMU and GC files of one part (gc: the file prefix, e.g. "gc_11_0_0")."""
    blank = bytes(CommonHeader.SIZE)
    files = {}
    # PSP sOS container: descriptors offset from ucode_array_offset_bytes (the first component).
    comps = [_filler(f"psp:{c}", size) for c in _SOS_COMPONENTS]
    offs = payload_offsets(comps)
    descs = b"".join(PspBinDesc(PSP_FW_TYPE[c], SYNTHETIC_UCODE_VERSION, o - offs[0], len(p)).pack()
                     for c, o, p in zip(_SOS_COMPONENTS, offs, comps, strict=True))
    files[psp] = _assemble(psp, PspHeaderV2(blank, len(comps)).pack() + descs, comps, 0)
    files[smu] = _assemble(smu, SmcHeaderV2_1(blank, 0, 0, 0).pack(), [_filler("smu", size)], 0)
    engines = ("pfp", "me", "mec") if gc.startswith("gc_12") else ("mec",)  # gfx12 loads the graphics ME too
    for engine in engines:
        code, stack = _filler(f"{engine}:code", size), _filler(f"{engine}:stack", size)
        o = payload_offsets([code, stack])
        hdr = GfxHeaderV2(blank, 0, len(code), o[0], len(stack), o[1], MEC_START, 0).pack()
        files[f"{gc}_{engine}.bin"] = _assemble(f"{gc}_{engine}.bin", hdr, [code, stack], 0)
    iram, dram = _filler("imu:iram", size), _filler("imu:dram", size)
    o = payload_offsets([iram + dram])
    files[f"{gc}_imu.bin"] = _assemble(f"{gc}_imu.bin", ImuHeaderV1(blank, len(iram), o[0], len(dram),
                                                                    o[0] + len(iram)).pack(), [iram + dram], 0)
    rlc = [_filler(f"rlc:{n}", size) for n in ("g", "iram", "dram", "p", "v")]
    o = payload_offsets(rlc)
    fields = dict.fromkeys(_RLC_V2_0 + _RLC_V2_1 + _RLC_V2_2 + _RLC_V2_3, 0)
    fields.update(rlc_iram_ucode_size_bytes=size, rlc_iram_ucode_offset_bytes=o[1], rlc_dram_ucode_size_bytes=size,
                  rlc_dram_ucode_offset_bytes=o[2], rlcp_ucode_size_bytes=size, rlcp_ucode_offset_bytes=o[3],
                  rlcv_ucode_size_bytes=size, rlcv_ucode_offset_bytes=o[4])
    files[f"{gc}_rlc.bin"] = _assemble(f"{gc}_rlc.bin", RlcHeaderV2_3(blank, **fields).pack(), rlc, 0)
    return files


def _synthetic_sdma_v2(size: int) -> bytes:
    ctx, ctl = _filler("sdma:th0", size), _filler("sdma:th1", size)
    o = payload_offsets([ctx, ctl])
    return _assemble("sdma_6_0_0.bin", SdmaHeaderV2(bytes(CommonHeader.SIZE), 0, len(ctx), 0, 0, o[1], len(ctl), 0,
                                                    0).pack(), [ctx, ctl], 0)
