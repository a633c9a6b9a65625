"""Study: does a chunk rank better when its best *piece* (one line or sentence) is also scored?

A chunk's one vector averages everything it holds. A question about one remark in a four-turn
chunk, or one finding in a long abstract, meets a vector diluted by the rest. This study embeds
every chunk's pieces (domain/note_pieces.py: its lines, a long line cut at sentence ends),
scores each recorded question against them, and replays fusion rules over the legs recorded by
`fusion_study collect` with the chunk's best-piece cosine ("maxsim") added: mixed into the
vector leg's cosine, or as a third leg of the z-score fusion. mix50 ships since session 23.

    python -m bench.studies.fusion_study collect locomo            # the legs first
    python -m bench.studies.piece_vectors collect locomo           # piece cosines per question
    python -m bench.studies.piece_vectors evaluate locomo [--out F]
    python -m bench.studies.piece_vectors compare scifact --rules mix50 [--variant ctx]

`--variant ctx` embeds each piece under its chunk's headings (`titled_pieces`).

Piece vectors are cached in `bench/work/piece-vectors.sqlite` (keyed by the piece's hash and
the provider's key), so a second collect embeds nothing new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memlane.application.query_focus import vector_query
from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import RunOptions, limited_units, score_query
from memlane.bench.studies.fusion_study import LEGS_DIR, Leg, half_of, opened_unit, shipped
from memlane.domain.chunks import ChunkId
from memlane.domain.note_pieces import note_pieces
from memlane.domain.scoring import _standardised

CACHE = BENCH_DIR / "work" / "piece-vectors.sqlite"


def pieces_of(text: str) -> list[str]:
    """A chunk's pieces: the rule the product ships since session 23 (domain/note_pieces.py),
    [] for a chunk without a non-blank line."""
    return note_pieces(text) if text.strip() else []


def open_cache(path: Path, table: str) -> sqlite3.Connection:
    """A study cache's SQLite file, created with `table` (a CREATE TABLE IF NOT EXISTS)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute(table)
    return db


def rows_by_hash(
    db: sqlite3.Connection, select: str, key: str, hashes: Sequence[str]
) -> Iterator[tuple[Any, ...]]:
    """A hash-keyed study cache's rows for `hashes`, 500 at a time (SQLite's bound-parameter
    limit); `select` holds `{marks}` where the hashes' placeholders go."""
    for i in range(0, len(hashes), 500):
        part = hashes[i : i + 500]
        yield from db.execute(select.format(marks=",".join("?" * len(part))), [key, *part])


class PieceCache:
    def __init__(self, path: Path, key: str) -> None:
        self._db = open_cache(
            path,
            "CREATE TABLE IF NOT EXISTS v (key TEXT, hash TEXT, vec BLOB, PRIMARY KEY (key, hash))",
        )
        self._key = key

    def vectors(self, texts: Sequence[str], embed: Any) -> np.ndarray:
        hashes = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        select = "SELECT hash, vec FROM v WHERE key = ? AND hash IN ({marks})"
        have: dict[str, bytes] = dict(rows_by_hash(self._db, select, self._key, hashes))
        missing = list(dict.fromkeys(h for h in hashes if h not in have))
        text_of = dict(zip(hashes, texts, strict=True))
        for i in range(0, len(missing), 64):
            batch = missing[i : i + 64]
            vecs = embed([text_of[h] for h in batch])
            rows = [
                (self._key, h, np.asarray(v, dtype=np.float32).tobytes())
                for h, v in zip(batch, vecs, strict=True)
            ]
            self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?, ?)", rows)
            self._db.commit()
            have.update((h, r[2]) for h, r in zip(batch, rows, strict=True))
            print(
                f"  embedded {min(i + 64, len(missing))} of {len(missing)} new pieces", flush=True
            )
        return np.stack([np.frombuffer(have[h], dtype=np.float32) for h in hashes])


def _unit_chunks(store_path: Path) -> Iterator[tuple[str, str, str, str, int, int]]:
    import sqlean

    db = sqlean.connect(str(store_path))
    try:
        yield from db.execute(
            "SELECT id, text, context, path, start_line, end_line FROM chunks ORDER BY rowid"
        )
    finally:
        db.close()


