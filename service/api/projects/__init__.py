"""Projects (teams): what owns keys, datasets, runs, release rules and idempotency keys, and who may see what."""
