"""Turns scored runs into tables on stdout, a JSON file and PNG plots under `bench/results/`.

Averages are macro over queries (protocol §2.3), overall and per category; LoCoMo also gets
categories 1-4 together (the mem0-style subset). Mode comparisons use the paired bootstrap.
"""

from __future__ import annotations

import gzip
import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memlane.bench import metrics
from memlane.bench.runner import LINE_BUDGETS, DatasetRun, UnitRun

BEIR_COLUMNS = ("ndcg@10", "recall@5", "recall@10", "recall@100", "mrr@10", "lines_per_hit@5")
TURN_COLUMNS = (
    "recall_any@5",
    "recall_all@5",
    "ndcg@10",
    "turn_recall@L5",
    "turn_recall@L10",
    "turn_recall@L25",
    "turn_recall@L50",
    "turn_recall@5",
    "turn_ndcg@10",
    "lines_per_hit@5",
)
CATEGORY_COLUMNS_TURN = ("recall_all@5", "turn_recall@L5", "turn_recall@L10", "turn_recall@L50")
CATEGORY_COLUMNS_BEIR = ("ndcg@10", "recall@5")
PRIMARY_TURN = ("recall_all@5", "ndcg@10", "turn_recall@L5", "turn_recall@L10")
PRIMARY_BEIR = ("ndcg@10", "recall@5")
BASELINE_MODE = "hybrid"
LOCOMO_CORE = ("1", "2", "3", "4")


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def category_groups(run: DatasetRun) -> dict[str, frozenset[str]]:
    """Group name -> the categories it averages over ("all", each category, LoCoMo "1-4")."""
    cats = sorted({str(r["category"]) for r in run.records})
    groups = {"all": frozenset(cats)}
    if len(cats) > 1:
        groups.update({c: frozenset({c}) for c in cats})
        if run.name.startswith("locomo") and set(LOCOMO_CORE) <= set(cats):
            groups["1-4"] = frozenset(LOCOMO_CORE)
    return groups


def summarize(run: DatasetRun) -> dict[str, dict[str, dict[str, float]]]:
    """{mode: {category group: {metric: macro mean}}} (plus `n` and `latency_p50_ms`)."""
    modes = list(dict.fromkeys(r["mode"] for r in run.records))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for mode in modes:
        out[mode] = {}
        for group, cats in category_groups(run).items():
            rows = [r for r in run.records if r["mode"] == mode and r["category"] in cats]
            names = list(dict.fromkeys(k for r in rows for k in r["metrics"]))
            stats = {k: _mean([r["metrics"][k] for r in rows if k in r["metrics"]]) for k in names}
            stats["n"] = float(len(rows))
            stats["latency_p50_ms"] = (
                statistics.median([r["latency_ms"] for r in rows]) if rows else float("nan")
            )
            out[mode][group] = stats
    return out


def compare_modes(run: DatasetRun, seed: int = 0) -> list[dict[str, Any]]:
    """Paired bootstrap of hybrid against every other mode on the primary metrics."""
    by_mode: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
    for r in run.records:
        by_mode.setdefault(r["mode"], {})[(r["unit"], r["qid"])] = r["metrics"]
    if BASELINE_MODE not in by_mode:
        return []
    base = by_mode[BASELINE_MODE]
    primary = PRIMARY_TURN if run.turn_level else PRIMARY_BEIR
    out: list[dict[str, Any]] = []
    for other, rows in by_mode.items():
        if other == BASELINE_MODE:
            continue
        keys = [k for k in base if k in rows]
        for metric in primary:
            pairs = [(base[k][metric], rows[k][metric]) for k in keys if metric in base[k]]
            if len(pairs) < 2:
                continue
            cmp = metrics.paired_bootstrap([a for a, _ in pairs], [b for _, b in pairs], seed=seed)
            out.append({"a": BASELINE_MODE, "b": other, "metric": metric, **asdict(cmp)})
    return out