def titled_pieces(text: str, context: str) -> list[str]:
    """The `ctx` variant: each piece under its chunk's headings (the trail the chunk is indexed
    with, or the heading the chunk opens with), so a sentence still says which note it is in.
    A piece that is the heading itself is left out: the chunk's own vector covers it."""
    pieces = pieces_of(text)
    title = context
    if not title and pieces and pieces[0].startswith("#"):
        title, pieces = pieces[0], pieces[1:]
    return [f"{title}\n{p}" if title else p for p in pieces]


def _suffix(variant: str) -> str:
    return "pieces.json" if variant == "plain" else f"pieces-{variant}.json"


@dataclass(frozen=True)
class UnitPieces:
    """One bench unit's chunks and the unit vectors of their pieces (row i belongs to chunk
    `ids[owners[i]]`)."""

    ids: list[str]
    owners: np.ndarray
    matrix: np.ndarray
    places: dict[str, tuple[str, int, int]]  # chunk id -> (path, start line, end line)

    def best(self, question: np.ndarray) -> np.ndarray:
        """Each chunk's best piece's cosine with the (unit) question vector."""
        best = np.full(len(self.ids), -1.0, dtype=np.float32)
        np.maximum.at(best, self.owners, self.matrix @ question)
        return best


@dataclass(frozen=True)
class RecordedQuestion:
    """A question `fusion_study collect` recorded, with the vector the search's vector leg
    embeds for it (the raw one for the store, the unit one for the pieces)."""

    qid: str
    record: dict[str, Any]
    embedded: list[float]
    unit_vector: np.ndarray

    def candidates(self) -> set[str]:
        """The chunks the legs fetch (the product re-scores these by their pieces)."""
        return {e[4] for e in self.record["vector"]} | {e[4] for e in self.record["keyword"][:400]}


def recorded_units(
    name: str, split: Callable[[str, str], list[str]] | None = None
) -> Iterator[tuple[str, Any, UnitPieces, list[RecordedQuestion]]]:
    """(unit id, store, pieces, recorded questions) of each unit of `name` with questions the
    legs recorded; piece vectors come through the cache (`split(text, context)`: the pieces,
    the shipped rule by default)."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = {(r["unit"], r["qid"]): r for r in json.loads((LEGS_DIR / f"{name}.json").read_text())}
    options = RunOptions(work_dir=BENCH_DIR / "work")
    for unit in limited_units(dataset, options):
        if not any((unit.unit_id, q.qid) in legs for q in unit.queries):
            continue
        with opened_unit(name, unit, options.work_dir) as (manager, store, provider, db_path):
            ids: list[str] = []
            owners: list[int] = []
            texts: list[str] = []
            places: dict[str, tuple[str, int, int]] = {}
            for chunk_id, text, context, path, start, end in _unit_chunks(db_path):
                ids.append(chunk_id)
                places[chunk_id] = (path, start, end)
                pieces = split(text, context) if split else pieces_of(text)
                for piece in pieces or [text]:
                    owners.append(len(ids) - 1)
                    texts.append(piece)
            matrix = PieceCache(CACHE, provider.key).vectors(texts, provider.embed_documents)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
            share = manager.settings.query.common_word_share
            questions = []
            for q in unit.queries:
                rec = legs.get((unit.unit_id, q.qid))
                if rec is None:
                    continue
                embedded = provider.embed_query(vector_query(store, q.text, share=share).text)
                qv = np.asarray(embedded, dtype=np.float32)
                qv /= np.linalg.norm(qv) + 1e-12
                questions.append(RecordedQuestion(q.qid, rec, embedded, qv))
            unit_pieces = UnitPieces(ids, np.asarray(owners), matrix, places)
            yield unit.unit_id, (manager, store, provider), unit_pieces, questions
        print(f"{name}/{unit.unit_id}: {len(texts)} pieces of {len(ids)} chunks", flush=True)


def collect(name: str, variant: str = "plain") -> None:
    split = None if variant == "plain" else titled_pieces
    out: list[dict[str, Any]] = []
    for unit_id, _, pieces, questions in recorded_units(name, split):
        index_of = {c: i for i, c in enumerate(pieces.ids)}
        for q in questions:
            best = pieces.best(q.unit_vector)
            out.append(
                {
                    "unit": unit_id,
                    "qid": q.qid,
                    "maxsim": {
                        c: float(best[index_of[c]]) for c in q.candidates() if c in index_of
                    },
                }
            )
    (LEGS_DIR / f"{name}.{_suffix(variant)}").write_text(json.dumps(out))


# --- rules ---------------------------------------------------------------------------------------


def mixed(alpha: float, vector_weight: float = 0.5) -> Any:
    """The vector leg's cosine becomes (1 − alpha)·cosine + alpha·maxsim; shipped z-fusion."""
    base = shipped("zscore", vector_weight, 1.0 - vector_weight)

    def rule(vec: Leg, kw: Leg, pool: int, maxsim: dict[str, float]) -> list[str]:
        moved = [
            (p, s, e, (1 - alpha) * cos + alpha * maxsim.get(cid, cos), cid)
            for p, s, e, cos, cid in vec
        ]
        return base(moved, kw, pool)

    return rule


