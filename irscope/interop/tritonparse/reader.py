"""A tritonparse trace, record by record: NDJSON, plain or gzip-compressed (one stream, or one gzip member per record
as tritonparse writes with TRITON_TRACE_COMPRESSION=gzip), read one line at a time so that memory holds a single
record however many kernels the trace holds.

A line that is not a JSON object, a file cut off inside a record or a damaged gzip stream is a TraceError that says
what is wrong, at which line, and what to do.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path
from typing import Any

GZIP_MAGIC = b"\x1f\x8b"
# Other outputs tritonparse can write (TRITON_TRACE_COMPRESSION=zstd, clp): told apart so the error can say so.
OTHER_MAGIC = {b"\x28\xb5\x2f\xfd": "zstd-compressed", b"\xfd\x2f\xc5\x30": "a CLP archive"}


class TraceError(ValueError):
    """A trace that cannot be read: what is wrong, where (FILE:LINE), what to do."""


@dataclass(frozen=True)
class Record:
    line: int  # 1-based line of the trace (of its decompressed text)
    data: dict[str, Any]


def _open(path: Path) -> gzip.GzipFile | BufferedReader:
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except IsADirectoryError:
        raise TraceError(f"{path} is a directory: give the trace file (tritonparse writes *.ndjson in it)") from None
    except OSError as e:
        raise TraceError(f"{path}: cannot read it ({e.strerror})") from None
    for magic, what in OTHER_MAGIC.items():
        if head.startswith(magic):
            raise TraceError(
                f"{path} is {what}: irscope reads NDJSON traces, plain or gzip; write the trace with "
                "TRITON_TRACE_COMPRESSION=none or gzip (or decompress a zstd one with `zstd -d`)"
            )
    return gzip.open(path, "rb") if head.startswith(GZIP_MAGIC) else open(path, "rb")


def records(path: str | Path) -> Iterator[Record]:
    """Every record of the trace in order; blank lines are skipped."""
    path = Path(path)
    number = 0
    with _open(path) as f:
        while True:
            try:
                raw = f.readline()
            except (EOFError, OSError, zlib.error) as e:
                raise TraceError(
                    f"{path}: the gzip stream breaks after line {number} ({e}): the file was cut off or damaged; "
                    f"copy it again, or decompress what is readable (`zcat {path.name} > trace.ndjson`, then remove "
                    "the last, partial line) to import the records before the break"
                ) from None
            if not raw:
                break
            number += 1
            if raw.strip():
                yield Record(number, _decode(path, number, raw))
    if number == 0:
        raise TraceError(f"{path} is empty: a tritonparse trace holds one JSON record a line")


def _decode(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    where = f"{path}:{number}"
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as e:
        raise TraceError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start}): the trace is damaged") from None
    except json.JSONDecodeError as e:
        if not raw.endswith(b"\n"):
            raise TraceError(
                f"{where}: the file ends inside a record ({e.msg} at column {e.colno}): the traced process died "
                f"while writing it, or the copy is incomplete; remove that last line (`head -n {number - 1}`) to "
                "import the records before it"
            ) from None
        raise TraceError(
            f"{where}: not a JSON record ({e.msg} at column {e.colno}): the trace is damaged; remove or repair "
            "that line"
        ) from None
    if not isinstance(data, dict):
        raise TraceError(f"{where}: a JSON {type(data).__name__}, not a record (an object with an event_type)")
    if not isinstance(data.get("event_type"), str):
        raise TraceError(
            f"{where}: a JSON object without an event_type: not a tritonparse trace record (is this the trace "
            "tritonparse wrote, *.ndjson or *_mapped.ndjson.gz?)"
        )
    return data
