"""The DI framework, imported without its optional web-framework integrations.

When first imported, dependency_injector's `wiring` looks for FastAPI, Starlette, fast_depends
and werkzeug, to read their markers in `wire()`. memlane never wires, and Starlette (installed
for the MCP SDK) with what it imports costs ~40 ms of CPU at the start of every in-process
command. They are hidden while the framework is first imported and visible again at once; a
process that imported them earlier (the MCP server) is unaffected. (pydantic cannot be hidden
so: the compiled `providers` module reads it even when its import fails.) Every module of this
package takes the framework from here.
"""

from __future__ import annotations

import sys

_OPTIONAL = (
    "fastapi",
    "fastapi.params",
    "fast_depends",
    "fast_depends.dependencies",
    "fast_depends.dependencies.model",
    "starlette",
    "starlette.requests",
    "werkzeug",
    "werkzeug.local",
)
_hidden = [name for name in _OPTIONAL if name not in sys.modules]
for _name in _hidden:
    sys.modules[_name] = None  # type: ignore[assignment]  # its import raises ImportError
try:
    from dependency_injector import containers, providers
finally:
    for _name in _hidden:
        if _name in sys.modules and sys.modules[_name] is None:
            del sys.modules[_name]

__all__ = ["containers", "providers"]
