"""Domain: lift the hits written when the question says (time words, time_words.py).

A window found in the question boosts rather than filters: a hit whose time range overlaps it
gets weight 1, one in its neighbourhood (up to half the window's width, at least a day, either
side) a weight falling linearly to 0, others 0. A hit also gets the weight of a relative time
its text mentions, read against when it was written (the session of 9 October that says "last
Friday" talks about 6 October), so the line about the asked day outranks the rest of a later
session.
An ordering question ("first time", "most recent", "before ...") gives each dated candidate a
weight by its rank in time among the candidates (1 at the asked end). A hit's score is
multiplied by
(1 + strength · window weight + order_strength · order weight) / (1 + strength + order_strength):
a hit with full weight keeps its score, others lose up to the boost's share of it, so scores
stay in [0, 1] and the order among equally weighted hits is kept. The searcher applies it
after `minScore` (which judges the unboosted scores), so it only reorders the candidates that
qualify. Nothing happens without a time word or with both strengths 0.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memlane.domain.chunk_times import SECONDS_PER_DAY
from memlane.domain.chunks import ChunkId
from memlane.domain.keywords import fts_query_terms
from memlane.domain.scoring import Fused
from memlane.domain.time_questions import asks_when, mentioned_windows, term_weights, when_weight
from memlane.domain.time_words import TimeIntent, read_time_words


def _overlap_weight(
    start: float, end: float, since: float, until: float, reach: float | None = None
) -> float:
    if end >= since and start <= until:
        return 1.0
    if reach is None:
        reach = max(SECONDS_PER_DAY, (until - since) / 2)
    gap = since - end if end < since else start - until
    return max(0.0, 1.0 - gap / reach)


def _stated_time(item: Fused) -> bool:
    """Whether the chunk's time says when its lines were written: a message's timestamp, or a
    note's date (a dated file name or heading: whole UTC days). A note's mtime says when the
    file was last saved, which is no anchor for its "last Friday". A transcript whose records
    carry no timestamp at all is dated by its mtime and still counts: telling it apart would
    need the time's source stored with the chunk."""
    if item.source == "sessions":
        return True
    start, end = item.time_start, item.time_end
    return (
        start is not None
        and end is not None
        and start % SECONDS_PER_DAY == 0
        and (end + 1) % SECONDS_PER_DAY == 0
    )


def _window_weight(item: Fused, since: float, until: float, reach: float | None) -> float:
    """The larger of the weights of when the text was written and of the times it mentions.

    A mention is read against the chunk's start ("last Friday" in a message of 9 October is 6
    October), only where that time is stated (`_stated_time`), and counts only when it is no
    wider than the question's window: "this year" in the text says nothing about which day of
    it the question means."""
    if item.time_start is None or item.time_end is None:
        return 0.0
    weight = _overlap_weight(item.time_start, item.time_end, since, until, reach)
    if weight >= 1.0 or not _stated_time(item):
        return weight
    for first, last in mentioned_windows(item.text, item.time_start):
        if last - first <= until - since:
            weight = max(weight, _overlap_weight(first, last, since, until, reach))
    return weight


def _order_weights(items: Sequence[Fused], latest: bool) -> dict[int, float]:
    """Index -> weight in [0, 1] by time rank among the dated candidates (1 at the asked end)."""
    dated = [
        (i, (it.time_start + it.time_end) / 2)
        for i, it in enumerate(items)
        if it.time_start is not None and it.time_end is not None
    ]
    if len(dated) < 2:
        return {}
    times = sorted({t for _, t in dated})
    if len(times) < 2:
        return {}
    rank = {t: r / (len(times) - 1) for r, t in enumerate(times)}
    return {i: rank[t] if latest else 1.0 - rank[t] for i, t in dated}


def apply_time_boost(
    fused: Sequence[Fused],
    intent: TimeIntent | None,
    *,
    strength: float,
    order_strength: float = 0.0,
) -> list[Fused]:
    """Boost by the question's time words (see the module docstring); re-sort (stable).

    The multiplier is recorded in `time_boost` (1 when none).
    """
    if intent is None or not fused:
        return list(fused)
    # A strength counts only when its words were found: no uniform scaling of every score.
    has_window = intent.since is not None and intent.until is not None
    strength = max(0.0, strength) if has_window else 0.0
    order_strength = max(0.0, order_strength) if intent.order is not None else 0.0
    if strength + order_strength <= 0.0:
        return list(fused)
    order = (
        {}
        if intent.order is None or order_strength <= 0.0
        else _order_weights(fused, latest=intent.order == "latest")
    )
    out: list[Fused] = []
    for index, item in enumerate(fused):
        window = 0.0
        if intent.since is not None and intent.until is not None:
            window = _window_weight(item, intent.since, intent.until, intent.reach)
        lifted = 1.0 + strength * window + order_strength * order.get(index, 0.0)
        factor = lifted / (1.0 + strength + order_strength)
        out.append(replace(item, score=item.score * factor, time_boost=factor))
    return sorted(out, key=lambda item: -item.score)


