"""POST /run_code: SandboxFusion's request and response, executed by passk and stored as ordinary samples."""
