"""wiring: the top layer that puts the stack together: which `OS` a process uses (HostOS, MockOS, a
RecordingOS around either), the `simgpu` command line, `simgpu demo` and the pytest plugin.

May import: every package (simgpu, compiler, runtime, mockgpu, traces). Nothing imports wiring; the
runtime reaches its OS selector only through the `simgpu.os` entry point (pyproject.toml).
"""
