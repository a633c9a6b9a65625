"""Prototype re-rankers for `rerank_study` (each registered under a name with its parameters)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections import defaultdict
from collections.abc import Callable

from memlane.bench.studies.line_focus import stem
from memlane.domain.keywords import fts_document, fts_query_terms
from memlane.domain.scoring import Fused

_WORD = re.compile(r"\w+")
Rerank = Callable[[list[Fused], str], list[Fused]]
RULES: dict[str, Rerank] = {}


def register(name: str, rerank: Rerank) -> None:
    RULES[name] = rerank


def _resorted(fused: list[Fused], score: dict[int, float]) -> list[Fused]:
    order = sorted(range(len(fused)), key=lambda i: (-score[i], i))
    return [dataclasses.replace(fused[i], score=score[i]) for i in order]


def session_pool(beta: float, k: int) -> None:
    """score + beta x the mean of the k best other chunks of the same file (above 0.5)."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:  # noqa: ARG001
        by_path: dict[str, list[float]] = defaultdict(list)
        for f in fused:
            by_path[f.path].append(f.score - 0.5)
        score = {}
        for i, f in enumerate(fused):
            others = sorted(by_path[f.path], reverse=True)
            others.remove(f.score - 0.5)
            extra = sum(max(0.0, s) for s in others[:k]) / k
            score[i] = f.score + beta * extra
        return _resorted(fused, score)

    register(f"pool_b{beta}_k{k}", rerank)


def neighbour(gamma: float) -> None:
    """score + gamma x the best adjacent chunk's (same path, touching lines) score above 0.5."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:  # noqa: ARG001
        by_path: dict[str, list[int]] = defaultdict(list)
        for i, f in enumerate(fused):
            by_path[f.path].append(i)
        score = {}
        for i, f in enumerate(fused):
            best = 0.0
            for j in by_path[f.path]:
                g = fused[j]
                if j != i and g.start_line <= f.end_line + 1 and f.start_line <= g.end_line + 1:
                    best = max(best, g.score - 0.5)
            score[i] = f.score + gamma * best
        return _resorted(fused, score)

    register(f"nb_g{gamma}", rerank)


def session_diversity(penalty: float, top: int) -> None:
    """Greedy over the first `top` places: a chunk from a file already picked loses `penalty`
    per earlier pick of that file (fused scores are in (0, 1))."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:  # noqa: ARG001
        remaining = list(range(len(fused)))
        seen: dict[str, int] = defaultdict(int)
        order: list[int] = []
        while remaining and len(order) < top:
            best = max(
                remaining, key=lambda i: (fused[i].score - penalty * seen[fused[i].path], -i)
            )
            order.append(best)
            remaining.remove(best)
            seen[fused[best].path] += 1
        order += remaining
        return [fused[i] for i in order]

    register(f"div_p{penalty}_t{top}", rerank)


def overlap_demote(top: int) -> None:
    """A chunk whose lines overlap an earlier pick of the same file goes after the next chunk
    that does not (greedy over the first `top` places)."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:  # noqa: ARG001
        remaining = list(range(len(fused)))
        order: list[int] = []
        while remaining and len(order) < top:
            pick = remaining[0]
            for i in remaining:
                f = fused[i]
                if not any(
                    fused[j].path == f.path
                    and fused[j].start_line <= f.end_line
                    and f.start_line <= fused[j].end_line
                    for j in order
                ):
                    pick = i
                    break
            order.append(pick)
            remaining.remove(pick)
        order += remaining
        return [fused[i] for i in order]

    register(f"ovl_t{top}", rerank)


def coverage(delta: float) -> None:
    """score + delta x the idf-weighted share of the query's terms the chunk holds (idf over the
    candidate pool: a term in every candidate weighs nothing)."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:
        terms = fts_query_terms(query)
        if not terms:
            return fused
        docs = [set(_WORD.findall(fts_document(f.text).lower())) for f in fused]
        n = len(docs)
        idf = {t: math.log((n + 1) / (1 + sum(1 for d in docs if t in d))) for t in terms}
        total = sum(idf.values()) or 1.0
        score = {
            i: f.score + delta * sum(idf[t] for t in terms if t in docs[i]) / total
            for i, f in enumerate(fused)
        }
        return _resorted(fused, score)

    register(f"cov_d{delta}", rerank)


