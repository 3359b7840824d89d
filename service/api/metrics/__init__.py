"""Metrics: pass@k and pass^k with bootstrap intervals, per run and per problem."""
