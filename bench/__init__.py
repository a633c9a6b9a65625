"""Benchmark harness: public data sets turned into memlane workspaces, searched and scored."""
