"""Entry points, the key table written out: what a row is (`row.py`) and the four large
sections of `memorySearch` (`embedding.py`, `store.py`, `sync.py`, `query.py`), one module each.

`entrypoints/config/keys.py` is the table every stage and published form reads: it joins these
sections with the short ones (what is indexed, cache, redaction, transcripts, the `memory`
block) in the order the README and the schema show. Read it first; come here for a section's rows.
"""
