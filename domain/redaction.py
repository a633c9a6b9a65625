"""Domain: masking secrets (API keys, tokens, passwords, private keys) in text before indexing.

The env-style assignment pattern below, the catalogue of secret formats (domain/secret_patterns.py)
and any extra patterns (compiled and vetted by domain/extra_patterns.py) all search the original
text. Each match names a span: the last non-empty capture group, or the whole match; a PEM private
key is the whole block. Overlapping spans are merged, and each merged span is masked once: a PEM
block keeps only its first and last line; anything else becomes `***` when shorter than 18
characters, else its first 6 + `…` + last 4 characters. A mask keeps the line breaks of what it
replaces, so the line numbers of the text after a mask do not move.

Fixes over the reference system's redaction:
- an assignment's name must look like a secret's name (`OPENAI_API_KEY`, `db-password`,
  `PGPASSWORD`, `apiKey`, `TOKEN`), not merely end in key/token (`monkey: banana`,
  `turkey=stuffed` stay);
  well-known non-secret names (`primary_key`, `sort_key`, `public_key`, ...) are left alone;
- quoted values with spaces are masked (`PASSWORD="correct horse battery"`);
- the mask replaces the captured span itself, not the first equal text in the match (`KEY=KEY`);
- the whole text is scanned, with no slice boundaries for secrets to hide across. The default
  patterns are written to run in linear time (no nested quantifiers, bounded quoted values);
- no pattern sees another's mask, so an extra pattern overlapping a default one cannot mask part
  of a mask (`token=***…ghij`); a value that is already a mask (a second pass) is left alone.

Regex semantics follow the reference's JavaScript flags: `\\b`, `\\d`, `\\w` and case folding are
ASCII-only, while whitespace is the Unicode set JavaScript's `\\s` matches.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from memlane.domain.extra_patterns import compile_extra
from memlane.domain.secret_patterns import SECRET_PATTERNS, WS_CHARS

MASK: Final = "***"
# The kind a Redaction names for an env-style assignment (`OPENAI_API_KEY=...`).
ASSIGNMENT_KIND: Final = "assignment"
MIN_PARTIAL_MASK_LENGTH: Final = 18
PEM_ELISION: Final = "…redacted…"

_DEFAULT_FLAGS: Final = re.IGNORECASE | re.ASCII
_PEM_LABEL: Final = re.compile(r"PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE)

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
    rf"|{_NAME_CHAR}*(?:PASSWORD|PASSWD)"  # PGPASSWORD, dbpassword (no word ends in password)
    rf"|{_NAME_CHAR}*(?-i:[a-z0-9](?:Key|Token|Secret|Password|Passwd))"  # apiKey, clientSecret
    r"|TOKEN|SECRET"  # the bare words, any case
    r"|(?-i:KEY)"  # bare KEY only in capitals: "Key: idea" is prose
    rf")(?!{_NAME_CHAR})"
)
# Quoted values may hold spaces; bounded so an unclosed quote costs a bounded scan.
_VALUE: Final = (
    rf"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){{1,200}})\"|'(?P<sq>[^'\r\n]{{1,200}})'"
    rf"|[\"']?(?P<bare>[^{WS_CHARS}\"'\\]+))"
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

# Every name the assignment pattern accepts contains one of these (case-insensitive).
_SECRET_WORD_SCAN: Final = re.compile(r"[kstp](?:ey|oken|ecret|assw)", _DEFAULT_FLAGS)
_NAME_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def mask_token(token: str) -> str:
    """`***` for a short token, else its first 6 and last 4 characters around `…`."""
    if len(token) < MIN_PARTIAL_MASK_LENGTH:
        return MASK
    return f"{token[:6]}…{token[-4:]}"


def _keep_line_breaks(original: str, mask: str) -> str:
    """`mask`, followed by the line breaks of `original` it lacks (line numbers stay put)."""
    return mask + "\n" * (original.count("\n") - mask.count("\n"))


def _mask_pem(block: str) -> str:
    lines = [line for line in re.split(r"\r?\n", block) if line.strip()]
    breaks = block.count("\n")
    if len(lines) < 2:
        return _keep_line_breaks(block, MASK)
    head = f"{lines[0]}\n{PEM_ELISION}"
    if not _PEM_LABEL.search(lines[-1]):
        return _keep_line_breaks(block, head)  # unterminated: every line after BEGIN is key
    return head + "\n" * max(breaks - 1, 1) + lines[-1]


def _is_mask(token: str) -> bool:
    return token == MASK or (len(token) == 11 and token[6] == "…")


# What the masks above look like in redacted text: `***`, `sk-pro…wxyz` (6 + … + 4 characters
# that are no spaces) and the PEM elision line. For showing masks, not for finding secrets.
_MASK_SHAPES: Final = re.compile(
    rf"{re.escape(MASK)}|{re.escape(PEM_ELISION)}"
    r"|(?<![\w\-])[^\s…]{6}…[^\s…]{4}(?![\w\-])"
)


def mask_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the masks in redacted `text`, in order (a page shows them
    as masks). A partial mask is a 6 + `…` + 4 character token standing alone."""
    return [match.span() for match in _MASK_SHAPES.finditer(text)]


