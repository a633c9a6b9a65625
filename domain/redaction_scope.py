"""Domain: what an index's text was masked with, as one fingerprint kept in its meta.

A chunk's text is masked when its file is indexed. Masking more (a new catalogue entry, an
added `redaction.extraPatterns`, `redaction.notes` turned on) or less (`redaction.enabled`
off) changes what the index should hold for files that did not change, and only a rebuild
reads them again: so the index meta records this fingerprint and a different one rebuilds the
index (reason `redaction_changed`; the embedding cache serves every chunk whose text is the
same). Before, a secret an added pattern masks stayed in the index, and in search hits, until
its file changed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from memlane.domain.config import RedactionSettings
from memlane.domain.redaction import built_in_rules

# Raised when masking changes beyond the rules' text (how a match is accepted, the mask).
RULES_VERSION: Final = 1
NOT_MASKED: Final = "off"


def redaction_fingerprint(settings: RedactionSettings) -> str:
    """The fingerprint of the masking `settings` ask for ("off" when nothing is masked)."""
    if not settings.enabled:
        return NOT_MASKED  # transcripts and notes are indexed as written
    said = {
        "rules_version": RULES_VERSION,
        "built_in": built_in_rules(),
        "extra": list(settings.extra_patterns),
        "notes": settings.notes,
    }
    return hashlib.sha256(json.dumps(said).encode()).hexdigest()[:16]
