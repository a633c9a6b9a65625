"""Entry point (ui): HTML built by escaping every value, and the layout every page shares.

No template engine: `fill` is `string.Template` whose values are escaped unless they are `Safe`
(markup this package built itself, from escaped parts). So a note or transcript holding
`<script>` reaches the browser as text, whichever page shows it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from string import Template
from typing import Final


class Safe(str):
    """Markup built here from escaped parts: `fill` inserts it as it is."""

    __slots__ = ()


def esc(value: object) -> Safe:
    """`value` as HTML text (quotes escaped too: safe inside attribute values)."""
    if isinstance(value, Safe):
        return value
    return Safe(html.escape(str(value), quote=True))


def fill(template: str, **values: object) -> Safe:
    """`template` ($name placeholders) with each value escaped unless it is Safe."""
    return Safe(Template(template).substitute({k: esc(v) for k, v in values.items()}))


def join(parts: Iterable[Safe], separator: str = "") -> Safe:
    """Safe parts joined (the separator is fixed markup of ours)."""
    return Safe(separator.join(parts))


_LAYOUT: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title · memlane</title>
<link rel="stylesheet" href="/static/ui.css">
<script src="/static/ui.js" defer></script>
</head>
<body data-page="$page">
<header class="bar">
  <a class="brand" href="/">memlane</a>
  <nav>$nav</nav>
  <span class="agent">agent <b>$agent</b></span>
</header>
<main>
$body
</main>
</body>
</html>
"""
_PAGES: Final = (("search", "/", "Search"), ("status", "/status", "Health"))


def page(*, title: str, page_name: str, agent: str, body: Safe) -> Safe:
    """A whole page: the shared header, navigation and `body`."""
    nav = join(
        fill(
            '<a href="$href"$current>$label</a>',
            href=href,
            label=label,
            current=Safe(' aria-current="page"' if name == page_name else ""),
        )
        for name, href, label in _PAGES
    )
    return fill(_LAYOUT, title=title, page=page_name, nav=nav, agent=agent, body=body)


def message_page(*, title: str, text: str, agent: str = "-") -> Safe:
    """A page saying one thing (an error, a refusal)."""
    body = fill('<section class="notice"><h1>$title</h1><p>$text</p></section>', **locals())
    return page(title=title, page_name="message", agent=agent, body=body)