def apply_when_boost(
    fused: Sequence[Fused],
    asking: str | None,
    *,
    terms: Sequence[str],
    as_of: float,
    strength: float,
) -> list[Fused]:
    """A question that asks when (`asking`, time_questions.asks_when) lifts the candidates that
    say when about its `terms` (time_questions.when_weight, w in [0, 1], the terms weighted by
    their rarity among these candidates): each score is
    multiplied by (1 + strength · w) / (1 + strength) and re-sorted (stable). The multiplier
    joins `time_boost`."""
    if asking is None or strength <= 0.0 or not fused:
        return list(fused)
    weights = term_weights(terms, [item.text for item in fused])
    out: list[Fused] = []
    for item in fused:
        said = when_weight(item.text, terms, as_of, weights)
        factor = (1.0 + strength * said) / (1.0 + strength)
        out.append(replace(item, score=item.score * factor, time_boost=item.time_boost * factor))
    return sorted(out, key=lambda item: -item.score)


def hold_places(before: Sequence[Fused], after: Sequence[Fused], max_drop: int) -> list[Fused]:
    """`after` (the boosted `before`, same chunks) re-sorted so that no hit ends more than
    `max_drop` places below its place in `before` (sorted by score, best first).

    A boost is a guess about what the question means; a hit the search ranked high on its words
    and meaning must not be pushed out of the first few by it (a reader can skip a weak hit but
    cannot recover a missing one). Going up from the last hit, each score is raised, if need be,
    to the (max_drop + 1)-th best final score among the hits below it; ties go to the hit that
    was above. A raised score never exceeds its unboosted one (those below it scored less), so
    scores stay sorted and `time_boost` stays the multiplier actually applied."""
    boosted: dict[ChunkId, list[Fused]] = {}
    for item in after:  # a list each: hits of several agents' stores may share a chunk id
        boosted.setdefault(item.chunk_id, []).append(item)
    below: list[float] = []  # min-heap: the max_drop + 1 best final scores beneath
    held: list[tuple[Fused, int]] = []
    for place in range(len(before) - 1, -1, -1):
        item = boosted[before[place].chunk_id].pop()
        score = item.score
        if len(below) > max_drop and below[0] > score:
            factor = item.time_boost * (below[0] / score) if score > 0 else item.time_boost
            score = below[0]
            item = replace(item, score=score, time_boost=factor)
        held.append((item, place))
        heapq.heappush(below, score)
        if len(below) > max_drop + 1:
            heapq.heappop(below)
    return [item for item, _ in sorted(held, key=lambda pair: (-pair[0].score, pair[1]))]


@dataclass(frozen=True, slots=True)
class TimeStrengths:
    """The three boosts' strengths (query.timeBoost, timeOrderBoost, whenBoost; 0: off) and
    the most places they may move a hit down together (query.timeMaxDrop; None: no limit)."""

    window: float = 0.0
    order: float = 0.0
    when: float = 0.0
    max_drop: int | None = None


def boost_by_time(
    fused: Sequence[Fused],
    question: str,
    *,
    as_of: float,
    strengths: TimeStrengths,
    explain: bool = False,
) -> tuple[list[Fused], str | None]:
    """The searcher's time step: the window / ordering boost, then the when boost; and what the
    question said about time, for --explain (None: nothing found or nothing read). The question
    is read only when a boost is on or `explain` asks (no time word, no change). No hit ends
    more than `strengths.max_drop` places below where it came in (`hold_places`)."""
    out = list(fused)
    parts: list[str] = []
    if explain or strengths.window > 0 or strengths.order > 0:
        intent = read_time_words(question, as_of)
        out = apply_time_boost(
            out, intent, strength=strengths.window, order_strength=strengths.order
        )
        if intent is not None:
            parts.append(intent.describe())
    if explain or strengths.when > 0:
        asking = asks_when(question)
        terms = [] if asking is None else fts_query_terms(question)
        out = apply_when_boost(out, asking, terms=terms, as_of=as_of, strength=strengths.when)
        if asking is not None:
            parts.append(f'asks when ("{asking}")')
    if strengths.max_drop is not None:
        out = hold_places(fused, out, strengths.max_drop)
    return out, "; ".join(p for p in parts if p) or None
