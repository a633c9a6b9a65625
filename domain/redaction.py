"""Domain: masking secrets (API keys, tokens, passwords, private keys) in text before indexing (§6).

The 17 default patterns of §6.2 run in order over the whole text, then any extra patterns. Each
match is masked by §6.3: a PEM block keeps only its first and last line; otherwise the token (the
last non-empty capture group, or the whole match) becomes `***` when shorter than 18 characters,
else its first 6 + `…` + last 4 characters.

Fixes over the reference (§31.16):
- an assignment's name must look like a secret's name (`OPENAI_API_KEY`, `db-password`,
  `apiKey`, `TOKEN`), not merely end in key/token (`monkey: banana`, `turkey=stuffed` stay);
  well-known non-secret names (`primary_key`, `sort_key`, `public_key`, ...) are left alone;
- quoted values with spaces are masked (`PASSWORD="correct horse battery"`);
- the mask replaces the captured span itself, not the first equal text in the match (`KEY=KEY`);
- the whole text is scanned, with no slice boundaries for secrets to hide across. The default
  patterns are written to run in linear time (no nested quantifiers, bounded quoted values);
- a value that is already a mask is left as it is, so overlapping patterns (and repeated passes)
  do not turn `abcdef…6789` into `***`.

Regex semantics follow the reference's JavaScript flags: `\\b`, `\\d`, `\\w` and case folding are
ASCII-only, while whitespace is the Unicode set JavaScript's `\\s` matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.errors import ConfigError

MASK: Final = "***"
MIN_PARTIAL_MASK_LENGTH: Final = 18
PEM_ELISION: Final = "…redacted…"

# JavaScript's `\s` (Python's Unicode `\s` also has \x1c-\x1f and \x85; ASCII `\s` lacks NBSP).
_WS_CHARS: Final = r"\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_S: Final = f"[{_WS_CHARS}]"
_DEFAULT_FLAGS: Final = re.IGNORECASE | re.ASCII

# Pattern 1, the env-style assignment. Names are whole identifiers (the lookbehind anchors them at
# their first character, which also keeps the scan linear).
_WORD: Final = r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)"
_GLUED: Final = (
    r"(?:API|ACCESS|AUTH|BOT|CLIENT|ENCRYPTION|MASTER|PRIVATE|REFRESH|SECRET|SESSION|SIGNING)"
)
_NAME_CHAR: Final = r"[A-Za-z0-9_.\-]"
_NAME: Final = (
    rf"(?<!{_NAME_CHAR})(?P<name>"
    rf"{_NAME_CHAR}*[_.\-]{_GLUED}?{_WORD}"  # OPENAI_API_KEY, db-password, app.secret, --token
    rf"|{_GLUED}{_WORD}"  # APIKEY, accesstoken
    rf"|{_NAME_CHAR}*(?-i:[a-z0-9](?:Key|Token|Secret|Password|Passwd))"  # apiKey, clientSecret
    r"|TOKEN|SECRET|PASSWORD|PASSWD"  # the bare words, any case
    r"|(?-i:KEY)"  # bare KEY only in capitals: "Key: idea" is prose
    rf")(?!{_NAME_CHAR})"
)
# Quoted values may hold spaces; bounded so an unclosed quote costs a bounded scan.
_VALUE: Final = (
    rf"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){{1,200}})\"|'(?P<sq>[^'\r\n]{{1,200}})'"
    rf"|[\"']?(?P<bare>[^{_WS_CHARS}\"'\\]+))"
)
# Around `=`/`:` only horizontal space: a YAML key ending its line does not own the next line.
# Markdown emphasis is allowed around the separator: `**Password:** hunter2`.
_H: Final = r"[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]"
_ASSIGNMENT: Final = rf"{_NAME}(?:[\"']|\*{{1,2}})?{_H}*[=:]\**{_H}*{_VALUE}"

# Names that end in a secret word but, in code and notes, name ordinary data.
_NOT_SECRET_NAMES: Final = frozenset(
    {
        "primary_key",
        "foreign_key",
        "sort_key",
        "partition_key",
        "cache_key",
        "public_key",
        "publishable_key",
        "idempotency_key",
    }
)
_CAMEL_HUMP: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# (pattern, needles): a pattern runs only when one of its needles (lowercase) occurs in the text.
# Masking never creates a needle (a mask joins text that was already adjacent, around `…`/`***`),
# so checking the original text once is exact; it skips most of the per-character regex cost.
_DEFAULT_PATTERNS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    # 1 env-style assignment (see _ASSIGNMENT; tried only where a secret word occurs)
    (_ASSIGNMENT, ()),
    # 2 JSON field (escaped quotes stay inside the value)
    (
        rf"\"(?:apiKey|token|secret|password|passwd|accessToken|refreshToken)\"{_S}*:{_S}*"
        r"\"((?:[^\"\\]|\\.)+)\"",
        ("apikey", "token", "secret", "passw"),
    ),
    # 3 CLI flag
    (
        rf"--(?:api[-_]?key|token|secret|password|passwd){_S}+"
        rf"(?:\"([^\"\r\n]{{1,200}})\"|'([^'\r\n]{{1,200}})'|[\"']?([^{_WS_CHARS}\"']+))",
        ("--",),
    ),
    # 4 Authorization header (Basic and Token schemes are as secret as Bearer)
    (
        rf"Authorization{_S}*[:=]{_S}*(?:Bearer|Basic|Token){_S}+([A-Za-z0-9._\-+=/~]+)",
        ("authorization",),
    ),
    # 5 bare Bearer token
    (rf"\bBearer{_S}+([A-Za-z0-9._\-+=]{{18,}})\b", ("bearer",)),
    # 6 PEM private key; the body may not contain another BEGIN (keeps the scan linear); an
    #   unterminated block is masked to the end of the text
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[^-]|-(?!----BEGIN ))*?"
        r"(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
        ("private key-----",),
    ),
    # 7 OpenAI-style
    (r"\b(sk-[A-Za-z0-9_-]{8,})\b", ("sk-",)),
    # 8 GitHub classic
    (r"\b(ghp_[A-Za-z0-9]{20,})\b", ("ghp_",)),
    # 9 GitHub fine-grained
    (r"\b(github_pat_[A-Za-z0-9_]{20,})\b", ("github_pat_",)),
    # 10 Slack
    (r"\b(xox[baprs]-[A-Za-z0-9-]{10,})\b", ("xox",)),
    # 11 Slack app
    (r"\b(xapp-[A-Za-z0-9-]{10,})\b", ("xapp-",)),
    # 12 Groq
    (r"\b(gsk_[A-Za-z0-9_-]{10,})\b", ("gsk_",)),
    # 13 Google API key
    (r"\b(AIza[0-9A-Za-z\-_]{20,})\b", ("aiza",)),
    # 14 Perplexity
    (r"\b(pplx-[A-Za-z0-9_-]{10,})\b", ("pplx-",)),
    # 15 npm
    (r"\b(npm_[A-Za-z0-9]{10,})\b", ("npm_",)),
    # 16 Telegram bot URL
    (r"\bbot(\d{6,}:[A-Za-z0-9_-]{20,})\b", ("bot",)),
    # 17 Telegram token: `\b(\d{6,}:...)\b` with the leading \b checked after the first digit,
    #    so the regex engine can skip non-digits quickly (":" is too common to be a needle)
    (r"(\d(?<![A-Za-z0-9_]\d)\d{5,}:[A-Za-z0-9_-]{20,})\b", ()),
)
# Every name pattern 1 accepts contains one of these (case-insensitive).
_SECRET_WORD_SCAN: Final = re.compile(r"[kstp](?:ey|oken|ecret|assw)", _DEFAULT_FLAGS)
_NAME_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def mask_token(token: str) -> str:
    """`***` for a short token, else its first 6 and last 4 characters around `…`."""
    if len(token) < MIN_PARTIAL_MASK_LENGTH:
        return MASK
    return f"{token[:6]}…{token[-4:]}"


def _mask_pem(block: str) -> str:
    lines = [line for line in re.split(r"\r?\n", block) if line.strip()]
    if len(lines) < 2:
        return MASK
    if "PRIVATE KEY-----" not in lines[-1].upper():
        return f"{lines[0]}\n{PEM_ELISION}"  # unterminated: every line after BEGIN is key material
    return f"{lines[0]}\n{PEM_ELISION}\n{lines[-1]}"


def _is_mask(token: str) -> bool:
    return token == MASK or (len(token) == 11 and token[6] == "…")


def _mask_match(match: re.Match[str]) -> str:
    whole = match.group(0)
    if not whole:
        return whole  # an extra pattern matching the empty string masks nothing
    if "PRIVATE KEY-----" in whole.upper():
        return _mask_pem(whole)
    for group in range(match.re.groups, 0, -1):
        token = match.group(group)
        if token:
            if _is_mask(token):  # already masked by an earlier pattern (or an earlier pass)
                return whole
            start, end = match.span(group)
            offset = match.start()
            return f"{whole[: start - offset]}{mask_token(token)}{whole[end - offset :]}"
    return whole if _is_mask(whole) else mask_token(whole)


def _names_data(name: str) -> bool:
    snake = _CAMEL_HUMP.sub("_", name).lower().replace("-", "_").replace(".", "_")
    return any(snake == known or snake.endswith(f"_{known}") for known in _NOT_SECRET_NAMES)


def _mask_assignment(match: re.Match[str]) -> str:
    if _names_data(match.group("name")):
        return match.group(0)
    return _mask_match(match)


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    needles: tuple[str, ...] = ()
    # Where a match may start, ascending; None means anywhere (plain `re.sub`).
    starts: Callable[[str], Iterator[int]] | None = None

    def apply(self, text: str, lowered: str) -> str:
        if self.needles and not any(needle in lowered for needle in self.needles):
            return text
        if self.starts is None:
            return self.pattern.sub(self.replace, text)
        return _sub_at(self.pattern, self.replace, text, self.starts(text))


def _sub_at(
    pattern: re.Pattern[str],
    replace: Callable[[re.Match[str]], str],
    text: str,
    starts: Iterable[int],
) -> str:
    """`pattern.sub(replace, text)` when matches can only begin at `starts` (ascending)."""
    pieces: list[str] = []
    done = 0
    for start in starts:
        if start < done:
            continue
        match = pattern.match(text, start)
        if match is None or not match.group(0):
            continue
        pieces += (text[done:start], replace(match))
        done = match.end()
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _assignment_starts(text: str) -> Iterator[int]:
    """Starts of the name tokens that contain a secret word, each once, ascending."""
    token_start = -1
    scanned = 0
    for hit in _SECRET_WORD_SCAN.finditer(text):
        position = hit.start()
        while position > scanned and text[position - 1] in _NAME_CHARS:
            position -= 1
        # Stopping at `scanned` (the previous hit's end) walks each character once; reaching it
        # means this hit is in the previous hit's token, already yielded.
        if position > scanned or token_start < 0:
            token_start = position
            yield token_start
        scanned = hit.end()


_JS_FLAGS: Final = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_IGNORED_JS_FLAGS: Final = frozenset("guyd")


_SLASH_FORM: Final = re.compile(r"/(.+)/([a-z]*)", re.DOTALL)


def _compile_extra(source: str, key: str) -> re.Pattern[str]:
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


class Redactor:
    """Masks secrets with the default patterns, then the configured extra patterns.

    `extra_patterns` are `/body/flags` strings (flags i, m, s honoured; g, u, y, d ignored) or
    bare bodies compiled case-insensitively, in Python `re` syntax. A pattern that does not
    compile, or repeats a repeated group, raises ConfigError naming `redaction.extraPatterns[i]`.
    """

    __slots__ = ("_rules",)

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        (assignment, _), *others = _DEFAULT_PATTERNS
        rules = [
            _Rule(
                re.compile(assignment, _DEFAULT_FLAGS),
                _mask_assignment,
                starts=_assignment_starts,
            )
        ]
        rules += [
            _Rule(re.compile(source, _DEFAULT_FLAGS), _mask_match, needles)
            for source, needles in others
        ]
        rules += [
            _Rule(_compile_extra(source, f"redaction.extraPatterns[{index}]"), _mask_match)
            for index, source in enumerate(extra_patterns)
        ]
        self._rules: tuple[_Rule, ...] = tuple(rules)

    def redact(self, text: str) -> str:
        """Return `text` with every secret the patterns find masked; the rest is unchanged."""
        if not text:
            return text
        lowered = text.lower()
        for rule in self._rules:
            text = rule.apply(text, lowered)
        return text
