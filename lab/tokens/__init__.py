"""Personal API tokens: named, scoped (read-only or read-write), shown once, stored as a hash, revocable."""
