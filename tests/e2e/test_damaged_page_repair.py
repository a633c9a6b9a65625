"""An index file with a damaged page (not a damaged header): a write to it fails as StoreCorrupt.
Plain `index` says how to repair it (it said "the next sync retries", which can never help), and
`index --force` rebuilds it and exits 0 (it rebuilt it, then exited 1 with the failure of the
write it retried first). Real CLI processes, real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e._loud_support import make_home
from tests.e2e._loud_support import memlane as run_cli

pytestmark = pytest.mark.e2e

PAGE = 4096


def test_a_damaged_page_is_repaired_by_index_force(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    for n in range(30):  # enough rows for the file to have pages past the third
        (home / "ws" / "memory" / f"note{n}.md").write_text(f"# Note {n}\n\nfact number {n}\n")
    assert run_cli(home, "index").returncode == 0
    db = home / "state" / "agents" / "main" / "memory.db"
    with db.open("r+b") as f:
        f.seek(PAGE * 3)
        f.write(b"\xde\xad" * (PAGE // 2))
    (home / "ws" / "memory" / "note2.md").write_text("# Note 2\n\nfact number two, changed\n")

    plain = run_cli(home, "index")
    assert plain.returncode == 1
    assert "StoreCorrupt" in plain.stderr and "index --force" in plain.stderr

    forced = run_cli(home, "index", "--force")
    assert forced.returncode == 0, forced.stderr
    status = json.loads(run_cli(home, "status", "--json").stdout)
    assert status["lastSyncFailure"] is None
    # The change that failed before the rebuild is still in the log: the next sync handles it.
    assert run_cli(home, "index").returncode == 0
    assert not json.loads(run_cli(home, "status", "--json").stdout)["dirty"]
    found = run_cli(home, "search", "--json", "fact number two changed")
    assert "memory/note2.md" in found.stdout
