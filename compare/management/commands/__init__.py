"""Compare's management commands: experiment (run, export) and response_cache_prune."""
