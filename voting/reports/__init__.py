"""A comparison's report and a workspace's leaderboard: the reads behind them, their cache, and their pages.

`comparison` turns stored votes into the statistics' vote records or counts per kind and builds one comparison's
report (on `lab.stats.report`); `vote_counts` reads the counts the database keeps (the rule itself is
`voting/vote_count_sql.py`) and `aggregate_reads` runs such reads straight from the cursor; `leaderboard` rates
across a workspace; `judge_scores`, `category_shares` and `variant_figures` are the figures the report shows beside
the votes; `cache` serves reports and leaderboards under versions every new vote replaces; `views` the report and
leaderboard pages.
"""
