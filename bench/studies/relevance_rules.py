"""The relevance-floor study's rule families and their grids (`relevance_study --families`)."""

from __future__ import annotations

import itertools
import math

from memlane.bench.studies.relevance_legs import (
    Hit,
    Query,
    Rule,
)

# --- rule families ---------------------------------------------------------------------------


def current(c: float, e: float) -> Rule:
    return lambda _q, h: (h.cos is not None and h.cos >= c) or (h.ev is not None and h.ev >= e)


def scaled_bm25(c: float, e: float) -> Rule:
    """bm25 evidence divided by ln N: a rare word in a big index weighs more."""
    return lambda q, h: (
        (h.cos is not None and h.cos >= c)
        or (h.ev is not None and h.ev / math.log(max(q.n_chunks, 3)) >= e)
    )


def gap(g: float, e: float, background: str) -> Rule:
    """Cosine above the query's own background (mean over all chunks, or candidate median)."""

    def bg(q: Query) -> float:
        return q.background if background == "mean" else q.cand_median

    return lambda q, h: (
        (h.cos is not None and h.cos - bg(q) >= g)
        or (h.ev is not None and h.ev / math.log(max(q.n_chunks, 3)) >= e)
    )


def both(c: float, g: float, e: float, background: str) -> Rule:
    def bg(q: Query) -> float:
        return q.background if background == "mean" else q.cand_median

    return lambda q, h: (
        (h.cos is not None and h.cos >= c and h.cos - bg(q) >= g)
        or (h.ev is not None and h.ev / math.log(max(q.n_chunks, 3)) >= e)
    )


def with_coverage(inner: Rule, k: float) -> Rule:
    return lambda q, h: inner(q, h) and h.coverage >= k


def tiered(c_hi: float, c_lo: float, k: float, e: float, weighted: bool | None) -> Rule:
    """A high cosine alone, or a lower cosine / some bm25 evidence plus a share of the words."""

    def cov(h: Hit) -> float:
        return h.coverage if weighted is True else h.share if weighted is False else h.dshare

    return lambda _q, h: (
        (h.cos is not None and h.cos >= c_hi)
        or (
            cov(h) >= k
            and ((h.cos is not None and h.cos >= c_lo) or (h.ev is not None and h.ev >= e))
        )
    )


def gated(sure: float, known: float, c: float, e: float, k: float, m: int) -> Rule:
    """A sure cosine alone; else the query must find `known` of its words somewhere in the pool
    (the memory knows its subject), and the hit needs the cosine or bm25 floor, a share `k` of
    the words and at least `m` of them (all of them for shorter queries)."""
    return lambda q, h: (
        (h.cos is not None and h.cos >= sure)
        or (
            q.known >= known
            and ((h.cos is not None and h.cos >= c) or (h.ev is not None and h.ev >= e))
            and h.dshare >= k
            and h.matched >= min(m, q.n_keys)
        )
    )


def margin(c: float, g: float, e: float) -> Rule:
    """The cosine floor, and the query's best cosine clears its candidates' median by `g`."""
    return lambda q, h: (
        (q.top_cos - q.cand_median >= g)
        and ((h.cos is not None and h.cos >= c) or (h.ev is not None and h.ev >= e))
    )


def paths(sure: float, c: float, kc: float, e: float, scaled: bool, kb: float, mb: int) -> Rule:
    """Each leg's path with its own word requirement: a sure cosine alone; a cosine at the floor
    with a share `kc` of the query's words; bm25 evidence (raw, or / ln N when `scaled`) with a
    share `kb` and at least `mb` of the words (all of them for shorter queries)."""

    def ev_ok(q: Query, h: Hit) -> bool:
        if h.ev is None:
            return False
        return (h.ev / math.log(max(q.n_chunks, 3)) if scaled else h.ev) >= e

    return lambda q, h: (
        (h.cos is not None and h.cos >= sure)
        or (h.cos is not None and h.cos >= c and h.dshare >= kc)
        or (ev_ok(q, h) and h.dshare >= kb and h.matched >= min(mb, q.n_keys))
    )


