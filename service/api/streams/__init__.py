"""Streams: the /run_code and /v1/judge calls of a project, grouped by a name the client chooses (header
X-Passk-Stream), listed and charted over time instead of one run each in the runs list."""
