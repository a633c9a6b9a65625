"""Entry points, the validate stage's parts: one written value against its row of the key
table (`leaves.py`) and the host's `models.providers` entries (`models_providers.py`).

`entrypoints/config/validate.py` is the stage: it walks the tree, the agents and their blocks,
and calls these for what it finds. Neither calls back into the stage or into the other.
"""
