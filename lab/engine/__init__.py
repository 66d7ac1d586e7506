"""The run engine: fan one prompt set out to many models at once, within each connection's limits."""