def compare_runs(
    a: DatasetRun,
    b: DatasetRun,
    mode: str,
    seed: int = 0,
    metric_names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Paired bootstrap of one mode across two runs of the same data set (e.g. before and after
    a change), over the queries both runs scored, on `metric_names` (default: the primary
    metrics; `["all"]`: every metric the runs recorded, e.g. to check two stores agree)."""
    rows_a = {(r["unit"], r["qid"]): r["metrics"] for r in a.records if r["mode"] == mode}
    rows_b = {(r["unit"], r["qid"]): r["metrics"] for r in b.records if r["mode"] == mode}
    keys = [k for k in rows_a if k in rows_b]
    if metric_names is None:
        metric_names = PRIMARY_TURN if a.turn_level else PRIMARY_BEIR
    elif list(metric_names) == ["all"]:
        metric_names = sorted({m for k in keys for m in rows_a[k]})
    out: list[dict[str, Any]] = []
    for metric in metric_names:
        pairs = [(rows_a[k][metric], rows_b[k][metric]) for k in keys if metric in rows_a[k]]
        if len(pairs) < 2:
            continue
        cmp = metrics.paired_bootstrap([x for x, _ in pairs], [y for _, y in pairs], seed=seed)
        means = (statistics.fmean(x for x, _ in pairs), statistics.fmean(y for _, y in pairs))
        # A zero mean difference can hide moves that cancel out: count the queries that moved.
        changed = sum(1 for x, y in pairs if abs(x - y) > 1e-9)
        out.append(
            {
                "metric": metric,
                "a_mean": means[0],
                "b_mean": means[1],
                "changed": changed,
                **asdict(cmp),
            }
        )
    return out


def ranking_changes(a: DatasetRun, b: DatasetRun, mode: str) -> dict[str, int] | None:
    """How many of the queries both runs scored in `mode` ranked their hits differently (top 10,
    whole list); None when a run predates the ranking digests."""

    def digests(run: DatasetRun) -> dict[tuple[str, str], dict[str, str]]:
        return {(r["unit"], r["qid"]): r["ranking"] for r in run.records if r["mode"] == mode}

    if any("ranking" not in r for r in (*a.records, *b.records) if r["mode"] == mode):
        return None
    rows_a, rows_b = digests(a), digests(b)
    keys = [k for k in rows_a if k in rows_b]
    return {
        "n": len(keys),
        "top10": sum(1 for k in keys if rows_a[k]["top10"] != rows_b[k]["top10"]),
        "all": sum(1 for k in keys if rows_a[k]["all"] != rows_b[k]["all"]),
    }


def format_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table (aligned, so it reads on a terminal too) under a `###` title."""
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([f"\n### {title}", row(header), sep, *(row(r) for r in rows)])


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"  # NaN check without math import


def render(
    run: DatasetRun,
    summary: dict[str, dict[str, dict[str, float]]],
    comparisons: Sequence[dict[str, Any]],
) -> str:
    columns = TURN_COLUMNS if run.turn_level else BEIR_COLUMNS
    parts = []
    rows = [
        [
            mode,
            str(int(s["all"]["n"])),
            *(_fmt(s["all"].get(c, float("nan"))) for c in columns),
            f"{s['all']['latency_p50_ms']:.1f}",
        ]
        for mode, s in summary.items()
    ]
    parts.append(format_table(f"{run.name}: overall", ["mode", "n", *columns, "p50 ms"], rows))
    groups = [g for g in category_groups(run) if g != "all"]
    if groups:
        cat_cols = CATEGORY_COLUMNS_TURN if run.turn_level else CATEGORY_COLUMNS_BEIR
        rows = [
            [mode, g, str(int(s[g]["n"])), *(_fmt(s[g].get(c, float("nan"))) for c in cat_cols)]
            for mode, s in summary.items()
            for g in groups
        ]
        parts.append(
            format_table(f"{run.name}: per category", ["mode", "cat", "n", *cat_cols], rows)
        )
    if comparisons:
        rows = [
            [
                f"{c['a']} - {c['b']}",
                c["metric"],
                f"{c['mean_diff']:+.3f}",
                f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]",
                f"{c['p_value']:.4f}",
            ]
            for c in comparisons
        ]
        parts.append(
            format_table(
                f"{run.name}: paired bootstrap (10k resamples)",
                ["pair", "metric", "diff", "95% CI", "p"],
                rows,
            )
        )
    sync_rows = [
        [
            u.unit_id,
            str(u.files),
            str(u.chars),
            *(f"{u.sync_seconds.get(m, float('nan')):.1f}" for m in summary),
        ]
        for u in run.units
    ]
    if sync_rows:
        parts.append(
            format_table(
                f"{run.name}: sync seconds per unit",
                ["unit", "files", "chars", *summary],
                sync_rows[:20],
            )
        )
    return "\n".join(parts)


