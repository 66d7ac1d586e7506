"""compare: comparisons (groups of variants), their rounds and answers, datasets, the prompt library, experiments.

Roles, by module name: `models` the rows; `services` writes (`<entity>_<verb>`), `selectors` reads,
`page_selectors` reads for the pages; `access` the one way to reach an object; `blind` blind mode, written once;
`views` the comparison pages, `forms` their
inputs; `api/` the REST API, one module per resource (groups, datasets, prompts, experiments, baselines,
run_baselines) with its In/Out serializers; `tasks` the Celery entry points, `jobs` the round's job kind,
`rounds` and `execution` the worker's side of a round (`round_stops` the batch rounds' one cancel poll,
`response_cache` the opt-in cache of complete answers); `consumers` and `routing` the websocket; `signals` what apps
above hear. `catalog` (models a comparison may use). Packages, each with its own pages and
URLs (see their docstrings): `datasets/`, `prompts/` (the library) and `experiments/` (baselines included).
"""
