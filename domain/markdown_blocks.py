"""Domain: which lines of a markdown note are headings, and of which level.

The one reader of a note's block structure, shared by the chunker (a heading starts a chunk),
the heading trail (the headings above a chunk) and the note's times (a dated heading dates its
section). It follows CommonMark where that decides what a reader sees as a heading:

- ATX headings: `## Title`, up to three spaces of indent, `#` to `######` then a space or the
  end of the line.
- Setext headings: a paragraph underlined by a line of `=` (level 1) or `-` (level 2). The
  paragraph's first line carries the level (a chunk cut there keeps the whole heading); the
  underline and any further lines of the paragraph carry 0. A list item or quote above the
  underline makes it a thematic break, not a heading, and so does a blank line above it.
- Fenced code: a fence of three or more backticks or tildes closes only at a fence of the same
  character, at least as long, with nothing after it; so a `~~~` inside a ``` block is code, not
  the fence's end. Nothing inside a fence is a heading; an unclosed fence runs to the end.
- A YAML front-matter block at the very top (`---` to `---` or `...`) holds no heading: its
  closing `---` would otherwise underline its last key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

_FENCE_OPEN: Final = re.compile(r" {0,3}(`{3,}|~{3,})(.*)$")
_SETEXT_UNDERLINE: Final = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_THEMATIC_BREAK: Final = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
# A line that opens a block a setext underline cannot close: a list item, a quote, an HTML
# block. The lines after it are that block's lazy continuation, not a paragraph of their own.
_NOT_PARAGRAPH: Final = re.compile(r" {0,3}(?:[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|>|<)")
_LAZY: Final = -1  # `paragraph` while a list item's or quote's lines are read
_FRONT_MATTER_OPEN: Final = re.compile(r"---[ \t]*$")
_FRONT_MATTER_CLOSE: Final = re.compile(r"(?:---|\.\.\.)[ \t]*$")


def atx_level(line: str) -> int:
    """The level (1-6) of a markdown ATX heading line, 0 for any other line."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return 0
    level = len(stripped) - len(stripped.lstrip("#"))
    if not 1 <= level <= 6:
        return 0
    if len(stripped) > level and stripped[level] not in " \t":
        return 0
    return level


def _front_matter_end(lines: Sequence[str]) -> int:
    """How many lines the front matter at the top takes (0 when there is none)."""
    if not lines or not _FRONT_MATTER_OPEN.match(lines[0]):
        return 0
    for index in range(1, len(lines)):
        if _FRONT_MATTER_CLOSE.match(lines[index]):
            return index + 1
    return 0  # never closed: a thematic break, not front matter


def _closes(line: str, marker: str) -> bool:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return False
    run = len(stripped) - len(stripped.lstrip(marker[0]))
    return run >= len(marker) and not stripped[run:].strip()


def heading_levels(lines: Sequence[str]) -> list[int]:
    """Each line's heading level (1-6), 0 for every other line."""
    levels = [0] * len(lines)
    fence: str | None = None  # the open fence's marker (e.g. "````"), None outside code
    # The first line of the paragraph being read, None when the previous line ends no paragraph.
    paragraph: int | None = None
    for index in range(_front_matter_end(lines), len(lines)):
        line = lines[index]
        if fence is not None:
            if _closes(line, fence):
                fence = None
            continue
        opened = _FENCE_OPEN.match(line)
        if opened is not None and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence, paragraph = opened.group(1), None
            continue
        if not line.strip():
            paragraph = None
            continue
        underline = _SETEXT_UNDERLINE.match(line)
        if underline is not None and paragraph is not None and paragraph != _LAZY:
            levels[paragraph] = 1 if underline.group(1)[0] == "=" else 2
            paragraph = None
            continue
        level = atx_level(line)
        if level:
            levels[index], paragraph = level, None
        elif _THEMATIC_BREAK.match(line):
            paragraph = None
        elif _NOT_PARAGRAPH.match(line):
            paragraph = _LAZY
        elif paragraph is None:
            indent = len(line) - len(line.lstrip(" "))
            paragraph = index if indent < 4 else _LAZY  # 4 spaces: indented code
    return levels
