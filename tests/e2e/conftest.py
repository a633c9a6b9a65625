"""E2E fixtures: make sure `import mcp` means the MCP SDK, whatever the checkout folder is called.

The repository root is itself a package (package-dir "."), and pytest names test modules after
the checkout folder ("<folder>.tests.e2e..."), registering the root as `sys.modules[<folder>]`.
A checkout named `mcp` would thereby hide the SDK; dropping that one alias (the test modules
keep their own entries) lets the SDK import normally.
"""

from __future__ import annotations

import sys
from pathlib import Path

_shadow = sys.modules.get("mcp")
_root = Path(__file__).resolve().parents[2]
if _shadow is not None and Path(getattr(_shadow, "__file__", "") or "").resolve().parent == _root:
    del sys.modules["mcp"]
