"""Benchmarks (``python -m kubetide.bench SUITE``): speed figures printed, never asserted in tests."""
