"""Entry points, configuration stage 1, part: a config text parsed as JSON5, remembered, and
how deeply it nests (measured before the parser, which recurses once per level, sees it).

Separate from read.py because it is about a text, not a file: no paths, no includes, no
errors of its own (read.py's `parse_config` turns what goes wrong into a ConfigFileError).
"""

from __future__ import annotations

import copy
import threading
from typing import Final

import json5

# The parse of a config text, remembered: the daemon reads the same file on every request and
# json5's pure-Python parser costs 4-8 ms for a small file. Keyed by the whole text (read each
# time, so an edit is seen at once); each caller gets its own deep copy; failures are not kept.
_PARSES_KEPT: Final = 16
_parsed: dict[str, object] = {}
_parsed_lock = threading.Lock()


def parse_json5(text: str) -> object:
    with _parsed_lock:
        known = _parsed.get(text, _parsed)
    if known is not _parsed:
        return copy.deepcopy(known)
    tree: object = json5.loads(text, allow_duplicate_keys=False)
    with _parsed_lock:
        if len(_parsed) >= _PARSES_KEPT:
            _parsed.pop(next(iter(_parsed)))
        _parsed[text] = copy.deepcopy(tree)
    return tree


def nesting_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings and comments (JSON5 lexical rules)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i += 1
            while i < n and text[i] != ch:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 1
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
        i += 1
    return deepest
