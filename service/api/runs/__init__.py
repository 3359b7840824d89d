"""Runs: one model's samples for a dataset, queued for the workers."""
