"""Unit tests: secret redaction with the default patterns, extra patterns and masking fixes."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlane.domain.errors import ConfigError
from memlane.domain.redaction import (
    _ASSIGNMENT,
    _DEFAULT_FLAGS,
    Redaction,
    Redactor,
    _assignment_starts,
    _matches_at,
    mask_spans,
    mask_token,
)

LONG = "abcdefghijklmnopqrstuvwxyz0123456789"  # 36 characters: masked as abcdef…6789


@pytest.fixture
def redactor() -> Redactor:
    return Redactor()


class TestMaskToken:
    def test_short_tokens_become_three_stars(self) -> None:
        assert mask_token("x" * 17) == "***"

    def test_long_tokens_keep_six_leading_and_four_trailing_characters(self) -> None:
        assert mask_token("x" * 12 + "abcdef") == "xxxxxx…cdef"
        assert mask_token(LONG) == "abcdef…6789"


# (text, expected) pairs: one positive and one negative example per default pattern.
DEFAULT_PATTERN_CASES = [
    # 1 env-style assignment
    ("export OPENAI_API_KEY=" + LONG, "export OPENAI_API_KEY=abcdef…6789"),
    ("monkey: banana", "monkey: banana"),
    # 2 JSON field
    ('{"accessToken": "' + LONG + '"}', '{"accessToken": "abcdef…6789"}'),
    ('{"tokenizer": "bpe"}', '{"tokenizer": "bpe"}'),
    # 3 CLI flag
    ("run --api-key " + LONG + " now", "run --api-key abcdef…6789 now"),
    ("run --tokenizer bpe", "run --tokenizer bpe"),
    # 4 Authorization header
    ("Authorization: Bearer abc.def", "Authorization: Bearer ***"),
    ("Authorization: required", "Authorization: required"),
    ('{"Authorization": "Basic dXNlcjpwYXNz"}', '{"Authorization": "Basic ***"}'),
    ("{'Authorization': 'Token abc.def'}", "{'Authorization': 'Token ***'}"),
    ('{"Authorization": "pending"}', '{"Authorization": "pending"}'),
    # 5 bare Bearer
    ("use Bearer " + LONG + " here", "use Bearer abcdef…6789 here"),
    ("Bearer shortish", "Bearer shortish"),
    # 7 OpenAI-style
    ("key sk-proj-" + LONG, "key sk-pro…6789"),
    ("risk-assessment", "risk-assessment"),
    # 8 GitHub classic
    ("ghp_" + "A1" * 12, "ghp_A1…A1A1"),
    ("ghp_short", "ghp_short"),
    # 9 GitHub fine-grained
    ("github_pat_" + "B2" * 15, "github…B2B2"),
    ("github_pat_x", "github_pat_x"),
    # 10 Slack
    ("xoxb-1234-5678-abcdef", "xoxb-1…cdef"),
    ("xoxq-1234567890ab", "xoxq-1234567890ab"),
    # 11 Slack app
    ("xapp-1-A0123-456789", "xapp-1…6789"),
    ("xapp-123", "xapp-123"),
    # 12 Groq
    ("gsk_" + "c3" * 10, "gsk_c3…c3c3"),
    ("gsk_abc", "gsk_abc"),
    # 13 Google API key
    ("AIza" + "D4" * 12, "AIzaD4…D4D4"),
    ("AIzaShort", "AIzaShort"),
    # 14 Perplexity
    ("pplx-" + "e5" * 10, "pplx-e…e5e5"),
    ("pplx-abc", "pplx-abc"),
    # 15 npm
    ("npm_" + "F6" * 10, "npm_F6…F6F6"),
    ("npm_install", "npm_install"),
    # 16 Telegram bot URL
    (
        "https://api.telegram.org/bot123456789:" + "G7" * 12 + "/send",
        "https://api.telegram.org/bot123456…G7G7/send",
    ),
    ("robot123456789", "robot123456789"),
    # 17 Telegram token
    ("token 123456789:" + "H8" * 12, "token 123456…H8H8"),
    ("12:30 meeting", "12:30 meeting"),
]


class TestDefaultPatterns:
    @pytest.mark.parametrize(("text", "expected"), DEFAULT_PATTERN_CASES)
    def test_masks_secrets_and_leaves_lookalikes(
        self, redactor: Redactor, text: str, expected: str
    ) -> None:
        assert redactor.redact(text) == expected

    def test_pem_private_key_keeps_only_its_first_and_last_line(self, redactor: Redactor) -> None:
        text = (
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n"
            "-----END RSA PRIVATE KEY-----\nafter"
        )
        assert redactor.redact(text) == (
            "before\n-----BEGIN RSA PRIVATE KEY-----\n…redacted…\n"
            "-----END RSA PRIVATE KEY-----\nafter"
        )

    def test_a_masked_pem_block_keeps_its_line_count(self, redactor: Redactor) -> None:
        # Notes are cited by line number: text after the block must stay on its line.
        text = (
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq1w2e3r4\n\nz9y8\n"
            "-----END RSA PRIVATE KEY-----\nafter"
        )
        assert redactor.redact(text) == (
            "before\n-----BEGIN RSA PRIVATE KEY-----\n…redacted…\n\n\n\n"
            "-----END RSA PRIVATE KEY-----\nafter"
        )

    def test_pgp_private_key_blocks_are_masked(self, redactor: Redactor) -> None:
        text = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----"
        assert redactor.redact(text) == (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n…redacted…\n-----END PGP PRIVATE KEY BLOCK-----"
        )

    def test_a_pem_block_given_as_a_secret_value_is_masked_whole(self, redactor: Redactor) -> None:
        text = "KEY: -----BEGIN PRIVATE KEY-----\nMIIEsecret\n-----END PRIVATE KEY-----"
        assert redactor.redact(text) == (
            "KEY: -----BEGIN PRIVATE KEY-----\n…redacted…\n-----END PRIVATE KEY-----"
        )

    def test_pem_block_on_one_line_becomes_three_stars(self, redactor: Redactor) -> None:
        text = "k: -----BEGIN PRIVATE KEY----- MIIE abc -----END PRIVATE KEY----- done"
        assert redactor.redact(text) == "k: *** done"

    def test_unterminated_pem_block_is_masked_to_the_end(self, redactor: Redactor) -> None:
        text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAAB3NzaC1yc2E"
        assert redactor.redact(text) == "-----BEGIN OPENSSH PRIVATE KEY-----\n…redacted…\n"

    def test_public_keys_and_certificates_are_left_alone(self, redactor: Redactor) -> None:
        text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
        assert redactor.redact(text) == text

    def test_empty_text_stays_empty(self, redactor: Redactor) -> None:
        assert redactor.redact("") == ""

    def test_masks_are_not_masked_again(self, redactor: Redactor) -> None:
        once = redactor.redact("OPENAI_API_KEY=sk-" + LONG + ' "token": "' + LONG + '"')
        assert once == 'OPENAI_API_KEY=sk-abc…6789 "token": "abcdef…6789"'
        assert redactor.redact(once) == once

    def test_matching_is_ascii_case_insensitive(self, redactor: Redactor) -> None:
        assert redactor.redact("Db_Password=hunter2") == "Db_Password=***"
        assert redactor.redact("AUTHORIZATION: bearer abc") == "AUTHORIZATION: bearer ***"

    def test_word_boundaries_are_ascii_only(self, redactor: Redactor) -> None:
        # JavaScript's \b treats CJK as non-word characters, so a key glued to Chinese is found.
        assert redactor.redact("密钥sk-" + LONG + "。") == "密钥sk-abc…6789。"

    def test_unicode_whitespace_separates_like_javascript(self, redactor: Redactor) -> None:
        assert redactor.redact("Bearer\u3000" + LONG) == "Bearer\u3000abcdef…6789"


class TestSecretNames:
    """The name must look like a secret's name, not merely end in key/token."""

    @pytest.mark.parametrize(
        "name",
        [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "SECRET",
            "password",
            "Password",
            "TOKEN",
            "KEY",
            "AWS_SECRET_ACCESS_KEY",
            "MYSQL_ROOT_PASSWD",
            "APIKEY",
            "apikey",
            "apiKey",
            "clientSecret",
            "OpenAiApiKey",
            "slack-bot-token",
            "spring.datasource.password",
            "--api-key",
            "PGPASSWORD",
            "dbpassword",
            "MYSQLPASSWD",
        ],
    )
    def test_secret_names_have_their_value_masked(self, redactor: Redactor, name: str) -> None:
        assert redactor.redact(f"{name}=hunter2") == f"{name}=***"
        assert redactor.redact(f"{name}: hunter2") == f"{name}: ***"

    @pytest.mark.parametrize(
        "text",
        [
            "monkey: banana",
            "turkey=stuffed",
            "MONKEY=banana",
            "hockey: tonight",
            "Key: the idea is simple",
            "keynote: Friday",
            "tokens: 400",
            "max_tokens=400",
            "passwords: rotate monthly",
            "primary_key=True",
            "sort_key: date",
            "primaryKey: id",
            "SSH_PUBLIC_KEY=ssh-ed25519",
            "Authorization: pending",
        ],
    )
    def test_ordinary_names_are_left_alone(self, redactor: Redactor, text: str) -> None:
        assert redactor.redact(text) == text

    def test_quoted_names_in_json_and_yaml_are_recognised(self, redactor: Redactor) -> None:
        assert redactor.redact('{"DB_PASSWORD": "hunter2"}') == '{"DB_PASSWORD": "***"}'
        assert redactor.redact("'api_key': 'hunter2'") == "'api_key': '***'"

    def test_markdown_emphasis_around_the_name(self, redactor: Redactor) -> None:
        assert redactor.redact("**Password:** hunter2") == "**Password:** ***"
        assert redactor.redact("**Password**: hunter2") == "**Password**: ***"

    def test_a_name_ending_its_line_does_not_take_the_next_line(self, redactor: Redactor) -> None:
        assert redactor.redact("secret:\n  name: db") == "secret:\n  name: db"


