"""Unit tests: each secret format of the catalogue is masked; lookalikes and prose are not."""

from __future__ import annotations

import re

import pytest

from memlane.domain.redaction import Redactor, mask_token
from memlane.domain.secret_patterns import SECRET_PATTERNS
from tests.secret_samples import PEM_BODY, PEM_TEXT, SAMPLES, Sample


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


def _id(sample: Sample) -> str:
    return f"{sample.pattern}:{sample.secret[:8]}"


class TestEveryFormat:
    @pytest.mark.parametrize("sample", SAMPLES, ids=_id)
    def test_the_secret_is_masked(self, redactor: Redactor, sample: Sample) -> None:
        redacted = redactor.redact(sample.text)

        assert sample.secret not in redacted
        assert sample.middle not in redacted
        if sample.exact:
            assert redacted == sample.text.replace(sample.secret, mask_token(sample.secret))

    @pytest.mark.parametrize("sample", SAMPLES, ids=_id)
    def test_the_named_pattern_alone_finds_the_secret(self, sample: Sample) -> None:
        # The sample proves its own catalogue entry, not merely some other pattern.
        (entry,) = [p for p in SECRET_PATTERNS if p.name == sample.pattern]
        spans = {
            m.span(m.lastindex or 0) for m in re.finditer(entry.regex, sample.text, entry.flags)
        }
        start = sample.text.index(sample.secret)
        assert (start, start + len(sample.secret)) in spans

    def test_every_catalogue_entry_has_a_sample(self) -> None:
        names = {pattern.name for pattern in SECRET_PATTERNS}
        sampled = {sample.pattern for sample in SAMPLES} | {"pem-private-key"}
        assert names == sampled

    def test_catalogue_names_are_unique(self) -> None:
        names = [pattern.name for pattern in SECRET_PATTERNS]
        assert len(names) == len(set(names))

    def test_pem_private_key(self, redactor: Redactor) -> None:
        assert PEM_BODY not in redactor.redact(PEM_TEXT)


class TestUrlPasswords:
    @pytest.mark.parametrize(
        "scheme",
        [
            *("postgres", "postgresql", "mysql", "mongodb", "mongodb+srv", "redis", "rediss"),
            *("amqp", "amqps", "https", "ftp", "smtp", "jdbc:postgresql"),
        ],
    )
    def test_the_password_is_masked_for_any_scheme(self, redactor: Redactor, scheme: str) -> None:
        text = f"{scheme}://app_user:hunter2@db.example.org:5432/prod"
        assert redactor.redact(text) == f"{scheme}://app_user:***@db.example.org:5432/prod"

    def test_a_password_holding_at_signs_is_masked_up_to_the_host(self, redactor: Redactor) -> None:
        text = "mysql://root:p@ss@w0rd@localhost/db"
        assert redactor.redact(text) == "mysql://root:***@localhost/db"

    def test_a_long_password_keeps_the_partial_mask(self, redactor: Redactor) -> None:
        text = "redis://:abcdefghijklmnopqrstuvwxyz0123456789@cache:6379"
        assert redactor.redact(text) == "redis://:abcdef…6789@cache:6379"


class TestOverlaps:
    """Each secret is masked once, however many patterns find it."""

    @pytest.mark.parametrize("extra", [r"token=(\w+)", r"ghp_\w+", r"(ghp_[a-z]+)", r"[a-z]{10,}"])
    def test_an_extra_pattern_inside_a_default_match_does_not_mask_the_mask(
        self, extra: str
    ) -> None:
        secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789ghij"
        assert Redactor([extra]).redact(f"token={secret}") == "token=ghp_ab…ghij"

    def test_overlapping_matches_are_merged_into_one_mask(self) -> None:
        # The extra pattern starts inside the default match and ends after it.
        text = "API_KEY=abcdefghijklmnopqrstuvwxyz INTERNAL-0123456789"
        redacted = Redactor([r"uvwxyz INTERNAL-\d+"]).redact(text)
        assert redacted == "API_KEY=abcdef…6789"

    def test_adjacent_secrets_keep_their_own_masks(self, redactor: Redactor) -> None:
        aws = "AKIA" + "Q" * 16
        assert redactor.redact(f"{aws} {aws}") == "AKIAQQ…QQQQ AKIAQQ…QQQQ"

    def test_a_second_pass_changes_nothing(self, redactor: Redactor) -> None:
        text = " ".join(sample.text for sample in SAMPLES)
        once = redactor.redact(text)
        assert redactor.redact(once) == once


