"""voting: votes, the inbox, voter quality, reports, leaderboards and the statistics behind them.

Roles, by module name: `models` the rows; `services` writes, `selectors` reads, `page_selectors` reads for the pages
and for the voting parts of compare's pages; `views` (the comparison page's voting partials) and `<feature>_views`
(judge, prompt, round_row) the pages; `api/` the REST API, one module per resource (votes, reports, inbox,
voters, round_rows, prompt_standing) with its In/Out serializers; packages `inbox/` and `voters/` with their own
services, selectors and views. The statistics are lab's (`lab/stats/`, pure functions on plain vote records).
Reports: the package `reports/` turns stored votes into those records (`comparison`, on `lab.stats.report`),
reads the kept counts (`vote_counts`), rates across a workspace (`leaderboard`), adds the report's other figures
(`judge_scores`, `category_shares`, `variant_figures`), caches them (`cache`) and serves the pages (`views`).
Figures other pages show: `judge_agreement`, `prompt_versions`, `round_winners`; `prompt_identity` what counts
as the same prompt.
"""
