"""Every result file bench/RESULTS.md and bench/HISTORY.md cite exists under bench/results/.

A citation is a file name in prose (commands, which name outputs still to be written, are
skipped): `bench/results/NAME`, or a backticked name whose stem carries a digit, `_` or `-`
(plain `A.json` or `build.json` are placeholders and work files). `{a,b}` is expanded, and a name
abbreviated to its time (`-193720-foreign.json`, the date given nearby) must end exactly one file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
RESULTS = BENCH / "results"

_NAME = r"[\w{},.-]+\.(?:json\.gz|json|png|txt)"
_CITED = re.compile(rf"bench/results/({_NAME})|`({_NAME})`")
_BRACES = re.compile(r"^(.*)\{([^}]*)\}(.*)$")
_COMMAND = re.compile(r"^\s*(\.venv/bin/|nice |python |\$|#|for |done|\(same\))")


def _expand(name: str) -> list[str]:
    match = _BRACES.match(name)
    if match is None:
        return [name]
    head, alternatives, tail = match.groups()
    return [full for alt in alternatives.split(",") for full in _expand(head + alt + tail)]


def cited_names(text: str) -> set[str]:
    names: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") or _COMMAND.match(line):
            continue
        for match in _CITED.finditer(line):
            path_form, ticked = match.groups()
            name = path_form or ticked
            stem = name.split(".")[0]
            if ticked and not re.search(r"[\d_-]", stem):
                continue
            names.update(_expand(name))
    return names


def missing(text: str, results: Path) -> list[str]:
    present = [p.name for p in results.iterdir()]
    absent = []
    for name in sorted(cited_names(text)):
        if name.startswith("-"):
            if len([p for p in present if p.endswith(name)]) != 1:
                absent.append(name)
        elif name not in present:
            absent.append(name)
    return absent


@pytest.mark.parametrize("doc", ["RESULTS.md", "HISTORY.md"])
def test_every_cited_result_file_exists(doc: str) -> None:
    text = (BENCH / doc).read_text(encoding="utf-8")
    assert cited_names(text), f"{doc} cites no result file: the parser no longer sees them"
    assert missing(text, RESULTS) == []


def test_a_citation_of_a_removed_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "20261202-214316.json").write_text("{}")
    (tmp_path / "sync_bench.json").write_text("{}")
    text = (
        "Runs `20261202-214316.json` and `-214316.json`, `sync_bench.json`,\n"
        "bench/results/{sync_bench,gone_bench}.json, `20261202-000000-guard.json`,\n"
        "a placeholder `A.json`\n"
        "    .venv/bin/python -m bench run --out not_written_yet\n"
        "`only_in_a_command.json` in prose is a citation: `-999999.json`\n"
    )
    assert missing(text, tmp_path) == [
        "-999999.json",
        "20261202-000000-guard.json",
        "gone_bench.json",
        "only_in_a_command.json",
    ]
