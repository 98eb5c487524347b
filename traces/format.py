"""The trace file format (docs/traces.md): a header, then length-prefixed, checksummed, optionally
zlib-compressed msgpack records, readable one at a time.

```
file    = MAGIC(8) version:u16 reserved:u16 header_len:u32 header(msgpack map) record*
record  = length:u32 crc32:u32 codec:u8 payload[length]      (crc32 of the payload as stored)
payload = msgpack map (codec 0) | inflated_length:u32 zlib(msgpack map) (codec 1; version 1: no inflated_length)
```
All integers little-endian. Writing is deterministic (same records -> same bytes).

Reading trusts nothing: a record is inflated to at most its declared length and at most `max_record` bytes (a zlib
bomb costs the reader no more than that), and every header and record is checked against traces.schema.
"""

from __future__ import annotations

import io
import os
import struct
import warnings
import zlib
from collections.abc import Iterator

import msgpack

from simgpu import settings
from traces.schema import RECORD_TYPES, SchemaError, Validator, check_header

MAGIC = b"SIMGPUTR"
VERSION = 2  # 2: a zlib payload starts with its inflated length
_FILE_HEAD = struct.Struct("<8sHHI")
_REC_HEAD = struct.Struct("<IIB")
_INFLATED = struct.Struct("<I")
CODEC_RAW, CODEC_ZLIB = 0, 1
COMPRESS_MIN = 512  # payloads smaller than this are stored raw: zlib would not pay for itself
SAMPLE = 1 << 16  # large payloads are compressed only when a sample of them shrinks (random data does not)
# The most bytes one record may take, stored or inflated: bounds what a reader allocates for any file.
MAX_RECORD = 1 << 26
_INFLATE_PIECE = 1 << 20
MAX_RECORD_ENV = "SIMGPU_TRACE_MAX_RECORD"
__all__ = ["RECORD_TYPES", "TraceError", "TraceReader", "TraceWriter", "read_trace", "write_trace"]


def record_limit() -> int:
    """The record size limit: $SIMGPU_TRACE_MAX_RECORD bytes, else MAX_RECORD."""
    return settings.get(MAX_RECORD_ENV) or MAX_RECORD


class TraceError(Exception):
    """A trace file that cannot be read: names the record number and byte offset where reading failed."""

    def __init__(self, why: str, record: int | None = None, offset: int | None = None):
        where = "header" if record is None else f"record {record}"
        super().__init__(f"{why} ({where}, byte offset {offset if offset is not None else 0})")
        self.why, self.record, self.offset = why, record, offset
        self.path: str | None = None  # the file, when the reader opened it by name


def _pack(obj) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def _unpack(data: bytes):
    return msgpack.unpackb(data, raw=False, strict_map_key=False, use_list=True)


class TraceWriter:
    """Appends records to a trace file (or any binary stream)."""

    def __init__(self, dest, header: dict, level: int = 1):
        self._own = isinstance(dest, str | bytes) or hasattr(dest, "__fspath__")
        self.f = open(dest, "wb") if self._own else dest  # noqa: SIM115 - closed by close()
        self.level = level
        self.count = 0
        self.limit = record_limit()
        body = _pack({"format": VERSION, **header})
        self.f.write(_FILE_HEAD.pack(MAGIC, VERSION, 0, len(body)) + body)

    def write(self, record: dict) -> None:
        """Append one record (a dict with a "t" type)."""
        raw = payload = _pack(record)
        codec = CODEC_RAW
        if len(payload) >= COMPRESS_MIN and self._compressible(payload):
            z = zlib.compress(payload, self.level)
            if len(z) + _INFLATED.size < len(payload):
                payload, codec = _INFLATED.pack(len(payload)) + z, CODEC_ZLIB
        self.f.write(_REC_HEAD.pack(len(payload), zlib.crc32(payload), codec) + payload)
        if len(raw) > self.limit:  # written all the same: the recording is not lost, but say how to read it
            warnings.warn(f"trace record {self.count} takes {len(raw)} bytes, more than a reader takes by default: "
                          f"read this trace with {MAX_RECORD_ENV}={len(raw)}", stacklevel=2)
        self.count += 1

    def _compressible(self, payload: bytes) -> bool:
        """Whether zlib is worth running: small payloads always; large ones when their middle compresses."""
        if len(payload) <= 2 * SAMPLE:
            return True
        mid = len(payload) // 2
        return len(zlib.compress(payload[mid:mid + SAMPLE], self.level)) < 0.9 * SAMPLE

    def flush(self) -> None:
        """Push buffered bytes to the file."""
        self.f.flush()

    def close(self) -> None:
        """Flush and (if this writer opened it) close the file."""
        if self.f.closed:
            return
        self.f.flush()
        if self._own:
            self.f.close()