# Pieces that can form assignments but none of the other default patterns' triggers.
_ASSIGNMENT_PIECES = st.sampled_from(
    [
        *("API_KEY", "apiKey", "Token", "KEY", "secret", "PASSWORD", "monkey", "x", "abc"),
        *("a-", "_", ".", "=", ":", " ", "\n", "'", "*", "密码", "\u3000"),
    ]
)


class TestAssignmentScan:
    """The assignment pattern is tried only at tokens holding a secret word; that must equal a
    full scan."""

    @settings(max_examples=300, deadline=None)
    @given(pieces=st.lists(_ASSIGNMENT_PIECES, max_size=30))
    def test_finds_the_matches_of_a_scan_over_every_position(self, pieces: list[str]) -> None:
        text = "".join(pieces)
        pattern = re.compile(_ASSIGNMENT, _DEFAULT_FLAGS)
        full_scan = [m.span() for m in pattern.finditer(text) if m.group(0)]
        found = [m.span() for m in _matches_at(pattern, text, _assignment_starts(text))]
        assert found == full_scan


_TRIGGER_PIECES = st.sampled_from(
    [
        *("sk-", "ghp_", "github_pat_", "xoxb-", "AIza", "npm_", "bot", "1234567", ":", "=", "-"),
        *(
            "Bearer ",
            "Authorization: ",
            "--token ",
            '"token": "',
            '"',
            "'",
            "API_KEY",
            "abcdefghij",
        ),
        *("-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "\n", " ", "_", "…", "*"),
        "abcdefghij",
    ]
)


class TestPrefilters:
    """Skipping a pattern whose needles are absent must not change the result."""

    @settings(max_examples=300, deadline=None)
    @given(pieces=st.lists(_TRIGGER_PIECES, max_size=25))
    def test_equals_running_every_pattern(self, pieces: list[str]) -> None:
        text = "".join(pieces)
        unfiltered = Redactor()
        unfiltered._rules = tuple(replace(rule, needles=()) for rule in unfiltered._rules)
        assert Redactor().redact(text) == unfiltered.redact(text)


class TestQuotedValues:
    """Quoted values with spaces are masked whole."""

    def test_double_quoted_value_with_spaces(self, redactor: Redactor) -> None:
        assert redactor.redact('PASSWORD="correct horse battery"') == 'PASSWORD="correc…tery"'
        assert redactor.redact('PASSWORD="two words"') == 'PASSWORD="***"'

    def test_long_quoted_value_keeps_the_partial_mask(self, redactor: Redactor) -> None:
        text = "PASSWORD='correct horse battery staple'"
        assert redactor.redact(text) == "PASSWORD='correc…aple'"

    def test_escaped_quotes_stay_inside_the_value(self, redactor: Redactor) -> None:
        assert redactor.redact('{"password": "a b\\"c d"}') == '{"password": "***"}'

    def test_unclosed_quote_still_masks_the_first_word(self, redactor: Redactor) -> None:
        assert redactor.redact('TOKEN="abc def') == 'TOKEN="*** def'

    def test_quoted_cli_flag_value(self, redactor: Redactor) -> None:
        assert redactor.redact('tool --password "two words"') == 'tool --password "***"'


class TestPositionalMasking:
    """The captured span is masked, not the first equal text in the match."""

    def test_value_equal_to_the_name(self, redactor: Redactor) -> None:
        assert redactor.redact("KEY=KEY") == "KEY=***"

    def test_value_contained_in_the_name(self, redactor: Redactor) -> None:
        assert redactor.redact("MY_TOKEN=TOKEN") == "MY_TOKEN=***"


class TestWholeText:
    """The whole text is scanned: no secret escapes at a slice boundary."""

    def test_secret_at_the_reference_slice_boundary_is_masked(self, redactor: Redactor) -> None:
        secret = "sk-" + LONG
        text = "x" * 16_380 + " " + secret + " " + "y" * 20_000
        redacted = redactor.redact(text)
        assert secret not in redacted
        assert "sk-abc…6789" in redacted
        assert len(redacted) == len(text) - len(secret) + len("sk-abc…6789")

    def test_pem_block_straddling_a_slice_boundary_is_masked(self, redactor: Redactor) -> None:
        block = "-----BEGIN PRIVATE KEY-----\n" + "QUJD\n" * 20 + "-----END PRIVATE KEY-----"
        text = "x" * 16_370 + "\n" + block + "\n" + "y" * 20_000
        assert "QUJD" not in redactor.redact(text)

    def test_two_megabyte_adversarial_text_is_processed(self, redactor: Redactor) -> None:
        # Inputs that make backtracking regexes quadratic; timing is measured in bench/, here we
        # check the result is still right.
        text = "KEY=value " + "a-" * 500_000 + "-----BEGIN PRIVATE KEY-----\n" * 20_000
        redacted = redactor.redact(text)
        assert redacted.startswith("KEY=*** a-a-")
        assert redacted.endswith("-----BEGIN PRIVATE KEY-----\n***\n")


class TestExtraPatterns:
    def test_bare_body_is_case_insensitive_and_masks_the_last_group(self) -> None:
        redactor = Redactor(["internal-(id)-([0-9]+)"])
        assert redactor.redact("see INTERNAL-id-42 now") == "see INTERNAL-id-*** now"

    def test_slash_form_honours_its_flags(self) -> None:
        assert Redactor(["/acme-[a-z]+/"]).redact("ACME-x acme-y") == "ACME-x ***"
        assert Redactor(["/acme-[a-z]+/gi"]).redact("ACME-x acme-y") == "*** ***"

    def test_whole_match_is_masked_when_there_is_no_group(self) -> None:
        redactor = Redactor([r"CUST\d{20}"])
        assert redactor.redact("id CUST" + "1" * 20 + ".") == "id CUST11…1111."

    def test_a_path_like_body_is_not_mistaken_for_slash_form(self) -> None:
        assert Redactor(["/etc/passwd"]).redact("cat /etc/passwd") == "cat ***"

    def test_extra_patterns_run_after_the_defaults(self) -> None:
        redactor = Redactor(["banana"])
        assert redactor.redact("monkey: banana, GITHUB_TOKEN=x") == "monkey: ***, GITHUB_TOKEN=***"

    def test_empty_matches_mask_nothing(self) -> None:
        assert Redactor(["x*"]).redact("abc xx") == "abc ***"

    def test_invalid_pattern_raises_config_error_naming_its_index(self) -> None:
        with pytest.raises(ConfigError) as caught:
            Redactor(["ok", "broken(["])
        assert caught.value.key == "redaction.extraPatterns[1]"

    @pytest.mark.parametrize("pattern", ["(a+)+$", "(x*)*", "(?:ab+){2,}", "((a|b)+)*c"])
    def test_nested_repetition_is_rejected(self, pattern: str) -> None:
        with pytest.raises(ConfigError) as caught:
            Redactor([pattern])
        assert caught.value.key == "redaction.extraPatterns[0]"

    @pytest.mark.parametrize("pattern", [r"(ab)+", r"(a+)?", r"[(+]+x", r"\(a+\)+", r"(a){1}"])
    def test_single_repetition_is_accepted(self, pattern: str) -> None:
        Redactor([pattern])

    def test_empty_pattern_is_rejected(self) -> None:
        with pytest.raises(ConfigError):
            Redactor([""])


class TestMaskSpans:
    def test_finds_each_kind_of_mask_the_redactor_writes(self, redactor: Redactor) -> None:
        text = redactor.redact(
            f"OPENAI_API_KEY={LONG} and password: hunter2\n"
            "-----BEGIN PRIVATE KEY-----\nMIIEvQ\nAAAA\n-----END PRIVATE KEY-----\n"
        )

        found = [text[start:end] for start, end in mask_spans(text)]

        assert found == ["abcdef…6789", "***", "…redacted…"]

    def test_prose_with_an_ellipsis_is_no_mask(self) -> None:
        assert mask_spans("wait for it…then go, or abcdefgh…12345 and a…b") == []


class TestRedactionReport:
    """`Redactor.redaction` says what kinds were masked and how often (issue #32), and its text
    is exactly what `redact` returns."""

    def test_kinds_and_counts_without_the_secrets(self, redactor: Redactor) -> None:
        text = (
            f"token: {LONG}\nghp_{LONG} and ghp_{LONG}x\n"
            "db postgres://app:s3cr3t-pass@db.example.org/prod\n"
        )

        report = redactor.redaction(text)

        assert report.text == redactor.redact(text)
        assert report.masked == (("assignment", 1), ("github", 2), ("url-password", 1))
        assert report.count == 4
        assert LONG not in repr(report) and "s3cr3t" not in repr(report)

    def test_overlapping_matches_count_once(self, redactor: Redactor) -> None:
        report = redactor.redaction(f"OPENAI_API_KEY=sk-proj-{LONG}")

        assert report.count == 1

    def test_nothing_found_is_an_empty_report(self, redactor: Redactor) -> None:
        assert redactor.redaction("plain prose") == Redaction("plain prose")
        assert redactor.redaction("").masked == ()

    def test_an_extra_pattern_is_named_by_its_index(self) -> None:
        report = Redactor(["/zzz/", r"/ticket-\d+/"]).redaction("see ticket-1234")

        assert report.masked == (("extra-pattern-1", 1),)
