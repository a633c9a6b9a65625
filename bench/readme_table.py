"""README's "How well it works" table, rendered from the accepted guard runs.

Each figure is the macro mean over a set's questions in the run `bench/baselines/guard.json`
names for that set and mode, recomputed from the run's per-question records, so the table can
only say what a committed run measured. `python -m bench table` prints it; a test fails while
README holds anything else, so a new baseline (`guard --write-baseline`) cannot leave a stale row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memlane.bench import guard, report
from memlane.bench.runner import DatasetRun

MODES = ("keyword", "vector", "hybrid")
HEADER = "| benchmark | keyword only | vector only | hybrid (default) | reference |"


@dataclass(frozen=True)
class Row:
    label: str
    dataset: str
    metrics: tuple[str, ...]
    reference: str


ROWS = (
    Row(
        "LoCoMo turn recall at 5 / 10 lines",
        "locomo",
        ("turn_recall@L5", "turn_recall@L10"),
        "DRAGON 0.567 / 0.662",
    ),
    Row("LoCoMo session recall_all@5", "locomo", ("recall_all@5",), "target 0.85"),
    Row(
        "LongMemEval pooled, recall_all@5 / nDCG@10",
        "lme_pooled",
        ("recall_all@5", "ndcg@10"),
        "target 0.90 / 0.90",
    ),
    Row("XQuAD-zh nDCG@10", "xquad_zh", ("ndcg@10",), "target 0.90"),
    Row(
        "LongMemEval_S per question, recall_all@5 / nDCG@10",
        "lme_s",
        ("recall_all@5", "ndcg@10"),
        "target 0.90 / 0.90",
    ),
    Row(
        "LongMemEval official variant, recall_all@5 / nDCG@10",
        "lme_s_official",
        ("recall_all@5", "ndcg@10"),
        "MiniLM vector 0.870",
    ),
    Row("SciFact nDCG@10", "scifact", ("ndcg@10",), "BM25 0.665–0.687, bge-small 0.713"),
    Row(
        "SciFact training claims (809, held out: never tuned on) nDCG@10 / recall@5",
        "scifact_train",
        ("ndcg@10", "recall@5"),
        "–",
    ),
    Row("JaQuAD nDCG@10, all 3,939 queries", "jaquad_dev", ("ndcg@10",), "target 0.90"),
    Row("AutoRAG-ko nDCG@10", "autorag_ko", ("ndcg@10",), "target 0.90"),
)

# set -> mode -> metric -> mean over the set's questions
Figures = dict[str, dict[str, dict[str, float]]]


def figures(
    bench_dir: Path, baselines: Mapping[str, Mapping[str, str]], rows: Sequence[Row] = ROWS
) -> Figures:
    """Every figure the rows need, from the baseline run of each set and mode."""
    out: Figures = {}
    loaded: dict[str, dict[str, DatasetRun]] = {}
    for row in rows:
        for mode in MODES:
            file = baselines.get(row.dataset, {}).get(mode)
            if file is None:
                raise LookupError(f"no baseline for {row.dataset} {mode} in the guard's baselines")
            if file not in loaded:
                _, runs = report.read_runs(bench_dir / file)
                loaded[file] = {r.name: r for r in runs}
            run = loaded[file].get(row.dataset)
            if run is None:
                raise LookupError(f"{file} has no run of {row.dataset}")
            summary = report.summarize(run)
            if mode not in summary:
                raise LookupError(f"{file} has no {mode} run of {row.dataset}")
            wanted = out.setdefault(row.dataset, {}).setdefault(mode, {})
            wanted.update({m: summary[mode]["all"][m] for m in row.metrics})
    return out


def render(found: Figures, rows: Sequence[Row] = ROWS) -> str:
    """The Markdown table. The best mode on a row's first metric is bold (the default on a tie)."""
    lines = [HEADER, "|---|---|---|---|---|"]
    for row in rows:
        by_mode = found[row.dataset]
        first = row.metrics[0]
        best = max(MODES, key=lambda mode: (round(by_mode[mode][first], 3), mode == "hybrid"))
        cells = []
        for mode in MODES:
            text = " / ".join(f"{by_mode[mode][m]:.3f}" for m in row.metrics)
            cells.append(f"**{text}**" if mode == best else text)
        lines.append(f"| {row.label} | {' | '.join(cells)} | {row.reference} |")
    return "\n".join(lines) + "\n"


def current(bench_dir: Path, baseline_file: Path = guard.BASELINES) -> str:
    """The table as the committed baselines give it."""
    return render(figures(bench_dir, guard.read_baselines(baseline_file)))
