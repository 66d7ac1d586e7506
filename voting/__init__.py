"""voting: votes, the inbox, voter quality, reports, leaderboards and the statistics behind them.

Roles, by module name: `models` the rows; `services` writes, `selectors` reads, `page_selectors` reads for the pages
and for the voting parts of compare's pages; `views` (the comparison page's voting partials) and `<feature>_views`
(judge, prompt, report, round_row) the pages; `api/` the REST API, one module per resource (votes, reports, inbox,
voters, round_rows, prompt_standing) with its In/Out serializers; packages `inbox/` and `voters/` with their own
services, selectors and views. The statistics are lab's (`lab/stats/`, pure functions on plain vote records).
Reports: `reports` turns stored votes into those records, `lab.stats.report` builds one comparison's report,
`cache` serves reports and leaderboards, `leaderboard` rates across a workspace. Figures other pages show:
`judge_agreement`, `judge_scores`, `category_shares`, `prompt_versions`, `round_winners`; `prompt_identity` what
counts as the same prompt.
"""
