"""The JSON5 parse of a config text, remembered: a long-lived process (the daemon) reads the
same file on every request, and json5's pure-Python parser costs 4-8 ms for a small file and
tens of ms for a large one, twice a request; a dict lookup by the text costs microseconds.

Keyed by the whole text (read from the file each time, so an edit is seen at once); each caller
gets its own deep copy, so no caller's change leaks into another's tree. Failures are not
remembered: a bad text raises each time, as before.
"""

from __future__ import annotations

import copy
import threading
from typing import Any, Final

import json5

_KEPT: Final = 16  # distinct texts remembered (agents, includes); the oldest goes first
_parsed: dict[str, Any] = {}
_lock = threading.Lock()


def parse_json5(text: str) -> Any:
    """`json5.loads(text, allow_duplicate_keys=False)`, from memory when this text was parsed."""
    with _lock:
        known = _parsed.get(text, _parsed)
    if known is not _parsed:
        return copy.deepcopy(known)
    tree = json5.loads(text, allow_duplicate_keys=False)
    with _lock:
        if len(_parsed) >= _KEPT:
            _parsed.pop(next(iter(_parsed)))
        _parsed[text] = copy.deepcopy(tree)
    return tree
