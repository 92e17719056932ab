"""Nothing (for ruff)."""
