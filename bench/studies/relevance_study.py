"""Relevance-floor study: replays recorded legs (`bench.studies.foreign collect`) under candidate
rules.

Each rule decides, per fused hit, from raw signals that do not depend on the other hits kept:
the hit's cosine, its bm25 evidence, the index size, the query's background cosine (its cosine
to every chunk, or the median of its vector candidates) and the share of the query's terms the
hit contains. Like the shipped floor a rule only removes hits. Grids are picked on half A (the
fusion study's sha256 split) and read on half B.

    python -m bench.studies.relevance_study --legs-dir bench/work [--fusion zscore]
"""

from __future__ import annotations

import argparse
import itertools
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


def evaluate(queries: Sequence[Query], rule: Rule | None) -> dict[str, dict[str, list[float]]]:
    """Per pair, per half: per-query value (real: target metric; foreign: hits returned)."""
    out: dict[str, dict[str, list[float]]] = {}
    for q in queries:
        kept: list[Hit] = []
        for h in q.hits:
            if rule is None or rule(q, h):
                kept.append(h)
                if len(kept) == foreign.MAX_RESULTS:
                    break
        value = q.score([h.lines for h in kept]) if q.score else float(len(kept))
        out.setdefault(q.pair, {"A": [], "B": []})[q.half].append(value)
    return out


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def summary(
    res: dict[str, dict[str, list[float]]], base: dict[str, dict[str, list[float]]], half: str
) -> dict[str, float]:
    """Losses of the two real sets, and the foreign reduction pooled over the foreign pairs."""

    def vals(r: dict[str, dict[str, list[float]]], p: str) -> list[float]:
        return r[p]["A"] + r[p]["B"] if half == "all" else r[p][half]

    out = {f"loss_{p}": mean(vals(base, p)) - mean(vals(res, p)) for p in REAL if p in res}
    before = sum(sum(vals(base, p)) for p in FOREIGN if p in res)
    after = sum(sum(vals(res, p)) for p in FOREIGN if p in res)
    out["reduction"] = 1 - after / before if before else math.nan
    for p in FOREIGN:
        if p in res:
            out[p] = 1 - sum(vals(res, p)) / max(1e-9, sum(vals(base, p)))
    return out


# --- rule families ---------------------------------------------------------------------------


def current(c: float, e: float) -> Rule:
    return lambda _q, h: (h.cos is not None and h.cos >= c) or (h.ev is not None and h.ev >= e)


def scaled_bm25(c: float, e: float) -> Rule:
    """bm25 evidence divided by ln N: a rare word in a big index weighs more."""
    return lambda q, h: (
        (h.cos is not None and h.cos >= c)
        or (h.ev is not None and h.ev / math.log(max(q.n_chunks, 3)) >= e)
    )


def gap(g: float, e: float, background: str) -> Rule:
    """Cosine above the query's own background (mean over all chunks, or candidate median)."""

    def bg(q: Query) -> float:
        return q.background if background == "mean" else q.cand_median

    return lambda q, h: (
        (h.cos is not None and h.cos - bg(q) >= g)
        or (h.ev is not None and h.ev / math.log(max(q.n_chunks, 3)) >= e)
    )


def both(c: float, g: float, e: float, background: str) -> Rule:
    def bg(q: Query) -> float:
        return q.background if background == "mean" else q.cand_median

    return lambda q, h: (
        (h.cos is not None and h.cos >= c and h.cos - bg(q) >= g)
        or (h.ev is not None and h.ev / math.log(max(q.n_chunks, 3)) >= e)
    )


def with_coverage(inner: Rule, k: float) -> Rule:
    return lambda q, h: inner(q, h) and h.coverage >= k


def tiered(c_hi: float, c_lo: float, k: float, e: float, weighted: bool | None) -> Rule:
    """A high cosine alone, or a lower cosine / some bm25 evidence plus a share of the words."""

    def cov(h: Hit) -> float:
        return h.coverage if weighted is True else h.share if weighted is False else h.dshare

    return lambda _q, h: (
        (h.cos is not None and h.cos >= c_hi)
        or (
            cov(h) >= k
            and ((h.cos is not None and h.cos >= c_lo) or (h.ev is not None and h.ev >= e))
        )
    )


def gated(sure: float, known: float, c: float, e: float, k: float, m: int) -> Rule:
    """A sure cosine alone; else the query must find `known` of its words somewhere in the pool
    (the memory knows its subject), and the hit needs the cosine or bm25 floor, a share `k` of
    the words and at least `m` of them (all of them for shorter queries)."""
    return lambda q, h: (
        (h.cos is not None and h.cos >= sure)
        or (
            q.known >= known
            and ((h.cos is not None and h.cos >= c) or (h.ev is not None and h.ev >= e))
            and h.dshare >= k
            and h.matched >= min(m, q.n_keys)
        )
    )


