"""A command a daemon answers imports only the client: no SQLAlchemy, numpy, structlog,
dependency-injector, click or application code (what makes it a few milliseconds instead of the
full CLI's ~0.3-0.8 s). A child process runs the real console-script entry point against a real
daemon and lists its modules at the moment it would end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e._daemon_support import make_home, start_daemon, stopped_at_end

NOT_ON_THE_CLIENT_PATH = (
    "sqlalchemy",
    "numpy",
    "structlog",
    "dependency_injector",
    "click",
    "json5",
    "memlane.application.memory",
    "memlane.application.ports.index_store",
    "memlane.entrypoints.cli",
    "memlane.entrypoints.container",
)

CHILD = """
import json, os, sys
real_exit = os._exit

def listing_exit(code):
    sys.stdout.write("MODULES " + json.dumps(sorted(sys.modules)))
    sys.stdout.flush()
    real_exit(code)

os._exit = listing_exit
sys.argv = ["memlane", *json.loads(sys.argv[1])]
from memlane.entrypoints.launch import main
main()
raise SystemExit("the daemon did not answer")
"""


def test_the_client_path_imports_no_heavy_module(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    home.run(*home.base(), "--workspace", str(home.ws), "index", check=True)
    with stopped_at_end(home):
        start_daemon(home)
        for command in (["search", "--json", "rollback"], ["status"], ["get", "MEMORY.md"]):
            argv = [*home.base(), *command]
            done = subprocess.run(
                [sys.executable, "-c", CHILD, json.dumps(argv)],
                capture_output=True,
                text=True,
                env=home.env,
                cwd=home.ws,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            answer, _, listing = done.stdout.rpartition("MODULES ")
            assert answer.strip(), command  # the daemon's answer was printed
            modules = set(json.loads(listing))
            heavy = sorted(
                m
                for m in modules
                for root in NOT_ON_THE_CLIENT_PATH
                if m.split(".")[0] == root or m == root or m.startswith(root + ".")
            )
            assert heavy == [], (command, heavy)
