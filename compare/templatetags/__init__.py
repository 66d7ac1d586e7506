"""Compare's template filters (the comparison pages' figures)."""
