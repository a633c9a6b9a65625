"""Domain: the password of a `scheme://user:password@host` URL, masked wherever text is shown.

The one masking function for printed text (status, error messages, logs, the effective
settings): the password becomes `***` while scheme, user, host and path stay, so the URL is still
recognisable. It finds passwords with the redaction catalogue's own `url-password` entry, and
two more forms a database driver accepts and the catalogue's strict URL grammar misses, so
printed text masks a superset of what indexed text does:
- a password holding an unescaped `#`, `/` or `?` (`postgresql://u:Hunter#2/x@/db`): libpq
  takes everything up to the last `@`;
- a password given as a query parameter (`postgresql:///db?user=u&password=secret`).
"""

from __future__ import annotations

import re
from typing import Final

from memlane.domain.secret_patterns import SECRET_PATTERNS, WS_CHARS

URL_PASSWORD_MASK: Final = "***"  # noqa: S105  # the mask, not a password

_ENTRY: Final = next(p for p in SECRET_PATTERNS if p.name == "url-password")
_PATTERN: Final = re.compile(_ENTRY.regex, _ENTRY.flags)
# Up to the last `@` of the URL (greedy, bounded); tried only where the strict form found none.
_UNESCAPED: Final = re.compile(rf"://[^{WS_CHARS}:/?#@]{{0,256}}+:([^{WS_CHARS}]{{1,1024}})@")
_QUERY: Final = re.compile(rf"[?&](?:password|passwd|pwd)=([^{WS_CHARS}&#]{{1,1024}}+)", re.I)
_PORT: Final = re.compile(r"\d+[/?#]")  # `host:8080/path?mail=a@b` holds a port, not a password


def _masked(match: re.Match[str]) -> str:
    start, end = match.span(1)
    whole = match.string
    return whole[match.start() : start] + URL_PASSWORD_MASK + whole[end : match.end()]


def _masked_unescaped(match: re.Match[str]) -> str:
    if _PORT.match(match.group(1)):
        return match.group(0)
    return _masked(match)


def mask_url_passwords(text: str) -> str:
    """`text` with the password of every URL in it replaced by `***` (each pattern is tried
    only at a `://` or a `?` / `&`, and reads at most ~1 KiB from there)."""
    if "://" not in text:
        return text
    text = _PATTERN.sub(_masked, text)
    text = _UNESCAPED.sub(_masked_unescaped, text)
    return _QUERY.sub(_masked, text)
