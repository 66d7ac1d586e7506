"""The judging API: judges, a comparison's judge, judging a round and reading its verdicts."""
