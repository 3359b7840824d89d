"""Getting results to the people waiting for them: live events, webhooks, priorities and backpressure."""
