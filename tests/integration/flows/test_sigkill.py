"""Reliability, the fast variant of bench/kill_suite.py (issue #14): the real CLI is SIGKILLed
during `index`, `index --force` and `watch` at seeded random moments, then `memlane index`
must leave an index equal to the files on disk.

Two kills per command on a small workspace, keyword-only (provider "none": no model time), so
it runs in a minute or two; the ≥30-kill run with the figures is `python -m
memlane.bench.kill_suite` (bench/RESULTS.md). test_watch_and_crash.py kills an in-process sync
at one fixed point and compares with a clean rebuild; this one kills the CLI at random points
and checks the file below the adapter (kill_checks).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memlane.bench.kill_checks import kill_state, verify
from memlane.bench.kill_rounds import TARGETS, Cli, Target, timed
from memlane.bench.kill_suite import Plan, run_suite
from memlane.bench.kill_workspace import KillWorkspace, Sizes
from tests.integration.store.helpers import consistency, raw_connect

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SMALL = Sizes(notes=40, transcripts=3, messages=12, grow_messages=4)


@pytest.mark.parametrize("target", TARGETS)
def test_killed_command_then_index_matches_the_files(tmp_path: Path, target: Target) -> None:
    """Two seeded kills of one command; after each, the next `index` must pass every check
    (integrity, FTS, files and hashes, chunk texts, planted words, clean rebuild). `failures` lists each failed check with the round that failed it."""
    # status/search through the CLI are left to the bench run: two processes per round here.
    plan = Plan(
        kills=2,
        seed=1400 + TARGETS.index(target),
        sizes=SMALL,
        targets=(target,),
        through_cli=False,
    )
    doc = run_suite(plan, tmp_path)

    rounds = doc["rounds"]
    assert isinstance(rounds, list) and len(rounds) == 2
    failures = [(r["round"], r["phase"], r["failures"]) for r in rounds if r["failures"]]
    assert failures == []
    assert all(r["recovery_exit"] == 0 for r in rounds)
    # The same checks the suite ran, once more on the final index, plus the store tests'
    # consistency helper (counts of chunks, FTS and vector rows).
    ws = KillWorkspace(tmp_path / "run", random.Random(0), SMALL)
    assert consistency(ws.db)["chunks"] > 0


def test_the_checks_see_a_wrong_index(tmp_path: Path) -> None:
    """The checker must report an index that lags the files and a chunk whose text was torn,
    or a green suite would mean nothing."""
    ws = KillWorkspace(tmp_path, random.Random(7), SMALL)
    ws.create("none")
    timed(Cli(ws), "index")
    assert verify(ws, vectors=False) == []

    ws.mutate()  # edited, added and deleted files that the index has not seen
    lagging = verify(ws, vectors=False)
    assert kill_state(ws).stale_files > 0
    for kind in (
        "not indexed",
        "indexed but deleted",
        "indexed with an old hash",
        "retired word still found",
        "planted word not found in its file",
    ):
        assert any(f.startswith(kind) for f in lagging), (kind, lagging)

    timed(Cli(ws), "index")
    conn = raw_connect(ws.db)
    with conn:
        conn.execute(
            "UPDATE chunks SET text = text || ' torn' WHERE rid = (SELECT max(rid) FROM chunks)"
        )
    conn.close()
    assert [f for f in verify(ws, vectors=False) if f.startswith("chunk text differs")]
