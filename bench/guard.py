"""`python -m bench guard`: re-run every set and say, per set and category, what moved.

Two comparisons, both paired bootstraps over the queries (10k resamples, 95 % interval):

- **against the committed baseline** (`bench/baselines/guard.json`: per set and mode, the
  results JSON that holds the accepted figures): what a change moved;
- **the default against every hit-removing rule off** (`RULES_OFF`): what the default's
  removals cost. A default must not lower a primary metric by more than `BUDGET` anywhere.

Keyword mode needs no embedding and is run on every set. The vector modes run only on sets
whose every chunk has a vector in the shared embedding cache (embed_cache.py) or the unit's own
store; the others are reported as "not measured" with how many of their texts are cached, never
skipped in silence. Categories with fewer than `MIN_CATEGORY` queries are not judged alone.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memlane.bench import metrics, report
from memlane.bench.datasets import registry
from memlane.bench.datasets.model import Dataset, Unit
from memlane.bench.embed_cache import chunk_hashes
from memlane.bench.runner import (
    DatasetRun,
    Opener,
    RunOptions,
    deep_merge,
    limited_units,
    run_unit,
)
from memlane.bench.workspace import UnitPaths

BUDGET = 0.005
MIN_CATEGORY = 8
GUARD_MODES = ("keyword", "vector", "hybrid")
VECTOR_MODES = ("vector", "hybrid")
# Every setting that removes hits rather than ordering them: the relevance floor (0: off) and
# minScore (the harness searches with the product's default, 0 since session 21).
RULES_OFF: Mapping[str, Any] = {"query": {"relevanceFloor": 0, "minScore": 0}}
PRIMARY_TURN = ("recall_all@5", "recall_any@5", "ndcg@10", "turn_recall@L5")
PRIMARY_DOC = ("recall_all@5", "recall_any@5", "ndcg@10", "recall@5")
BASELINES = Path(__file__).resolve().parent / "baselines" / "guard.json"


@dataclass(frozen=True, slots=True)
class Coverage:
    texts: int
    cached: int

    @property
    def complete(self) -> bool:
        return self.cached >= self.texts


@dataclass(frozen=True, slots=True)
class Moved:
    """One metric of one set, mode and category group, A against B."""

    dataset: str
    mode: str
    group: str
    metric: str
    n: int
    a: float
    b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float

    @property
    def significant(self) -> bool:
        return self.ci_low > 0.0 or self.ci_high < 0.0

    @property
    def within_budget(self) -> bool:
        return self.diff >= -BUDGET


def primary(run: DatasetRun) -> tuple[str, ...]:
    return PRIMARY_TURN if run.turn_level else PRIMARY_DOC


def groups(run: DatasetRun) -> dict[str, frozenset[str]]:
    """ "all" and every category (LoCoMo: also 1-4) with at least MIN_CATEGORY queries."""
    out: dict[str, frozenset[str]] = {}
    for name, cats in report.category_groups(run).items():
        qids = {r["qid"] for r in run.records if r["category"] in cats}
        if name == "all" or len(qids) >= MIN_CATEGORY:
            out[name] = cats
    return out


def compare(
    a: DatasetRun, b: DatasetRun, mode: str, *, seed: int = 0, resamples: int = 10_000
) -> list[Moved]:
    """Paired bootstrap of `mode`, A − B, over the queries both scored, per category group."""
    rows_a = {(r["unit"], r["qid"]): r for r in a.records if r["mode"] == mode}
    rows_b = {(r["unit"], r["qid"]): r for r in b.records if r["mode"] == mode}
    keys = [k for k in rows_a if k in rows_b]
    out: list[Moved] = []
    for group, cats in groups(a).items():
        chosen = [k for k in keys if rows_a[k]["category"] in cats]
        for metric in primary(a):
            pairs = [
                (rows_a[k]["metrics"][metric], rows_b[k]["metrics"][metric])
                for k in chosen
                if metric in rows_a[k]["metrics"] and metric in rows_b[k]["metrics"]
            ]
            if len(pairs) < 2:
                continue
            xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
            cmp = metrics.paired_bootstrap(xs, ys, seed=seed, resamples=resamples)
            out.append(
                Moved(
                    a.name,
                    mode,
                    group,
                    metric,
                    cmp.n,
                    statistics.fmean(xs),
                    statistics.fmean(ys),
                    cmp.mean_diff,
                    cmp.ci_low,
                    cmp.ci_high,
                    cmp.p_value,
                )
            )
    return out


def coverage(units: Sequence[Unit], dataset: str, options: RunOptions) -> Coverage:
    """How many of the set's chunk texts have a vector of `options.provider` in the shared
    cache or the unit's own store cache (keyword stores must exist: run keyword mode first)."""
    shared = options.shared_cache
    known: set[str] = set()
    if shared is not None and shared.path.exists():
        with closing(sqlite3.connect(shared.path, timeout=60.0)) as conn:
            known = {
                str(r[0])
                for r in conn.execute(
                    "SELECT hash FROM vectors WHERE provider = ?", (options.provider,)
                )
            }
    texts = cached = 0
    for unit in units:
        paths = UnitPaths.for_unit(options.work_dir, dataset, unit.unit_id)
        hashes = chunk_hashes(paths.store_path("fts"))
        own = paths.store_path("fts" if options.provider == "none" else options.provider)
        if own.exists():
            with closing(sqlite3.connect(f"file:{own}?mode=ro", uri=True, timeout=60.0)) as c:
                known |= {
                    str(r[0])
                    for r in c.execute(
                        "SELECT hash FROM embedding_cache WHERE provider = ?", (options.provider,)
                    )
                }
        texts += len(hashes)
        cached += len(hashes & known)
    return Coverage(texts, cached)


