"""Study: Japanese whole-word terms beside the bigrams, in a plain BM25 over JaQuAD (issue #24).

Whole documents (title + text), BM25 k1 1.2 / b 0.75 written here, nDCG@10 against the qrels, for
all questions and for the two halves of a hash split (a question's half is the parity of the
first byte of its id's SHA-256), so a gain seen on one half is checked on the other:

* `bigrams`: the keyword analysis before the word terms (today's `fts_document` without them);
* `bigrams + script runs`: today's analysis (`domain.japanese_words`);
* `bigrams + dictionary words` (only when `fugashi` and `ipadic` are installed: MeCab's words,
  particles, auxiliaries and symbols left out, marked the same way): what a 51 MB dictionary
  would add on top.

    python -m bench.studies.japanese_words [--data-root ../shared/data] [--set jaquad_dev]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from memlane.domain.japanese_words import WORD_MARK, mark
from memlane.domain.keywords import fts_document, fts_query_terms, japanese_word_terms

_TOKEN = re.compile(f"[\\w{WORD_MARK}]+")
Analyse = Callable[[str], list[str]]


def _load(root: Path) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    corpus = {}
    for line in (root / "corpus.jsonl").open(encoding="utf-8"):
        doc = json.loads(line)
        corpus[doc["_id"]] = f"{doc.get('title') or ''}\n{doc['text']}"
    queries = {}
    for line in (root / "queries.jsonl").open(encoding="utf-8"):
        q = json.loads(line)
        queries[q["_id"]] = q["text"]
    qrels: dict[str, set[str]] = defaultdict(set)
    for row in (root / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc_id, score = row.split("\t")
        if int(score) > 0:
            qrels[qid].add(doc_id)
    return corpus, {q: t for q, t in queries.items() if q in qrels}, qrels


class _Bm25:
    def __init__(self, docs: dict[str, list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self._k1, self._b = k1, b
        self._tf = {d: Counter(tokens) for d, tokens in docs.items()}
        self._len = {d: len(tokens) for d, tokens in docs.items()}
        self._avg = sum(self._len.values()) / len(docs)
        df: Counter[str] = Counter()
        for tf in self._tf.values():
            df.update(tf.keys())
        n = len(docs)
        self._idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self._postings: dict[str, list[str]] = defaultdict(list)
        for d, tf in self._tf.items():
            for t in tf:
                self._postings[t].append(d)

    def top(self, terms: Sequence[str], k: int = 10) -> list[str]:
        scores: dict[str, float] = defaultdict(float)
        for t in dict.fromkeys(terms):
            idf = self._idf.get(t, 0.0)
            for d in self._postings.get(t, ()):
                f = self._tf[d][t]
                norm = self._k1 * (1 - self._b + self._b * self._len[d] / self._avg)
                scores[d] += idf * f * (self._k1 + 1) / (f + norm)
        return sorted(scores, key=lambda d: -scores[d])[:k]


def _ndcg10(ranked: Sequence[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    return dcg / sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))


def _document(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(fts_document(text))]


def _query(text: str) -> list[str]:
    # The terms `build_fts_query` ORs (without its 64-term cap, which no question here reaches).
    return fts_query_terms(text) + japanese_word_terms(text)


def _without_words(tokens: list[str]) -> list[str]:
    return [t for t in tokens if not t.startswith(WORD_MARK)]


def _dictionary() -> Analyse | None:
    try:
        import fugashi  # type: ignore[import-not-found]
        import ipadic  # type: ignore[import-not-found]
    except ImportError:
        return None
    tagger = fugashi.GenericTagger(ipadic.MECAB_ARGS)
    skipped = {"助詞", "助動詞", "記号"}

    def words(text: str) -> list[str]:
        return [mark(w.surface.lower()) for w in tagger(text) if w.feature[0] not in skipped]

    return words


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=Path("../shared/data"))
    parser.add_argument("--set", default="jaquad_dev")
    args = parser.parse_args(argv)
    corpus, queries, qrels = _load(args.data_root / args.set)
    docs = {d: _document(t) for d, t in corpus.items()}
    asked = {q: _query(t) for q, t in queries.items()}
    variants: dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]] = {
        "bigrams": (
            {d: _without_words(t) for d, t in docs.items()},
            {q: _without_words(t) for q, t in asked.items()},
        ),
        "bigrams + script runs": (docs, asked),
    }
    if (words := _dictionary()) is not None:
        variants["bigrams + dictionary words"] = (
            {d: _without_words(docs[d]) + words(t) for d, t in corpus.items()},
            {q: _without_words(asked[q]) + words(t) for q, t in queries.items()},
        )
    half = {q: hashlib.sha256(q.encode()).digest()[0] % 2 for q in queries}
    print(f"{args.set}: {len(queries)} questions, {len(corpus)} documents; nDCG@10")
    print("| analysis | all | half 0 | half 1 | better / worse than bigrams |")
    print("|---|---|---|---|---|")
    base: dict[str, float] = {}
    for label, (doc_tokens, query_tokens) in variants.items():
        index = _Bm25(doc_tokens)
        ndcg = {q: _ndcg10(index.top(query_tokens[q]), qrels[q]) for q in queries}
        base = base or ndcg
        parts = [[v for q, v in ndcg.items() if half[q] == h] for h in (0, 1)]
        better = sum(ndcg[q] > base[q] + 1e-12 for q in queries)
        worse = sum(ndcg[q] < base[q] - 1e-12 for q in queries)
        means = [sum(ndcg.values()) / len(ndcg)] + [sum(p) / len(p) for p in parts]
        cells = " | ".join(f"{m:.4f}" for m in means)
        print(f"| {label} | {cells} | {better} / {worse} |")


if __name__ == "__main__":
    main()
