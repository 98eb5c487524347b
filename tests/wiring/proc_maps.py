"""What a process maps of simgpu's shared-memory files, read from /proc/<pid>/maps. Imported by the tests and by the
client programs they run under `simgpu run` (as a sibling module: those run with the client's own PYTHONPATH, so
this module imports nothing of the project)."""


def memfd_blocks(pid, name: str) -> list[int]:
    """[mappings, bytes] of the mappings of memfd files whose name starts with `name` (e.g. "simgpu-host:") in the
    process `pid` ("self" for this one)."""
    count = size = 0
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if f"/memfd:{name}" in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                count, size = count + 1, size + hi - lo
    return [count, size]
