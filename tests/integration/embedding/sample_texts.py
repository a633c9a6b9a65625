"""Sentences for the local model's kernel tests: English and Chinese, repeated into long texts."""

SENTENCES = [
    "The indexing service reads every markdown note under the memory folder and splits it. ",
    "会话记录也会被索引,这样代理可以回忆起以前讨论过的决定和细节。",
    "Hybrid search merges vector similarity with BM25 keyword scores using fixed weights. ",
]
