"""Entry points, the read stage's parts: the JSON5 parse and its memo (`json5_text.py`), the
`env` block and `${VAR}` (`variables.py`), the environment's and the flags' overrides
(`overrides.py`).

`entrypoints/config/read.py` is the stage: it finds and reads the file and its `$include`s and
calls these in the order its module doc gives. None calls back into the stage or another part.
"""
