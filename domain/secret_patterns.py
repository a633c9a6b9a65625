"""Domain: the catalogue of secret formats the redactor finds anywhere in a text.

Each entry is a regular expression whose last non-empty capture group (or, without groups, whole
match) is the secret, plus lowercase needles: when none of them occurs in the text, the pattern
cannot match and is skipped.

The formats are the ones secret scanners know by a fixed prefix or shape (cloud keys, SaaS API
tokens, signed tokens, credentials in URLs). They are matched case-sensitively, as issued, so
that prose is not masked; the first entries keep the reference's case-insensitive matching.

Every pattern must run in linear time on any input, because transcripts are untrusted:
- a token may start only where no character of its body precedes it (a lookbehind), so a long
  run of body characters is scanned from one start, not from each of its characters;
- bodies are possessive (`++`, `{n,}+`): a run is consumed once and never given back;
- what must follow a variable-length run is a different character class, or the run is bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

# JavaScript's `\s` (Python's Unicode `\s` also has \x1c-\x1f and \x85; ASCII `\s` lacks NBSP).
WS_CHARS: Final = r"\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
S: Final = f"[{WS_CHARS}]"

_B64URL: Final = r"[A-Za-z0-9_-]"
_ALNUM: Final = r"[A-Za-z0-9]"
_HEX: Final = r"[a-f0-9]"
# No letter, digit or underscore before a token: the ASCII `\b` of a token starting with a word
# character, written as a lookbehind so it also holds for tokens starting with a symbol.
_START: Final = r"(?<![A-Za-z0-9_])"
# The same after a token; with a possessive body this never backtracks.
_END: Final = r"(?![A-Za-z0-9_])"
# Tokens whose body holds `-`: a start inside another hyphenated run is not a token start.
_START_DASH: Final = r"(?<![A-Za-z0-9_-])"


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One secret format: its regex, the needles that gate it, and its case sensitivity."""

    name: str
    regex: str
    needles: tuple[str, ...] = ()
    ignore_case: bool = False
    # A PEM block is masked keeping its first and last line, not as one token.
    pem: bool = False

    @property
    def flags(self) -> re.RegexFlag:
        """`re.ASCII` always (JavaScript semantics for \\b, \\d, \\w), plus IGNORECASE if asked."""
        return re.ASCII | re.IGNORECASE if self.ignore_case else re.ASCII


def _token(prefix: str, body: str, needles: tuple[str, ...], name: str) -> SecretPattern:
    """A prefixed token: `prefix` then a possessive `body`, as a whole word."""
    return SecretPattern(name, rf"{_START}({prefix}{body}){_END}", needles)


def _ci(name: str, regex: str, needles: tuple[str, ...]) -> SecretPattern:
    return SecretPattern(name, regex, needles, ignore_case=True)


