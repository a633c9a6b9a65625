"""Unit tests: the one function that masks URL passwords in printed text (issue #32 item 6)."""

from __future__ import annotations

import pytest

from memlane.domain.url_passwords import mask_url_passwords
from tests.secret_samples import SAMPLES, Sample


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://user:pass@host/db", "postgresql://user:***@host/db"),
        (
            "index error: postgresql+psycopg://app:Hunter2@db:5432/prod: refused",
            "index error: postgresql+psycopg://app:***@db:5432/prod: refused",
        ),
        (
            "http://u:p%40ss@proxy:8080/v1 and redis://:tok@cache/0",
            "http://u:***@proxy:8080/v1 and redis://:***@cache/0",
        ),
        ("mongodb+srv://admin:p@ss@cluster0/x", "mongodb+srv://admin:***@cluster0/x"),
        # forms libpq accepts that the strict grammar missed (they were printed in clear)
        (
            "Store: postgresql+psycopg://qa2:Hunter#2/Secret@/qadb?host=/tmp/pg#agent=a",
            "Store: postgresql+psycopg://qa2:***@/qadb?host=/tmp/pg#agent=a",
        ),
        (
            "postgresql:///qadb?host=/tmp/pg&user=qa&password=Sup3rSecretPW#agent=a",
            "postgresql:///qadb?host=/tmp/pg&user=qa&password=***#agent=a",
        ),
        ("x://h/db?PASSWORD=s3cr3t&user=u", "x://h/db?PASSWORD=***&user=u"),
    ],
)
def test_the_password_is_masked_and_the_rest_kept(text: str, shown: str) -> None:
    assert mask_url_passwords(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://user@host/db",
        "postgresql://host:5432/db",
        "http://[::1]:8000/health",
        "mail someone@example.com",
        "no url at all",
        "postgresql://user:***@host/db",
        "http://host:8080/path?mail=a@b.example",  # a port, not a password
    ],
)
def test_text_without_a_password_is_unchanged(text: str) -> None:
    assert mask_url_passwords(text) == text


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.pattern == "url-password"])
def test_every_catalogue_url_sample_loses_its_password(sample: Sample) -> None:
    assert sample.secret not in mask_url_passwords(sample.text)
