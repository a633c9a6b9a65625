"""README's results table is the one the accepted guard runs give (issue 24: no stale row)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlane.bench import guard, readme_table

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def found() -> readme_table.Figures:
    return readme_table.figures(ROOT / "bench", guard.read_baselines())


def test_readme_holds_the_table_the_baselines_give(found: readme_table.Figures) -> None:
    table = readme_table.render(found)

    assert table.count("\n") == len(readme_table.ROWS) + 2
    assert table in README, "README's table is stale: paste `python -m bench table` into it"


def test_a_figure_that_moved_would_make_readme_stale(found: readme_table.Figures) -> None:
    moved = {s: {m: dict(v) for m, v in modes.items()} for s, modes in found.items()}
    moved["scifact"]["hybrid"]["ndcg@10"] += 0.001

    assert readme_table.render(moved) not in README


def test_the_best_mode_is_bold_and_the_default_wins_a_tie() -> None:
    row = readme_table.Row("x", "s", ("m",), "–")
    tie = {"s": {"keyword": {"m": 0.5}, "vector": {"m": 0.9}, "hybrid": {"m": 0.9}}}
    ahead = {"s": {"keyword": {"m": 0.95}, "vector": {"m": 0.9}, "hybrid": {"m": 0.9}}}

    assert "| x | 0.500 | 0.900 | **0.900** | – |" in readme_table.render(tie, [row])
    assert "| x | **0.950** | 0.900 | 0.900 | – |" in readme_table.render(ahead, [row])


def test_a_set_without_a_baseline_is_an_error_not_a_blank_row() -> None:
    with pytest.raises(LookupError, match="no baseline for scifact"):
        readme_table.figures(ROOT / "bench", {"locomo": {}}, [readme_table.ROWS[6]])
