"""Profiling hardware of the simulated GPU: performance counters (PMC) and the SQ thread trace (SQTT), programmed
through their gfx11 registers and PM4 events (simgpu.hw.perfmon, simgpu.hw.sqtt), on gfx9 (gfx942, gfx950) through
gfx9's (simgpu.hw.perfmon_gfx9, simgpu.hw.sqtt_gfx9). See docs/device.md."""

from simgpu.profile.monitor import PerfMonitor

__all__ = ["PerfMonitor"]