for b in (0.1, 0.2, 0.4):
    for kk in (1, 2):
        session_pool(b, kk)
for g in (0.1, 0.2, 0.4):
    neighbour(g)
for pen in (0.05, 0.1, 0.2):
    for t in (5, 10):
        session_diversity(pen, t)
overlap_demote(5)
overlap_demote(10)
for d in (0.05, 0.1, 0.2):
    coverage(d)


def _previous(fused: list[Fused]) -> dict[int, int]:
    """Index of each chunk's preceding chunk in the pool (same path, ends right before it)."""
    by_end = {(f.path, f.end_line): i for i, f in enumerate(fused)}
    out = {}
    for i, f in enumerate(fused):
        for gap in (1, 0):  # touching or sharing one line
            j = by_end.get((f.path, f.start_line - gap))
            if j is not None and j != i:
                out[i] = j
                break
    return out


def forward(gamma: float) -> None:
    """score + gamma x the preceding chunk's score above 0.5 (an answer follows its question)."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:  # noqa: ARG001
        prev = _previous(fused)
        score = {
            i: f.score + gamma * (max(0.0, fused[prev[i]].score - 0.5) if i in prev else 0.0)
            for i, f in enumerate(fused)
        }
        return _resorted(fused, score)

    register(f"fwd_g{gamma}", rerank)


def successor_second(margin: float) -> None:
    """The first hit's successor goes second when its score is within `margin` of the second."""

    def rerank(fused: list[Fused], query: str) -> list[Fused]:  # noqa: ARG001
        if len(fused) < 3:
            return fused
        prev = _previous(fused)
        succ = next((i for i, j in prev.items() if j == 0), None)
        if succ is None or succ == 1 or fused[succ].score < fused[1].score - margin:
            return fused
        order = [0, succ, *[i for i in range(1, len(fused)) if i != succ]]
        return [fused[i] for i in order]

    register(f"succ_m{margin}", rerank)


for g in (0.05, 0.1, 0.2, 0.3):
    forward(g)
for m in (0.02, 0.05, 0.1, 0.2):
    successor_second(m)


def _positions(text: str) -> dict[str, list[int]]:
    """Each indexed term's positions in the chunk, as the keyword index analyses the text."""
    out: dict[str, list[int]] = defaultdict(list)
    for at, word in enumerate(_WORD.findall(fts_document(text).lower())):
        out[stem(word)].append(at)
    return out


def proximity(gamma: float, window: int, ordered: bool) -> None:
    """score + gamma x the idf-weighted share of the query's neighbouring term pairs (stop words
    left out, CJK bigrams in order) that sit within `window` positions of each other in the chunk:
    a chunk holding the question's words as a phrase, not scattered (idf over the candidate pool,
    as `coverage`)."""

    def near(first: list[int], second: list[int]) -> bool:
        for a in first:
            for b in second:
                gap = b - a
                if (0 < gap <= window) or (not ordered and 0 < -gap <= window):
                    return True
        return False

    def rerank(fused: list[Fused], query: str) -> list[Fused]:
        terms = [stem(t) for t in fts_query_terms(query)]
        pairs = [(a, b) for a, b in itertools.pairwise(terms) if a != b]
        if not pairs:
            return fused
        docs = [_positions(f.text) for f in fused]
        n = len(docs)
        idf = {
            t: math.log((n + 1) / (1 + sum(1 for d in docs if t in d)))
            for pair in pairs
            for t in pair
        }
        weight = {p: min(idf[p[0]], idf[p[1]]) for p in pairs}
        total = sum(weight.values()) or 1.0
        score = {}
        for i, f in enumerate(fused):
            d = docs[i]
            got = sum(w for (a, b), w in weight.items() if a in d and b in d and near(d[a], d[b]))
            score[i] = f.score + gamma * got / total
        return _resorted(fused, score)

    register(f"prox_g{gamma}_w{window}{'o' if ordered else 'u'}", rerank)


for g in (0.05, 0.1, 0.2, 0.4):
    proximity(g, 3, True)
    proximity(g, 8, False)