class TraceReader:
    """Reads a trace record by record: `.header`, then iterate for (number, offset, record). Every record is checked
    against traces.schema before it is handed out; `max_record` bounds the bytes any one record may take."""

    def __init__(self, src, max_record: int | None = None):
        self._own = isinstance(src, str | bytes) or hasattr(src, "__fspath__")
        self.path = os.fsdecode(src) if self._own else None
        self.f = open(src, "rb") if self._own else src  # noqa: SIM115 - closed by close()
        self.max_record = max_record or record_limit()
        try:
            self.header = self._read_header()
        except TraceError as e:
            self.close()
            e.path = self.path
            raise
        except BaseException:
            self.close()
            raise
        self.data_start = self.f.tell()

    def _read_exact(self, n: int, what: str, record: int | None, offset: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise TraceError(f"truncated {what}: wanted {n} bytes, found {len(data)}", record, offset)
        return data

    def _read_header(self) -> dict:
        head = self._read_exact(_FILE_HEAD.size, "file header", None, 0)
        magic, version, _, hlen = _FILE_HEAD.unpack(head)
        if magic != MAGIC:
            raise TraceError(f"not a simgpu trace (magic {magic!r}, expected {MAGIC!r})", None, 0)
        if version > VERSION:
            raise TraceError(f"trace format version {version} is newer than this reader (version {VERSION}); "
                             "upgrade simgpu", None, 8)
        if version < 1:
            raise TraceError(f"bad trace format version {version}", None, 8)
        self.version = version
        if hlen > self.max_record:
            raise TraceError(f"header length {hlen} is more than the limit of {self.max_record} bytes", None, 12)
        body = self._read_exact(hlen, "header body", None, _FILE_HEAD.size)
        try:
            header = _unpack(body)
        except Exception as e:  # noqa: BLE001 - any decoder failure is a corrupt header
            raise TraceError(f"corrupt header: {type(e).__name__}: {e}", None, _FILE_HEAD.size) from None
        if not isinstance(header, dict):
            raise TraceError("corrupt header: not a map", None, _FILE_HEAD.size)
        try:
            check_header(header)
        except SchemaError as e:
            raise TraceError(f"bad header: {e}", None, _FILE_HEAD.size) from None
        return header

    def __iter__(self) -> Iterator[tuple[int, int, dict]]:
        try:
            yield from self._records()
        except TraceError as e:
            e.path = self.path
            raise

    def _records(self) -> Iterator[tuple[int, int, dict]]:
        self.f.seek(self.data_start)
        number, validator = 0, Validator()
        while True:
            offset = self.f.tell()
            head = self.f.read(_REC_HEAD.size)
            if not head:
                return
            if len(head) < _REC_HEAD.size:
                raise TraceError(f"truncated record header ({len(head)} of {_REC_HEAD.size} bytes)", number, offset)
            rec = self._decode(head, number, offset)
            try:
                validator.check(rec)
            except SchemaError as e:
                raise TraceError(f"bad {rec['t']} record: {e}", number, offset) from None
            yield number, offset, rec
            number += 1

    def _decode(self, head: bytes, number: int, offset: int) -> dict:
        length, crc, codec = _REC_HEAD.unpack(head)
        if length > self.max_record:
            raise TraceError(f"record length {length} is more than the limit of {self.max_record} bytes "
                             f"(${MAX_RECORD_ENV} raises it)", number, offset)
        payload = self._read_exact(length, "record payload", number, offset)
        if zlib.crc32(payload) != crc:
            raise TraceError("corrupt record: checksum mismatch", number, offset)
        if codec == CODEC_ZLIB:
            payload = self._inflate(payload, number, offset)
        elif codec != CODEC_RAW:
            raise TraceError(f"corrupt record: unknown codec {codec}", number, offset)
        try:
            rec = _unpack(payload)
        except Exception as e:  # noqa: BLE001 - any decoder failure is a corrupt record
            raise TraceError(f"corrupt record: {type(e).__name__}: {e}", number, offset) from None
        if not isinstance(rec, dict) or rec.get("t") not in RECORD_TYPES:
            raise TraceError("corrupt record: not a map with a known type \"t\"", number, offset)
        return rec

    def _inflate(self, payload: bytes, number: int, offset: int) -> bytearray:
        """A zlib payload inflated to its declared length, never past it or the limit (version 1 declares none)."""
        declared = self.max_record
        if self.version >= 2:
            if len(payload) < _INFLATED.size:
                raise TraceError("corrupt record: zlib payload without its inflated length", number, offset)
            (declared,), payload = _INFLATED.unpack_from(payload), payload[_INFLATED.size:]
            if declared > self.max_record:
                raise TraceError(f"record inflates to {declared} bytes, more than the limit of {self.max_record} "
                                 f"(${MAX_RECORD_ENV} raises it)", number, offset)
        z, out = zlib.decompressobj(), bytearray()
        try:
            # In pieces, so a stream that inflates past what it declared costs no more than the declaration.
            while not z.eof and len(out) <= declared:
                piece = z.decompress(payload, _INFLATE_PIECE)
                payload = z.unconsumed_tail
                if not piece and not payload:
                    break  # the input ended before the stream did
                out += piece
        except zlib.error as e:
            raise TraceError(f"corrupt record: zlib: {e}", number, offset) from None
        if len(out) > declared:
            more = "its declared" if self.version >= 2 else "the limit of"
            raise TraceError(f"corrupt record: inflates to more than {more} {declared} bytes", number, offset)
        if not z.eof or z.unused_data or (self.version >= 2 and len(out) != declared):
            raise TraceError(f"corrupt record: zlib stream ends after {len(out)} bytes, not at its declared length "
                             f"{declared}" if self.version >= 2 else "corrupt record: truncated zlib stream",
                             number, offset)
        return out

    def records(self) -> Iterator[dict]:
        """Just the records."""
        for _, _, rec in self:
            yield rec

    def close(self) -> None:
        """Close the file if this reader opened it."""
        if self._own:
            self.f.close()

    def __enter__(self) -> TraceReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_trace(src) -> tuple[dict, list[dict]]:
    """The header and every record (for tools and tests; the CLI streams instead)."""
    if isinstance(src, bytes | bytearray):
        src = io.BytesIO(bytes(src))
    r = TraceReader(src)
    try:
        return r.header, list(r.records())
    finally:
        r.close()


def write_trace(dest, header: dict, records: list[dict]) -> None:
    """Write a whole trace (e.g. a mutated copy of another)."""
    header = {k: v for k, v in header.items() if k != "format"}
    w = TraceWriter(dest, header)
    for rec in records:
        w.write(rec)
    w.close()
