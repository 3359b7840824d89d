"""The HTTP API: the FastAPI app, its dependencies and middleware, and one package per domain (endpoints /
service / repository / schemas), the dashboard and delivery (live events, webhooks, admission)."""
