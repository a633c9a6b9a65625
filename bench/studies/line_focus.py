"""Study (issue #24, item 4; rejected): narrow each LoCoMo hit to its lines holding the query's
rarer words, and what that does to turn recall at a line budget.

A transcript hit spans ~3.2 lines, so the 5-line budget holds fewer than two hits. Narrowing a
hit to the lines that carry the question's words would fit more hits into the budget, but every
line cut away is a line the reader no longer gets. This replays the real hybrid hits of the
bench's LoCoMo stores (run `python -m bench run locomo --modes hybrid` first) through three
narrowings, scored as the harness scores (lines walked until the budget, the last hit cut):

- `span`: from the first to the last line holding a query word (idf-weighted, words in half the
  conversation's lines or more ignored); a hit with no such line is kept whole;
- `half`: the lines scoring at least half the hit's best line;
- `best`: the best line alone.

    python -m bench.studies.line_focus [--work bench/work]

Prints turn recall at 5 / 10 / 25 / 50 lines and over all 50 hits, per category.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from memlane.bench.datasets import registry
from memlane.bench.runner import MODES, memlane_opener, mode_config, open_unit, store_key
from memlane.bench.workspace import UnitPaths
from memlane.domain.keywords import fts_query_terms

Hit = tuple[str, int, int]
Gold = frozenset[tuple[str, int]]
_WORD = re.compile(r"[a-z0-9']+")
VARIANTS = ("none", "span", "half", "best")
BUDGETS = (5, 10, 25, 50)


def stem(word: str) -> str:
    """A crude English suffix strip (-ing, -ed, -es, -s), enough to match a word's forms."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower())}


def _transcript_lines(path: Path) -> list[str]:
    lines: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            content = json.loads(raw)["message"]["content"]
        except (ValueError, KeyError, TypeError):
            content = ""
        lines.append(content if isinstance(content, str) else json.dumps(content))
    return lines


def narrow(hit: Hit, lines: Sequence[str], weights: dict[str, float], variant: str) -> Hit:
    """The hit's line range after `variant` (1-based, inclusive; unchanged without a match)."""
    path, start, end = hit
    if variant == "none" or end <= start:
        return hit
    scores = [
        sum(w for t, w in weights.items() if t in _words(lines[i - 1]))
        if i - 1 < len(lines)
        else 0.0
        for i in range(start, end + 1)
    ]
    best = max(scores)
    if best <= 0.0:
        return hit
    if variant == "best":
        at = start + scores.index(best)
        return path, at, at
    floor = best / 2 if variant == "half" else 1e-12
    kept = [i for i, s in enumerate(scores) if s >= floor]
    return path, start + kept[0], start + kept[-1]


def turn_recall_within(hits: Sequence[Hit], gold: Gold, budget: int) -> float:
    """The harness's turn recall at a line budget (bench/metrics.py, cut_to_budget)."""
    used = 0
    covered: set[tuple[str, int]] = set()
    for path, start, end in hits:
        if used >= budget:
            break
        take = min(end - start + 1, budget - used)
        used += take
        covered |= {(p, line) for p, line in gold if p == path and start <= line < start + take}
    return len(covered) / len(gold)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.studies.line_focus")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent.parent / "work")
    args = parser.parse_args()
    dataset = registry.load("locomo", None, registry.DEFAULT_DATA_ROOT)
    opener = memlane_opener()
    scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for unit in dataset.units():
        paths = UnitPaths.for_unit(args.work, "locomo", unit.unit_id)
        files = {
            f"sessions/{p.name}": _transcript_lines(p) for p in paths.sessions_dir.glob("*.jsonl")
        }
        df: Counter[str] = Counter()
        for lines in files.values():
            for line in lines:
                df.update(_words(line))
        n = sum(len(lines) for lines in files.values())
        store = paths.store_path(store_key({"provider": "local", **MODES["hybrid"]}))
        manager = open_unit(opener, paths, mode_config("hybrid", "local", store, 50, {}))
        try:
            for q in unit.queries:
                terms = {stem(t.lower()) for t in fts_query_terms(q.text)}
                weights = {t: math.log((n + 1) / (df[t] + 0.5)) for t in terms if df[t] < n / 2}
                found = manager.search(q.text, max_results=50, min_score=0.0, as_of=q.as_of)
                hits = [(r.path, r.start_line, r.end_line) for r in found.results]
                for variant in VARIANTS:
                    narrowed = [narrow(h, files.get(h[0], []), weights, variant) for h in hits]
                    for budget in (*BUDGETS, 10**9):
                        value = turn_recall_within(narrowed, q.gold_lines, budget)
                        for cat in ("all", q.category):
                            scores[(cat, variant, str(budget))].append(value)
        finally:
            manager.close()
    labels = [f"L{b}" for b in BUDGETS] + ["all 50 hits"]
    print("| category | narrowing | " + " | ".join(labels) + " |")
    print("|---|---|" + "---|" * len(labels))
    for cat in ("all", "1", "2", "3", "4", "5"):
        for variant in VARIANTS:
            cells = [
                f"{statistics.fmean(scores[(cat, variant, str(b))]):.3f}" for b in (*BUDGETS, 10**9)
            ]
            print(f"| {cat} | {variant} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
