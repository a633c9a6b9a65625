"""Entry points, the key table: what one row is (`Key`), the kinds a value can have, and the
short names the section modules write rows with.

Separate from the sections so each of them (and keys.py, which assembles the table) imports
the row type from one place without importing the others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import attrgetter
from typing import Final, Literal, TypeAlias

from memlane.domain.config import MemorySettings

Kind: TypeAlias = Literal[
    "bool",  # true / false
    "number",  # finite number, clamped
    "integer",  # finite number, floored then clamped
    "string",
    "choice",  # one of `choices`
    "choices",  # a list of `choices`
    "strings",  # a list of strings
    "patterns",  # a list of regular expressions that must compile
    "headers",  # an object of string values
    "secret",  # a string or {"source": "env", "id": "VAR"}
    "provider",  # a provider id: memlane's, an OpenAI-compatible one or a models.providers id
    "opaque",  # tolerated as written, never read
]

# Integers beyond this lose precision in JSON numbers (JavaScript's Number.MAX_SAFE_INTEGER).
MAX_SAFE_INT: Final = 2**53 - 1
_DEFAULTS: Final = MemorySettings()
_UNSET: Final = object()


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key: where it is written, what it accepts and what it means."""

    path: str  # dotted, relative to its block: "query.hybrid.vectorWeight"
    kind: Kind
    doc: str
    field: str | None = None  # attribute path in MemorySettings holding the resolved value
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    fixed_default: object = _UNSET  # for keys without a settings field
    # Accepted for the reference's configs but not implemented: set, it is reported (one
    # warning, `ignoredKeys` in `status --json`) with this reason.
    ignored: str = ""

    @property
    def default(self) -> object:
        """The built-in value when the key is unset (None: unset means absent)."""
        if self.fixed_default is not _UNSET:
            return self.fixed_default
        if self.field is None:
            return None
        return attrgetter(self.field)(_DEFAULTS)

    def clamp(self, value: object) -> object:
        """Bring a validated number into range (floored first for integers); others unchanged."""
        if self.kind not in ("number", "integer") or not isinstance(value, int | float):
            return value
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if self.kind == "integer":
            return int(min(high, max(low, math.floor(value))))
        return float(min(high, max(low, float(value))))


# The kinds most rows have, short so a row fits on one line.
INT: Final = "integer"
NUM: Final = "number"
BOOL: Final = "bool"
STR: Final = "string"


def shown_number(value: float | None) -> str:
    """A bound as the docs and notices write it: whole numbers with spaces between thousands
    (9 007 199 254 740 991, not 9.0072e+15), "-" for none."""
    if value is None:
        return "-"
    return f"{value:,.0f}".replace(",", " ") if float(value).is_integer() else str(value)
