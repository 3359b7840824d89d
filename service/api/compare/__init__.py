"""Comparing two runs: paired differences of pass@k with intervals and tests."""
