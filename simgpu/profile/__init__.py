"""Profiling hardware of the simulated GPU: performance counters (PMC) and the SQ thread trace (SQTT), programmed
through their gfx11 registers and PM4 events (simgpu.hw.perfmon, simgpu.hw.sqtt). See docs/device.md."""

from simgpu.profile.monitor import PerfMonitor

__all__ = ["PerfMonitor"]
