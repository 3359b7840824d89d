"""What a sample carries besides its completion: the API stores it, the client exports it."""

# Sent per sample, stored, returned with the samples and exported; metrics and comparisons use them.
SAMPLE_METADATA = ("cost", "latency_ms", "input_tokens", "output_tokens", "confidence", "steps")
