"""Domain: the password of a `scheme://user:password@host` URL, masked wherever text is shown.

The one masking function for printed text (status, error messages, logs, the effective
settings): the password becomes `***` while scheme, user, host and path stay, so the URL is still
recognisable. It finds passwords with the redaction catalogue's own `url-password` entry, so
what is masked in indexed text and in printed text is the same set of URLs.
"""

from __future__ import annotations

import re
from typing import Final

from memlane.domain.secret_patterns import SECRET_PATTERNS

URL_PASSWORD_MASK: Final = "***"  # noqa: S105  # the mask, not a password

_ENTRY: Final = next(p for p in SECRET_PATTERNS if p.name == "url-password")
_PATTERN: Final = re.compile(_ENTRY.regex, _ENTRY.flags)


def _masked(match: re.Match[str]) -> str:
    start, end = match.span(1)
    whole = match.string
    return whole[match.start() : start] + URL_PASSWORD_MASK + whole[end : match.end()]


def mask_url_passwords(text: str) -> str:
    """`text` with the password of every URL in it replaced by `***` (linear time)."""
    if "://" not in text:
        return text
    return _PATTERN.sub(_masked, text)
