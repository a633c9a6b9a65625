"""LoCoMo (`locomo10.json`) as session transcripts, one index per conversation (protocol §1).

`speaker_a` -> role user, `speaker_b` -> role assistant; content `"<name>: <text>"` plus
`" [shares image: <caption>]"`; dia_id `D<s>:<i>` is line i of session s's file. Evidence strings
are normalised as the data set's README lists (compound ids split, `D:11:26` and `D30:05` fixed,
ids that still do not resolve are dropped).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from memlane.bench.datasets.model import Dataset, DocFile, Query, Unit
from memlane.bench.datasets.transcript import encode_session, iso_z, parse_locomo_time

CATEGORY_NAMES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}

_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def normalise_evidence(raw: list[Any]) -> list[tuple[int, int]]:
    """Evidence strings -> (session, turn) pairs in order, duplicates removed."""
    out: list[tuple[int, int]] = []
    for item in raw:
        for token in re.split(r"[;,\s]+", str(item)):
            m = _ID.match(token.strip())
            if m is None:
                continue
            pair = (int(m.group(1)), int(m.group(2)))
            if pair not in out:
                out.append(pair)
    return out


def session_file_name(sample_id: str, session_no: int) -> str:
    return f"{sample_id}__session_{session_no:02d}.jsonl"


def convert_sample(sample: dict[str, Any]) -> Unit:
    """One conversation -> one unit: a transcript per session, a query per QA item with evidence."""
    sample_id = str(sample["sample_id"])
    conv = sample["conversation"]
    speaker_a = conv["speaker_a"]
    session_nos = sorted(
        int(m.group(1)) for key in conv if (m := _SESSION_KEY.match(key)) and conv[key]
    )
    files: list[DocFile] = []
    turns_per_session: dict[int, int] = {}
    last_start = None
    for n in session_nos:
        turns: list[tuple[str, str]] = []
        for turn in conv[f"session_{n}"]:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [shares image: {turn['blip_caption']}]"
            turns.append(("user" if turn["speaker"] == speaker_a else "assistant", content))
        start = parse_locomo_time(conv[f"session_{n}_date_time"])
        last_start = start if last_start is None else max(last_start, start)
        name = session_file_name(sample_id, n)
        files.append(
            DocFile("session", name, name.removesuffix(".jsonl"), encode_session(turns, start))
        )
        turns_per_session[n] = len(turns)

    # LoCoMo's questions carry no date: they are asked the day after the last session.
    asked = None if last_start is None else iso_z(last_start + timedelta(days=1))
    queries: list[Query] = []
    for i, qa in enumerate(sample.get("qa", [])):
        pairs = [
            (s, t)
            for s, t in normalise_evidence(qa.get("evidence", []))
            if 1 <= t <= turns_per_session.get(s, 0)
        ]
        if not pairs:
            continue
        gold_lines = frozenset((f"sessions/{session_file_name(sample_id, s)}", t) for s, t in pairs)
        gold_docs = {session_file_name(sample_id, s).removesuffix(".jsonl"): 1 for s, _ in pairs}
        queries.append(
            Query(
                qid=f"{sample_id}#{i}",
                text=str(qa["question"]),
                gold_docs=gold_docs,
                gold_lines=gold_lines,
                category=str(qa.get("category", "all")),
                as_of=asked,
            )
        )
    return Unit(unit_id=sample_id, files=tuple(files), queries=tuple(queries))


def dataset(path: Path, name: str = "locomo") -> Dataset:
    def units() -> Iterator[Unit]:
        for sample in json.loads(path.read_text(encoding="utf-8")):
            yield convert_sample(sample)

    return Dataset(name=name, units=units, turn_level=True)
