"""A model's checkpoints over training: pass@k per step, each step against the one before it (paired)."""
