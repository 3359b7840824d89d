"""Operations: GET /v1/status (JSON) and GET /metrics (Prometheus text), both behind the read scope."""