def three_legs(w_vec: float, w_piece: float, w_kw: float) -> Any:
    """z-score fusion of cosine, maxsim and bm25 (each over its own top `pool`)."""

    def rule(vec: Leg, kw: Leg, pool: int, maxsim: dict[str, float]) -> list[str]:
        v_top = sorted(vec, key=lambda e: -e[3])[:pool]
        k_top = sorted(kw, key=lambda e: -e[3])[:pool]
        pieces = sorted(
            ((c, maxsim[c]) for c in {e[4] for e in vec} if c in maxsim), key=lambda x: -x[1]
        )[:pool]
        scored = [
            (w_vec, {ChunkId(e[4]): e[3] for e in v_top}),
            (w_piece, {ChunkId(c): s for c, s in pieces}),
            (w_kw, {ChunkId(e[4]): max(0.0, e[3]) for e in k_top}),
        ]
        legs = [(w, *_standardised(values)) for w, values in scored if values and w > 0]
        ids = list(
            dict.fromkeys([*(e[4] for e in v_top), *(c for c, _ in pieces), *(e[4] for e in k_top)])
        )
        score = {c: sum(w * z.get(ChunkId(c), floor) for w, z, floor in legs) for c in ids}
        return sorted(ids, key=lambda c: -score[c])

    return rule


def _plain(vector_weight: float) -> Any:
    base = shipped("zscore", vector_weight, 1.0 - vector_weight)
    return lambda vec, kw, pool, _maxsim: base(vec, kw, pool)


RULES: dict[str, Any] = {
    "z50": _plain(0.5),
    "mix25": mixed(0.25),
    "mix50": mixed(0.5),
    "mix75": mixed(0.75),
    "max": mixed(1.0),
    "3leg_25_25_50": three_legs(0.25, 0.25, 0.5),
    "3leg_33": three_legs(1 / 3, 1 / 3, 1 / 3),
    "3leg_15_35_50": three_legs(0.15, 0.35, 0.5),
}
SHOW = ("ndcg@10", "recall@5", "recall_all@5", "recall_any@5", "turn_recall@L5")


QueryKey = tuple[str, str]
Ranker = Callable[[QueryKey, Leg, Leg], list[str]]  # question, vector leg, keyword leg -> ids


def by_question(name: str, suffix: str, field: str) -> dict[QueryKey, Any]:
    """One field of a study's records (`bench/work/legs/<name>.<suffix>`), by question."""
    records = json.loads((LEGS_DIR / f"{name}.{suffix}").read_text())
    return {(r["unit"], r["qid"]): r[field] for r in records}


def replay(
    name: str,
    rankers: Mapping[Any, Ranker],
    *,
    keep: int = 50,
    known: Callable[[QueryKey], bool] = lambda _key: True,
    more_places: Callable[[QueryKey], Sequence[Sequence[Any]]] = lambda _key: (),
) -> dict[Any, dict[str, dict[str, list[float]]]]:
    """ranker -> group -> metric -> one value per question, the first `keep` ids of each ranker
    scored as the harness scores hits, in the same question order for every ranker (groups: all,
    half A / B, each category). `known`: the questions the study recorded; `more_places`: the
    (path, start, end, …, id) of ids no leg holds."""
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = by_question(name, "json", "vector"), by_question(name, "json", "keyword")
    vals: dict[Any, dict[str, dict[str, list[float]]]] = {
        r: defaultdict(lambda: defaultdict(list)) for r in rankers
    }
    for unit in dataset.units():
        doc_of_path = unit.doc_of_path()
        for q in unit.queries:
            key = (unit.unit_id, q.qid)
            if key not in legs[0] or not known(key):
                continue
            vec = [tuple(e) for e in legs[0][key]]
            kw = [tuple(e) for e in legs[1][key]]
            where = {e[4]: (e[0], e[1], e[2]) for e in [*vec, *kw, *more_places(key)]}
            groups = ["all", f"half {half_of(key)}"]
            if q.category != "all":
                groups.append(f"cat {q.category}")
            for r, rank in rankers.items():
                hits: list[metrics.Hit] = [where[c] for c in rank(key, vec, kw)[:keep]]
                scores = score_query(q, hits, doc_of_path, turn_level=dataset.turn_level)
                for g in groups:
                    for m in SHOW:
                        if m in scores:
                            vals[r][g][m].append(scores[m])
    return vals


