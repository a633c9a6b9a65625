"""A four-note, three-query data set for harness tests (one unit, one gold note per query)."""

from __future__ import annotations

from memlane.bench.datasets.model import Dataset, DocFile, Query, Unit

NOTES = {
    "chairs": "# Office\n\nThe invoice for the office chairs was paid on 3 March.\n",
    "cat": "# Home\n\nOur cat Miso sleeps on the windowsill every afternoon.\n",
    "meeting": "# 会议\n\n会议定于明天上午十点开始，地点在三楼会议室。\n",
    "garden": "# Garden\n\nThe tomatoes in the garden need water every morning in July.\n",
}
QUERIES = {
    "q1": ("when was the invoice for the chairs paid", "chairs"),
    "q2": ("会议什么时候开始", "meeting"),
    "q3": ("where does the cat sleep", "cat"),
}


def mini_dataset(name: str = "mini") -> Dataset:
    files = tuple(DocFile("note", f"{k}.md", k, text) for k, text in NOTES.items())
    queries = tuple(Query(qid, text, {gold: 1}) for qid, (text, gold) in QUERIES.items())
    unit = Unit("u1", files, queries)
    return Dataset(name, units=lambda: iter([unit]))
