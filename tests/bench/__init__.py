"""Tests of the benchmark harness (metrics, dataset converters, runner) on tiny fixtures."""