# The reference's patterns (case-insensitive, as it has them), with more GitHub and Slack prefixes,
# PGP private keys, and bounded quoted values. Each can only fail after a long scan where its run
# ends in a character it excludes, so each character is scanned a bounded number of times.
_REFERENCE: Final = (
    _ci(
        "json-field",
        rf"\"(?:apiKey|token|secret|password|passwd|accessToken|refreshToken)\"{S}*:{S}*"
        r"\"((?:[^\"\\]|\\.)+)\"",
        ("apikey", "token", "secret", "passw"),
    ),
    _ci(
        "cli-flag",
        rf"--(?:api[-_]?key|token|secret|password|passwd){S}+"
        rf"(?:\"([^\"\r\n]{{1,200}})\"|'([^'\r\n]{{1,200}})'|[\"']?([^{WS_CHARS}\"']+))",
        ("--",),
    ),
    # Basic and Token schemes are as secret as Bearer; the header may be a quoted key of a
    # JSON object or a dict (`{"Authorization": "Basic ..."}`).
    _ci(
        "authorization-header",
        rf"Authorization[\"']?{S}*[:=]{S}*[\"']?(?:Bearer|Basic|Token){S}+([A-Za-z0-9._\-+=/~]+)",
        ("authorization",),
    ),
    _ci("bearer", rf"\bBearer{S}+([A-Za-z0-9._\-+=]{{18,}})\b", ("bearer",)),
    # The body may not contain another BEGIN (keeps the scan linear); an unterminated block is
    # masked to the end of the text. PGP armour ends its label with BLOCK.
    SecretPattern(
        "pem-private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----BEGIN ))*?"
        r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("private key",),
        ignore_case=True,
        pem=True,
    ),
    # OpenAI, and the APIs copying its style: Anthropic sk-ant-, OpenRouter sk-or-, DeepSeek.
    _ci("sk-dash", r"\b(sk-[A-Za-z0-9_-]{8,})\b", ("sk-",)),
    # GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens.
    _ci("github", r"\b(gh[pousr]_[A-Za-z0-9]{20,})\b", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    _ci("github-fine-grained", r"\b(github_pat_[A-Za-z0-9_]{20,})\b", ("github_pat_",)),
    # Slack bot, user, workspace, refresh, legacy and browser-session tokens.
    _ci("slack", r"\b(xox[abcdeoprs]-[A-Za-z0-9-]{10,})\b", ("xox",)),
    _ci("slack-app", r"\b(xapp-[A-Za-z0-9-]{10,})\b", ("xapp-",)),
    _ci("groq", r"\b(gsk_[A-Za-z0-9_-]{10,})\b", ("gsk_",)),
    _ci("google-api-key", r"\b(AIza[0-9A-Za-z\-_]{20,})\b", ("aiza",)),
    _ci("perplexity", r"\b(pplx-[A-Za-z0-9_-]{10,})\b", ("pplx-",)),
    _ci("npm", r"\b(npm_[A-Za-z0-9]{10,})\b", ("npm_",)),
    _ci("telegram-bot-url", r"\bbot(\d{6,}:[A-Za-z0-9_-]{20,})\b", ("bot",)),
    # `\b(\d{6,}:...)\b` with the leading \b checked after the first digit, so the regex engine
    # can skip non-digits quickly (":" is too common to be a needle).
    _ci("telegram-bot-token", r"(\d(?<![A-Za-z0-9_]\d)\d{5,}:[A-Za-z0-9_-]{20,})\b", ()),
)

_FORMATS: Final = (
    # AWS access key ids: long-term (AKIA), temporary (ASIA) and the other issued prefixes.
    _token(
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])",
        r"[A-Z0-9]{16}",
        ("akia", "asia", "abia", "acca", "a3t"),
        "aws-access-key-id",
    ),
    # Stripe secret and restricted keys (live and test), and webhook signing secrets.
    _token(r"(?:sk|rk)_(?:live|test|prod)_", rf"{_ALNUM}{{10,}}+", ("sk_", "rk_"), "stripe"),
    _token(r"whsec_", rf"{_ALNUM}{{24,}}+", ("whsec_",), "stripe-webhook-secret"),
    # JSON Web Tokens anywhere: header and payload are base64url JSON objects (`{"` -> eyJ / ey).
    SecretPattern(
        "jwt",
        rf"{_START_DASH}(eyJ{_B64URL}{{8,}}+\.ey{_B64URL}{{8,}}+\.{_B64URL}*+)",
        ("eyj",),
    ),
    # Discord bot tokens: base64 user id (M/N/O...) . timestamp . HMAC.
    SecretPattern(
        "discord-bot-token",
        rf"{_START_DASH}([MNO]{_B64URL}{{23,27}}\.{_B64URL}{{6}}\.{_B64URL}{{27,40}})(?![\w-])",
    ),
    SecretPattern(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/\d++/([A-Za-z0-9_-]{60,}+)",
        ("/api/webhooks/",),
    ),
    # The password of `scheme://user:password@host` (databases, brokers, caches, HTTP). The
    # password may hold `@`; the host starts after the last one before a `/`, `?`, `#` or space.
    SecretPattern(
        "url-password",
        rf"://[^{WS_CHARS}:/?#@]{{0,256}}+:([^{WS_CHARS}/?#]{{1,1024}})@",
        ("://",),
    ),
    # GitLab personal, pipeline-trigger, deploy, runner, feed, OAuth, agent ... tokens; the
    # routable format appends `.` + 9 characters.
    _token(
        r"gl(?:pat|ptt|dt|rt|ft|oas|soat|cbt|imt|agent|wt)-",
        rf"{_B64URL}{{20,}}+(?:\.[a-z0-9]{{9}})?",
        ("gl",),
        "gitlab",
    ),
    _token(r"GR1348941", rf"{_B64URL}{{20,}}+", ("gr1348941",), "gitlab-runner-registration"),
    _token(r"hf_", r"[A-Za-z0-9]{30,}+", ("hf_",), "hugging-face"),
    _token(r"api_org_", r"[A-Za-z0-9]{30,}+", ("api_org_",), "hugging-face-org"),
    SecretPattern(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{20,}+)",
        ("hooks.slack.com",),
    ),
    _token(r"SG\.", rf"{_B64URL}{{22}}\.{_B64URL}{{43}}", ("sg.",), "sendgrid"),
    _token(r"GOCSPX-", rf"{_B64URL}{{28}}", ("gocspx-",), "google-oauth-client-secret"),
    _token(r"ya29\.", rf"{_B64URL}{{30,}}+", ("ya29.",), "google-oauth-access-token"),
    # Twilio account and API key SIDs: two capitals and 32 lowercase hex digits.
    _token(r"(?:AC|SK)", rf"{_HEX}{{32}}", ("ac", "sk"), "twilio"),
    _token(r"pypi-AgE", rf"{_B64URL}{{50,}}+", ("pypi-",), "pypi"),
    _token(r"shp(?:at|ca|pa|ss)_", r"[a-fA-F0-9]{32}", ("shp",), "shopify"),
    _token(r"do[opr]_v1_", rf"{_HEX}{{64}}", ("_v1_",), "digitalocean"),
    # Azure: storage account keys (64 bytes), Service Bus / Event Hubs keys (32 bytes) and the
    # signature of a SAS URL.
    SecretPattern(
        "azure-account-key",
        r"AccountKey=([A-Za-z0-9+/]{86}==)",
        ("accountkey=",),
        ignore_case=True,
    ),
    SecretPattern(
        "azure-shared-access-key",
        r"SharedAccessKey=([A-Za-z0-9+/]{43}=)",
        ("sharedaccesskey=",),
        ignore_case=True,
    ),
    SecretPattern("azure-sas-signature", r"[?&]sig=([A-Za-z0-9%+/=]{30,}+)", ("sig=",)),
    # Azure AD (Entra) client secrets carry `Q~` after three characters and a digit.
    SecretPattern(
        "azure-ad-client-secret",
        r"(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}+)(?![A-Za-z0-9_~.-])",
        ("q~",),
    ),
    _token(r"key-", rf"{_HEX}{{32}}", ("key-",), "mailgun"),
    # Mailchimp: 32 hex digits and the datacenter.
    _token(r"", rf"{_HEX}{{32}}-us\d{{1,2}}", ("-us",), "mailchimp"),
    _token(r"sq0(?:atp|csp)-", rf"{_B64URL}{{22,43}}+", ("sq0",), "square-oauth"),
    _token(r"EAAA", rf"{_B64URL}{{60}}", ("eaaa",), "square-access-token"),
    _token(r"EAA", rf"{_ALNUM}{{100,}}+", ("eaa",), "facebook-access-token"),
    _token(r"ATATT3", r"[A-Za-z0-9_=-]{150,}+", ("atatt3",), "atlassian-api-token"),
    _token(r"PMAK-", rf"{_HEX}{{24}}-{_HEX}{{34}}", ("pmak-",), "postman"),
    _token(r"dapi", rf"{_HEX}{{32}}(?:-\d)?", ("dapi",), "databricks"),
    _token(r"hv[sb]\.", rf"{_B64URL}{{24,}}+", ("hvs.", "hvb."), "vault"),
    _token(rf"{_ALNUM}{{14}}\.atlasv1\.", r"[A-Za-z0-9_=-]{60,}+", (".atlasv1.",), "terraform"),
    _token(r"lin_api_", rf"{_ALNUM}{{40}}", ("lin_api_",), "linear"),
    _token(r"glc_", r"[A-Za-z0-9+/]{32,}+={0,2}", ("glc_",), "grafana-cloud"),
    _token(r"glsa_", rf"{_ALNUM}{{32}}_[A-Fa-f0-9]{{8}}", ("glsa_",), "grafana-service-account"),
    # age identities: X25519 (`AGE-SECRET-KEY-1`), post-quantum (`AGE-SECRET-KEY-PQ-1`) and
    # plugin ones (`AGE-PLUGIN-<NAME>-1`). The prefix alone is unmistakable, so any body of 20+
    # letters and digits is masked (a mistyped, truncated or lower-case key is still a key).
    SecretPattern(
        "age",
        rf"{_START}(AGE-(?:SECRET-KEY-(?:PQ-)?|PLUGIN-[A-Z0-9_]{{1,64}}+-)1[A-Z0-9]{{20,}}+){_END}",
        ("age-secret-key-", "age-plugin-"),
        ignore_case=True,
    ),
    _token(r"ntn_", rf"{_ALNUM}{{40,}}+", ("ntn_",), "notion"),
    _token(r"secret_", rf"{_ALNUM}{{43}}", ("secret_",), "notion-legacy"),
    _token(r"r8_", rf"{_ALNUM}{{37}}", ("r8_",), "replicate"),
    _token(r"sbp_", rf"{_HEX}{{40}}", ("sbp_",), "supabase"),
    _token(r"NRAK-", r"[A-Z0-9]{27}", ("nrak-",), "new-relic"),
    _token(r"sntry[us]_", r"[A-Za-z0-9+/=_]{40,}+", ("sntry",), "sentry"),
    _token(r"ops_eyJ", r"[A-Za-z0-9+/]{250,}+={0,3}", ("ops_eyj",), "1password-service-account"),
    _token(r"sk\.eyJ", rf"{_B64URL}{{50,}}+\.{_B64URL}{{20,}}+", ("sk.eyj",), "mapbox"),
    _token(r"xai-", rf"{_ALNUM}{{80}}", ("xai-",), "xai"),
    _token(r"dp\.(?:pt|st|sa|ct|scim|audit)\.", rf"{_ALNUM}{{40,44}}", ("dp.",), "doppler"),
    _token(r"pul-", rf"{_HEX}{{40}}", ("pul-",), "pulumi"),
    _token(r"sl\.", r"[A-Za-z0-9_.-]{130,}+", ("sl.",), "dropbox"),
)

SECRET_PATTERNS: Final[tuple[SecretPattern, ...]] = (*_REFERENCE, *_FORMATS)
