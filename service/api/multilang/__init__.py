"""One model's runs in several languages side by side: per-language pass@k, micro and macro averages."""