class TestLookalikesStay:
    @pytest.mark.parametrize(
        "text",
        [
            "https://example.com:8080/path?x=1&y=2#frag",
            "postgres://localhost:5432/app",
            "mongodb+srv://cluster0.example.net/test?retryWrites=true",
            "ssh://git@github.com/org/repo.git and git@github.com:org/repo.git",
            "mail someone@example.com or https://user@example.com/profile",
            "http://[::1]:8000/health",
            "see https://example.com/a?email=me@example.com",
            "The AKIA prefix marks long-term keys; ASIA ones are temporary.",
            "Use sk_live_ keys only in production; rk_test_x is short.",
            "import hf_hub_download from huggingface_hub",
            "SG.ok and glpat- are just prefixes",
            "key-value store, the key-4 column, primary-key",
            "commit 3f2a9c4b5d6e7f8091a2b3c4d5e6f708192a3b4c",
            "uuid 123e4567-e89b-12d3-a456-426614174000",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "base64 SGVsbG8gd29ybGQ= decodes to Hello world",
            "def get_key(self) -> str:\n    return self._key",
            "Mr. Orange met Ms. Noon at 10.30.",
            "eyJ is how base64 JSON starts",
            "The ACCOUNT and SKU columns; AC power; SK Telecom",
            "sig=abc is too short to be a SAS signature",
            "npm_config_cache=/tmp/npm",
            "EAAA rating",
            "age keys start with AGE-SECRET-KEY-1 and AGE-PLUGIN-YUBIKEY-1QQ",
            "Discord's MTIzNDU2Nzg5MDEyMzQ1Njc4OTA is a user id, not a token.",
        ],
    )
    def test_text_without_secrets_is_unchanged(self, redactor: Redactor, text: str) -> None:
        assert redactor.redact(text) == text


def _adversarial(size: int) -> str:
    """Inputs that make a backtracking pattern rescan a long run from each of its characters:
    every format's prefix repeated and unfinished secrets, then long runs of prefixes and body
    characters that never reach the terminator a pattern waits for."""
    pieces = []
    for sample in SAMPLES:
        head = sample.secret[: max(3, len(sample.secret) // 3)]
        pieces += [head * 40, sample.secret[:-1] + "-", head + "!" * 3]
    runs = [
        "eyJ",
        "eyJa-",
        "eyJabcdefgh.",
        "sk-",
        "glpat-",
        "://a:",
        "a-",
        "API_KEY",
        "1234567:",
        "M",
        "Bearer ",
        "-----BEGIN PRIVATE KEY-----\n",
    ]
    run_size = (size - len("".join(pieces))) // len(runs)
    pieces += [(run * (run_size // len(run)))[: run_size - 2] + ".!" for run in runs]
    return "".join(pieces).ljust(size, "x")


class TestLinearTime:
    @pytest.mark.timeout(120)
    def test_one_megabyte_of_adversarial_text_is_redacted_in_bounded_time(
        self, redactor: Redactor
    ) -> None:
        # A pattern that backtracks quadratically needs hours on this input, a linear one a few
        # seconds: the timeout marker (a hang guard, not a speed target) fails the former.
        text = _adversarial(1_000_000)
        redacted = redactor.redact(text)
        assert "AKIA" in redacted  # the prefixes themselves survive
