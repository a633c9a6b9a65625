"""LongMemEval (S / subset48 / oracle JSON) as session transcripts (protocol §1, §2.3).

Three settings over the same file:
- `per_question`: one index per question holding its haystack; gold sessions are
  `answer_session_ids`, gold turns the `has_answer` turns (the label is not written to disk);
  a session id repeated inside one haystack is written again as `<id>__dupN.jsonl`;
- `official`: as above but only user turns are indexed, and abstention questions and questions
  whose evidence has no user-side `has_answer` turn are skipped (upstream retrieval protocol);
- `pooled`: every evidence session of every (non-abstention) question in one shared index.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from memlane.bench.datasets.model import Dataset, DocFile, Query, Unit, file_id_for
from memlane.bench.datasets.transcript import encode_session, iso_z, parse_lme_time

Setting = Literal["per_question", "official", "pooled"]


def _is_abstention(item: dict[str, Any]) -> bool:
    return str(item["question_id"]).endswith("_abs")


def _session_file(
    session_id: str,
    turns: list[dict[str, Any]],
    date: str,
    *,
    user_only: bool,
    copy_no: int = 1,
) -> tuple[DocFile, list[int]]:
    """One haystack session -> (file, 1-based lines of its `has_answer` turns)."""
    kept = [t for t in turns if not user_only or t.get("role") == "user"]
    encoded = [(str(t["role"]), str(t["content"])) for t in kept]
    gold = [i for i, t in enumerate(kept, start=1) if t.get("has_answer")]
    suffix = "" if copy_no == 1 else f"__dup{copy_no}"
    name = f"{file_id_for(session_id)}{suffix}.jsonl"
    text = encode_session(encoded, parse_lme_time(date))
    return DocFile("session", name, session_id, text), gold


def convert_question(item: dict[str, Any], *, user_only: bool = False) -> Unit:
    """One question and its haystack -> one unit with one query."""
    files: list[DocFile] = []
    gold_lines: set[tuple[str, int]] = set()
    answer_ids = [str(s) for s in item["answer_session_ids"]]
    copies: dict[str, int] = {}
    for raw_id, date, turns in zip(
        item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"], strict=True
    ):
        sid = str(raw_id)
        copies[sid] = copies.get(sid, 0) + 1
        doc, lines = _session_file(sid, turns, date, user_only=user_only, copy_no=copies[sid])
        files.append(doc)
        if sid in answer_ids:
            gold_lines.update((doc.indexed_path, line) for line in lines)
    qid = str(item["question_id"])
    query = Query(
        qid=qid,
        text=str(item["question"]),
        gold_docs=dict.fromkeys(answer_ids, 1),
        gold_lines=frozenset(gold_lines),
        category=str(item.get("question_type", "all")),
        as_of=_asked(item),
    )
    return Unit(unit_id=qid, files=tuple(files), queries=(query,))


def _asked(item: dict[str, Any]) -> str | None:
    """The question's `question_date` in ISO 8601 (None when the item has none)."""
    date = item.get("question_date")
    return None if not date else iso_z(parse_lme_time(str(date)))


def convert_pooled(items: list[dict[str, Any]], unit_id: str = "pooled") -> Unit:
    """All evidence sessions of all non-abstention questions in one unit (first copy wins)."""
    files: dict[str, DocFile] = {}
    lines_of: dict[str, list[int]] = {}
    queries: list[Query] = []
    for item in items:
        if _is_abstention(item):
            continue
        answer_ids = [str(s) for s in item["answer_session_ids"]]
        for raw_id, date, turns in zip(
            item["haystack_session_ids"],
            item["haystack_dates"],
            item["haystack_sessions"],
            strict=True,
        ):
            sid = str(raw_id)
            if sid in answer_ids and sid not in files:
                files[sid], lines_of[sid] = _session_file(sid, turns, date, user_only=False)
        gold_lines = frozenset(
            (files[s].indexed_path, line) for s in answer_ids if s in files for line in lines_of[s]
        )
        queries.append(
            Query(
                qid=str(item["question_id"]),
                text=str(item["question"]),
                gold_docs={s: 1 for s in answer_ids if s in files},
                gold_lines=gold_lines,
                category=str(item.get("question_type", "all")),
                as_of=_asked(item),
            )
        )
    return Unit(unit_id=unit_id, files=tuple(files.values()), queries=tuple(queries))


def dataset(path: Path, setting: Setting = "per_question", name: str | None = None) -> Dataset:
    label = (
        name
        or {"per_question": "lme_s", "official": "lme_s_official", "pooled": "lme_pooled"}[setting]
    )

    def units() -> Iterator[Unit]:
        items: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        if setting == "pooled":
            yield convert_pooled(items)
            return
        for item in items:
            if setting == "official":
                if _is_abstention(item):
                    continue
                unit = convert_question(item, user_only=True)
                if not unit.queries[0].gold_lines:
                    continue
                yield unit
            else:
                yield convert_question(item)

    return Dataset(name=label, units=units, turn_level=True)
