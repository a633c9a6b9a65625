"""README's demo timings are the measured ones (issue 29: "about half a minute" was 3.6 s).

The figures come from bench/demo_first_search.py's result files; a new measurement that moves
them makes this test fail until README says the new figures.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).parent.parent.parent.parent
README = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def _summary(name: str) -> dict[str, float]:
    data = json.loads((ROOT / "bench" / "results" / f"{name}.json").read_text(encoding="utf-8"))
    summary: dict[str, float] = data["summary"]
    return summary


def test_the_first_search_figures_are_the_measured_ones() -> None:
    found = _summary("demo_first_search")

    assert "bench/demo_first_search.py" in README
    assert f"{found['first_search_cpu_s_median']:.1f} s of CPU time" in README
    assert f"{found['first_search_wall_s_median']:.0f} s of wall time" in README


def test_the_install_figures_are_the_measured_ones() -> None:
    found = _summary("demo_first_install")

    assert f"{found['install_cpu_s_median']:.0f} s of CPU time" in README
    assert f"{found['install_wall_s_median']:.0f} s of wall time" in README


def test_no_unmeasured_estimate_is_left() -> None:
    assert "about half a minute" not in README
