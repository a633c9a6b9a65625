"""A sync the mass-delete guard refused (sync.maxDeletePercent) through the daemon: the
daemon's background sync refusing it must not let a search skip its scan or its warning; the
search answers as in-process does, with the same `warning:` and exit code (real processes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e._daemon_support import Home, make_home, start_daemon, stopped_at_end, until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = make_home(tmp_path)
    for n in range(6):
        (made.ws / "memory" / f"n{n}.md").write_text(f"Note {n}: the rollback drill.\n")
    made.run(*made.base(), "--workspace", str(made.ws), "index", check=True)
    return made


def _refused_in_log(home: Home) -> bool:
    log = home.state / "daemon" / "log"
    return log.exists() and "background_sync_refused" in log.read_text()


def test_a_refused_background_sync_leaves_every_search_warning(home: Home) -> None:
    with stopped_at_end(home):
        start_daemon(home)
        for n in range(6):  # 6 of 8 notes gone: over the 20 % default
            (home.ws / "memory" / f"n{n}.md").unlink()
        assert until(lambda: _refused_in_log(home), timeout=60)  # the watcher's sync refused

        served = None
        for _ in range(2):  # and again: nothing since the refusal makes the index fresh
            before = home.answered()
            served = home.run(*home.base(), "search", "--json", "rollback")
            assert home.answered() == before + 1  # the daemon answered it
            local = home.run(*home.base(), "--no-daemon", "search", "--json", "rollback")
            assert (served.returncode, served.stdout) == (local.returncode, local.stdout)
            assert served.stderr == local.stderr
            assert "warning: the index was not synced: sync stopped" in served.stderr
            warnings = json.loads(served.stdout)["warnings"]
            assert any("sync.maxDeletePercent" in w for w in warnings)
        # Nothing was removed: the notes still answer from the index.
        assert served is not None
        hits = json.loads(served.stdout)["results"]
        assert len(hits) >= 6

        refused = home.run(*home.base(), "index")  # through the daemon too
        assert refused.returncode == 1 and "--allow-mass-delete" in refused.stderr
