"""POST /v1/judge: one program judged against tests sent apart from it (a reward passk's judge vouches for)."""