def grid(name: str) -> list[tuple[str, Rule]]:
    if name == "paths_bm25":
        return [
            (f"sure{su}|cos>={c}&d>={kc}|ev>={e}&d>={kb}", paths(su, c, kc, e, False, kb, 1))
            for su, c, kc, e, kb in [
                *[(0.86, 0.805, 0.2, e, 0.34) for e in (0.0, 2.0, 3.0, 4.0)],
                (0.86, 0.805, 0.2, 0.0, 0.4),
                (0.86, 0.805, 0.2, 0.0, 0.5),
                (0.86, 0.80, 0.2, 0.0, 0.34),
                (0.86, 0.81, 0.2, 0.0, 0.34),
                (0.86, 0.81, 0.2, 4.0, 0.34),
            ]
        ]
    if name == "paths_refine":
        return [
            (f"sure{su}|cos>={c}&d>={kc}|ev>={e}&d>={kb}", paths(su, c, kc, e, False, kb, 1))
            for su, c, kc, e, kb in [
                *[(0.86, c, 0.2, e, 0.34) for c in (0.79, 0.80, 0.805) for e in (4.0, 5.0, 6.0)],
                (0.86, 0.805, 0.2, 6.0, 0.3),
                (0.86, 0.805, 0.15, 6.0, 0.34),
                (0.86, 0.805, 0.25, 6.0, 0.34),
                (0.85, 0.805, 0.2, 6.0, 0.34),
                (0.87, 0.805, 0.2, 6.0, 0.34),
            ]
        ]
    if name == "paths":
        return [
            (
                f"sure{su}|cos>={c}&d>={kc}|ev{'/lnN' if sc else ''}>={e}&d>={kb}&m>={mb}",
                paths(su, c, kc, e, sc, kb, mb),
            )
            for su, c, kc, (e, sc), kb, mb in itertools.product(
                [0.86, 9.0],
                [0.805],
                [0.0, 0.2],
                [(6.0, False), (1.13, True), (99.0, False)],
                [0.0, 0.2, 0.34, 0.5],
                [1, 2],
            )
            if not (e == 99.0 and (kb > 0 or mb > 1))
        ]
    if name == "gated_short":
        return [
            (f"sure{su}|known>={kn}&(cos>={c}|ev>={e})&d>={k}&m>={m}", gated(su, kn, c, e, k, m))
            for su, kn, c, e, k, m in [
                (9.0, 0.0, 0.805, 6, 0.0, 0),
                (0.86, 0.0, 0.805, 6, 0.2, 0),
                (0.86, 0.67, 0.805, 6, 0.0, 0),
                (0.85, 0.75, 0.805, 6, 0.0, 0),
            ]
        ]
    if name == "gated":
        return [
            (f"sure{su}|known>={kn}&(cos>={c}|ev>={e})&d>={k}&m>={m}", gated(su, kn, c, e, k, m))
            for su, kn, c, e, k, m in itertools.product(
                [0.83, 0.84, 0.85, 0.86, 0.87],
                [0.0, 0.5, 0.6, 0.67, 0.75, 0.8, 1.0],
                [0.80, 0.805, 0.81],
                [6, 99],
                [0.0, 0.2],
                [0],
            )
        ]
    if name == "margin":
        return [
            (f"top-med>={g}&(cos>={c}|ev>={e})", margin(c, g, e))
            for c, g, e in itertools.product([0.805, 0.81], [0.02, 0.03, 0.04, 0.05, 0.06], [6, 99])
        ]
    if name == "short":
        return [
            (f"cos>={hi} | d>={k}&(cos>={lo}|ev>={e})", tiered(hi, lo, k, e, None))
            for hi, lo, k, e in [
                (0.86, 0.805, 0.2, 6),
                (0.86, 0.805, 0.2, 99),
                (0.86, 0.80, 0.15, 6),
                (0.86, 0.80, 0.1, 6),
                (0.85, 0.805, 0.15, 6),
                (0.86, 0.805, 0.15, 99),
                (0.86, 0.81, 0.2, 99),
                (0.87, 0.80, 0.2, 6),
            ]
        ] + [("cos>=0.805 | ev>=6", current(0.805, 6))]
    if name in ("tiered_w", "tiered_u", "tiered_d"):
        w = {"w": True, "u": False, "d": None}[name[-1]]
        return [
            (f"cos>={hi} | {name[-1]}>={k}&(cos>={lo}|ev>={e})", tiered(hi, lo, k, e, w))
            for hi, lo, k, e in itertools.product(
                [0.85, 0.86, 0.87, 9.0],
                [0.79, 0.80, 0.805, 0.81],
                [0.1, 0.15, 0.2, 0.25, 0.3],
                [6, 8, 99],
            )
        ]
    cos = [0.80, 0.805, 0.81, 0.815, 0.82, 0.825, 0.83]
    if name == "current":
        return [(f"cos>={c} | ev>={e}", current(c, e)) for c in cos for e in (6, 8, 12)]
    if name == "scaled":
        return [
            (f"cos>={c} | ev/lnN>={e}", scaled_bm25(c, e))
            for c in cos
            for e in (1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5)
        ]
    if name in ("gap_mean", "gap_median"):
        bgn = name.split("_")[1]
        gaps = [x / 100 for x in range(2, 16)]
        return [
            (f"cos-{bgn}>={g:.2f} | ev/lnN>={e}", gap(g, e, bgn))
            for g in gaps
            for e in (1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 99)
        ]
    if name in ("both_mean", "both_median"):
        bgn = name.split("_")[1]
        return [
            (f"cos>={c}&cos-{bgn}>={g:.2f} | ev/lnN>={e}", both(c, g, e, bgn))
            for c, g, e in itertools.product(
                [0.79, 0.80, 0.805, 0.81], [x / 100 for x in range(2, 14)], (1.4, 1.6, 1.8, 2.0)
            )
        ]
    if name.startswith("cov_"):
        inner_name = name[4:]
        return [
            (f"[{label}] & cov>={k}", with_coverage(rule, k))
            for label, rule in grid(inner_name)
            for k in (0.0, 0.1, 0.2, 0.3)
        ]
    raise SystemExit(f"unknown family {name}")
