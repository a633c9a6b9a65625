"""Entry points, the build stage's parts: which memlane provider and endpoints a configured
provider id names (`provider_choice.py`).

`entrypoints/config/build.py` is the stage: it reads the merged keys into MemorySettings and
calls this for `provider` and `fallback`. It calls back into no other module of the package.
"""
