"""Release rules: named, immutable criteria written before a candidate's run, evaluated against a comparison."""
