"""The relevance-floor study's data: recorded legs (`bench.studies.foreign collect`) loaded into
queries whose fused hits carry the raw signals a rule may read (cosine, bm25 evidence, index size,
background cosines, the share of the query's terms a hit holds). Used by `relevance_study`.
"""

from __future__ import annotations

import math
import sqlite3
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlane.bench.datasets import registry
from memlane.bench.runner import score_query
from memlane.bench.studies import foreign
from memlane.bench.studies.fusion_study import half_of
from memlane.domain.keywords import fts_document
from memlane.domain.relevance import _WORD, query_keys, word_key
from memlane.domain.scoring import apply_min_score

REAL = ("locomo", "lme_pooled", "xquad_zh")
FOREIGN = (
    "scifact:locomo",
    "lme_pooled:locomo",
    "xquad_zh:locomo",
    "locomo:xquad_zh",
    "scifact:xquad_zh",
    "locomo:lme_pooled",
    "scifact:lme_pooled",
)


@dataclass(frozen=True, slots=True)
class Hit:
    cos: float | None
    ev: float | None
    coverage: float  # idf-weighted share of the query's terms the hit contains
    share: float  # unweighted share of the query's terms the hit contains
    dshare: float  # the same as the shipped floor computes it (domain.relevance.term_share)
    lines: tuple[str, int, int]
    matched: int = 0  # how many of the query's keys the hit holds (dshare × n_keys)


@dataclass(frozen=True, slots=True)
class Query:
    pair: str
    half: str
    n_chunks: int
    background: float  # mean cosine of the query to every chunk
    cand_median: float  # median cosine of its vector candidates
    hits: tuple[Hit, ...]  # the fused pool after minScore, in order
    score: Callable[[Sequence[tuple[str, int, int]]], float] | None  # real queries only
    n_keys: int = 0  # the query's keyword terms (domain.relevance.query_keys)
    known: float = 1.0  # share of those keys found in any candidate of either leg (the pool)
    top_cos: float = 0.0  # the best cosine of the vector leg


Rule = Callable[[Query, Hit], bool]


def idf(n: int, df: int) -> float:
    """bm25's idf (FTS5's form, floored a little above 0)."""
    return max(1e-6, math.log((n - df + 0.5) / (df + 0.5)))


def chunk_texts(work_dir: Path, memory: str) -> dict[str, str]:
    """chunk id -> text, read from every unit store of `memory` (read-only)."""
    texts: dict[str, str] = {}
    for db in sorted((work_dir / memory).glob("*/state/memory/bench-local.sqlite")):
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        texts.update({str(i): str(t) for i, t in conn.execute("SELECT id, text FROM chunks")})
        conn.close()
    return texts


def chunk_keys(work_dir: Path, memory: str) -> dict[str, frozenset[str]]:
    """chunk id -> the word keys of its text, as domain.relevance.term_share reads a text."""
    return {
        cid: frozenset(word_key(w) for w in _WORD.findall(fts_document(text)))
        for cid, text in chunk_texts(work_dir, memory).items()
    }


def share_of(keys: frozenset[str], held: frozenset[str]) -> float:
    """domain.relevance.term_share over precomputed keys."""
    return len(keys & held) / len(keys) if keys else 1.0


def load(legs_dir: Path, pairs: Sequence[str], fusion: str) -> list[Query]:
    out: list[Query] = []
    key_cache: dict[str, dict[str, frozenset[str]]] = {}
    for pair in pairs:
        q_name, m_name = foreign.parse_pair(pair)
        if m_name not in key_cache:
            key_cache[m_name] = chunk_keys(legs_dir, m_name)
        texts = key_cache[m_name]
        qtext = {
            (u.unit_id, q.qid): q.text
            for u in registry.load(q_name, None, foreign.DATA_ROOT[0]).units()
            for q in u.queries
        }
        by_qid = {qid: t for (_, qid), t in qtext.items()}
        records = __import__("json").loads(foreign.legs_path(legs_dir, pair).read_text())
        gold: dict[tuple[str, str], Any] = {}
        turn_level = False
        if q_name == m_name:
            dataset = registry.load(m_name, None, foreign.DATA_ROOT[0])
            turn_level = dataset.turn_level
            for unit in dataset.units():
                doc_of_path = unit.doc_of_path()
                gold.update({(unit.unit_id, q.qid): (q, doc_of_path) for q in unit.queries})
        metric = foreign.REAL_METRIC.get(m_name, "turn_recall@L5" if turn_level else "recall@5")
        for rec in records:
            n = rec["n_chunks"]
            terms = rec["terms"]
            total = sum(idf(n, df) for _, df, _ in terms) or 1.0
            weight: dict[str, float] = {}
            count: dict[str, int] = {}
            for _, df, ids in terms:
                for cid in ids:
                    weight[cid] = weight.get(cid, 0.0) + idf(n, df)
                    count[cid] = count.get(cid, 0) + 1
            pool = foreign.fused_pool(rec, fusion)
            real = q_name == m_name
            keys = query_keys(qtext.get((rec["unit"], rec["qid"])) or by_qid[rec["qid"]])
            text_weight = 0.3 if fusion == "weighted" else 0.0
            held: set[str] = set()
            for h in pool:
                held |= texts[str(h.chunk_id)]
            known = share_of(keys, frozenset(held))
            pool = apply_min_score(pool, 0.0 if real else 0.35, text_weight=text_weight)
            hits = tuple(
                Hit(
                    h.vector_score,
                    h.keyword_evidence,
                    weight.get(str(h.chunk_id), 0.0) / total if terms else 1.0,
                    count.get(str(h.chunk_id), 0) / len(terms) if terms else 1.0,
                    share_of(keys, texts[str(h.chunk_id)]),
                    (h.path, h.start_line, h.end_line),
                    len(keys & texts[str(h.chunk_id)]),
                )
                for h in pool
            )
            scorer = None
            if real:
                q, doc_of_path = gold[(rec["unit"], rec["qid"])]

                def scorer(
                    lines: Sequence[tuple[str, int, int]],
                    q: Any = q,
                    d: Any = doc_of_path,
                    tl: bool = turn_level,
                    m: str = metric,
                ) -> float:
                    return float(score_query(q, list(lines), d, turn_level=tl)[m])

            cosines = [row[3] for row in rec["vector"]]
            out.append(
                Query(
                    pair,
                    half_of((rec["unit"], rec["qid"])),
                    n,
                    rec["all_cosines"].get("mean", 0.0),
                    statistics.median(cosines) if cosines else 0.0,
                    hits,
                    scorer,
                    len(keys),
                    known,
                    max(cosines, default=0.0),
                )
            )
    return out
