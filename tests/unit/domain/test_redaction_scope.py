"""Unit tests: the fingerprint of what an index's text was masked with."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memlane.domain import redaction
from memlane.domain.config import RedactionSettings
from memlane.domain.redaction import built_in_rules
from memlane.domain.redaction_scope import NOT_MASKED, redaction_fingerprint
from memlane.domain.secret_patterns import SECRET_PATTERNS

DEFAULT = RedactionSettings()


def test_the_same_settings_give_the_same_fingerprint() -> None:
    assert redaction_fingerprint(DEFAULT) == redaction_fingerprint(RedactionSettings())
    assert redaction_fingerprint(DEFAULT) != NOT_MASKED


def test_masking_more_or_less_changes_it() -> None:
    fingerprints = {
        redaction_fingerprint(DEFAULT),
        redaction_fingerprint(replace(DEFAULT, extra_patterns=("ticket-[0-9]+",))),
        redaction_fingerprint(replace(DEFAULT, extra_patterns=("ticket-[0-9]+", "x"))),
        redaction_fingerprint(replace(DEFAULT, notes=True)),
        redaction_fingerprint(replace(DEFAULT, enabled=False)),
    }
    assert len(fingerprints) == 5


def test_nothing_masked_is_one_fingerprint_whatever_else_is_set() -> None:
    off = replace(DEFAULT, enabled=False, extra_patterns=("x",), notes=True)
    assert (
        redaction_fingerprint(off)
        == NOT_MASKED
        == redaction_fingerprint(replace(DEFAULT, enabled=False))
    )


def test_every_built_in_rule_is_part_of_it() -> None:
    rules = built_in_rules()
    assert len(rules) == len(SECRET_PATTERNS) + 1  # the assignment rule, then the catalogue
    assert all(p.regex in rule for p, rule in zip(SECRET_PATTERNS, rules[1:], strict=True))


def test_a_change_to_the_built_in_catalogue_changes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release that masks more rebuilds the indexes of earlier ones (their text is masked
    again), with the default settings too."""
    before = redaction_fingerprint(DEFAULT)
    monkeypatch.setattr(redaction, "SECRET_PATTERNS", SECRET_PATTERNS[:-1])

    assert redaction_fingerprint(DEFAULT) != before
