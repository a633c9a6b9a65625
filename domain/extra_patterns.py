"""Domain: the user's extra redaction patterns (`redaction.extraPatterns`), compiled and vetted.

A pattern comes from the configuration, so it is text written for the reference's JavaScript
(`/body/flags`, or a bare body compiled case-insensitively) and may be slow: this module reads
the flags and refuses what would make every later scan a risk (an empty pattern masks nothing;
nested repetition such as `(a+)+` can take exponential time), naming the config key. It is apart
from domain/redaction.py, which only runs the compiled patterns, because checking a regular
expression's shape is a small parser of its own.
"""

from __future__ import annotations

import re
from typing import Final

from memlane.domain.errors import ConfigError

# The JavaScript flags a `/body/flags` pattern may carry: these three mean the same in Python;
# the others change how a JavaScript regex iterates or indexes, which has no meaning here.
_JS_FLAGS: Final = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_IGNORED_JS_FLAGS: Final = frozenset("guyd")
_SLASH_FORM: Final = re.compile(r"/(.+)/([a-z]*)", re.DOTALL)


def compile_extra(source: str, key: str) -> re.Pattern[str]:
    """Compile one extra pattern; ConfigError naming `key` when it is empty, does not compile or
    repeats a repeated group."""
    body, flags = source, re.IGNORECASE
    slashed = _SLASH_FORM.fullmatch(source)
    if slashed is not None and set(slashed.group(2)) <= {*_JS_FLAGS, *_IGNORED_JS_FLAGS}:
        body, flags = slashed.group(1), re.NOFLAG
        for letter in slashed.group(2):
            flags |= _JS_FLAGS.get(letter, re.NOFLAG)
    if not body:
        raise ConfigError(key, "empty pattern")
    if _has_nested_repetition(body):
        raise ConfigError(key, "nested repetition such as (a+)+ can take exponential time")
    try:
        return re.compile(body, flags)
    except re.error as exc:
        raise ConfigError(key, f"invalid regular expression: {exc}") from exc


def _quantifier_at(body: str, index: int) -> bool:
    """Whether an unbounded or multi-count quantifier (`*`, `+`, `{n,}`, `{n,m}`) starts here."""
    if index >= len(body):
        return False
    if body[index] in "*+":
        return True
    found = re.match(r"\{(\d*)(,?)(\d*)\}", body[index:])
    if found is None:
        return False
    low, comma, high = found.groups()
    if comma:
        return not high or int(high) > 1
    return int(low or "0") > 1


def _has_nested_repetition(body: str) -> bool:
    """Heuristic: a group containing a repeated item is itself repeated, as in `(a+)+`."""
    repeated_inside: list[bool] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index += 1
            if index < len(body) and body[index] == "^":
                index += 1
            if index < len(body) and body[index] == "]":
                index += 1
            while index < len(body) and body[index] != "]":
                index += 2 if body[index] == "\\" else 1
        elif char == "(":
            repeated_inside.append(False)
        elif char == ")" and repeated_inside:
            inner = repeated_inside.pop()
            if inner and _quantifier_at(body, index + 1):
                return True
            if repeated_inside and (inner or _quantifier_at(body, index + 1)):
                repeated_inside[-1] = True
        elif _quantifier_at(body, index) and repeated_inside:
            repeated_inside[-1] = True
        index += 1
    return False