@dataclass(slots=True)
class GuardRun:
    default: list[DatasetRun]
    rules_off: list[DatasetRun]
    not_measured: dict[str, str]  # "set/mode" -> why


def run_sets(
    names: Sequence[str],
    options: RunOptions,
    opener: Opener,
    *,
    data_root: Path,
    modes: Sequence[str] = GUARD_MODES,
    load: Callable[[str], Dataset] | None = None,
    log: Callable[[str], None] = lambda _: None,
    embed_missing: bool = False,
) -> GuardRun:
    """Keyword mode on every set; the vector modes, default and with the rules off, where
    every vector is cached, or everywhere with `embed_missing` (the texts without a cached
    vector are embedded, and the shared cache keeps them for the next run)."""
    out = GuardRun([], [], {})
    for name in names:
        dataset = load(name) if load else registry.load(name, None, data_root)
        units = limited_units(dataset, options)
        default = DatasetRun(dataset.name, dataset.turn_level)
        off = DatasetRun(dataset.name, dataset.turn_level)
        keyword = replace(options, modes=("keyword",))
        for unit in units:
            run_unit(dataset, unit, keyword, opener, default, log)
        if "keyword" not in modes:
            default.records = [r for r in default.records if r["mode"] != "keyword"]
        wanted = tuple(m for m in modes if m in VECTOR_MODES)
        if wanted:
            cov = coverage(units, dataset.name, options)
            if not cov.complete and not embed_missing:
                why = f"not measured: {cov.cached:,} of {cov.texts:,} texts have a cached vector"
                for mode in wanted:
                    out.not_measured[f"{name}/{mode}"] = why
                log(f"{name}: vector modes {why}")
            else:
                if not cov.complete:
                    missing = cov.texts - cov.cached
                    log(f"{name}: embedding {missing:,} of {cov.texts:,} texts first")
                vec = replace(options, modes=wanted)
                vec_off = replace(vec, extra_config=deep_merge(options.extra_config, RULES_OFF))
                for unit in units:
                    run_unit(dataset, unit, vec, opener, default, log)
                    run_unit(dataset, unit, vec_off, opener, off, log)
        out.default.append(default)
        if off.records:
            out.rules_off.append(off)
    return out


def read_baselines(path: Path = BASELINES) -> dict[str, dict[str, str]]:
    """{set: {mode: results JSON, relative to bench/}} (empty without a file)."""
    if not path.exists():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): {str(m): str(f) for m, f in v.items()} for k, v in doc["sets"].items()}


def baseline_run(bench_dir: Path, file: str, dataset: str) -> DatasetRun | None:
    _, runs = report.read_runs(bench_dir / file)
    return next((r for r in runs if r.name == dataset), None)


def write_baselines(
    path: Path, current: Mapping[str, Mapping[str, str]], results: str, run: GuardRun
) -> dict[str, dict[str, str]]:
    """Point every measured set and mode at `results` (relative to bench/), keep the rest."""
    out = {k: dict(v) for k, v in current.items()}
    for r in run.default:
        for mode in dict.fromkeys(rec["mode"] for rec in r.records):
            out.setdefault(r.name, {})[mode] = results
    path.parent.mkdir(parents=True, exist_ok=True)
    note = json.loads(path.read_text(encoding="utf-8")).get("note") if path.exists() else None
    doc: dict[str, Any] = {"written": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "sets": out}
    if note:
        doc["note"] = note
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return out


HEADER = ["set", "mode", "category", "metric", "n", "A", "B", "A − B", "95% CI", "p", "verdict"]


def rows(moved: Sequence[Moved], *, only_moved: bool = True) -> list[list[str]]:
    """Table rows; with `only_moved`, a category's row only where some query moved (the "all"
    rows always)."""
    out: list[list[str]] = []
    for m in moved:
        still = m.diff == 0.0 and m.ci_low == 0.0 and m.ci_high == 0.0
        if only_moved and still and m.group != "all":
            continue
        verdict = "significant" if m.significant else "within noise"
        if not m.within_budget:
            verdict += f", OVER the {BUDGET} budget"
        out.append(
            [
                m.dataset,
                m.mode,
                m.group,
                m.metric,
                str(m.n),
                f"{m.a:.3f}",
                f"{m.b:.3f}",
                f"{m.diff:+.3f}",
                f"[{m.ci_low:+.3f}, {m.ci_high:+.3f}]",
                f"{m.p_value:.3f}",
                verdict,
            ]
        )
    return out


MARKING_HEADER = ["set", "mode", "answered, marked", "missed, marked", "not judged"]


def marking_rows(run: DatasetRun) -> list[list[str]]:
    """How often the response's `noStrongMatch` marked a question the search answered (a gold
    document among its first 5: a false alarm) and one it missed (a true warning), per mode
    that judges; reported beside the guard's comparisons, not held to its budget."""
    out: list[list[str]] = []
    for mode in dict.fromkeys(r["mode"] for r in run.records):
        records = [r for r in run.records if r["mode"] == mode]
        judged = [r for r in records if r.get("no_strong_match") is not None]
        if not judged:
            continue
        answered = [r for r in judged if r["metrics"]["recall_any@5"] > 0]
        missed = [r for r in judged if r["metrics"]["recall_any@5"] == 0]
        unjudged = str(len(records) - len(judged))
        out.append([run.name, mode, _marked(answered), _marked(missed), unjudged])
    return out


def _marked(records: Sequence[Mapping[str, Any]]) -> str:
    if not records:
        return "–"
    marked = sum(1 for r in records if r["no_strong_match"])
    return f"{marked} of {len(records)} ({marked / len(records):.1%})"
