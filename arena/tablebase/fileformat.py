"""The table file: a magic number, a JSON header, and the arrays, with a SHA-256 checksum.

::

    MORRISTB                  8 bytes, the magic
    <header length>           4 bytes, little-endian
    <header>                  UTF-8 JSON (below)
    <payload>                 for each orientation in the header's order: its classes
                              (uint32, little-endian), then its codes (uint8 or uint16)

The header holds ``format`` (:data:`~arena.tablebase.params.FORMAT_VERSION`), ``rules`` (every
parameter the values depend on), ``key`` (their short name), ``men`` (``[a, b]``, ``a >= b``),
``dtype``, ``orientations`` (``mover``, ``opponent``, ``classes``, ``per_class`` and counts of
won, drawn and lost entries and positions), ``max_distance``, ``chain_max_distance`` (the
largest distance of this table and every table it was computed from), ``payload_bytes``,
``build`` (times, edges, levels, by what) and ``sha256``: the SHA-256 of the header without
``sha256`` (as canonical JSON: sorted keys, no spaces) followed by the payload, so a change
to either is found.

A code is 0 for a draw, ``d`` for a win in ``d`` plies and ``flag + d`` for a loss in ``d``
plies, ``flag`` being the top bit of the dtype (128 or 32768).

Pure: :func:`dumps` and :func:`loads` turn bytes into values and back; the two small
functions at the end read a header from a file and write a file atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from arena.tablebase.errors import TablebaseCorrupt
from arena.tablebase.params import FORMAT_VERSION, TableRules

MAGIC = b"MORRISTB"
#: the largest header read (bytes)
HEADER_CAP = 1 << 20
#: bytes per code, by dtype name
DTYPES = {"uint8": 1, "uint16": 2}


@dataclass(frozen=True)
class Header:
    """A table file's header, checked: the parsed JSON and the values the prober needs."""

    data: dict[str, Any]
    rules: TableRules
    men: tuple[int, int]
    dtype: str
    #: per orientation: (mover, opponent, number of classes, entries per class)
    orientations: tuple[tuple[int, int, int, int], ...]
    payload_bytes: int
    #: where the payload starts in the file
    offset: int

    @property
    def chain_max_distance(self) -> int:
        return int(self.data["chain_max_distance"])


@dataclass(frozen=True)
class Orientation:
    """One orientation read from a file: its classes and codes, without numpy."""

    mover: int
    opponent: int
    per_class: int
    classes: Sequence[int]
    codes: Sequence[int]


def _canonical(header: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in header.items() if k != "sha256"}, sort_keys=True,
                      separators=(",", ":")).encode()


def dumps(header: dict[str, Any], parts: Sequence[tuple[bytes, bytes]]) -> bytes:
    """A whole file: ``header`` (without ``payload_bytes`` and ``sha256``, which are added)
    and, per orientation, its classes (uint32 little-endian) and codes as bytes."""
    payload = b"".join(c + k for c, k in parts)
    full = dict(header, format=FORMAT_VERSION, payload_bytes=len(payload))
    full["sha256"] = hashlib.sha256(_canonical(full) + payload).hexdigest()
    text = json.dumps(full, sort_keys=True, indent=1).encode()
    return MAGIC + struct.pack("<I", len(text)) + text + payload


def parse_header(head: bytes, where: str) -> Header:
    """The header at the start of a file's bytes ``head`` (at least the whole header)."""
    if head[:8] != MAGIC:
        raise TablebaseCorrupt(f"{where}: not a Morris Arena table (bad magic)")
    if len(head) < 12:
        raise TablebaseCorrupt(f"{where}: cut short")
    (size,) = struct.unpack("<I", head[8:12])
    if size > HEADER_CAP or len(head) < 12 + size:
        raise TablebaseCorrupt(f"{where}: header cut short or too large ({size} bytes)")
    try:
        data = json.loads(head[12:12 + size].decode())
        if not isinstance(data, dict):
            raise ValueError("the header is not an object")
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"format {data.get('format')!r}, this version reads "
                             f"{FORMAT_VERSION}")
        rules = TableRules.from_dict(data["rules"])
        a, b = (int(x) for x in data["men"])
        dtype = str(data["dtype"])
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}")
        orients = tuple((int(o["mover"]), int(o["opponent"]), int(o["classes"]),
                         int(o["per_class"])) for o in data["orientations"])
        payload = int(data["payload_bytes"])
        str(data["sha256"])
        int(data["chain_max_distance"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise TablebaseCorrupt(f"{where}: bad header ({e})") from None
    want = sum(k * 4 + k * c * DTYPES[dtype] for _, _, k, c in orients)
    if want != payload:
        raise TablebaseCorrupt(f"{where}: the header's sizes do not add up")
    return Header(data, rules, (a, b), dtype, orients, payload, 12 + size)


def loads(blob: bytes, where: str) -> tuple[Header, list[Orientation]]:
    """A whole file's header and orientations, the checksum verified.

    :raises TablebaseCorrupt: bad magic, header, size or checksum.
    """
    header = parse_header(blob, where)
    payload = blob[header.offset:]
    if len(payload) != header.payload_bytes:
        raise TablebaseCorrupt(f"{where}: {len(payload)} payload bytes, the header says "
                               f"{header.payload_bytes} (cut short or grown)")
    digest = hashlib.sha256(_canonical(header.data) + payload).hexdigest()
    if digest != header.data["sha256"]:
        raise TablebaseCorrupt(f"{where}: checksum mismatch (the file is damaged)")
    out = []
    at = 0
    width = DTYPES[header.dtype]
    for mover, opponent, k, per in header.orientations:
        classes = array("I")
        classes.frombytes(payload[at:at + 4 * k])
        at += 4 * k
        n = k * per * width
        codes: Sequence[int]
        if width == 1:
            codes = payload[at:at + n]
        else:
            wide = array("H")
            wide.frombytes(payload[at:at + n])
            codes = wide
        at += n
        if sys.byteorder == "big":
            classes.byteswap()
            if isinstance(codes, array):
                codes.byteswap()
        out.append(Orientation(mover, opponent, per, classes, codes))
    return header, out


def read_header(path: Path) -> Header:
    """The header of the table file at ``path`` (the payload is not read)."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
            if len(head) == 12 and head[:8] == MAGIC:
                (size,) = struct.unpack("<I", head[8:12])
                head += f.read(min(size, HEADER_CAP))
    except OSError as e:
        raise TablebaseCorrupt(f"{path}: cannot read ({e.strerror})") from None
    return parse_header(head, str(path))


def write_atomically(path: Path, blob: bytes) -> None:
    """Write ``blob`` to ``path`` through a temporary file in the same folder, renamed when
    complete and synced: a file at ``path`` is always whole."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