def per_query(
    name: str, rules: Sequence[str], pool: int, keep: int, variant: str = "plain"
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """rule -> group -> metric -> one value per question (see `replay`)."""
    pieces = by_question(name, _suffix(variant), "maxsim")

    def ranker(rule: Any) -> Ranker:
        return lambda key, vec, kw: rule(vec, kw, pool, pieces[key])

    return replay(name, {r: ranker(RULES[r]) for r in rules}, keep=keep, known=pieces.__contains__)


def evaluate(
    names: Sequence[str], rules: Sequence[str], pool: int, keep: int, variant: str = "plain"
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, rules, pool, keep, variant)
        report[name] = {
            r: {
                g: {m: (statistics.fmean(v), len(v)) for m, v in ms.items()} for g, ms in gs.items()
            }
            for r, gs in vals.items()
        }
        _print(name, report[name], rules)
    return report


Values = dict[str, dict[str, list[float]]]  # group -> metric -> one value per question


def paired_table(base: Values, rule: Values) -> dict[str, Any]:
    """`rule` against `base` (the same questions in the same order), paired bootstrap, per group
    of at least 8 questions and metric, printed a line each; the figures, as the JSON keeps them."""
    table: dict[str, Any] = {}
    for g in sorted(base, key=lambda g: (g != "all", g)):
        for m, b in base[g].items():
            if len(b) < 8:
                continue
            c = metrics.paired_bootstrap(rule[g][m], b)
            before, after = statistics.fmean(b), statistics.fmean(rule[g][m])
            table.setdefault(g, {})[m] = {
                "base": before,
                "rule": after,
                "diff": c.mean_diff,
                "ci": [c.ci_low, c.ci_high],
                "p": c.p_value,
                "n": c.n,
            }
            print(
                f"  {g:8} {m:15} n={c.n:5} {before:.3f} -> {after:.3f} "
                f"{c.mean_diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}] p={c.p_value:.3f}"
            )
    return table


def compare(
    names: Sequence[str], rule: str, base: str, pool: int, keep: int, variant: str = "plain"
) -> dict[str, Any]:
    """`rule` against `base`, paired bootstrap, per set, group (≥ 8 questions) and metric."""
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, [base, rule], pool, keep, variant)
        print(f"\n{name}: {rule} − {base}")
        report[name] = paired_table(vals[base], vals[rule])
    return report


def _print(name: str, table: dict[str, Any], rules: Sequence[str]) -> None:
    groups = sorted(table[rules[0]], key=lambda g: (g != "all", g))
    metrics_shown = [m for m in SHOW if m in table[rules[0]]["all"]]
    for g in groups:
        n = table[rules[0]][g][metrics_shown[0]][1]
        if n < 8:
            continue
        print(f"\n{name} {g} (n={n})")
        print(f"{'rule':16}" + "".join(f"{m:>16}" for m in metrics_shown))
        for r in rules:
            print(f"{r:16}" + "".join(f"{table[r][g][m][0]:16.3f}" for m in metrics_shown))


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.piece_vectors")
    p.add_argument("action", choices=("collect", "evaluate", "compare"))
    p.add_argument("datasets", nargs="+")
    p.add_argument("--rules", default=",".join(RULES))
    p.add_argument("--pool", type=int, default=200)
    p.add_argument("--keep", type=int, default=50)
    p.add_argument("--base", default="z50", help="compare: the rule compared against")
    p.add_argument(
        "--variant",
        choices=("plain", "ctx"),
        default="plain",
        help="ctx: each piece embedded under its chunk's headings",
    )
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.action == "collect":
        for name in args.datasets:
            collect(name, args.variant)
        return
    if args.action == "compare":
        report = compare(args.datasets, args.rules, args.base, args.pool, args.keep, args.variant)
    else:
        report = evaluate(args.datasets, args.rules.split(","), args.pool, args.keep, args.variant)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