def _in_mask(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a mask, or the head or tail of one that a pattern's character
    class cut at the `…` (a second pass over redacted text)."""
    if _is_mask(text[start:end]):
        return True
    if text[end : end + 1] == "…" and end - start <= 6:
        return _is_mask(text[end - 6 : end + 5])
    if text[start - 1 : start] == "…" and end - start <= 4 and start >= 7:
        return _is_mask(text[start - 7 : start + 4])
    return False


@dataclass(frozen=True, slots=True)
class _Span:
    """Where a secret lies in the original text; `pem` spans are whole private-key blocks.
    `kind` names the pattern that found it (a catalogue name, `assignment`, `extra-pattern-N`)."""

    start: int
    end: int
    pem: bool = False
    kind: str = ""


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text and what was masked: (kind, count) pairs sorted by kind, never the secrets.

    A run of overlapping matches is one mask, counted once under the kind of its first match.
    """

    text: str
    masked: tuple[tuple[str, int], ...] = ()

    @property
    def count(self) -> int:
        """How many masks were applied."""
        return sum(count for _, count in self.masked)


def _span_of(match: re.Match[str], pem: bool, kind: str) -> _Span | None:
    if not match.group(0):
        return None  # an extra pattern matching the empty string masks nothing
    if pem or _PEM_LABEL.search(match.group(0)):
        return _Span(match.start(), match.end(), pem=True, kind=kind)
    start, end = match.span()
    for group in range(match.re.groups, 0, -1):
        if match.group(group):
            start, end = match.span(group)
            break
    if _in_mask(match.string, start, end):  # a mask from an earlier pass stays as it is
        return None
    return _Span(start, end, kind=kind)


def _mask_merged(text: str, spans: Sequence[_Span]) -> str:
    """The one mask for overlapping spans: a PEM block's own, with any overhang masked apart."""
    start, end = spans[0].start, max(span.end for span in spans)
    pems = [span for span in spans if span.pem]
    if not pems:
        return _keep_line_breaks(text[start:end], mask_token(text[start:end]))
    pem_start, pem_end = pems[0].start, max(span.end for span in pems)
    lead, tail = text[start:pem_start], text[pem_end:end]
    return "".join(
        (
            _keep_line_breaks(lead, mask_token(lead)) if lead else "",
            _mask_pem(text[pem_start:pem_end]),
            _keep_line_breaks(tail, mask_token(tail)) if tail else "",
        )
    )


def _runs(spans: list[_Span]) -> list[list[_Span]]:
    """The runs of overlapping spans (spans merely touching stay apart), in text order; a
    stable sort keeps the rules' order among spans starting at the same place."""
    spans.sort(key=lambda span: span.start)
    runs: list[list[_Span]] = []
    group, group_end = [spans[0]], spans[0].end
    for span in spans[1:]:
        if span.start < group_end:
            group.append(span)
            group_end = max(group_end, span.end)
            continue
        runs.append(group)
        group, group_end = [span], span.end
    runs.append(group)
    return runs


def _apply(text: str, runs: Sequence[Sequence[_Span]]) -> str:
    """Mask each run of overlapping spans once."""
    pieces: list[str] = []
    done = 0
    for group in runs:
        pieces += (text[done : group[0].start], _mask_merged(text, group))
        done = max(span.end for span in group)
    pieces.append(text[done:])
    return "".join(pieces)


def _names_data(name: str) -> bool:
    snake = _CAMEL_HUMP.sub("_", name).lower().replace("-", "_").replace(".", "_")
    return any(snake == known or snake.endswith(f"_{known}") for known in _NOT_SECRET_NAMES)


def _names_a_secret(match: re.Match[str]) -> bool:
    return not _names_data(match.group("name"))


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    kind: str
    needles: tuple[str, ...] = ()
    # Where a match may start, ascending; None means anywhere (plain `finditer`).
    starts: Callable[[str], Iterator[int]] | None = None
    # A match this rejects is consumed but masks nothing.
    accept: Callable[[re.Match[str]], bool] | None = None
    pem: bool = False

    def spans(self, text: str, lowered: str) -> Iterator[_Span]:
        # A pattern none of whose needles occur cannot match: skipping it saves a full scan.
        if self.needles and not any(needle in lowered for needle in self.needles):
            return
        if self.starts is None:
            matches: Iterable[re.Match[str]] = self.pattern.finditer(text)
        else:
            matches = _matches_at(self.pattern, text, self.starts(text))
        for match in matches:
            if self.accept is None or self.accept(match):
                span = _span_of(match, self.pem, self.kind)
                if span is not None:
                    yield span


def _matches_at(
    pattern: re.Pattern[str], text: str, starts: Iterable[int]
) -> Iterator[re.Match[str]]:
    """The non-empty matches of `pattern.finditer(text)` when they can only begin at `starts`."""
    done = 0
    for start in starts:
        if start < done:
            continue
        match = pattern.match(text, start)
        if match is None or not match.group(0):
            continue
        yield match
        done = match.end()


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


def built_in_rules() -> tuple[str, ...]:
    """What the built-in masking rules are, as text: the assignment rule and every catalogue
    entry with its flags, needles and form (an index records their fingerprint)."""
    catalogue = (
        f"{p.name}\0{p.regex}\0{int(p.flags)}\0{','.join(p.needles)}\0{p.pem}"
        for p in SECRET_PATTERNS
    )
    return (f"{ASSIGNMENT_KIND}\0{_ASSIGNMENT}\0{int(_DEFAULT_FLAGS)}", *catalogue)


class Redactor:
    """Masks secrets with the default patterns, then the configured extra patterns.

    `extra_patterns` are `/body/flags` strings (flags i, m, s honoured; g, u, y, d ignored) or
    bare bodies compiled case-insensitively, in Python `re` syntax. A pattern that does not
    compile, or repeats a repeated group, raises ConfigError naming `redaction.extraPatterns[i]`.
    """

    __slots__ = ("_rules",)

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        rules = [
            _Rule(
                re.compile(_ASSIGNMENT, _DEFAULT_FLAGS),
                ASSIGNMENT_KIND,
                starts=_assignment_starts,
                accept=_names_a_secret,
            )
        ]
        rules += [
            _Rule(re.compile(p.regex, p.flags), p.name, p.needles, pem=p.pem)
            for p in SECRET_PATTERNS
        ]
        rules += [
            _Rule(
                compile_extra(source, f"redaction.extraPatterns[{index}]"),
                f"extra-pattern-{index}",
            )
            for index, source in enumerate(extra_patterns)
        ]
        self._rules: tuple[_Rule, ...] = tuple(rules)

    def redact(self, text: str) -> str:
        """Return `text` with every secret the patterns find masked; the rest is unchanged."""
        return self.redaction(text).text

    def redaction(self, text: str) -> Redaction:
        """`redact`, also saying what kinds of secret were masked and how many of each."""
        if not text:
            return Redaction(text)
        lowered = text.lower()
        spans = [span for rule in self._rules for span in rule.spans(text, lowered)]
        if not spans:
            return Redaction(text)
        runs = _runs(spans)
        counts = Counter(group[0].kind for group in runs)
        return Redaction(_apply(text, runs), tuple(sorted(counts.items())))
