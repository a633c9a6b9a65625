"""Does a chunk embed better with the headings it sits under? (issue #24 item 4)

A note chunked at 400 tokens loses its title after the first chunk: SciFact's second chunk of an
abstract no longer says which paper it is from, JaQuAD's no longer names the article. This probe
chunks every document as the store does (notes, 400 / 80 tokens), embeds each chunk twice (as
is, and as the store indexes it, its heading trail first: domain/heading_trail.py) and ranks the
chunks of the whole corpus by cosine, documents deduplicated in rank order, as the harness's
vector mode does. Vectors of unchanged texts come from the shared embedding cache when it holds
them (`python -m bench run SET --modes vector` fills it); the rest are embedded here.

    python -m bench.studies.heading_context scifact [jaquad_dev xquad_zh] [--out FILE]

`20261205-s17-heading-probe.json` came from this study's first form, which built the trail
itself and did not cut a heading at 160 characters: 304 of SciFact's 3,067 trails were longer
than the shipped rule's, XQuAD-zh's and JaQuAD's identical. Re-run in this form (the shipped
rule), SciFact gives the same figures: nDCG@10 0.6165 -> 0.6413 (0.6414 before), recall@5
0.682 -> 0.711.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memlane.adapters.embedding.local import LocalEmbeddingProvider
from memlane.adapters.store.vector_codec import from_blob
from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.embed_cache import CACHE_FILE
from memlane.bench.metrics import ndcg, paired_bootstrap, recall
from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.hashing import sha256_text


def _cached(cache: Path, key: str, hashes: list[str]) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    if not cache.exists():
        return found
    with sqlite3.connect(cache) as db:
        for start in range(0, len(hashes), 500):
            part = hashes[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = db.execute(
                f"SELECT hash, embedding FROM vectors WHERE provider_key = ? AND hash IN ({marks})",
                [key, *part],
            )
            for digest, blob in rows:
                found[digest] = np.asarray(from_blob(blob), dtype=np.float32)
    return found


def study(name: str, provider: LocalEmbeddingProvider, cache: Path) -> dict[str, object]:
    ds = registry.load(name, None, registry.DEFAULT_DATA_ROOT)
    unit = next(iter(ds.units()))
    plain: list[str] = []
    headed: list[str] = []
    doc_of: list[str] = []
    policy = ChunkingPolicy()
    for doc in unit.files:
        chunks = chunk_text("memory", doc.indexed_path, doc.text, policy, heading_context=True)
        for chunk in chunks:
            plain.append(chunk.text)
            headed.append(chunk.indexed_text)
            doc_of.append(doc.doc_id)
    texts = sorted(set(plain) | set(headed))
    hashes = {t: sha256_text(t) for t in texts}
    known = _cached(cache, provider.key, list(hashes.values()))
    missing = [t for t in texts if hashes[t] not in known]
    trailed = sum(p != h for p, h in zip(plain, headed, strict=True))
    print(
        f"{name}: {len(plain)} chunks, {trailed} with a trail; {len(missing)} texts to embed",
        flush=True,
    )
    for start in range(0, len(missing), 64):
        part = missing[start : start + 64]
        for text, vector in zip(part, provider.embed_documents(part), strict=True):
            known[hashes[text]] = np.asarray(vector, dtype=np.float32)
        print(f"  embedded {min(start + 64, len(missing))}/{len(missing)}", flush=True)
    matrices = {
        label: np.stack([known[hashes[t]] for t in column])
        for label, column in (("plain", plain), ("headed", headed))
    }
    scores: dict[str, dict[str, list[float]]] = {
        label: {"ndcg@10": [], "recall@5": []} for label in matrices
    }
    for query in unit.queries:
        q = np.asarray(provider.embed_query(query.text), dtype=np.float32)
        for label, matrix in matrices.items():
            order = np.argsort(-(matrix @ q), kind="stable")
            ranked: list[str] = []
            seen: set[str] = set()
            for index in order:
                doc_id = doc_of[index]
                if doc_id not in seen:
                    seen.add(doc_id)
                    ranked.append(doc_id)
                    if len(ranked) == 100:
                        break
            scores[label]["ndcg@10"].append(ndcg(ranked, query.gold_docs, 10))
            scores[label]["recall@5"].append(recall(ranked, query.gold_docs, 5))
    report: dict[str, object] = {"set": name, "queries": len(unit.queries)}
    for metric in ("ndcg@10", "recall@5"):
        a, b = scores["headed"][metric], scores["plain"][metric]
        boot = paired_bootstrap(a, b)
        report[metric] = {
            "plain": float(np.mean(b)),
            "headed": float(np.mean(a)),
            "bootstrap": boot,
        }
        print(f"  {metric}: plain {np.mean(b):.4f} headed {np.mean(a):.4f} {boot}", flush=True)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    provider = LocalEmbeddingProvider()
    cache = BENCH_DIR / "work" / CACHE_FILE
    reports = [study(name, provider, cache) for name in args.sets]
    if args.out:
        args.out.write_text(json.dumps(reports, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
