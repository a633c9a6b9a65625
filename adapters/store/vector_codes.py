"""Adapter plumbing: the vector code file beside the database (`<db>.vcodes`), memory-mapped.

Why: the exact matrix (vector_matrix.py) costs every process a full read of the float32 vectors
(1.9 s and ~1 GB at 100k chunks, measured in bench/RESULTS.md). This file holds, per vector, a
1-bit code (sign of the vector minus the corpus mean: 48 bytes at 384 dims) and an int8 code
(per-dimension scale: 384 bytes), and its chunk's time range (two float64: a `since` / `until`
window is then a mask computed in a few milliseconds at a million rows, not a list of the
window's rids read from SQLite and matched with `np.isin`). A fresh process maps it and reads
only the pages a query touches; the bits are scanned in full (Hamming distance), the int8 codes
only for the best few thousand. The float32 vectors stay in SQLite, the store of record; the
final scores are always the exact float32 cosines read from there (vector_code_index.py).

The file is derived and disposable: it records the database it was built from (`db_id`), the
highest rid it covers, the deletion-log position it has seen and a CRC of its last vector, and is
checked against the database before use (`stale_reason`). It is written under a temporary name
and renamed into place after an fsync, so a killed builder leaves either the previous file or
none (and a temporary that the next build removes), never a torn one.

Layout: arrays at offsets fixed by (count, dims), then a JSON header, then the header's length
and the magic. The bits are word-major (words x count uint64), so the scan reads each 64-bit
word column contiguously.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from memlane.adapters.store.code_file_place import code_path
from memlane.adapters.store.temp_files import remove_abandoned_temps, remove_files, temp_path_for

# Version 2 added the rows' time ranges (the `since` / `until` mask); a version-1 file is not
# opened, so the next search rebuilds it.
MAGIC = b"MLVCODE2"
_FOOTER = 16  # uint64 header length + magic
_BATCH = 8192
# Mean and int8 scale come from the first rows (one pass over SQLite, not two); later rows that
# fall outside the scale are clipped, which only blurs the approximate stage.
_SAMPLE = 65_536
UNREACHABLE = np.uint16(0xFFFF)  # Hamming "distance" of an excluded row


@dataclass(frozen=True, slots=True)
class CodeHeader:
    """What the file was built from, and where its arrays are."""

    db_id: str
    dims: int
    count: int
    high_rid: int
    deletion_seq: int
    last_crc: int
    models: list[str]
    sources: list[str]


def _words(dims: int) -> int:
    return (dims + 63) // 64


def _offsets(count: int, dims: int) -> dict[str, int]:
    """Byte offsets of each array; 64-aligned so every memmap view is aligned."""
    sizes = {
        "rids": 8 * count,
        "models": 2 * count,
        "sources": 2 * count,
        "time_start": 8 * count,
        "time_end": 8 * count,
        "mean": 4 * dims,
        "scale": 4 * dims,
        "bits": 8 * _words(dims) * count,
        "codes": dims * count,
    }
    offsets, at = {}, len(MAGIC)
    for name, size in sizes.items():
        at = (at + 63) // 64 * 64
        offsets[name] = at
        at += size
    offsets["end"] = at
    return offsets


def _pack_bits(block: npt.NDArray[np.float32], mean: npt.NDArray[np.float32]) -> Any:
    """(rows, dims) floats -> (rows, words) uint64 sign codes, zero-padded to whole words."""
    rows, dims = block.shape
    packed = np.zeros((rows, _words(dims) * 8), dtype=np.uint8)
    packed[:, : (dims + 7) // 8] = np.packbits(block > mean, axis=1)
    return packed.view(np.uint64)


class CodeFile:
    """An open code file: its header and memory-mapped arrays (read-only)."""

    def __init__(self, path: Path, header: CodeHeader) -> None:
        """Map the arrays of the file at `path`, described by `header`."""
        self.path = path
        self.header = header
        n, d = header.count, header.dims
        at = _offsets(n, d)
        raw = np.memmap(path, dtype=np.uint8, mode="r", shape=(at["end"],))
        self.rids = raw[at["rids"] : at["rids"] + 8 * n].view(np.int64)
        self.models = raw[at["models"] : at["models"] + 2 * n].view(np.int16)
        self.sources = raw[at["sources"] : at["sources"] + 2 * n].view(np.int16)
        # Each row's time range (NaN when undated), so a window is a mask, not a rid list.
        self.time_start = raw[at["time_start"] : at["time_start"] + 8 * n].view(np.float64)
        self.time_end = raw[at["time_end"] : at["time_end"] + 8 * n].view(np.float64)
        self.mean = np.array(raw[at["mean"] : at["mean"] + 4 * d].view(np.float32))
        self.scale = np.array(raw[at["scale"] : at["scale"] + 4 * d].view(np.float32))
        words = _words(d)
        self.bits = raw[at["bits"] : at["bits"] + 8 * words * n].view(np.uint64).reshape(words, n)
        self.codes = raw[at["codes"] : at["codes"] + d * n].view(np.int8).reshape(n, d)

    @classmethod
    def open(cls, path: Path) -> CodeFile | None:
        """Open the file at `path`; None when it is missing or not a whole code file."""
        try:
            size = path.stat().st_size
            with path.open("rb") as f:
                if size < len(MAGIC) + _FOOTER or f.read(len(MAGIC)) != MAGIC:
                    return None
                f.seek(size - _FOOTER)
                footer = f.read(_FOOTER)
                if footer[8:] != MAGIC:
                    return None
                length = int.from_bytes(footer[:8], "little")
                f.seek(size - _FOOTER - length)
                header = CodeHeader(**json.loads(f.read(length)))
        except (OSError, ValueError, TypeError):
            return None
        if _offsets(header.count, header.dims)["end"] + length + _FOOTER != size:
            return None
        return cls(path, header)

    def hamming(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.uint16]:
        """Hamming distance from the query's sign code to every row's, one word column at a time."""
        q = _pack_bits(query.reshape(1, -1), self.mean)[0]
        dist: npt.NDArray[np.uint16] = np.bitwise_count(self.bits[0] ^ q[0]).astype(np.uint16)
        for w in range(1, len(q)):
            dist += np.bitwise_count(self.bits[w] ^ q[w])
        return dist

    def approximate(self, query: npt.NDArray[np.float32], rows: Any) -> Any:
        """int8 estimate of the dot products of `rows` (sorted positions) with `query`."""
        weights = (query * self.scale).astype(np.float32)
        return np.einsum("ij,j->i", self.codes[rows].astype(np.float32), weights)


def _last_crc(conn: Connection, rid: int) -> int | None:
    blob = conn.exec_driver_sql("SELECT embedding FROM chunks WHERE rid = ?", (rid,)).scalar()
    return None if blob is None else zlib.crc32(blob)


def stale_reason(conn: Connection, header: CodeHeader, db_id: str, dims: int) -> str | None:
    """Why the file cannot be used with the database read through `conn`, or None if it can.

    Rows above `high_rid` and deletions after `deletion_seq` are the caller's to add (the file
    is then behind, not wrong). Wrong is: another database, another dimension, a deletion log
    pruned past the file, or a last vector that is not the one the file was built with (a
    database restored from an older copy reuses rids).
    """
    if header.db_id != db_id:
        return "it was built from another database file"
    if header.dims != dims:
        return f"it has {header.dims} dimensions, the index {dims}"
    oldest = conn.exec_driver_sql("SELECT min(seq) FROM vector_deletions").scalar()
    if oldest is not None and int(oldest) > header.deletion_seq + 1:
        return "the deletion log was pruned past it"
    if header.count:
        crc = _last_crc(conn, header.high_rid)
        if crc is None:
            deleted = conn.exec_driver_sql(
                "SELECT 1 FROM vector_deletions WHERE rid = ? AND seq > ?",
                (header.high_rid, header.deletion_seq),
            ).first()
            if deleted is None:
                return "its last vector is missing from the database"
        elif crc != header.last_crc:
            return "its last vector differs from the database's"
    return None


def _label(labels: dict[str, int], value: str) -> int:
    return labels.setdefault(value, len(labels))


def build(conn: Connection, db_path: Path, db_id: str, dims: int) -> CodeFile:
    """Write the code file of every `dims`-sized vector in the database, atomically; open it."""
    target = code_path(db_path)
    remove_abandoned_temps(target)
    seq = conn.exec_driver_sql("SELECT coalesce(max(seq), 0) FROM vector_deletions").scalar_one()
    high, count = conn.exec_driver_sql(
        "SELECT coalesce(max(rid), 0), count(*) FROM chunks "
        "WHERE embedding IS NOT NULL AND length(embedding) = ?",
        (dims * 4,),
    ).one()
    high, count = int(high), int(count)
    at = _offsets(count, dims)
    temp = temp_path_for(target)
    try:
        with temp.open("wb") as f:
            f.write(MAGIC)
            f.truncate(at["end"])
        labels: dict[str, dict[str, int]] = {"models": {}, "sources": {}}
        last_crc = 0
        if count:
            raw = np.memmap(temp, dtype=np.uint8, mode="r+", shape=(at["end"],))
            words = _words(dims)
            bits = raw[at["bits"] : at["bits"] + 8 * words * count].view(np.uint64)
            bits = bits.reshape(words, count)
            codes = raw[at["codes"] : at["codes"] + dims * count].view(np.int8).reshape(-1, dims)
            rids = raw[at["rids"] : at["rids"] + 8 * count].view(np.int64)
            models = raw[at["models"] : at["models"] + 2 * count].view(np.int16)
            sources = raw[at["sources"] : at["sources"] + 2 * count].view(np.int16)
            starts = raw[at["time_start"] : at["time_start"] + 8 * count].view(np.float64)
            ends = raw[at["time_end"] : at["time_end"] + 8 * count].view(np.float64)
            result = conn.exec_driver_sql(
                "SELECT rid, model, source, embedding, time_start, time_end FROM chunks "
                "WHERE embedding IS NOT NULL "
                "AND length(embedding) = ? AND rid <= ? ORDER BY rid",
                (dims * 4, high),
            )
            start = 0
            mean = scale = np.zeros(dims, dtype=np.float32)
            while rows := result.fetchmany(_SAMPLE if start == 0 else _BATCH):
                block = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4")
                block = block.reshape(-1, dims)
                norms = np.linalg.norm(block, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                block = (block / norms).astype(np.float32)
                if start == 0:
                    mean = block.mean(axis=0).astype(np.float32)
                    peak = np.abs(block).max(axis=0)
                    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
                end = start + len(rows)
                rids[start:end] = [r[0] for r in rows]
                models[start:end] = [_label(labels["models"], r[1]) for r in rows]
                sources[start:end] = [_label(labels["sources"], r[2]) for r in rows]
                starts[start:end] = [math.nan if r[4] is None else r[4] for r in rows]
                ends[start:end] = [math.nan if r[5] is None else r[5] for r in rows]
                bits[:, start:end] = _pack_bits(block, mean).T
                codes[start:end] = np.clip(np.rint(block / scale), -127, 127).astype(np.int8)
                start = end
                last_crc = zlib.crc32(rows[-1][3])
            raw[at["mean"] : at["mean"] + 4 * dims] = mean.view(np.uint8)
            raw[at["scale"] : at["scale"] + 4 * dims] = scale.view(np.uint8)
            raw.flush()
            del raw, bits, codes, rids, models, sources, starts, ends
        header = CodeHeader(
            db_id=db_id,
            dims=dims,
            count=count,
            high_rid=high,
            deletion_seq=int(seq),
            last_crc=last_crc,
            models=list(labels["models"]),
            sources=list(labels["sources"]),
        )
        blob = json.dumps(asdict(header)).encode()
        with temp.open("r+b") as f:
            f.seek(at["end"])
            f.write(blob + len(blob).to_bytes(8, "little") + MAGIC)
            f.flush()
            os.fsync(f.fileno())
        temp.replace(target)
    finally:
        remove_files(temp)
    opened = CodeFile.open(target)
    if opened is None:  # another process replaced it between rename and open: use ours again
        raise OSError(f"{target}: the code file just written cannot be read back")
    return opened
