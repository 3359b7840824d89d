"""API keys (stored hashed) with scopes, and signed session cookies for the dashboard."""
