"""Value types shared by every dataset reader: files to write, queries, and their gold labels.

A reader turns a benchmark into `Unit`s. A unit is what one index holds (a LoCoMo conversation,
a LongMemEval question's haystack, a whole BEIR corpus); its queries are searched against that
index only. Gold labels are expressed in the paths memlane reports (`memory/docs/<id>.md`,
`sessions/<file>.jsonl`) so scoring never needs to know the data set.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

FileKind = Literal["note", "session"]

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


@dataclass(frozen=True, slots=True)
class DocFile:
    """One file of a workspace. `name` is the file name; `doc_id` the id gold labels use."""

    kind: FileKind
    name: str
    doc_id: str
    text: str

    @property
    def indexed_path(self) -> str:
        """The path memlane reports for this file in search results."""
        if self.kind == "note":
            return f"memory/docs/{self.name}"
        return f"sessions/{self.name}"


@dataclass(frozen=True, slots=True)
class Query:
    """One query with its gold labels.

    `gold_docs` maps document/session ids to graded relevance (binary in every set here);
    `gold_lines` holds (indexed path, 1-based line) pairs for turn-level scoring, empty when the
    data set has no turn labels.
    """

    qid: str
    text: str
    gold_docs: dict[str, int]
    gold_lines: frozenset[tuple[str, int]] = frozenset()
    category: str = "all"
    # When the question is asked (ISO 8601 UTC), as the user asked it: LongMemEval's
    # question_date, LoCoMo's day after its last session; None for sets without time.
    as_of: str | None = None


@dataclass(frozen=True, slots=True)
class Unit:
    """What one index holds, and the queries searched against it."""

    unit_id: str
    files: tuple[DocFile, ...]
    queries: tuple[Query, ...]

    def doc_of_path(self) -> dict[str, str]:
        return {f.indexed_path: f.doc_id for f in self.files}


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named benchmark: a lazy sequence of units plus how to score it."""

    name: str
    units: Callable[[], Iterator[Unit]]
    turn_level: bool = False
    # Hits asked for per query: enough for the deepest cut-off the set reports (SciFact R@100).
    max_results: int = 50


def file_id_for(doc_id: str) -> str:
    """The doc id itself when it is filename-safe, else the first 16 hex of its sha256."""
    if _SAFE_ID.match(doc_id) and doc_id not in {".", ".."}:
        return doc_id
    return hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:16]
