"""Statistics for votes, judge scores and ratings: pure functions on plain data, no Django models."""