def records_path(path: Path) -> Path:
    """Per-query records sit beside the summary, gzipped (they run to megabytes)."""
    return path.with_name(path.stem + ".records.json.gz")


def write_json(path: Path, meta: dict[str, Any], runs: Sequence[DatasetRun]) -> dict[str, Any]:
    """Write the summary JSON (`path`) and the per-query records; return the summary."""
    doc: dict[str, Any] = {"meta": meta, "datasets": {}}
    for run in runs:
        doc["datasets"][run.name] = {
            "turn_level": run.turn_level,
            "summary": summarize(run),
            "comparisons": compare_modes(run),
            "units": [asdict(u) for u in run.units],
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    records = {run.name: run.records for run in runs}
    with gzip.open(records_path(path), "wt", encoding="utf-8") as handle:
        json.dump(records, handle, ensure_ascii=False)
    return doc


def read_runs(path: Path) -> tuple[dict[str, Any], list[DatasetRun]]:
    """The summary document and the runs (with records) written by `write_json`."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    with gzip.open(records_path(path), "rt", encoding="utf-8") as handle:
        records = json.load(handle)
    runs = []
    for name, entry in doc["datasets"].items():
        run = DatasetRun(name=name, turn_level=bool(entry["turn_level"]))
        run.records = records.get(name, [])
        run.units = [UnitRun(**u) for u in entry["units"]]
        runs.append(run)
    return doc, runs


def plot_budget_curves(
    run: DatasetRun, summary: dict[str, dict[str, dict[str, float]]], path: Path
) -> bool:
    """Turn recall against the line budget, one line per mode."""
    if not run.turn_level or not run.records:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for mode, stats in summary.items():
        ys = [stats["all"].get(f"turn_recall@L{b}", float("nan")) for b in LINE_BUDGETS]
        ax.plot(LINE_BUDGETS, ys, marker="o", label=mode)
    ax.set_xscale("log")
    ax.set_xticks(LINE_BUDGETS, [str(b) for b in LINE_BUDGETS])
    ax.set_xlabel("line budget (lines returned)")
    ax.set_ylabel("turn recall")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.set_title(f"{run.name}: turn recall vs line budget")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_latency(runs: Sequence[DatasetRun], path: Path) -> bool:
    """Search p50 latency against corpus size (indexed characters), one series per mode."""
    points: dict[str, list[tuple[int, float]]] = {}
    for run in runs:
        for u in run.units:
            for mode, p50 in u.search_p50_ms.items():
                points.setdefault(mode, []).append((u.chars, p50))
    if len({c for pts in points.values() for c, _ in pts}) < 2:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for mode, pts in points.items():
        pts.sort()
        ax.scatter([c for c, _ in pts], [p for _, p in pts], label=mode, s=14)
    ax.set_xscale("log")
    ax.set_xlabel("corpus size (indexed characters)")
    ax.set_ylabel("search p50 (ms)")
    ax.grid(alpha=0.3)
    ax.set_title("search latency vs corpus size")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
