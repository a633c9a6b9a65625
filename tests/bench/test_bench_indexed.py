"""A newcomer can walk bench/: every benchmark module is named in architecture.md's section on
the benchmarks, and every study in bench/studies/README.md, so neither index can fall behind the
folder it describes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    after = text.find("\n## ", start + len(heading))
    return text[start:] if after < 0 else text[start:after]


def _modules(folder: Path) -> list[str]:
    names = [p.name for p in folder.iterdir() if p.suffix in (".py", ".sh")]
    return sorted(n for n in names if n not in ("__init__.py", "__main__.py"))


@pytest.mark.parametrize("name", _modules(BENCH))
def test_every_benchmark_is_named_in_architecture(name: str) -> None:
    section = _section(
        (ROOT / "architecture.md").read_text(encoding="utf-8"), "## 10. The benchmarks"
    )
    assert f"`{name}`" in section, f"architecture.md §10 does not name bench/{name}"


@pytest.mark.parametrize("name", _modules(BENCH / "studies"))
def test_every_study_is_in_the_studies_index(name: str) -> None:
    index = (BENCH / "studies" / "README.md").read_text(encoding="utf-8")
    stem = name.removesuffix(".py")
    assert re.search(rf"`{re.escape(stem)}`", index), f"bench/studies/README.md lacks {stem}"
