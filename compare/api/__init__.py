"""The compare API: groups, runs, rounds, preview and datasets."""
