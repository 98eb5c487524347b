"""What a GPU read during a call that the host stored after the call began (a record's `reads`; docs/traces.md
"Reads during a call").

A record's `w` is the host's memory at the start of its call. A concurrent client (`simgpu run`, or a thread) keeps
storing while the call runs, and the GPU may read those stores during it: a newer AQL write pointer, the packets and
data it publishes, the signal a WAIT_REG_MEM waits for. The simulator reports every read where the GPU observes what
a producer published (`OS.observe_reads`: wptr polls, AQL packets, barrier signals, WAIT_REG_MEM, POLL_REGMEM and
atomic-loop memory, doorbell scans), numbered in the call's order. The recorder (`ReadLog`) compares the bytes read
with its shadow of that memory; where they differ (or at a doorbell scan, whose page is not shadowed) it stores an
entry: [n, gpu_id, kind, va, the bytes read, the pages changed since the previous look]. The pages are taken after
the read, so they hold everything the client stored before the value the GPU saw. The replay (`ReadFeed`) takes the
same pages at its read number n and hands its GPU the recorded bytes, at that read, not before the call.

Granularity: exact for a client that publishes with a store the GPU observes (writes a packet or data, then the
wptr, the header, the signal or the doorbell): everything stored before the observed value is in the entry's pages.
A store the GPU reads with no observation after it (the client racing its own GPU's data reads, a value changed and
changed back between two looks) is not.
"""

from __future__ import annotations

from traces.shadow import PAGE, Shadows, differing_write, hex_at, unmatched_write

KINDS = ("wptr", "aql", "signal", "WAIT_REG_MEM", "POLL_REGMEM", "atomic", "doorbells")
MAX_READ = 64  # the largest observed read: an AQL packet


class ReadLog:
    """The recorder's side: the entries of the current call (`start`, then the driver calls it, then `take`)."""

    def __init__(self, shadows: Shadows):
        self.shadows = shadows
        self.n = 0
        self.entries: list[list] = []

    def start(self) -> None:
        """A call begins: reads are numbered from 0."""
        self.n, self.entries = 0, []

    def take(self) -> list[list]:
        """The entries of the call."""
        out, self.entries = self.entries, []
        return out

    def __call__(self, gpu_id: int, kind: str, va: int, data: bytes, host) -> bytes:
        n, self.n = self.n, self.n + 1
        if kind != "doorbells":
            seen = None if host is None else self.shadows.seen(host)
            if seen is None or seen == data:  # memory no mapping shows the host, or what the replay has too
                return data
        runs = self.shadows.collect()
        if runs or kind != "doorbells":
            self.entries.append([n, gpu_id, kind, va, bytes(data), runs])
        return data


class ReadFeed:
    """The replay's side: at read n of the call, the recorded entry n's pages and bytes (`start`, then the driver
    calls it, then `finish` says what went wrong, if anything)."""

    def __init__(self, shadows: Shadows, concurrent: bool):
        self.shadows = shadows
        # What the replay's GPU changed before the read must hold the recorded value (concurrent: the pages may also
        # hold the caller's stores) or be exactly the recorded pages (else: nobody else stored).
        self.compare = unmatched_write if concurrent else differing_write
        self.n = 0
        self.entries: dict[int, list] = {}
        self.wrong: tuple[str, object, object] | None = None

    def start(self, rec: dict) -> None:
        """A call begins: feed this record's entries."""
        self.n, self.entries, self.wrong = 0, {e[0]: e for e in rec.get("reads", [])}, None

    def __call__(self, gpu_id: int, kind: str, va: int, data: bytes, host) -> bytes:
        n, self.n = self.n, self.n + 1
        entry = self.entries.pop(n, None)
        if entry is None or self.wrong is not None:
            return data
        _, rec_gpu, rec_kind, rec_va, rec_data, runs = entry
        if (rec_gpu, rec_kind, rec_va, len(rec_data)) != (gpu_id, kind, va, len(data)):
            self.wrong = (f"GPU read {n} of the call", _what(rec_gpu, rec_kind, rec_va, len(rec_data)),
                          _what(gpu_id, kind, va, len(data)))
            return data
        bad = self.compare(self.shadows, runs)  # what this GPU wrote before the read must be what the other did
        if bad is not None:
            mid, at, want, got = bad
            self.wrong = (f"memory written before GPU read {n} of the call: mapping {mid} offset {at:#x}",
                          hex_at(want, at % PAGE), hex_at(got, at % PAGE))
            return data
        self.shadows.apply(runs, seen=True)
        return rec_data if kind != "doorbells" else data

    def finish(self) -> tuple[str, object, object] | None:
        """(field, expected, got) of the first difference of the call's reads, or None."""
        if self.wrong is None and self.entries:
            n = min(self.entries)
            _, g, kind, va, data, _ = self.entries[n]
            self.wrong = (f"GPU read {n} of the call", _what(g, kind, va, len(data)), f"{self.n} reads in all")
        return self.wrong


def _what(gpu_id: int, kind: str, va: int, n: int) -> str:
    return f"{kind} of GPU {gpu_id}" + (f" at VA {va:#x} ({n} bytes)" if kind != "doorbells" else "")
