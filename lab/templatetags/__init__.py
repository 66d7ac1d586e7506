"""The lab's template tags (the account pages)."""
