"""The composition root imports the DI framework without the web frameworks it could integrate
with (entrypoints/container/di.py): Starlette and what it pulls in cost every in-process command
~40 ms, and memlane never wires. A process can still import them afterwards (the MCP server)."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, sys
import memlane.entrypoints.container
loaded = [m for m in ("starlette", "starlette.requests", "fastapi", "werkzeug") if m in sys.modules]
import starlette.requests
print(json.dumps({"loaded": loaded, "later": "starlette.requests" in sys.modules}))
"""


def test_the_container_loads_no_web_framework_and_hides_none_for_later() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"loaded": [], "later": True}
