"""Names the CLI accepts, each with its default location under the shared data folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memlane.bench.datasets import beir, locomo, longmemeval
from memlane.bench.datasets.model import Dataset

# The repository root is two levels above this package; data lives beside the repo. A checkout
# elsewhere (a git worktree one level deeper) names the folder with MEMLANE_BENCH_DATA.
DEFAULT_DATA_ROOT = Path(
    os.environ.get("MEMLANE_BENCH_DATA")
    or Path(__file__).resolve().parents[2].parent / "shared" / "data"
)


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    name: str
    default_relpath: str
    load: Callable[[Path], Dataset]
    description: str


SPECS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in [
        DatasetSpec(
            "xquad_zh", "xquad_zh", lambda p: beir.dataset("xquad_zh", p), "Chinese, 240 docs"
        ),
        DatasetSpec(
            "jaquad_dev", "jaquad_dev", lambda p: beir.dataset("jaquad_dev", p), "Japanese"
        ),
        DatasetSpec(
            "autorag_ko", "autorag_ko", lambda p: beir.dataset("autorag_ko", p), "Korean pages"
        ),
        DatasetSpec(
            "scifact",
            "beir_scifact",
            lambda p: beir.dataset("scifact", p, max_results=100),
            "BEIR SciFact test",
        ),
        # The 809 training claims over the same corpus: no default was ever tuned on them, so
        # they tell whether a choice made on the test claims holds on questions nobody looked at.
        DatasetSpec(
            "scifact_train",
            "beir_scifact",
            lambda p: beir.dataset("scifact_train", p, split="train", max_results=100),
            "BEIR SciFact train claims (held out)",
        ),
        DatasetSpec("locomo", "locomo/locomo10.json", locomo.dataset, "LoCoMo, per conv."),
        DatasetSpec(
            "lme_s",
            "longmemeval_s/longmemeval_s_cleaned_subset48.json",
            lambda p: longmemeval.dataset(p, "per_question"),
            "LongMemEval S, one index per question",
        ),
        DatasetSpec(
            "lme_s_official",
            "longmemeval_s/longmemeval_s_cleaned_subset48.json",
            lambda p: longmemeval.dataset(p, "official"),
            "LongMemEval S, user turns only (upstream protocol)",
        ),
        DatasetSpec(
            "lme_pooled",
            "longmemeval_s/longmemeval_s_cleaned_subset48.json",
            lambda p: longmemeval.dataset(p, "pooled"),
            "LongMemEval, all evidence sessions in one index",
        ),
    ]
}


def load(name: str, path: Path | None = None, data_root: Path | None = None) -> Dataset:
    """The named data set read from `path`, else from `<data_root>/<default relpath>`."""
    spec = SPECS.get(name)
    if spec is None:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(SPECS)}")
    where = path if path is not None else (data_root or DEFAULT_DATA_ROOT) / spec.default_relpath
    return spec.load(where)
