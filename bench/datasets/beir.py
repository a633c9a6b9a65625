"""BEIR-style corpora (SciFact, xquad_zh, jaquad_dev, autorag_ko) as markdown notes (protocol §1).

One note per document, `memory/docs/<file_id>.md` = `# <title>\n\n<text>\n` (no heading line
when the title is empty); queries from `queries.jsonl`, gold from `qrels/<split>.tsv`. The whole
corpus is one index.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from memlane.bench.datasets.model import Dataset, DocFile, Query, Unit, file_id_for


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """`query-id<TAB>corpus-id<TAB>score` rows (header optional) -> {qid: {doc_id: grade}}."""
    qrels: dict[str, dict[str, int]] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in raw.split("\t")]
        if len(parts) < 3 or not parts[0]:
            continue
        qid, doc_id, score = parts[0], parts[1], parts[2]
        if qid == "query-id":
            continue
        grade = int(float(score))
        if grade > 0:
            qrels.setdefault(qid, {})[doc_id] = grade
    return qrels


def note_text(title: str, text: str) -> str:
    title = title.strip()
    body = text.strip()
    if title:
        return f"# {title}\n\n{body}\n"
    return f"{body}\n"


def read_corpus(path: Path) -> list[DocFile]:
    files: list[DocFile] = []
    seen: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            row = json.loads(raw)
            doc_id = str(row["_id"])
            file_id = file_id_for(doc_id)
            if seen.get(file_id, doc_id) != doc_id:
                raise ValueError(f"file id collision: {doc_id!r} and {seen[file_id]!r}")
            seen[file_id] = doc_id
            text = note_text(str(row.get("title") or ""), str(row.get("text") or ""))
            files.append(DocFile("note", f"{file_id}.md", doc_id, text))
    return files


def read_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip():
                row = json.loads(raw)
                queries[str(row["_id"])] = str(row["text"])
    return queries


def load_unit(root: Path, split: str = "test", unit_id: str | None = None) -> Unit:
    """Read a BEIR folder (`corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`) as one unit.

    Queries without judgments are dropped (BEIR convention), judged queries missing from
    `queries.jsonl` are an error.
    """
    files = read_corpus(root / "corpus.jsonl")
    texts = read_queries(root / "queries.jsonl")
    qrels = read_qrels(root / "qrels" / f"{split}.tsv")
    known = {f.doc_id for f in files}
    queries: list[Query] = []
    for qid in sorted(qrels, key=_natural_key):
        if qid not in texts:
            raise ValueError(f"qrels name query {qid!r} missing from queries.jsonl")
        gold = {d: g for d, g in qrels[qid].items() if d in known}
        if gold:
            queries.append(Query(qid=qid, text=texts[qid], gold_docs=gold))
    return Unit(unit_id=unit_id or root.name, files=tuple(files), queries=tuple(queries))


def dataset(name: str, root: Path, split: str = "test", max_results: int = 50) -> Dataset:
    def units() -> Iterator[Unit]:
        yield load_unit(root, split, unit_id=name)

    return Dataset(name=name, units=units, max_results=max_results)


def _natural_key(value: str) -> tuple[int, int | str]:
    return (0, int(value)) if value.isdigit() else (1, value)
