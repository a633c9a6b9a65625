"""Entry points: configuration, from JSON5 file, environment and flags to resolved settings.

`keys` is the one table of memorySearch keys (path, type, clamp, doc; defaults come from the
domain's settings objects); `resolve` validates a tree against it and builds MemorySettings;
`files`, `env` and `runtime` read the file, the environment and the flags; `schema` derives the
JSON Schema, the README key list and the effective settings shown by `status --json`.
"""
