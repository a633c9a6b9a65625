"""Entry points, the driver's parts: what the environment adds when a provider or the store is
used (`credentials.py`: API keys, base URLs, headers, the PostgreSQL URL).

`entrypoints/config/runtime.py` is the driver: it runs the stages and chooses the paths; the
container calls these when it builds a provider or opens the store, never while the stages
run. They read a variable as the read stage does (`read.env_value`: a blank one is unset).
"""