def margin(c: float, g: float, e: float) -> Rule:
    """The cosine floor, and the query's best cosine clears its candidates' median by `g`."""
    return lambda q, h: (
        (q.top_cos - q.cand_median >= g)
        and ((h.cos is not None and h.cos >= c) or (h.ev is not None and h.ev >= e))
    )


def paths(sure: float, c: float, kc: float, e: float, scaled: bool, kb: float, mb: int) -> Rule:
    """Each leg's path with its own word requirement: a sure cosine alone; a cosine at the floor
    with a share `kc` of the query's words; bm25 evidence (raw, or / ln N when `scaled`) with a
    share `kb` and at least `mb` of the words (all of them for shorter queries)."""

    def ev_ok(q: Query, h: Hit) -> bool:
        if h.ev is None:
            return False
        return (h.ev / math.log(max(q.n_chunks, 3)) if scaled else h.ev) >= e

    return lambda q, h: (
        (h.cos is not None and h.cos >= sure)
        or (h.cos is not None and h.cos >= c and h.dshare >= kc)
        or (ev_ok(q, h) and h.dshare >= kb and h.matched >= min(mb, q.n_keys))
    )


def grid(name: str) -> list[tuple[str, Rule]]:
    if name == "paths_bm25":
        return [
            (f"sure{su}|cos>={c}&d>={kc}|ev>={e}&d>={kb}", paths(su, c, kc, e, False, kb, 1))
            for su, c, kc, e, kb in [
                *[(0.86, 0.805, 0.2, e, 0.34) for e in (0.0, 2.0, 3.0, 4.0)],
                (0.86, 0.805, 0.2, 0.0, 0.4),
                (0.86, 0.805, 0.2, 0.0, 0.5),
                (0.86, 0.80, 0.2, 0.0, 0.34),
                (0.86, 0.81, 0.2, 0.0, 0.34),
                (0.86, 0.81, 0.2, 4.0, 0.34),
            ]
        ]
    if name == "paths_refine":
        return [
            (f"sure{su}|cos>={c}&d>={kc}|ev>={e}&d>={kb}", paths(su, c, kc, e, False, kb, 1))
            for su, c, kc, e, kb in [
                *[(0.86, c, 0.2, e, 0.34) for c in (0.79, 0.80, 0.805) for e in (4.0, 5.0, 6.0)],
                (0.86, 0.805, 0.2, 6.0, 0.3),
                (0.86, 0.805, 0.15, 6.0, 0.34),
                (0.86, 0.805, 0.25, 6.0, 0.34),
                (0.85, 0.805, 0.2, 6.0, 0.34),
                (0.87, 0.805, 0.2, 6.0, 0.34),
            ]
        ]
    if name == "paths":
        return [
            (
                f"sure{su}|cos>={c}&d>={kc}|ev{'/lnN' if sc else ''}>={e}&d>={kb}&m>={mb}",
                paths(su, c, kc, e, sc, kb, mb),
            )
            for su, c, kc, (e, sc), kb, mb in itertools.product(
                [0.86, 9.0],
                [0.805],
                [0.0, 0.2],
                [(6.0, False), (1.13, True), (99.0, False)],
                [0.0, 0.2, 0.34, 0.5],
                [1, 2],
            )
            if not (e == 99.0 and (kb > 0 or mb > 1))
        ]
    if name == "gated_short":
        return [
            (f"sure{su}|known>={kn}&(cos>={c}|ev>={e})&d>={k}&m>={m}", gated(su, kn, c, e, k, m))
            for su, kn, c, e, k, m in [
                (9.0, 0.0, 0.805, 6, 0.0, 0),
                (0.86, 0.0, 0.805, 6, 0.2, 0),
                (0.86, 0.67, 0.805, 6, 0.0, 0),
                (0.85, 0.75, 0.805, 6, 0.0, 0),
            ]
        ]
    if name == "gated":
        return [
            (f"sure{su}|known>={kn}&(cos>={c}|ev>={e})&d>={k}&m>={m}", gated(su, kn, c, e, k, m))
            for su, kn, c, e, k, m in itertools.product(
                [0.83, 0.84, 0.85, 0.86, 0.87],
                [0.0, 0.5, 0.6, 0.67, 0.75, 0.8, 1.0],
                [0.80, 0.805, 0.81],
                [6, 99],
                [0.0, 0.2],
                [0],
            )
        ]
    if name == "margin":
        return [
            (f"top-med>={g}&(cos>={c}|ev>={e})", margin(c, g, e))
            for c, g, e in itertools.product([0.805, 0.81], [0.02, 0.03, 0.04, 0.05, 0.06], [6, 99])
        ]
    if name == "short":
        return [
            (f"cos>={hi} | d>={k}&(cos>={lo}|ev>={e})", tiered(hi, lo, k, e, None))
            for hi, lo, k, e in [
                (0.86, 0.805, 0.2, 6),
                (0.86, 0.805, 0.2, 99),
                (0.86, 0.80, 0.15, 6),
                (0.86, 0.80, 0.1, 6),
                (0.85, 0.805, 0.15, 6),
                (0.86, 0.805, 0.15, 99),
                (0.86, 0.81, 0.2, 99),
                (0.87, 0.80, 0.2, 6),
            ]
        ] + [("cos>=0.805 | ev>=6", current(0.805, 6))]
    if name in ("tiered_w", "tiered_u", "tiered_d"):
        w = {"w": True, "u": False, "d": None}[name[-1]]
        return [
            (f"cos>={hi} | {name[-1]}>={k}&(cos>={lo}|ev>={e})", tiered(hi, lo, k, e, w))
            for hi, lo, k, e in itertools.product(
                [0.85, 0.86, 0.87, 9.0],
                [0.79, 0.80, 0.805, 0.81],
                [0.1, 0.15, 0.2, 0.25, 0.3],
                [6, 8, 99],
            )
        ]
    cos = [0.80, 0.805, 0.81, 0.815, 0.82, 0.825, 0.83]
    if name == "current":
        return [(f"cos>={c} | ev>={e}", current(c, e)) for c in cos for e in (6, 8, 12)]
    if name == "scaled":
        return [
            (f"cos>={c} | ev/lnN>={e}", scaled_bm25(c, e))
            for c in cos
            for e in (1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5)
        ]
    if name in ("gap_mean", "gap_median"):
        bgn = name.split("_")[1]
        gaps = [x / 100 for x in range(2, 16)]
        return [
            (f"cos-{bgn}>={g:.2f} | ev/lnN>={e}", gap(g, e, bgn))
            for g in gaps
            for e in (1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 99)
        ]
    if name in ("both_mean", "both_median"):
        bgn = name.split("_")[1]
        return [
            (f"cos>={c}&cos-{bgn}>={g:.2f} | ev/lnN>={e}", both(c, g, e, bgn))
            for c, g, e in itertools.product(
                [0.79, 0.80, 0.805, 0.81], [x / 100 for x in range(2, 14)], (1.4, 1.6, 1.8, 2.0)
            )
        ]
    if name.startswith("cov_"):
        inner_name = name[4:]
        return [
            (f"[{label}] & cov>={k}", with_coverage(rule, k))
            for label, rule in grid(inner_name)
            for k in (0.0, 0.1, 0.2, 0.3)
        ]
    raise SystemExit(f"unknown family {name}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.relevance_study", description=__doc__)
    p.add_argument("--legs-dir", type=Path, default=foreign.DEFAULT_WORK)
    p.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    p.add_argument("--fusion", default="zscore", choices=("zscore", "weighted", "rrf"))
    p.add_argument("--families", default="current,scaled,gap_mean,gap_median")
    p.add_argument(
        "--pick-on",
        default="A",
        choices=("A", "all"),
        help="the half whose losses bound a rule (all: every query)",
    )
    p.add_argument("--max-loss", type=float, default=0.007, help="LoCoMo")
    p.add_argument("--max-loss-lme", type=float, default=0.0, help="LME pooled")
    p.add_argument("--max-loss-other", type=float, default=0.005, help="the other real sets")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--out", type=Path, help="JSON lines: every rule's summary per half")
    args = p.parse_args(argv)
    foreign.DATA_ROOT[0] = args.data_root
    pairs = [p for p in (*REAL, *FOREIGN) if foreign.legs_path(args.legs_dir, p).exists()]
    queries = load(args.legs_dir, pairs, args.fusion)
    base = evaluate(queries, None)
    sink = args.out.open("a") if args.out else None
    for family in args.families.split(","):
        rows = []
        for label, rule in grid(family):
            res = evaluate(queries, rule)
            halves = {half: summary(res, base, half) for half in ("A", "B", "all")}
            if sink is not None:
                sink.write(__import__("json").dumps({"family": family, "rule": label, **halves}))
                sink.write("\n")
                sink.flush()
            a = halves[args.pick_on]
            ok = (
                a.get("loss_locomo", 0) <= args.max_loss + 1e-9
                and a.get("loss_lme_pooled", 0) <= args.max_loss_lme + 1e-9
                and all(
                    v <= args.max_loss_other + 1e-9
                    for k, v in a.items()
                    if k.startswith("loss_") and k not in ("loss_locomo", "loss_lme_pooled")
                )
            )
            if ok or family.endswith("_short"):
                rows.append((a["reduction"], label, halves))
        rows.sort(key=lambda r: -r[0])
        print(f"\n== {family}: best on {args.pick_on} within the losses ({len(rows)} admissible)")
        for _, label, halves in rows[: args.top]:
            for half, s in halves.items():
                cells = " ".join(f"{k.replace('_pooled', '')}={v:+.3f}" for k, v in s.items())
                print(f"  {label:42} {half:3} {cells}", flush=True)


if __name__ == "__main__":
    main()
