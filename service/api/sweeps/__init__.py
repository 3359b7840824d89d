"""Temperature sweeps: one model's runs at several temperatures, side by side, never pooled."""
