"""Study (session 25): hits that do not repeat the lines an earlier hit already showed.

Chunks overlap (transcripts by 30 tokens, notes by 80), so a search that returns two
neighbouring chunks of one file shows the shared lines twice, and under a line budget
(turn recall at L lines) the second copy spends budget on nothing new. This replays the shipped
fusion over the legs `fusion_study collect` recorded and trims from each hit the lines earlier
hits of its file hold (a hit left with none is dropped; one left with a hole inside keeps its
range), then scores both with the harness's metrics. By construction the trim can only raise
a line-budget recall; the question is by how much, and what it would cost: a hit whose lines
an earlier hit holds can still carry text the reader has not seen (a long line cut into several
chunks), which a trim by lines would hide. Those hits are counted.

    python -m bench.studies.repeated_lines locomo lme_pooled lme_s_official scifact jaquad_dev \
        --out 20261206-s25-repeated-lines

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path

from memlane.bench import metrics
from memlane.bench.cli import BENCH_DIR
from memlane.bench.studies.fusion_study import recorded_queries

METRICS = ("recall_all@5", "ndcg@10", "turn_recall@L5", "turn_recall@L10", "turn_recall@L25")


def trimmed(hits: Sequence[metrics.Hit]) -> tuple[list[metrics.Hit], int]:
    """The hits without the lines earlier hits of their file hold, and how many hits were
    dropped whole (every line already shown)."""
    shown: dict[str, set[int]] = {}
    out: list[metrics.Hit] = []
    dropped = 0
    for path, start, end in hits:
        lines = set(range(start, end + 1))
        seen = shown.setdefault(path, set())
        new = sorted(lines - seen)
        seen |= lines
        if not new:
            dropped += 1
        elif new[-1] - new[0] + 1 == len(new):
            out.append((path, new[0], new[-1]))
        else:
            out.append((path, start, end))  # an earlier hit inside it: kept whole
    return out, dropped


def study(name: str) -> dict[str, object]:
    rows: dict[str, list[dict[str, float]]] = {"shipped": [], "trimmed": []}
    changed = dropped_in_10 = 0
    for recorded in recorded_queries(name):
        hits = recorded.hits("z50", 200, 50)
        cut, _ = trimmed(hits)
        changed += cut[:5] != hits[:5]
        dropped_in_10 += trimmed(hits[:10])[1]
        rows["shipped"].append(recorded.score(hits))
        rows["trimmed"].append(recorded.score(cut))
    shown = [m for m in (*METRICS, "lines_per_hit@5") if m in rows["shipped"][0]]
    means = {
        label: {m: round(statistics.fmean(r[m] for r in vals), 4) for m in shown}
        for label, vals in rows.items()
    }
    return {
        "questions": len(rows["shipped"]),
        "first_five_changed": changed,
        "hits_dropped_whole_in_first_ten": dropped_in_10,
        "means": means,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--out", default="repeated-lines")
    args = parser.parse_args()
    report = {name: study(name) for name in args.sets}
    for name, found in report.items():
        print(f"\n{name}: {json.dumps({k: v for k, v in found.items() if k != 'means'})}")
        means = found["means"]
        assert isinstance(means, dict)
        for label, values in means.items():
            print(f"  {label:8} " + "  ".join(f"{m} {v:.3f}" for m, v in values.items()))
    target = Path(BENCH_DIR) / "results" / f"{args.out}.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten {target}")


if __name__ == "__main__":
    main()
